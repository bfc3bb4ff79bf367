// Host tests of CSR and CSC operands (ewise/compressed.hpp) on the CPU backend: every operation
// on compressed operands against the same operation on the COO matrices they hold, compressed
// by the tests' own counting sort (testing/compressed.hpp), bit for bit, over random shapes,
// dtypes, index types, formats (CSR with CSC too), duplicates and unsorted slices, empty
// operands and every dense broadcast; the offsets' and indices' checks, with outputs untouched
// after a refusal.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "testing/compressed.hpp"
#include "testing/expect_invalid.hpp"

namespace ewise {
namespace {

using test::compressed_difference;
using test::compressed_from;
using test::expect_invalid;

constexpr BinaryOp kUnionOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};
constexpr DType kValueDTypes[] = {DType::f16, DType::bf16, DType::f32,
                                  DType::f64, DType::i32,  DType::i64};
constexpr SparseFormat kFormats[] = {SparseFormat::csr, SparseFormat::csc};

bool same_bytes(const HostTensor& x, const HostTensor& y) {
  // memcmp only where there are bytes: an empty tensor's data may be null.
  return x.desc().shape.size() == y.desc().shape.size() && x.bytes() == y.bytes() &&
         (x.bytes() == 0 || std::memcmp(x.data(), y.data(), x.bytes()) == 0);
}

/// A random COO operand: canonical, or shuffled with duplicates.
HostCoo random_operand(std::int64_t nrows, std::int64_t ncols, double density, DType t,
                       IndexType index, bool canonical, std::uint64_t seed) {
  verify::CooGenOptions o;
  o.index = index;
  o.dtype = t;
  o.unsorted = !canonical;
  o.duplicate_fraction = canonical ? 0.0 : 0.3;
  return verify::random_coo(nrows, ncols, density, seed, o);
}

/// The dense operands a (nrows, ncols) matrix broadcasts with: full, column-major, a row as 1-D
/// and as (1, ncols), a column, a 0-d tensor. Each owns its memory (a column-major one too).
std::vector<HostTensor> dense_operands(std::int64_t nrows, std::int64_t ncols, DType t,
                                       std::uint64_t seed) {
  std::vector<HostTensor> out;
  for (const Dims& shape : {Dims{nrows, ncols}, Dims{ncols, nrows}, Dims{ncols}, Dims{1, ncols},
                            Dims{nrows, 1}, Dims{}})
    out.push_back(verify::random_tensor(t, shape, ++seed));
  return out;
}
/// dense_operands' k-th as the operand it stands for (the second is the transpose's view).
ConstTensorView dense_view(const HostTensor& d, int k) {
  ConstTensorView v = d.view();
  if (k == 1)
    v.desc =
        TensorDesc::strided(v.desc.dtype, Dims{d.shape()[1], d.shape()[0]}, Dims{1, d.shape()[1]});
  return v;
}

struct Shape {
  std::int64_t nrows, ncols;
  double density;
};
constexpr Shape kShapes[] = {{1, 1, 1.0},  {7, 5, 0.4}, {37, 53, 0.2}, {64, 3, 0.5},
                             {3, 70, 0.1}, {0, 4, 0.0}, {5, 0, 0.0},   {9, 9, 0.0}};

TEST(CompressedHost, SparseResultsMatchTheCooOperations) {
  std::uint64_t seed = verify::seed_from_env_or_random();
  for (const Shape& s : kShapes)
    for (const DType t : kValueDTypes)
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {true, false}) {
          const HostCoo a =
              random_operand(s.nrows, s.ncols, s.density, t, index, canonical, ++seed);
          const HostCoo b =
              random_operand(s.nrows, s.ncols, s.density, t, index, !canonical, ++seed);
          for (const SparseFormat fa : kFormats)
            for (const SparseFormat fb : kFormats) {
              const HostCompressed ca = compressed_from(a.view(), fa),
                                   cb = compressed_from(b.view(), fb);
              const std::string what = std::string(format_name(fa)) + " " + format_name(fb) + " " +
                                       a.desc().str() + " seed " + std::to_string(seed);
              const HostCompressed product = multiply<HostCompressed>(ca.view(), cb.view());
              const HostCoo want_product = multiply<HostCoo>(a.view(), b.view());
              EXPECT_EQ(compressed_difference(product, compressed_from(want_product, fa)), "")
                  << "multiply " << what;
              for (const BinaryOp op : kUnionOps) {
                const HostCompressed u = combine<HostCompressed>(op, ca.view(), cb.view());
                const HostCoo want = combine<HostCoo>(op, a.view(), b.view());
                EXPECT_EQ(compressed_difference(u, compressed_from(want, fa)), "")
                    << op_name(op) << " " << what;
              }
            }
          for (const SparseFormat f : kFormats) {
            const HostCompressed ca = compressed_from(a.view(), f);
            const std::string what = std::string(format_name(f)) + " " + a.desc().str();
            EXPECT_EQ(compressed_difference(coalesce<HostCompressed>(ca.view()),
                                            compressed_from(coalesce<HostCoo>(a.view()), f)),
                      "")
                << "coalesce " << what;
            EXPECT_EQ(compressed_difference(to_compressed<HostCompressed>(a.view(), f),
                                            compressed_from(coalesce<HostCoo>(a.view()), f)),
                      "")
                << "to_compressed " << what;
            const HostCoo back = to_coo<HostCoo>(ca.view());
            const HostCoo want_back = coalesce<HostCoo>(a.view());
            EXPECT_EQ(compressed_difference(compressed_from(back, SparseFormat::csr),
                                            compressed_from(want_back, SparseFormat::csr)),
                      "")
                << "to_coo " << what;
            const Scalar half = Scalar::weak_float(0.5);
            EXPECT_EQ(compressed_difference(multiply<HostCompressed>(ca.view(), half),
                                            compressed_from(multiply<HostCoo>(a.view(), half), f)),
                      "")
                << "times 0.5 " << what;
            EXPECT_EQ(compressed_difference(
                          combine<HostCompressed>(BinaryOp::add, ca.view(), Scalar::weak_int(0)),
                          compressed_from(
                              combine<HostCoo>(BinaryOp::add, a.view(), Scalar::weak_int(0)), f)),
                      "")
                << "plus 0 " << what;
          }
        }
}

