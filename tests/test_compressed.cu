// GPU tests of CSR and CSC operands (sparse/compressed.cpp, compressed.cu): every operation bit
// for bit against the CPU backend (itself checked against the COO operations in
// test_compressed_host.cpp) over random shapes past the tiles' edges, slices after long runs of
// empty ones (the spelling kernel's search), dtypes, index types, formats (CSR with CSC too),
// duplicates and unsorted slices, dense broadcasts and transposed tables, with and without the
// index checks; the refusals of bad offsets and indices with nothing written and no CUDA error
// left behind.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "testing/compressed.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

using test::compressed_difference;
using test::compressed_from;
using test::expect_invalid;

constexpr SparseFormat kFormats[] = {SparseFormat::csr, SparseFormat::csc};

bool same_bytes(const HostTensor& x, const HostTensor& y) {
  return x.bytes() == y.bytes() && std::memcmp(x.data(), y.data(), x.bytes()) == 0;
}

/// A random operand: canonical, or shuffled with duplicates; with `gaps`, its entries only in
/// rows and columns that are multiples of 97 (long runs of empty slices either way).
HostCoo random_operand(std::int64_t nrows, std::int64_t ncols, double density, DType t,
                       IndexType index, bool canonical, bool gaps, std::uint64_t seed) {
  verify::CooGenOptions o;
  o.index = index;
  o.dtype = t;
  o.unsorted = !canonical;
  o.duplicate_fraction = canonical ? 0.0 : 0.3;
  if (!gaps) return verify::random_coo(nrows, ncols, density, seed, o);
  const HostCoo small = verify::random_coo((nrows + 96) / 97, (ncols + 96) / 97, density, seed, o);
  HostCoo out(CooDesc{nrows, ncols, small.nnz(), index, t, small.desc().canonical});
  for (std::int64_t k = 0; k < small.nnz(); ++k) {
    test::write_index(out.rows(), index, k, 97 * test::read_index(small.rows(), index, k));
    test::write_index(out.cols(), index, k, 97 * test::read_index(small.cols(), index, k));
  }
  std::memcpy(out.vals(), small.vals(), small.nnz() * dtype_size(t));
  return out;
}

/// A case of the sweeps in failure messages: the formats, a's matrix, the seed, the options.
std::string case_name(SparseFormat fa, SparseFormat fb, const HostCoo& a, std::uint64_t seed,
                      const SparseOptions& options) {
  return std::string(format_name(fa)) + " " + format_name(fb) + " " + a.desc().str() + " seed " +
         std::to_string(seed) + (options.validate_indices ? "" : " unchecked") +
         (options.drop_zeros ? " drop_zeros" : "");
}

/// A GPU result against the CPU backend's, bit for bit.
void expect_same(const DeviceCompressed& got, const HostCompressed& want, const char* op,
                 const std::string& what) {
  EXPECT_EQ(compressed_difference(test::to_host(got.view()), want), "") << op << " " << what;
}

struct Shape {
  std::int64_t nrows, ncols;
  double density;
  bool gaps;
};