TEST(CompressedHost, DenseFormsMatchTheCooOperations) {
  std::uint64_t seed = verify::seed_from_env_or_random();
  for (const Shape& s : kShapes)
    for (const DType t : {DType::bf16, DType::f32, DType::i64})
      for (const bool canonical : {true, false}) {
        const HostCoo a =
            random_operand(s.nrows, s.ncols, s.density, t, IndexType::i32, canonical, ++seed);
        const std::vector<HostTensor> dense = dense_operands(s.nrows, s.ncols, t, ++seed);
        for (const SparseFormat f : kFormats) {
          const HostCompressed ca = compressed_from(a.view(), f);
          for (int k = 0; k < static_cast<int>(dense.size()); ++k) {
            const ConstTensorView d = dense_view(dense[k], k);
            const std::string what = std::string(format_name(f)) + " " + a.desc().str() +
                                     " dense " + d.desc.str() + " seed " + std::to_string(seed);
            EXPECT_EQ(compressed_difference(multiply<HostCompressed>(ca.view(), d),
                                            compressed_from(multiply<HostCoo>(a.view(), d), f)),
                      "")
                << "multiply " << what;
            if (k == 0) {
              const Scalar half = Scalar::weak_float(-0.5);
              const HostCoo want = multiply<HostCoo>(a.view(), half);
              EXPECT_EQ(compressed_difference(multiply<HostCompressed>(ca.view(), half),
                                              compressed_from(want.view(), f)),
                        "")
                  << "multiply scalar " << what;
            }
            for (const BinaryOp op : kUnionOps) {
              EXPECT_TRUE(same_bytes(combine<HostTensor>(op, ca.view(), d),
                                     combine<HostTensor>(op, a.view(), d)))
                  << op_name(op) << " " << what;
            }
          }
          for (const BinaryOp op : kUnionOps)
            for (const bool column_major : {false, true}) {
              // accumulate into a (nrows, ncols) table, row- or column-major.
              HostTensor got = verify::random_tensor(t, Dims{s.nrows, s.ncols}, ++seed);
              HostTensor want = to_host(got.view());
              TensorView g = got.view(), w = want.view();
              if (column_major) {
                g.desc = w.desc = TensorDesc::strided(t, Dims{s.nrows, s.ncols},
                                                      Dims{1, std::max<std::int64_t>(s.nrows, 1)});
              }
              accumulate(op, g, ca.view());
              accumulate(op, w, a.view());
              EXPECT_TRUE(same_bytes(got, want))
                  << "accumulate " << op_name(op) << " " << format_name(f) << " " << a.desc().str();
            }
        }
      }
}

TEST(CompressedHost, MixedDtypesPromoteAsCoo) {
  const HostCoo a = random_operand(20, 30, 0.3, DType::f32, IndexType::i64, true, 7);
  const HostCoo b = random_operand(20, 30, 0.3, DType::f64, IndexType::i64, false, 8);
  const HostCompressed ca = compressed_from(a.view(), SparseFormat::csc);
  const HostCompressed cb = compressed_from(b.view(), SparseFormat::csr);
  const HostCompressed u = combine<HostCompressed>(BinaryOp::add, ca.view(), cb.view());
  EXPECT_EQ(u.desc().dtype, DType::f64);
  EXPECT_EQ(u.format(), SparseFormat::csc);
  EXPECT_EQ(
      compressed_difference(u, compressed_from(combine<HostCoo>(BinaryOp::add, a.view(), b.view()),
                                               SparseFormat::csc)),
      "");
  // a canonical f32 operand times an f64 table: its pattern, f64 values
  const HostTensor table = verify::random_tensor(DType::f64, Dims{20, 30}, 9);
  const HostCompressed m = multiply<HostCompressed>(ca.view(), table.view());
  EXPECT_EQ(m.desc().dtype, DType::f64);
  EXPECT_EQ(compressed_difference(
                m, compressed_from(multiply<HostCoo>(a.view(), table.view()), SparseFormat::csc)),
            "");
}

TEST(CompressedHost, LargeProductsSplitOverTheThreadsMatchTheCooOperations) {
  // 1500 x 1000 at 40%: about 600k entries, more than one part of the pool's split
  // (detail::kElementsPerPart) wherever it has two threads or more.
  const HostCoo a = random_operand(1500, 1000, 0.4, DType::f32, IndexType::i32, true, 21);
  const HostTensor table = verify::random_tensor(DType::f32, Dims{1500, 1000}, 22);
  for (const SparseFormat f : kFormats) {
    HostCompressed c = compressed_from(a.view(), f);
    EXPECT_EQ(compressed_difference(multiply<HostCompressed>(c.view(), table.view()),
                                    compressed_from(multiply<HostCoo>(a.view(), table.view()), f)),
              "")
        << format_name(f);
    // Bad indices in a late slice, then also in an early one: the earliest is the one named.
    const auto* off = static_cast<const std::int32_t*>(c.offsets());
    auto* idx = static_cast<std::int32_t*>(const_cast<void*>(c.indices()));
    const std::int64_t late = off[f == SparseFormat::csr ? 1400 : 900];
    const std::int64_t early = off[100] + 1;
    idx[late] = -1;
    expect_invalid([&] { (void)multiply<HostCompressed>(c.view(), table.view()); },
                   {"entry " + std::to_string(late) + " is at"});
    idx[early] = idx[early - 1];  // a duplicate in a slice of a canonical operand
    expect_invalid([&] { (void)multiply<HostCompressed>(c.view(), Scalar::weak_float(2.0)); },
                   {"entry " + std::to_string(early) + " ", "does not come after"});
  }
}

/// A 3x4 CSR matrix with entries (0,1) (0,3) (2,0), i32, f32, and writable arrays.
struct Small {
  std::int32_t offsets[4] = {0, 2, 2, 3};
  std::int32_t indices[3] = {1, 3, 0};
  float vals[3] = {1, 2, 3};
  CompressedView view(bool canonical = true) const {
    return {offsets,
            indices,
            vals,
            CooDesc{3, 4, 3, IndexType::i32, DType::f32, canonical},
            SparseFormat::csr,
            Memory::host};
  }
};