TEST(CompressedGpu, MatchesTheCpuBackend) {
  EWISE_REQUIRE_GPU();
  std::uint64_t seed = verify::seed_from_env_or_random();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const bool small = test::sanitizer_sizes();
  // 1500x2500 at 1%: 37,500 entries, many merge tiles; 30000x70 with gaps: slices of which
  // one in 97 holds entries (96 empty ones between them), either way round. The dense operands
  // stay small: the CPU backend's dense forms run once per case.
  const Shape shapes[] = {{1, 1, 1.0, false},
                          {37, 53, 0.2, false},
                          {0, 5, 0.0, false},
                          {9, 9, 0.0, false},
                          {1500, 2500, small ? 0.002 : 0.01, false},
                          {30000, 70, 0.5, true},
                          {70, 30000, 0.5, true}};
  for (const Shape& s : shapes)
    for (const DType t : test::sweep_dtypes())
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {true, false}) {
          const HostCoo a =
              random_operand(s.nrows, s.ncols, s.density, t, index, canonical, s.gaps, ++seed);
          const HostCoo b =
              random_operand(s.nrows, s.ncols, s.density, t, index, !canonical, s.gaps, ++seed);
          const HostTensor dense = verify::random_tensor(t, Dims{s.nrows, s.ncols}, ++seed);
          const HostTensor row = verify::random_tensor(t, Dims{s.ncols}, ++seed);
          const DeviceTensor ddense = to_device(dense.view(), stream);
          const DeviceTensor drow = to_device(row.view(), stream);
          // a column of another dtype (mixed values: the result f64)
          const HostTensor wide = verify::random_tensor(DType::f64, Dims{s.nrows, 1}, ++seed);
          const DeviceTensor dwide = to_device(wide.view(), stream);
          const DeviceCoo dcoo = to_device(a.view(), stream);
          for (const SparseFormat fa : kFormats)
            for (const SparseFormat fb : kFormats) {
              SparseOptions options;
              options.validate_indices = (seed % 4) != 0;
              const HostCompressed ha = compressed_from(a.view(), fa),
                                   hb = compressed_from(b.view(), fb);
              const DeviceCompressed da = test::to_device(ha.view()),
                                     db = test::to_device(hb.view());
              const std::string what = case_name(fa, fb, a, seed, options);
              const auto same = [&](const DeviceCompressed& got, const HostCompressed& want,
                                    const char* op) { expect_same(got, want, op, what); };
              same(multiply(da.view(), db.view(), options, stream),
                   multiply<HostCompressed>(ha.view(), hb.view()), "multiply");
              for (const BinaryOp op :
                   {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
                if (small && op != BinaryOp::add) continue;
                same(combine(op, da.view(), db.view(), options, stream),
                     combine<HostCompressed>(op, ha.view(), hb.view()), op_name(op));
              }
              if (fb != SparseFormat::csr) continue;  // the forms of one operand once a format
              same(multiply(da.view(), drow.view(), options, stream),
                   multiply<HostCompressed>(ha.view(), row.view()), "multiply row");
              same(multiply(da.view(), ddense.view(), options, stream),
                   multiply<HostCompressed>(ha.view(), dense.view()), "multiply dense");
              same(multiply(da.view(), dwide.view(), options, stream),
                   multiply<HostCompressed>(ha.view(), wide.view()), "multiply f64 column");
              same(multiply(da.view(), Scalar::weak_float(-0.75), options, stream),
                   multiply<HostCompressed>(ha.view(), Scalar::weak_float(-0.75)),
                   "multiply scalar");
              same(coalesce(da.view(), options, stream), coalesce<HostCompressed>(ha.view()),
                   "coalesce");
              same(to_compressed(dcoo.view(), fa, options, stream),
                   to_compressed<HostCompressed>(a.view(), fa), "to_compressed");
              EXPECT_EQ(compressed_difference(
                            compressed_from(to_host(to_coo(da.view(), options, stream).view()),
                                            SparseFormat::csr),
                            compressed_from(to_coo<HostCoo>(ha.view()), SparseFormat::csr)),
                        "")
                  << "to_coo " << what;
              EXPECT_TRUE(same_bytes(
                  to_host(combine(BinaryOp::max, da.view(), drow.view(), options, stream).view(),
                          stream),
                  combine<HostTensor>(BinaryOp::max, ha.view(), row.view())))
                  << "max dense " << what;
              // accumulate into a column-major table on both backends
              HostTensor want = to_host(dense.view());
              DeviceTensor got = to_device(dense.view(), stream);
              const Dims cm{1, std::max<std::int64_t>(s.nrows, 1)};
              TensorView w = want.view(), g = got.view();
              w.desc = g.desc = TensorDesc::strided(t, Dims{s.nrows, s.ncols}, cm);
              accumulate(BinaryOp::sub, w, ha.view());
              accumulate(BinaryOp::sub, g, da.view(), options, stream);
              EXPECT_TRUE(same_bytes(to_host(got.view(), stream), want)) << "accumulate " << what;
            }
        }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(CompressedGpu, MergesCanonicalOperandsAsStored) {
  EWISE_REQUIRE_GPU();
  std::uint64_t seed = verify::seed_from_env_or_random();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const bool small = test::sanitizer_sizes();
  // Two canonical operands of one format merge as stored (compressed_merge.cu); CSR with CSC
  // and lopsided pairs (sort_search) take the spelled path. Shapes: one entry; a merge tile's
  // worth; hundreds of tiles (i32: 2,560 merged entries a tile) of a few slices (the
  // tile's major indices counted), of tens of slices (marked and scanned); slices of which one
  // in 97 holds entries, either way round, so that a tile spans thousands of empty slices
  // (binary lifting).
  const Shape shapes[] = {{1, 1, 1.0, false},
                          {37, 53, 0.4, false},
                          {64, 100000, small ? 0.005 : 0.05, false},
                          {3000, 3000, small ? 0.002 : 0.05, false},
                          {300000, 200, 0.5, true},
                          {200, 300000, 0.5, true}};
  for (const Shape& s : shapes)
    for (const DType t : test::sweep_dtypes())
      for (const IndexType index : {IndexType::i32, IndexType::i64}) {
        const auto operand = [&](double density, DType dtype) {
          return random_operand(s.nrows, s.ncols, density, dtype, index, true, s.gaps, ++seed);
        };
        const HostCoo a = operand(s.density, t), b = operand(s.density, t);
        // few: the intersection's Q is then b (the union's is a); wide: values in f64
        const HostCoo few = operand(s.density / 64, t);
        const HostCompressed wide = compressed_from(operand(s.density, DType::f64).view(),
                                                    SparseFormat::csr);
        for (const SparseFormat fa : kFormats)
          for (const SparseFormat fb : kFormats) {
            if (small && fa != fb) continue;
            SparseOptions options;
            options.validate_indices = (seed % 4) != 0;
            options.drop_zeros = (seed % 3) == 0;
            const HostCompressed ha = compressed_from(a.view(), fa),
                                 hb = compressed_from(b.view(), fb),
                                 hf = compressed_from(few.view(), fb);
            const DeviceCompressed da = test::to_device(ha.view()), db = test::to_device(hb.view()),
                                   df = test::to_device(hf.view());
            const std::string what = case_name(fa, fb, a, seed, options);
            const auto same = [&](const DeviceCompressed& got, const HostCompressed& want,
                                  const char* op) { expect_same(got, want, op, what); };
            same(multiply(da.view(), db.view(), options, stream),
                 multiply<HostCompressed>(ha.view(), hb.view(), options), "multiply");
            same(multiply(da.view(), df.view(), options, stream),
                 multiply<HostCompressed>(ha.view(), hf.view(), options), "multiply few");
            same(multiply(da.view(), da.view(), options, stream),
                 multiply<HostCompressed>(ha.view(), ha.view(), options), "multiply itself");
            for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
              if (small && op != BinaryOp::add) continue;
              same(combine(op, da.view(), db.view(), options, stream),
                   combine<HostCompressed>(op, ha.view(), hb.view(), options), op_name(op));
            }
            same(combine(BinaryOp::sub, da.view(), da.view(), options, stream),
                 combine<HostCompressed>(BinaryOp::sub, ha.view(), ha.view(), options),
                 "sub itself");
            same(combine(BinaryOp::add, df.view(), da.view(), options, stream),
                 combine<HostCompressed>(BinaryOp::add, hf.view(), ha.view(), options), "few add");
            if (fa != SparseFormat::csr || fb != SparseFormat::csr) continue;
            const DeviceCompressed dw = test::to_device(wide.view());
            same(multiply(da.view(), dw.view(), options, stream),
                 multiply<HostCompressed>(ha.view(), wide.view(), options), "multiply f64");
            same(combine(BinaryOp::add, da.view(), dw.view(), options, stream),
                 combine<HostCompressed>(BinaryOp::add, ha.view(), wide.view(), options),
                 "add f64");
          }
      }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(CompressedGpu, RefusesBadOffsetsAndIndicesBeforeWriting) {
  EWISE_REQUIRE_GPU();
  for (const SparseFormat f : kFormats) {
    // A 3x4 matrix's slices (3 rows for CSR; 4 columns for CSC), i64.
    const bool csr = f == SparseFormat::csr;
    const std::vector<std::int64_t> good_offsets =
        csr ? std::vector<std::int64_t>{0, 2, 2, 3} : std::vector<std::int64_t>{0, 2, 2, 2, 3};
    const std::vector<std::int64_t> good_indices = {0, 2, 1};
    struct Case {
      std::vector<std::int64_t> offsets, indices;
      bool canonical;
      std::string message;
    };
    const std::string slice = csr ? "row" : "column", minor = csr ? "column" : "row";
    std::vector<std::int64_t> decreasing = good_offsets, first = good_offsets, last = good_offsets,
                              negative = good_offsets;
    decreasing[1] = 3;
    first[0] = 1;
    last.back() = 2;
    negative[0] = -1;  // entry 0's slice then starts below it: its predecessor must not be read
    const Case cases[] = {
        {decreasing, good_indices, true, "offsets[1] = 3 > offsets[2] = 2"},
        {first, good_indices, true, "offsets run from 1 to 3"},
        {last, good_indices, true, "offsets run from 0 to 2"},
        {negative, good_indices, true, "offsets run from -1 to 3"},
        {good_offsets,
         {0, csr ? 4 : 3, 1},
         true,
         csr ? "entry 1 is at (0, 4)" : "entry 1 is at (3, 0)"},
        {good_offsets,
         {2, 0, 1},
         true,
         "in " + slice + " 0 entry 1 (" + minor + " 0) does not come after entry 0"},
        {good_offsets, {-1, 2, 1}, false, "entry 0 is at"}};
    for (const Case& c : cases) {
      HostTensor offsets(DType::i64, Dims{static_cast<std::int64_t>(c.offsets.size())}),
          indices(DType::i64, Dims{3}), vals(DType::f32, Dims{3});
      std::memcpy(offsets.data(), c.offsets.data(), offsets.bytes());
      std::memcpy(indices.data(), c.indices.data(), indices.bytes());
      std::memset(vals.data(), 0, vals.bytes());
      const DeviceTensor doff = to_device(offsets.view()), didx = to_device(indices.view()),
                         dval = to_device(vals.view());
      const CompressedView v{doff.data(), didx.data(),
                             dval.data(), CooDesc{3, 4, 3, IndexType::i64, DType::f32, c.canonical},
                             f,           Memory::device};
      const HostTensor start = verify::random_tensor(DType::f32, Dims{3, 4}, 5);
      DeviceTensor table = to_device(start.view());
      expect_invalid([&] { accumulate(BinaryOp::add, table.view(), v); }, {c.message});
      expect_invalid([&] { (void)combine(BinaryOp::add, v, v); }, {c.message});
      expect_invalid([&] { (void)multiply(v, v); }, {c.message});
      expect_invalid([&] { (void)to_coo(v); }, {c.message});
      expect_invalid([&] { (void)multiply(v, table.view()); }, {c.message});
      expect_invalid([&] { (void)multiply(v, Scalar::weak_float(2.0)); }, {c.message});
      expect_invalid([&] { combine(BinaryOp::add, v, table.view(), table.view()); }, {c.message});
      EXPECT_TRUE(same_bytes(to_host(table.view()), start)) << c.message;
      EXPECT_EQ(cudaGetLastError(), cudaSuccess);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }
}

/// A canonical CSR of `rows` slices of `per` entries each (columns 0, 1, ...), with entry k's
/// column made its predecessor's where k >= 0.
CompressedView unordered_at(std::int64_t rows, std::int64_t per, std::int64_t k,
                            DeviceTensor (&arrays)[3]) {
  const std::int64_t nnz = rows * per;
  HostTensor offsets(DType::i32, Dims{rows + 1}), indices(DType::i32, Dims{nnz}),
      vals(DType::f32, Dims{nnz});
  auto* o = static_cast<std::int32_t*>(offsets.data());
  auto* i = static_cast<std::int32_t*>(indices.data());
  for (std::int64_t r = 0; r <= rows; ++r) o[r] = static_cast<std::int32_t>(r * per);
  for (std::int64_t e = 0; e < nnz; ++e) i[e] = static_cast<std::int32_t>(e % per);
  if (k >= 0) i[k] = i[k - 1];
  std::memset(vals.data(), 0, vals.bytes());
  arrays[0] = to_device(offsets.view());
  arrays[1] = to_device(indices.view());
  arrays[2] = to_device(vals.view());
  return CompressedView{arrays[0].data(), arrays[1].data(), arrays[2].data(),
                        CooDesc{rows, per, nnz, IndexType::i32, DType::f32, true},
                        SparseFormat::csr, Memory::device};
}

TEST(CompressedGpu, NamesAnUnorderedEntryAtEveryPlaceOfAWarpsStep) {
  EWISE_REQUIRE_GPU();
  // A warp's step is 256 entries, 8 a lane: entries at its start (whose predecessor is the step
  // before's), at a lane's and an item's edges, in long slices (the warp's window of slice
  // starts) and in slices of 2 (a lane's own search); and a slice's first entry, which may be
  // below its predecessor's column.
  struct Case {
    std::int64_t rows, per, k;
  };
  for (const Case c : {Case{3, 700, 1}, Case{3, 700, 255}, Case{3, 700, 256}, Case{3, 700, 288},
                       Case{3, 700, 263}, Case{3, 700, 1401}, Case{1000, 2, 257},
                       Case{1000, 2, 1999}, Case{3, 700, -1}, Case{1000, 2, -1}}) {
    DeviceTensor arrays[3];
    const CompressedView v = unordered_at(c.rows, c.per, c.k, arrays);
    if (c.k < 0) {  // every slice starts below its predecessor's last column
      EXPECT_EQ(to_coo(v).nnz(), c.rows * c.per);
      EXPECT_EQ(multiply(v, Scalar::weak_float(2.0)).nnz(), c.rows * c.per);
      continue;
    }
    const std::int64_t col = (c.k - 1) % c.per;
    const std::string message = "in row " + std::to_string(c.k / c.per) + " entry " +
                                std::to_string(c.k) + " (column " + std::to_string(col) +
                                ") does not come after entry " + std::to_string(c.k - 1);
    expect_invalid([&] { (void)to_coo(v); }, {message});
    expect_invalid([&] { (void)multiply(v, Scalar::weak_float(2.0)); }, {message});
    // merged as stored, the entry as one operand or the other
    DeviceTensor good[3];
    const CompressedView w = unordered_at(c.rows, c.per, -1, good);
    expect_invalid([&] { (void)multiply(v, w); }, {message});
    expect_invalid([&] { (void)combine(BinaryOp::add, w, v); }, {message});
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}

TEST(CompressedGpu, EntriesOfAMatrixWithoutSlicesAreRefused) {
  EWISE_REQUIRE_GPU();
  // 0x4 CSR (no rows) claiming 2 entries, canonical: the spelling pass reads offsets[0] only.
  HostTensor offsets(DType::i32, Dims{1}), indices(DType::i32, Dims{2}), vals(DType::f32, Dims{2});
  const std::int32_t o[1] = {2}, i[2] = {0, 1};
  std::memcpy(offsets.data(), o, sizeof o);
  std::memcpy(indices.data(), i, sizeof i);
  std::memset(vals.data(), 0, vals.bytes());
  const DeviceTensor doff = to_device(offsets.view()), didx = to_device(indices.view()),
                     dval = to_device(vals.view());
  const CompressedView v{doff.data(), didx.data(), dval.data(),
                         CooDesc{0, 4, 2, IndexType::i32, DType::f32, true}, SparseFormat::csr,
                         Memory::device};
  expect_invalid([&] { (void)coalesce(v); }, {"offsets run from 2 to 2", "not from 0 to nnz = 2"});
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace ewise