TEST(CompressedHost, BadOffsetsAndIndicesAreRefusedBeforeAnythingIsWritten) {
  HostTensor table(DType::f32, Dims{3, 4});
  std::memset(table.data(), 0, table.bytes());
  const HostTensor before = to_host(table.view());
  const auto refused = [&](const Small& m, std::initializer_list<std::string> parts,
                           bool canonical = true) {
    expect_invalid([&] { accumulate(BinaryOp::add, table.view(), m.view(canonical)); }, parts);
    expect_invalid([&] { (void)multiply<HostCompressed>(m.view(canonical), m.view(canonical)); },
                   parts);
    expect_invalid([&] { (void)to_coo<HostCoo>(m.view(canonical)); }, parts);
    expect_invalid([&] { (void)multiply<HostCompressed>(m.view(canonical), table.view()); },
                   parts);
    expect_invalid(
        [&] { (void)multiply<HostCompressed>(m.view(canonical), Scalar::weak_float(2.0)); }, parts);
    EXPECT_TRUE(same_bytes(table, before));
  };
  Small decreasing;
  decreasing.offsets[1] = 3;
  decreasing.offsets[2] = 1;
  refused(decreasing, {"offsets decrease", "offsets[1] = 3 > offsets[2] = 1"});
  Small first;
  first.offsets[0] = 1;
  refused(first, {"offsets run from 1 to 3", "not from 0 to nnz = 3"});
  Small last;
  last.offsets[3] = 2;
  refused(last, {"offsets run from 0 to 2"});
  Small negative;
  negative.offsets[0] = -1;
  refused(negative, {"offsets run from -1 to 3"});
  Small out_of_range;
  out_of_range.indices[1] = 4;
  refused(out_of_range, {"entry 1 is at (0, 4), outside its 3x4 shape"});
  Small unsorted;
  std::swap(unsorted.indices[0], unsorted.indices[1]);
  refused(unsorted, {"in row 0 entry 1 (column 1) does not come after entry 0 (column 3)"});
  unsorted.indices[0] = 1;  // a duplicate in a slice marked canonical
  refused(unsorted, {"canonical"});
  // Not marked canonical, the same slice is summed.
  const HostCompressed summed = coalesce<HostCompressed>(unsorted.view(false));
  EXPECT_EQ(summed.nnz(), 2);
  EXPECT_EQ(static_cast<const float*>(summed.vals())[0], 3.0f);
}

TEST(CompressedHost, EntriesOfAMatrixWithoutSlicesAreRefused) {
  // 0x4 CSR (no rows) claiming 2 entries: offsets {2}.
  const std::int32_t offsets[1] = {2}, indices[2] = {0, 1};
  const float vals[2] = {1, 2};
  const CompressedView v{offsets, indices, vals,
                         CooDesc{0, 4, 2, IndexType::i32, DType::f32, true}, SparseFormat::csr,
                         Memory::host};
  expect_invalid([&] { (void)coalesce<HostCompressed>(v); },
                 {"offsets run from 2 to 2", "not from 0 to nnz = 2"});
}

TEST(CompressedHost, ArgumentChecksNameTheValues) {
  Small m;
  CompressedView wide = m.view();
  wide.desc.nnz = std::int64_t{1} << 31;
  expect_invalid([&] { (void)coalesce<HostCompressed>(wide); }, {"do not fit int32 offsets"});
  CompressedView null = m.view();
  null.offsets = nullptr;
  expect_invalid([&] { (void)coalesce<HostCompressed>(null); }, {"null offsets"});
  CompressedView other = m.view();
  other.desc.ncols = 5;
  expect_invalid([&] { (void)multiply<HostCompressed>(m.view(), other); }, {"3x4", "3x5"});
  HostTensor dense(DType::f32, Dims{4, 3});
  expect_invalid([&] { (void)multiply<HostCompressed>(m.view(), dense.view()); }, {"(4,3)"});
  expect_invalid([&] { (void)multiply<DeviceCompressed>(m.view(), m.view()); }, {"host"});
  // A union with a scalar that is not sparse is refused as such, naming the operand's format,
  // before its offsets are read (these decrease).
  Small bad;
  bad.offsets[1] = 3;
  bad.offsets[2] = 1;
  CompressedView csc = bad.view();
  csc.format = SparseFormat::csc;
  csc.desc.nrows = 4;
  csc.desc.ncols = 3;
  expect_invalid(
      [&] { (void)combine<HostCompressed>(BinaryOp::add, bad.view(), Scalar::weak_float(1.5)); },
      {"add of a CSR matrix and the nonzero scalar 1.5"});
  expect_invalid(
      [&] { (void)combine<HostCompressed>(BinaryOp::sub, csc, Scalar::weak_int(-2)); },
      {"subtract of a CSC matrix and the nonzero scalar -2"});
  expect_invalid(
      [&] { (void)combine<HostCompressed>(BinaryOp::max, bad.view(), Scalar::weak_int(0)); },
      {"maximum of a CSR matrix and a scalar is not sparse"});
  EXPECT_EQ(combine<HostCompressed>(BinaryOp::sub, m.view(), Scalar::weak_float(-0.0)).nnz(), 3);
}

}  // namespace
}  // namespace ewise
