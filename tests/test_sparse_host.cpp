// Host tests of the sparse half: the CPU reference on hand-checked examples and on properties
// that tie it to the dense reference, every argument check, algorithm names and selection.
// No GPU needed: host views run on the CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ewise/compare.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/nan_bits.hpp"

namespace ewise {
namespace {

/// A host COO from lists (values as doubles, stored in `dtype`).
HostCoo make_coo(std::int64_t nrows, std::int64_t ncols, const std::vector<std::int64_t>& rows,
                 const std::vector<std::int64_t>& cols, const std::vector<double>& vals,
                 DType dtype = DType::f32, IndexType index = IndexType::i32,
                 bool canonical = false) {
  const auto n = static_cast<std::int64_t>(rows.size());
  HostCoo m(CooDesc{nrows, ncols, n, index, dtype, canonical});
  for (std::int64_t k = 0; k < n; ++k) {
    const auto put = [&](void* base, std::int64_t v) {
      if (index == IndexType::i32) static_cast<std::int32_t*>(base)[k] = static_cast<std::int32_t>(v);
      else static_cast<std::int64_t*>(base)[k] = v;
    };
    put(m.rows(), rows[k]);
    put(m.cols(), cols[k]);
    const double v = vals[k];
    switch (dtype) {
      case DType::f16: static_cast<std::uint16_t*>(m.vals())[k] = float_to_f16_bits(static_cast<float>(v)); break;
      case DType::bf16: static_cast<std::uint16_t*>(m.vals())[k] = float_to_bf16_bits(static_cast<float>(v)); break;
      case DType::f32: static_cast<float*>(m.vals())[k] = static_cast<float>(v); break;
      case DType::f64: static_cast<double*>(m.vals())[k] = v; break;
      case DType::i32: static_cast<std::int32_t*>(m.vals())[k] = static_cast<std::int32_t>(v); break;
      case DType::i64: static_cast<std::int64_t*>(m.vals())[k] = static_cast<std::int64_t>(v); break;
      default: ADD_FAILURE() << dtype_name(dtype) << " is not a sparse dtype";
    }
  }
  return m;
}

struct Entry {
  std::int64_t r, c;
  double v;
  bool operator==(const Entry& o) const { return r == o.r && c == o.c && v == o.v; }
};
std::ostream& operator<<(std::ostream& os, const Entry& e) {
  return os << "(" << e.r << "," << e.c << ")=" << e.v;
}

double value_at(const HostCoo& m, std::int64_t k) {
  const void* v = m.vals();
  switch (m.desc().dtype) {
    case DType::f16: return f16_bits_to_float(static_cast<const std::uint16_t*>(v)[k]);
    case DType::bf16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(v)[k]);
    case DType::f32: return static_cast<const float*>(v)[k];
    case DType::f64: return static_cast<const double*>(v)[k];
    case DType::i32: return static_cast<const std::int32_t*>(v)[k];
    case DType::i64: return static_cast<double>(static_cast<const std::int64_t*>(v)[k]);
    default: ADD_FAILURE() << dtype_name(m.desc().dtype) << " is not a sparse dtype";
  }
  return 0;
}

std::int64_t index_at(const void* p, IndexType t, std::int64_t k) {
  return t == IndexType::i32 ? static_cast<const std::int32_t*>(p)[k]
                             : static_cast<const std::int64_t*>(p)[k];
}

std::vector<Entry> entries(const HostCoo& m) {
  std::vector<Entry> out;
  for (std::int64_t k = 0; k < m.nnz(); ++k)
    out.push_back({index_at(m.rows(), m.desc().index, k), index_at(m.cols(), m.desc().index, k),
                   value_at(m, k)});
  return out;
}

using test::expect_invalid;

// ---- hand-checked examples ------------------------------------------------------------------

TEST(SparseReference, MultiplyIsTheIntersectionWithDuplicatesSummedFirst) {
  // a: (0,1) twice (1.5 + 2 = 3.5), (2,0), (1,1); unsorted.  b: (1,1), (0,1), (2,2), (0,1) dup.
  const HostCoo a = make_coo(3, 3, {2, 0, 1, 0}, {0, 1, 1, 1}, {5, 1.5, -2, 2});
  const HostCoo b = make_coo(3, 3, {1, 0, 2, 0}, {1, 1, 2, 1}, {4, 0.5, 7, 0.25});
  const HostCoo c = multiply<HostCoo>(a, b);
  // (0,1): 3.5 * 0.75; (1,1): -2 * 4. Sorted row-major, nothing else.
  EXPECT_EQ(entries(c), (std::vector<Entry>{{0, 1, 3.5 * 0.75}, {1, 1, -8}}));
  EXPECT_TRUE(c.desc().canonical);
  EXPECT_EQ(c.desc().nrows, 3);
  EXPECT_EQ(c.desc().dtype, DType::f32);
}

TEST(SparseReference, SumsInStorageOrderInTheComputeType) {
  // f16: 2048 + 1 + 1 in storage order in f32 is 2050 exactly; in f16 step by step it would
  // stay 2048 (2049 is not representable and ties to even).
  const HostCoo a = make_coo(1, 1, {0, 0, 0}, {0, 0, 0}, {2048, 1, 1}, DType::f16);
  const HostCoo one = make_coo(1, 1, {0}, {0}, {1}, DType::f16);
  EXPECT_EQ(entries(multiply<HostCoo>(a, one)), (std::vector<Entry>{{0, 0, 2050}}));
  // f32: 1e8 + 1 - 1e8 in that order is 0 in f32 (1e8 + 1 rounds to 1e8), not 1.
  const HostCoo b = make_coo(1, 1, {0, 0, 0}, {0, 0, 0}, {1e8, 1, -1e8});
  const HostCoo onef = make_coo(1, 1, {0}, {0}, {1});
  EXPECT_EQ(entries(multiply<HostCoo>(b, onef)), (std::vector<Entry>{{0, 0, 0}}));
  // i32 wraps.
  const HostCoo w = make_coo(1, 1, {0, 0}, {0, 0}, {2147483647.0, 1}, DType::i32);
  EXPECT_EQ(entries(coalesce<HostCoo>(w)), (std::vector<Entry>{{0, 0, -2147483648.0}}));
}

TEST(SparseReference, ZerosAreKeptUnlessDropped) {
  // (0,0): 2 + -2 = 0; (0,1): stored 0; (1,1): 3.
  const HostCoo a = make_coo(2, 2, {0, 0, 0, 1}, {0, 0, 1, 1}, {2, -2, 0, 3});
  const HostCoo b = make_coo(2, 2, {0, 0, 1}, {0, 1, 1}, {5, 5, 5});
  EXPECT_EQ(entries(multiply<HostCoo>(a, b)),
            (std::vector<Entry>{{0, 0, 0}, {0, 1, 0}, {1, 1, 15}}));
  SparseOptions drop;
  drop.drop_zeros = true;
  EXPECT_EQ(entries(multiply<HostCoo>(a, b, drop)), (std::vector<Entry>{{1, 1, 15}}));
  EXPECT_EQ(entries(coalesce<HostCoo>(a, drop)), (std::vector<Entry>{{1, 1, 3}}));
  EXPECT_EQ(entries(coalesce<HostCoo>(a)), (std::vector<Entry>{{0, 0, 0}, {0, 1, 0}, {1, 1, 3}}));
}

TEST(SparseReference, MultiplyByBroadcastDense) {
  const HostCoo a = make_coo(2, 3, {1, 0, 1}, {2, 1, 2}, {1, 2, 3});  // (0,1)=2, (1,2)=4
  HostTensor full(DType::f32, Dims{2, 3});
  for (int i = 0; i < 6; ++i) full.data_as<float>()[i] = static_cast<float>(10 * i);
  EXPECT_EQ(entries(multiply<HostCoo>(a, full.view())),
            (std::vector<Entry>{{0, 1, 20}, {1, 2, 200}}));
  HostTensor row(DType::f32, Dims{1, 3}), col(DType::f32, Dims{2, 1}), scalar(DType::f32, Dims{});
  for (int i = 0; i < 3; ++i) row.data_as<float>()[i] = static_cast<float>(i + 1);
  col.data_as<float>()[0] = -1;
  col.data_as<float>()[1] = 3;
  scalar.data_as<float>()[0] = 0.5f;
  EXPECT_EQ(entries(multiply<HostCoo>(a, row.view())), (std::vector<Entry>{{0, 1, 4}, {1, 2, 12}}));
  EXPECT_EQ(entries(multiply<HostCoo>(a, col.view())), (std::vector<Entry>{{0, 1, -2}, {1, 2, 12}}));
  EXPECT_EQ(entries(multiply<HostCoo>(a, scalar.view())), (std::vector<Entry>{{0, 1, 1}, {1, 2, 2}}));
  // A 1-D (ncols,) tensor is a row vector; a transposed (strided) view reads through strides.
  const ConstTensorView flat{row.data(), TensorDesc::contiguous(DType::f32, {3}), Memory::host};
  EXPECT_EQ(entries(multiply<HostCoo>(a, flat)), (std::vector<Entry>{{0, 1, 4}, {1, 2, 12}}));
  HostTensor t(DType::f32, Dims{3, 2});  // t^T is 2x3 with t^T(i,j) = t(j,i)
  for (int i = 0; i < 6; ++i) t.data_as<float>()[i] = static_cast<float>(i);
  const ConstTensorView tt{t.data(), TensorDesc::strided(DType::f32, {2, 3}, {1, 2}), Memory::host};
  EXPECT_EQ(entries(multiply<HostCoo>(a, tt)), (std::vector<Entry>{{0, 1, 2 * 2}, {1, 2, 4 * 5}}));
}

TEST(SparseReference, Conversions) {
  const HostCoo a = make_coo(3, 4, {2, 0, 2, 0}, {3, 1, 3, 0}, {1, 2, 3, 4});
  const HostTensor d = coo_to_dense<HostTensor>(a);
  ASSERT_EQ(d.shape(), (Dims{3, 4}));
  const std::vector<float> want = {4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4};
  EXPECT_EQ(std::vector<float>(d.data_as<float>(), d.data_as<float>() + 12), want);
  const HostCoo back = dense_to_coo<HostCoo>(d.view(), IndexType::i64);
  EXPECT_EQ(entries(back), (std::vector<Entry>{{0, 0, 4}, {0, 1, 2}, {2, 3, 4}}));
  EXPECT_EQ(back.desc().index, IndexType::i64);
  EXPECT_TRUE(back.desc().canonical);
  // -0 is dropped, NaN kept.
  HostTensor z(DType::f32, Dims{1, 3});
  z.data_as<float>()[0] = -0.0f;
  z.data_as<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  z.data_as<float>()[2] = 0.0f;
  const HostCoo zc = dense_to_coo<HostCoo>(z.view());
  ASSERT_EQ(zc.nnz(), 1);
  EXPECT_EQ(index_at(zc.cols(), IndexType::i32, 0), 1);
  // CSR row offsets of the canonical form.
  const HostCoo c = coalesce<HostCoo>(a);
  const HostTensor off = coo_to_csr_row_offsets<HostTensor>(c);
  ASSERT_EQ(off.dtype(), DType::i32);
  EXPECT_EQ(std::vector<std::int32_t>(off.data_as<std::int32_t>(), off.data_as<std::int32_t>() + 4),
            (std::vector<std::int32_t>{0, 2, 2, 3}));
}

/// The number of NaN elements among n of dtype t at p; each must be the canonical NaN.
std::int64_t canonical_nans(DType t, const void* p, std::int64_t n, const std::string& what) {
  std::int64_t nans = 0;
  const std::size_t size = dtype_size(t);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto* e = static_cast<const std::byte*>(p) + i * static_cast<std::int64_t>(size);
    if (!test::is_nan_bits(t, e)) continue;
    ++nans;
    std::uint64_t bits = 0;
    std::memcpy(&bits, e, size);
    EXPECT_EQ(bits, test::canonical_nan_bits(t)) << what << " element " << i;
  }
  return nans;
}

// ops.hpp's NaN rule on the CPU backend: whatever NaN an entry or a dense element holds, every
// NaN the sparse operations write is canonical: sums of duplicates, a lone entry through
// coalesce, products, multiply_values, and both conversions.
TEST(SparseReference, NaNValuesLeaveCanonical) {
  std::mt19937_64 rng(5);
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    verify::CooGenOptions o;
    o.dtype = t;
    o.unsorted = true;
    o.duplicate_fraction = 0.3;
    HostCoo a = verify::random_coo(40, 30, 0.3, 1, o);
    test::sprinkle_nans(t, a.vals(), a.nnz(), 0.2, rng);
    HostTensor d = verify::random_tensor(t, Dims{40, 30}, 2);
    test::sprinkle_nans(t, d.data(), d.numel(), 0.2, rng);
    const std::string name = dtype_name(t);
    const HostCoo c = coalesce<HostCoo>(a);
    EXPECT_GT(canonical_nans(t, c.vals(), c.nnz(), name + " coalesce"), 0);
    const HostCoo p = multiply<HostCoo>(a, c);
    EXPECT_GT(canonical_nans(t, p.vals(), p.nnz(), name + " multiply"), 0);
    const HostCoo pd = multiply<HostCoo>(a, d.view());
    EXPECT_GT(canonical_nans(t, pd.vals(), pd.nnz(), name + " multiply dense"), 0);
    HostTensor v(t, Dims{a.nnz()});
    multiply_values(a, d.view(), v.view());
    EXPECT_GT(canonical_nans(t, v.data(), v.numel(), name + " multiply_values"), 0);
    const HostTensor cd = coo_to_dense<HostTensor>(a);
    EXPECT_GT(canonical_nans(t, cd.data(), cd.numel(), name + " coo_to_dense"), 0);
    const HostCoo dc = dense_to_coo<HostCoo>(d.view());
    EXPECT_GT(canonical_nans(t, dc.vals(), dc.nnz(), name + " dense_to_coo"), 0);
  }
}

// ---- properties on random matrices -----------------------------------------------------------

/// m's entries in reverse storage order, not marked canonical: the general path's input.
HostCoo reversed(const HostCoo& m) {
  CooDesc d = m.desc();
  d.canonical = false;
  HostCoo g(d);
  const std::size_t ib = index_size(d.index), vb = dtype_size(d.dtype);
  const auto n = static_cast<std::size_t>(m.nnz());
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t from = n - 1 - k;
    std::memcpy(static_cast<char*>(g.rows()) + k * ib, static_cast<const char*>(m.rows()) + from * ib, ib);
    std::memcpy(static_cast<char*>(g.cols()) + k * ib, static_cast<const char*>(m.cols()) + from * ib, ib);
    std::memcpy(static_cast<char*>(g.vals()) + k * vb, static_cast<const char*>(m.vals()) + from * vb, vb);
  }
  return g;
}

/// x and y hold the same entries, in the same order, bit for bit.
void expect_same_coo(const HostCoo& x, const HostCoo& y, const std::string& what) {
  ASSERT_EQ(x.nnz(), y.nnz()) << what;
  const std::size_t ib = index_size(x.desc().index), vb = dtype_size(x.desc().dtype);
  const auto n = static_cast<std::size_t>(x.nnz());
  if (n == 0) return;  // memcmp must not see the null arrays of empty matrices
  EXPECT_EQ(0, std::memcmp(x.rows(), y.rows(), n * ib)) << what;
  EXPECT_EQ(0, std::memcmp(x.cols(), y.cols(), n * ib)) << what;
  EXPECT_EQ(0, std::memcmp(x.vals(), y.vals(), n * vb)) << what;
}

class SparseReferenceRandom : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = verify::seed_from_env_or_random();
    std::cout << "[ seed ] EWISE_SEED=" << seed_ << "\n";
  }
  std::uint64_t seed_ = 0;
};

// The reference's multiply agrees with densify-then-dense-multiply, restricted to the pattern.
TEST_F(SparseReferenceRandom, MultiplyAgreesWithDenseReference) {
  for (const bool unsorted : {false, true}) {
    verify::CooGenOptions o;
    o.unsorted = unsorted;
    o.duplicate_fraction = 0.3;
    const HostCoo a = verify::random_coo(37, 53, 0.3, seed_, o);
    const HostCoo b = verify::random_coo(37, 53, 0.3, seed_ + 1, o);
    const HostCoo c = multiply<HostCoo>(a, b);
    const HostTensor da = coo_to_dense<HostTensor>(a), db = coo_to_dense<HostTensor>(b);
    HostTensor prod(DType::f32, Dims{37, 53});
    reference_binary(BinaryOp::mul, da.view(), db.view(), prod.view());
    const HostTensor dc = coo_to_dense<HostTensor>(c);
    // Coordinates stored in both: the dense product; elsewhere c holds nothing.
    const HostCoo ca = coalesce<HostCoo>(a), cb = coalesce<HostCoo>(b);
    std::vector<char> in_a(37 * 53, 0), in_b(37 * 53, 0);
    for (const Entry& e : entries(ca)) in_a[e.r * 53 + e.c] = 1;
    for (const Entry& e : entries(cb)) in_b[e.r * 53 + e.c] = 1;
    std::int64_t both = 0;
    for (int i = 0; i < 37 * 53; ++i) {
      const float want = in_a[i] && in_b[i] ? prod.data_as<float>()[i] : 0.0f;
      both += in_a[i] && in_b[i];
      ASSERT_EQ(dc.data_as<float>()[i], want) << "element " << i;
    }
    EXPECT_EQ(c.nnz(), both);
    EXPECT_GT(both, 0);
    const verify::CooCompareReport self = verify::compare_coo(c, c, verify::Tolerance{});
    EXPECT_TRUE(self.got_canonical);
  }
}

// The CPU backend reads canonical operands in place (reference.cpp's merge_canonical and
// scale_canonical); the same entries in a random order go through the general path (a stable
// sort, duplicates summed, the merge of the summed vectors). Both give the same matrix, bit for
// bit: every dtype and index type, NaN, zeros (stored and dropped), an empty operand, the union
// operations with fills, products with a dense matrix, row and column. Sorted entries not
// marked canonical take the in-place paths too.
TEST_F(SparseReferenceRandom, CanonicalMergeIsTheGeneralPath) {
  std::mt19937_64 rng(seed_);
  const auto same = expect_same_coo;
  for (const DType t : kSparseDTypes) {
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      verify::CooGenOptions o;
      o.dtype = t;
      o.index = index;
      o.values.allow_zero = true;  // (integers from [-2, 2]: zeros stored and made)
      o.values.lo = -2;
      o.values.hi = 2;
      HostCoo a = verify::random_coo(41, 67, 0.3, seed_, o);
      HostCoo b = verify::random_coo(41, 67, 0.25, seed_ + 1, o);
      const HostCoo empty = verify::random_coo(41, 67, 0.0, seed_ + 2, o);
      if (t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64) {
        test::sprinkle_nans(t, a.vals(), a.nnz(), 0.1, rng);
        test::sprinkle_nans(t, b.vals(), b.nnz(), 0.1, rng);
      }
      ASSERT_TRUE(a.desc().canonical && b.desc().canonical && empty.desc().canonical);
      // the same entries in a random order, not marked canonical: the general path
      const auto general = [&rng](const HostCoo& m) {
        CooDesc d = m.desc();
        d.canonical = false;
        HostCoo g(d);
        std::vector<std::int64_t> order(static_cast<std::size_t>(m.nnz()));
        std::iota(order.begin(), order.end(), std::int64_t{0});
        std::shuffle(order.begin(), order.end(), rng);
        const std::size_t ib = index_size(d.index), vb = dtype_size(d.dtype);
        for (std::size_t k = 0; k < order.size(); ++k) {
          const auto from = static_cast<std::size_t>(order[k]);
          std::memcpy(static_cast<char*>(g.rows()) + k * ib,
                      static_cast<const char*>(m.rows()) + from * ib, ib);
          std::memcpy(static_cast<char*>(g.cols()) + k * ib,
                      static_cast<const char*>(m.cols()) + from * ib, ib);
          std::memcpy(static_cast<char*>(g.vals()) + k * vb,
                      static_cast<const char*>(m.vals()) + from * vb, vb);
        }
        return g;
      };
      const std::string name = std::string(dtype_name(t)) + " " + index_name(index);
      for (const bool drop : {false, true}) {
        SparseOptions so;
        so.drop_zeros = drop;
        so.fill_a = 3;
        so.fill_b = -2;
        const std::string w = name + (drop ? " drop_zeros" : "");
        same(multiply<HostCoo>(a, b, so), multiply<HostCoo>(general(a), general(b), so),
             "multiply " + w);
        same(multiply<HostCoo>(a, empty, so), multiply<HostCoo>(general(a), general(empty), so),
             "multiply by empty " + w);
        CooView unmarked = a.view();  // sorted, not marked canonical
        unmarked.desc.canonical = false;
        same(combine<HostCoo>(BinaryOp::add, unmarked, b, so), combine<HostCoo>(BinaryOp::add, a, b, so),
             "add, sorted but unmarked " + w);
        for (const Dims& shape : {Dims{41, 67}, Dims{67}, Dims{41, 1}}) {  // a ⊙ dense, in place
          HostTensor d = verify::random_tensor(t, shape, seed_ + 3);
          if (t == DType::f32) test::sprinkle_nans(t, d.data(), d.numel(), 0.1, rng);
          same(multiply<HostCoo>(a, d.view(), so), multiply<HostCoo>(general(a), d.view(), so),
               "multiply by dense " + shape.str() + " " + w);
        }
        for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
          same(combine<HostCoo>(op, a, b, so), combine<HostCoo>(op, general(a), general(b), so),
               std::string(op_name(op)) + " " + w);
          same(combine<HostCoo>(op, empty, b, so),
               combine<HostCoo>(op, general(empty), general(b), so),
               std::string(op_name(op)) + " empty " + w);
        }
      }
    }
  }
}

// Canonical merges large enough to be split over the CPU backend's threads at row boundaries
// (merge_canonical: parts of at least 2^18 entries, their stretches moved together after): the
// same entries and bits as the general path. ctest also runs this with EWISE_NUM_THREADS=1 and =5.
TEST_F(SparseReferenceRandom, LargeCanonicalMergesSplitOverThreads) {
  std::mt19937_64 rng(seed_);
  for (const DType t : {DType::f32, DType::i64}) {
    verify::CooGenOptions o;
    o.dtype = t;
    o.values.allow_zero = true;
    o.values.lo = -2;
    o.values.hi = 2;
    const HostCoo a = verify::random_coo(1500, 1200, 0.3, seed_, o);
    const HostCoo b = verify::random_coo(1500, 1200, 0.2, seed_ + 1, o);
    ASSERT_GE(a.nnz() + b.nnz(), 3 * (std::int64_t{1} << 18));
    const HostCoo ga = reversed(a), gb = reversed(b);  // the general path's operands
    for (const bool drop : {false, true}) {
      SparseOptions so;
      so.drop_zeros = drop;
      const std::string w = std::string(dtype_name(t)) + (drop ? " drop_zeros" : "");
      expect_same_coo(multiply<HostCoo>(a, b, so), multiply<HostCoo>(ga, gb, so), "multiply " + w);
      for (const BinaryOp op : {BinaryOp::add, BinaryOp::max})
        expect_same_coo(combine<HostCoo>(op, a, b, so), combine<HostCoo>(op, ga, gb, so),
                        std::string(op_name(op)) + " " + w);
    }
  }
}

// Operands in no order with duplicates, large enough that the radix sort and the read split
// over the pool (ctest runs this at 1 and 5 threads too): coalesce against a stable sort of the
// positions by key with each coordinate's f32 values summed in storage order, bit for bit (the
// order of the additions shows in the sums' bits).
TEST_F(SparseReferenceRandom, LargeShuffledOperandsSortOverThreads) {
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o;
    o.index = index;
    o.dtype = DType::f32;
    o.unsorted = true;
    o.duplicate_fraction = 0.4;
    const HostCoo a = verify::random_coo(3000, 2500, 0.2, seed_, o);
    ASSERT_GE(a.nnz(), 2 * (std::int64_t{1} << 20));
    const std::vector<Entry> in = entries(a);
    std::vector<std::size_t> order(in.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return in[x].r != in[y].r ? in[x].r < in[y].r : in[x].c < in[y].c;
    });
    std::vector<Entry> want;
    for (const std::size_t k : order) {
      if (!want.empty() && want.back().r == in[k].r && want.back().c == in[k].c)
        want.back().v = static_cast<float>(want.back().v) + static_cast<float>(in[k].v);
      else want.push_back(in[k]);
    }
    const std::vector<Entry> got = entries(coalesce<HostCoo>(a));
    ASSERT_EQ(got.size(), want.size()) << index_name(index);
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], want[k]) << "entry " << k << ", " << index_name(index);
  }
}

// COO ⊕ dense and accumulate with entries enough for their gathers and scatters to split over
// the pool (for_each_summed_parallel; ctest runs this at 1 and 5 threads too): an operand in no
// order with duplicates, against the dense reference of its densified form (i64: exact sums).
TEST_F(SparseReferenceRandom, LargeEntriesIntoDenseOverThreads) {
  verify::CooGenOptions o;
  o.dtype = DType::i64;
  o.unsorted = true;
  o.duplicate_fraction = 0.3;
  const std::int64_t nr = 1200, nc = 1500;
  const HostCoo a = verify::random_coo(nr, nc, 0.4, seed_, o);
  ASSERT_GE(a.nnz(), 2 * (std::int64_t{1} << 18));
  const HostTensor da = coo_to_dense<HostTensor>(a);
  const HostTensor d = verify::random_tensor(DType::i64, Dims{nr, nc}, seed_ + 1);
  std::vector<char> in_a(static_cast<std::size_t>(nr * nc), 0);
  for (const Entry& e : entries(coalesce<HostCoo>(a))) in_a[e.r * nc + e.c] = 1;
  for (const BinaryOp op : {BinaryOp::add, BinaryOp::max}) {
    HostTensor want(DType::i64, Dims{nr, nc});
    reference_binary(op, da.view(), d.view(), want.view());
    const HostTensor got = combine<HostTensor>(op, a, d.view());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes())) << op_name(op);
    HostTensor acc = to_host(d.view());
    accumulate(op, acc.view(), a);
    for (std::int64_t i = 0; i < nr * nc; ++i)
      ASSERT_EQ(acc.data_as<std::int64_t>()[i],
                in_a[i] ? want.data_as<std::int64_t>()[i] : d.data_as<std::int64_t>()[i])
          << op_name(op) << " element " << i;
  }
}

// COO ⊕ dense and accumulate of operands in no order, f32 with duplicates (the order of their
// additions shows in the sums' bits), bit for bit against the same calls on the coalesced
// operand (its entries in key order, summed by the radix sort's path: LargeShuffledOperands...):
// the entries grouped by row (host_sort.hpp's grouped_by_row) where the rows and columns are at
// most the entries, large enough to split over the pool (ctest runs this at 1 and 5 threads
// too), small, a single row, a single column; and in key order where they are not (a few
// entries in a large matrix, whose dense rows split over the pool too; none). COO ⊕ dense also
// in place, each run of rows reading dense before it writes it.
TEST_F(SparseReferenceRandom, LargeShuffledEntriesIntoDenseByRows) {
  struct Shape {
    std::int64_t nr, nc;
    double density;
  };
  for (const Shape s : {Shape{3000, 2500, 0.2}, Shape{37, 53, 0.4}, Shape{1, 5000, 0.8},
                        Shape{4000, 1, 0.9}, Shape{300, 200, 0.002}, Shape{2000, 1500, 0.0002},
                        Shape{30, 20, 0.0}}) {
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      verify::CooGenOptions o;
      o.index = index;
      o.dtype = DType::f32;
      o.unsorted = true;
      o.duplicate_fraction = 0.6;
      const HostCoo a = verify::random_coo(s.nr, s.nc, s.density, seed_, o);
      const HostCoo sorted = coalesce<HostCoo>(a);
      const HostTensor d = verify::random_tensor(DType::f32, Dims{s.nr, s.nc}, seed_ + 1);
      const std::string what = std::to_string(s.nr) + "x" + std::to_string(s.nc) + " nnz " +
                               std::to_string(a.nnz()) + " " + index_name(index);
      for (const BinaryOp op : {BinaryOp::add, BinaryOp::max}) {
        const HostTensor got = combine<HostTensor>(op, a, d.view());
        const HostTensor want = combine<HostTensor>(op, sorted, d.view());
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes()))
            << op_name(op) << " " << what;
        HostTensor in_place = to_host(d.view());  // out over dense itself
        combine(op, a, in_place.view(), in_place.view());
        EXPECT_EQ(0, std::memcmp(in_place.data(), want.data(), want.bytes()))
            << op_name(op) << " in place " << what;
        HostTensor acc = to_host(d.view()), acc_want = to_host(d.view());
        accumulate(op, acc.view(), a);
        accumulate(op, acc_want.view(), sorted);
        EXPECT_EQ(0, std::memcmp(acc.data(), acc_want.data(), acc.bytes()))
            << "accumulate " << op_name(op) << " " << what;
      }
    }
  }
}

TEST_F(SparseReferenceRandom, CoalesceAndRoundTrips) {
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o;
    o.index = index;
    o.dtype = DType::i64;
    o.unsorted = true;
    o.duplicate_fraction = 0.5;
    const HostCoo a = verify::random_coo(64, 31, 0.2, seed_, o);
    const HostCoo c = coalesce<HostCoo>(a);
    EXPECT_TRUE(verify::compare_coo(c, a, verify::Tolerance{}).ok());
    EXPECT_TRUE(verify::compare_coo(c, c, verify::Tolerance{}).got_canonical);
    EXPECT_LT(c.nnz(), a.nnz());
    // dense → COO → dense is the identity (integers, no -0).
    const HostTensor d = coo_to_dense<HostTensor>(a);
    const HostCoo back = dense_to_coo<HostCoo>(d.view(), index);
    const HostTensor d2 = coo_to_dense<HostTensor>(back);
    EXPECT_EQ(0, std::memcmp(d.data(), d2.data(), d.bytes()));
    // CSR offsets count each row's entries.
    const HostTensor off = coo_to_csr_row_offsets<HostTensor>(c);
    for (std::int64_t r = 0; r < 64; ++r) {
      std::int64_t n = 0;
      for (const Entry& e : entries(c)) n += e.r == r;
      const std::int64_t lo = index_at(off.data(), index, r), hi = index_at(off.data(), index, r + 1);
      EXPECT_EQ(hi - lo, n) << "row " << r;
    }
  }
}

// ---- argument checks -----------------------------------------------------------------------

TEST(SparseChecks, IndexOutOfRangeOrNegative) {
  const HostCoo good = make_coo(4, 4, {0, 1}, {0, 1}, {1, 1});
  const HostCoo bad_col = make_coo(4, 4, {0, 1, 3}, {0, 1, 4}, {1, 1, 1});
  const HostCoo neg_row = make_coo(4, 4, {0, -1}, {0, 1}, {1, 1}, DType::f32, IndexType::i64);
  const HostCoo good64 = make_coo(4, 4, {0}, {0}, {1}, DType::f32, IndexType::i64);
  expect_invalid([&] { multiply<HostCoo>(good, bad_col); }, {"b", "entry 2", "(3, 4)", "4x4"});
  expect_invalid([&] { multiply<HostCoo>(neg_row, good64); }, {"a", "entry 1", "(-1, 1)"});
  expect_invalid([&] { coalesce<HostCoo>(bad_col); }, {"entry 2", "(3, 4)"});
  expect_invalid([&] { coo_to_dense<HostTensor>(bad_col); }, {"entry 2"});
  expect_invalid([&] { check_indices(bad_col, "mine"); }, {"mine", "entry 2"});
  EXPECT_NO_THROW(check_indices(good));
}

TEST(SparseChecks, BrokenCanonicalPromise) {
  const HostCoo dup = make_coo(4, 4, {0, 1, 1}, {3, 2, 2}, {1, 1, 1}, DType::f32, IndexType::i32, true);
  const HostCoo back = make_coo(4, 4, {1, 0}, {0, 3}, {1, 1}, DType::f32, IndexType::i32, true);
  expect_invalid([&] { check_indices(dup, "a"); }, {"marked canonical", "entry 2 at (1, 2)", "entry 1 at (1, 2)"});
  expect_invalid([&] { check_indices(back, "a"); }, {"entry 1 at (0, 3)", "entry 0 at (1, 0)"});
  expect_invalid([&] { coo_to_csr_row_offsets<HostTensor>(back); }, {"marked canonical"});
  const HostCoo unmarked = make_coo(4, 4, {1, 0}, {0, 3}, {1, 1});
  expect_invalid([&] { coo_to_csr_row_offsets<HostTensor>(unmarked); }, {"not marked canonical", "coalesce"});
}

TEST(SparseChecks, SetNnzOnlyShrinks) {
  HostCoo a = make_coo(4, 5, {0, 1, 2}, {0, 1, 2}, {1, 2, 3});
  expect_invalid([&] { a.set_nnz(4); }, {"set_nnz", "4", "[0, 3]"});
  expect_invalid([&] { a.set_nnz(-1); }, {"set_nnz", "-1"});
  EXPECT_EQ(a.nnz(), 3);
  a.set_nnz(2);
  EXPECT_EQ(a.nnz(), 2);
  EXPECT_EQ(a.view().desc.nnz, 2);
  a.set_nnz(0);
  EXPECT_EQ(a.nnz(), 0);
  expect_invalid([&] { a.set_nnz(1); }, {"[0, 0]"});
}

TEST(SparseChecks, OperandsMustAgree) {
  const HostCoo a = make_coo(4, 5, {0}, {0}, {1});
  expect_invalid([&] { multiply<HostCoo>(a, make_coo(5, 4, {0}, {0}, {1})); }, {"shapes differ", "4x5", "5x4"});
  expect_invalid([&] { multiply<HostCoo>(a, make_coo(4, 5, {0}, {0}, {1}, DType::f32, IndexType::i64)); },
                 {"index types differ", "i32", "i64"});
  CooView dev = make_coo(4, 5, {0}, {0}, {1});  // the pointer is never touched
  dev.memory = Memory::device;
  expect_invalid([&] { multiply<HostCoo>(a, dev); }, {"host", "device"});
  // The result type must live where the inputs do.
  expect_invalid([&] { multiply<DeviceCoo>(a, a); }, {"host memory", "result type"});
  expect_invalid([&] { coalesce<DeviceCoo>(a); }, {"coalesce", "host memory"});
  expect_invalid([&] { coo_to_dense<DeviceTensor>(a); }, {"coo_to_dense"});
  HostTensor d(DType::f32, Dims{4, 5});
  expect_invalid([&] { dense_to_coo<DeviceCoo>(d.view()); }, {"dense_to_coo"});
  // Dense operands.
  HostTensor wrong(DType::f32, Dims{4, 3}), rank3(DType::f32, Dims{1, 4, 5});
  expect_invalid([&] { multiply<HostCoo>(a, wrong.view()); }, {"broadcast"});
  expect_invalid([&] { multiply<HostCoo>(a, rank3.view()); }, {"rank 3"});
  expect_invalid([&] { dense_to_coo<HostCoo>(rank3.view()); }, {"rank 3"});
}

TEST(SparseChecks, DescriptorProblems) {
  CooView v = make_coo(4, 5, {0}, {0}, {1});
  CooView overflow = v;
  overflow.desc.nrows = overflow.desc.ncols = std::int64_t{1} << 32;
  overflow.desc.index = IndexType::i64;
  expect_invalid([&] { coalesce<HostCoo>(overflow); }, {"overflows"});
  CooView small = v;
  small.desc.nrows = (std::int64_t{1} << 31) + 1;
  expect_invalid([&] { coalesce<HostCoo>(small); }, {"int64 indices"});
  CooView null_vals = v;
  null_vals.vals = nullptr;
  expect_invalid([&] { coalesce<HostCoo>(null_vals); }, {"null"});
  CooView negative = v;
  negative.desc.nnz = -1;
  expect_invalid([&] { coalesce<HostCoo>(negative); }, {"negative nnz"});
  HostTensor too_wide_for_i32(DType::f32, Dims{1, 0});
  ConstTensorView tv = too_wide_for_i32.view();
  tv.desc = TensorDesc::strided(DType::f32, {0, (std::int64_t{1} << 31) + 1}, {0, 1});
  expect_invalid([&] { dense_to_coo<HostCoo>(tv, IndexType::i32); }, {"int64 indices"});
}

/// Device arrays off their element alignment would fault a kernel (a sticky error that breaks
/// the process's CUDA context): every entry point rejects them before it launches anything.
/// The addresses are never dereferenced.
/// multiply_values keeps a's storage order, duplicates and zeros: each entry times the dense
/// element at its coordinate; in place too.
TEST(SparseReference, MultiplyValuesKeepsThePattern) {
  const HostCoo a = make_coo(2, 3, {1, 0, 1, 0}, {2, 1, 2, 0}, {1, 2, 3, 0});
  HostTensor row(DType::f32, Dims{3});
  for (int i = 0; i < 3; ++i) row.data_as<float>()[i] = static_cast<float>(i + 1);
  HostTensor out(DType::f32, Dims{4});
  multiply_values(a, row.view(), out.view());
  EXPECT_EQ(std::vector<float>(out.data_as<float>(), out.data_as<float>() + 4),
            (std::vector<float>{3, 4, 9, 0}));
  HostCoo b = make_coo(2, 3, {1, 0}, {2, 1}, {1, 2}, DType::f32, IndexType::i32, false);
  const TensorView in_place{b.vals(), TensorDesc::contiguous(DType::f32, {2}), Memory::host};
  HostTensor col(DType::f32, Dims{2, 1});
  col.data_as<float>()[0] = -1;
  col.data_as<float>()[1] = 10;
  multiply_values(b, col.view(), in_place);
  EXPECT_EQ(entries(b), (std::vector<Entry>{{1, 2, 10}, {0, 1, -2}}));
}

TEST(SparseChecks, MultiplyValuesArguments) {
  const HostCoo a = make_coo(2, 3, {1, 0}, {2, 1}, {1, 2});
  const HostCoo bad = make_coo(2, 3, {1, 2}, {2, 1}, {1, 2});
  HostTensor row(DType::f32, Dims{3}), out(DType::f32, Dims{2}), longer(DType::f32, Dims{3});
  HostTensor f64(DType::f64, Dims{2}), wide(DType::f32, Dims{2, 2});
  const float poison = -7;
  for (int k = 0; k < 2; ++k) out.data_as<float>()[k] = poison;
  expect_invalid([&] { multiply_values(bad, row.view(), out.view()); }, {"entry 1", "(2, 1)"});
  EXPECT_EQ(out.data_as<float>()[0], poison);  // nothing written for bad input
  SparseOptions drop;
  drop.drop_zeros = true;
  expect_invalid([&] { multiply_values(a, row.view(), out.view(), drop); },
                 {"drop_zeros must be false"});
  expect_invalid([&] { multiply_values(a, row.view(), longer.view()); }, {"a.nnz = 2", "(3,)"});
  expect_invalid([&] { multiply_values(a, row.view(), f64.view()); }, {"out_vals is f64"});
  const TensorView strided{wide.data(), TensorDesc::strided(DType::f32, {2}, {2}), Memory::host};
  expect_invalid([&] { multiply_values(a, row.view(), strided); }, {"contiguous 1-D"});
  const TensorView on_rows{const_cast<void*>(a.rows()), TensorDesc::contiguous(DType::f32, {2}),
                           Memory::host};
  expect_invalid([&] { multiply_values(a, row.view(), on_rows); }, {"a.rows"});
  const TensorView on_dense{row.data(), TensorDesc::contiguous(DType::f32, {2}), Memory::host};
  expect_invalid([&] { multiply_values(a, row.view(), on_dense); }, {"dense"});
  TensorView device_out = out.view();
  device_out.memory = Memory::device;
  expect_invalid([&] { multiply_values(a, row.view(), device_out); }, {"out_vals is in device"});
  const HostCoo empty = make_coo(2, 3, {}, {}, {});  // null arrays: nothing to alias
  HostTensor none(DType::f32, Dims{0});
  EXPECT_NO_THROW(multiply_values(empty, row.view(), none.view()));
  HostTensor wrong_width(DType::f32, Dims{4});
  expect_invalid([&] { multiply_values(a, wrong_width.view(), out.view()); }, {"(4,)"});
}

TEST(SparseChecks, MisalignedDeviceArraysAreRejectedBeforeAnyLaunch) {
  CooView ok = make_coo(4, 5, {0}, {0}, {1});
  ok.memory = Memory::device;
  ok.rows = ok.cols = ok.vals = reinterpret_cast<const void*>(std::uintptr_t{0x10000});
  const auto at = [](std::uintptr_t p) { return reinterpret_cast<const void*>(p); };
  CooView rows = ok, cols = ok, vals = ok;
  rows.rows = at(0x10002);
  cols.cols = at(0x10001);
  vals.vals = at(0x10006);
  for (const auto& [bad, name] : {std::pair{rows, "rows"}, {cols, "cols"}, {vals, "vals"}}) {
    const std::string what = std::string("misaligned ") + name;
    expect_invalid([&] { multiply(bad, ok); }, {name, "not aligned"}, what);
    expect_invalid([&] { multiply(ok, bad); }, {name, "not aligned"}, what);
    expect_invalid([&] { coalesce(bad); }, {name, "not aligned"}, what);
    expect_invalid([&] { coo_to_dense(bad); }, {name, "not aligned"}, what);
    expect_invalid([&] { check_indices(bad); }, {name, "not aligned"}, what);
  }
  CooView i64 = ok;
  i64.desc.index = IndexType::i64;
  i64.rows = at(0x10004);  // 4-byte aligned is not enough for 8-byte indices
  expect_invalid([&] { coalesce(i64); }, {"rows", "8-byte"});
  ConstTensorView dense{at(0x10003), TensorDesc::contiguous(DType::f32, {5}), Memory::device};
  expect_invalid([&] { multiply(ok, dense); }, {"dense operand", "not aligned"});
}

/// The CPU backend runs one algorithm whatever is requested: the GPU algorithms' size limits
/// (linear_search's work, bitmap_merge's bitmap) do not refuse host inputs.
TEST(SparseChecks, HostBackendIgnoresTheGpuAlgorithmsLimits) {
  const HostCoo a = verify::random_coo(400, 400, 0.25, 31), b = verify::random_coo(400, 400, 0.25, 32);
  ASSERT_GT(a.nnz() * b.nnz(), kLinearSearchMaxWork);
  const HostCoo want = multiply<HostCoo>(a.view(), b.view());
  const HostCoo got = multiply<HostCoo>(a.view(), b.view(), {CooAlgorithm::linear_search});
  EXPECT_TRUE(verify::compare_coo(got.view(), want.view(), {}).ok());
  const HostCoo huge_a = make_coo(std::int64_t{1} << 20, std::int64_t{1} << 20, {5, 7}, {9, 1}, {2, 3},
                                  DType::f32, IndexType::i64);
  const HostCoo huge_b = make_coo(std::int64_t{1} << 20, std::int64_t{1} << 20, {7}, {1}, {4},
                                  DType::f32, IndexType::i64);
  const HostCoo c = multiply<HostCoo>(huge_a.view(), huge_b.view(), {CooAlgorithm::bitmap_merge});
  EXPECT_EQ(c.nnz(), 1);
}

TEST(SparseChecks, CsrOffsetsOfTooManyRows) {
  CooView v = make_coo(1, 1, {}, {}, {}, DType::f32, IndexType::i64);
  v.desc.nrows = INT64_MAX;
  v.desc.ncols = 0;
  v.desc.canonical = true;
  expect_invalid([&] { coo_to_csr_row_offsets<HostTensor>(v); },
                 {"9223372036854775807 rows", "nrows + 1"});
}

TEST(SparseChecks, CooViewOverTensors) {
  std::vector<std::int32_t> r = {0, 1, 2}, c = {1, 1, 0};
  std::vector<float> v = {1, 2, 3};
  const auto view = [](const void* p, DType t, std::int64_t n) {
    return ConstTensorView{p, TensorDesc::contiguous(t, {n}), Memory::host};
  };
  const CooView m = coo_view(view(r.data(), DType::i32, 3), view(c.data(), DType::i32, 3),
                             view(v.data(), DType::f32, 3), 3, 2);
  EXPECT_EQ(m.desc.nnz, 3);
  EXPECT_EQ(m.desc.index, IndexType::i32);
  EXPECT_EQ(entries(coalesce<HostCoo>(m)), (std::vector<Entry>{{0, 1, 1}, {1, 1, 2}, {2, 0, 3}}));
  expect_invalid([&] { coo_view(view(r.data(), DType::i32, 3), view(c.data(), DType::i32, 2),
                                view(v.data(), DType::f32, 3), 3, 2); },
                 {"lengths differ", "3, 2, 3"});
  expect_invalid([&] { coo_view(view(r.data(), DType::i32, 3), view(c.data(), DType::i64, 3),
                                view(v.data(), DType::f32, 3), 3, 2); },
                 {"both be i32 or both i64"});
  expect_invalid([&] { coo_view(view(v.data(), DType::f32, 3), view(v.data(), DType::f32, 3),
                                view(v.data(), DType::f32, 3), 3, 2); },
                 {"i32 or both i64", "f32"});
}

// ---- algorithms ---------------------------------------------------------------------------

TEST(SparseAlgorithms, NamesRoundTrip) {
  for (const CooAlgorithm a : {CooAlgorithm::automatic, CooAlgorithm::sort_search,
                               CooAlgorithm::merge, CooAlgorithm::bitmap_merge,
                               CooAlgorithm::linear_search, CooAlgorithm::hash_merge})
    EXPECT_EQ(parse_coo_algorithm(coo_algorithm_name(a)), a);
  EXPECT_STREQ(coo_algorithm_name(CooAlgorithm::sort_search), "sort_search");
  expect_invalid([] { parse_coo_algorithm("bogus"); }, {"bogus", "sort_search"});
}

/// select_coo_algorithm for operands of an nrows x ncols shape with na and nb entries, canonical
/// or not. Descriptors only: the arrays are never read.
CooAlgorithm select_for(std::int64_t nrows, std::int64_t ncols, std::int64_t na, bool ca,
                        std::int64_t nb, bool cb, CooAlgorithm r = CooAlgorithm::automatic) {
  static float dummy = 0;
  const CooView a{&dummy, &dummy, &dummy, CooDesc{nrows, ncols, na, IndexType::i32, DType::f32, ca}, Memory::host};
  const CooView b{&dummy, &dummy, &dummy, CooDesc{nrows, ncols, nb, IndexType::i32, DType::f32, cb}, Memory::host};
  return select_coo_algorithm(a, b, r);
}

TEST(SparseAlgorithms, Selection) {
  // n x n shape.
  const auto pick = [](std::int64_t n, std::int64_t na, bool ca, std::int64_t nb, bool cb,
                       CooAlgorithm r = CooAlgorithm::automatic) {
    return select_for(n, n, na, ca, nb, cb, r);
  };
  const std::int64_t huge = 1 << 20, mid = 16384;
  EXPECT_EQ(pick(huge, 1000000, true, 1000000, true), CooAlgorithm::merge);
  EXPECT_EQ(pick(huge, 1000, true, 1000, true), CooAlgorithm::merge);                // small, canonical
  EXPECT_EQ(pick(huge, 1000, false, 1000, true), CooAlgorithm::sort_search);         // small, one to sort
  EXPECT_EQ(pick(huge, 1000, false, 1000, false), CooAlgorithm::sort_search);
  EXPECT_EQ(pick(huge, 100000, true, 10000000, true), CooAlgorithm::sort_search);    // few lookups
  EXPECT_EQ(pick(huge, 100, false, 50000000, true), CooAlgorithm::sort_search);      // searches the canonical one
  EXPECT_EQ(pick(mid, 2700000, false, 2700000, false), CooAlgorithm::bitmap_merge);  // 32 MiB bitmap
  EXPECT_EQ(pick(mid, 2700000, true, 2700000, false), CooAlgorithm::bitmap_merge);
  EXPECT_EQ(pick(mid, 100000, false, 100000, false), CooAlgorithm::merge);          // bitmaps too big for them
  EXPECT_EQ(pick(32768, 10700000, false, 10700000, false), CooAlgorithm::merge);    // 128 MiB bitmap: past L2
  EXPECT_EQ(pick(huge, 50000000, false, 50000000, false), CooAlgorithm::merge);      // 2^37-byte bitmap
  EXPECT_EQ(pick(huge, 50000000, false, 50000000, true), CooAlgorithm::merge);
  EXPECT_EQ(pick(mid, 5, true, 5, true, CooAlgorithm::linear_search), CooAlgorithm::linear_search);
  EXPECT_EQ(pick(mid, 5, true, 5, true, CooAlgorithm::bitmap_merge), CooAlgorithm::bitmap_merge);
  expect_invalid([&] { pick(huge, 5, true, 5, true, CooAlgorithm::bitmap_merge); },
                 {"bitmap_merge needs a bitmap of 137438953472 bytes", "1048576x1048576"});
  expect_invalid([&] { pick(mid, 1 << 16, false, (1 << 14) + 1, false, CooAlgorithm::linear_search); },
                 {"linear_search", "65536 * 16385", "exceeds"});
  EXPECT_EQ(pick(mid, 1 << 16, false, 1 << 14, false, CooAlgorithm::linear_search), CooAlgorithm::linear_search);
}

TEST(SparseAlgorithms, SelectionThresholds) {
  // Each threshold of the automatic rule, at the limit and one past it.
  const std::int64_t mid = 16384;  // a 32 MiB bitmap: 1 Mi input entries at 32 bytes per entry
  // An operand to sort with at most 65536 entries: sort_search.
  EXPECT_EQ(select_for(mid, mid, 65536, false, 65536, false), CooAlgorithm::sort_search);
  EXPECT_EQ(select_for(mid, mid, 65537, false, 65537, false), CooAlgorithm::merge);
  // Lookups at most 1/32 of the entries searched: sort_search, even when both are canonical.
  EXPECT_EQ(select_for(1 << 20, 1 << 20, 1000, true, 32000, true), CooAlgorithm::sort_search);
  EXPECT_EQ(select_for(1 << 20, 1 << 20, 1001, true, 32000, true), CooAlgorithm::merge);
  // A bitmap of at most 32 bytes per input entry: bitmap_merge.
  EXPECT_EQ(select_for(mid, mid, 524288, false, 524288, false), CooAlgorithm::bitmap_merge);
  EXPECT_EQ(select_for(mid, mid, 524287, false, 524288, false), CooAlgorithm::merge);
  // A bitmap of at most 48 MiB (16384 x 24576 cells): bitmap_merge.
  EXPECT_EQ(select_for(mid, 24576, 1000000, false, 1000000, false), CooAlgorithm::bitmap_merge);
  EXPECT_EQ(select_for(mid, 24577, 1000000, false, 1000000, false), CooAlgorithm::merge);
}

TEST(SparseReference, EmptyAndDegenerate) {
  const HostCoo none = make_coo(3, 3, {}, {}, {});
  const HostCoo some = make_coo(3, 3, {1}, {1}, {2});
  EXPECT_EQ(multiply<HostCoo>(none, some).nnz(), 0);
  EXPECT_EQ(multiply<HostCoo>(some, none).nnz(), 0);
  const HostCoo empty_shape = make_coo(0, 5, {}, {}, {});
  EXPECT_EQ(multiply<HostCoo>(empty_shape, empty_shape).nnz(), 0);
  EXPECT_EQ(coo_to_dense<HostTensor>(empty_shape).numel(), 0);
  const HostTensor off = coo_to_csr_row_offsets<HostTensor>(coalesce<HostCoo>(empty_shape));
  EXPECT_EQ(off.numel(), 1);
  EXPECT_EQ(off.data_as<std::int32_t>()[0], 0);
  HostTensor zero_cols(DType::f32, Dims{4, 0});
  EXPECT_EQ(dense_to_coo<HostCoo>(zero_cols.view()).nnz(), 0);
}


// ---- union: combine and accumulate ------------------------------------------------------------

constexpr BinaryOp kUnionOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};

/// A host tensor from row-major values (as doubles, stored in `dtype`).
HostTensor make_tensor(const Dims& shape, const std::vector<double>& vals,
                       DType dtype = DType::f32) {
  HostTensor t(dtype, shape);
  for (std::size_t k = 0; k < vals.size(); ++k) {
    auto* p = static_cast<std::byte*>(t.data()) + k * dtype_size(dtype);
    const auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    const double v = vals[k];
    switch (dtype) {
      case DType::f16: put(float_to_f16_bits(static_cast<float>(v))); break;
      case DType::bf16: put(float_to_bf16_bits(static_cast<float>(v))); break;
      case DType::f32: put(static_cast<float>(v)); break;
      case DType::f64: put(v); break;
      case DType::i32: put(static_cast<std::int32_t>(v)); break;
      case DType::i64: put(static_cast<std::int64_t>(v)); break;
      case DType::b8: put(static_cast<bool>(v != 0)); break;
      case DType::i8: put(static_cast<std::int8_t>(v)); break;
      case DType::u8: put(static_cast<std::uint8_t>(v)); break;
      case DType::i16: put(static_cast<std::int16_t>(v)); break;
      case DType::u16: put(static_cast<std::uint16_t>(v)); break;
      case DType::u32: put(static_cast<std::uint32_t>(v)); break;
      case DType::u64: put(static_cast<std::uint64_t>(v)); break;
    }
  }
  return t;
}

std::vector<float> floats(const HostTensor& t) {
  return {t.data_as<float>(), t.data_as<float>() + t.numel()};
}

TEST(SparseUnionReference, CombineIsTheUnionWithDuplicatesSummedFirst) {
  // a: (0,1) twice (1.5 + 2 = 3.5), (2,0) = 5, (1,1) = -2; unsorted.
  // b: (1,1) = 4, (0,1) twice (0.5 + 0.25 = 0.75), (2,2) = 7.
  const HostCoo a = make_coo(3, 3, {2, 0, 1, 0}, {0, 1, 1, 1}, {5, 1.5, -2, 2});
  const HostCoo b = make_coo(3, 3, {1, 0, 2, 0}, {1, 1, 2, 1}, {4, 0.5, 7, 0.25});
  const HostCoo sum = combine<HostCoo>(BinaryOp::add, a, b);
  EXPECT_EQ(entries(sum), (std::vector<Entry>{{0, 1, 4.25}, {1, 1, 2}, {2, 0, 5}, {2, 2, 7}}));
  EXPECT_TRUE(sum.desc().canonical);
  // SciPy's A - B: where A is missing the entry is -B (GrB_eWiseAdd would give B).
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, a, b)),
            (std::vector<Entry>{{0, 1, 2.75}, {1, 1, -6}, {2, 0, 5}, {2, 2, -7}}));
  // A missing operand counts as 0: min(5, 0) = 0 and min(0, 7) = 0, kept as entries.
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::min, a, b)),
            (std::vector<Entry>{{0, 1, 0.75}, {1, 1, -2}, {2, 0, 0}, {2, 2, 0}}));
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::max, a, b)),
            (std::vector<Entry>{{0, 1, 3.5}, {1, 1, 4}, {2, 0, 5}, {2, 2, 7}}));
  // The same for i64 values and i64 indices.
  const HostCoo ai = make_coo(3, 3, {2, 0, 1, 0}, {0, 1, 1, 1}, {5, 1, -2, 2}, DType::i64,
                              IndexType::i64);
  const HostCoo bi = make_coo(3, 3, {1, 0, 2, 0}, {1, 1, 2, 1}, {4, 10, 7, 20}, DType::i64,
                              IndexType::i64);
  const HostCoo di = combine<HostCoo>(BinaryOp::sub, ai, bi);
  EXPECT_EQ(entries(di), (std::vector<Entry>{{0, 1, -27}, {1, 1, -6}, {2, 0, 5}, {2, 2, -7}}));
  EXPECT_EQ(di.desc().index, IndexType::i64);
  EXPECT_EQ(di.desc().dtype, DType::i64);
}

TEST(SparseUnionReference, FillValues) {
  const HostCoo a = make_coo(2, 2, {0, 1}, {0, 1}, {5, 1});
  const HostCoo b = make_coo(2, 2, {0, 0}, {0, 1}, {2, 7});
  SparseOptions o;
  o.fill_a = 10;
  o.fill_b = 1;
  // (0,0): 5 - 2; (0,1): fill_a - 7; (1,1): 1 - fill_b.
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, a, b, o)),
            (std::vector<Entry>{{0, 0, 3}, {0, 1, 3}, {1, 1, 0}}));
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::min, a, b, o)),
            (std::vector<Entry>{{0, 0, 2}, {0, 1, 7}, {1, 1, 1}}));
  // Integer dtypes take integer fills in range, exactly; others throw before anything runs.
  const HostCoo ai = make_coo(1, 2, {0}, {0}, {3}, DType::i32);
  const HostCoo bi = make_coo(1, 2, {0}, {1}, {4}, DType::i32);
  SparseOptions big;
  big.fill_b = -2147483648.0;
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::add, ai, bi, big)),
            (std::vector<Entry>{{0, 0, 3 - 2147483648.0}, {0, 1, 4}}));
  SparseOptions frac;
  frac.fill_a = 2.5;
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, ai, bi, frac); },
                 {"fill_a = 2.5", "not an integer", "i32"});
  SparseOptions out_of_range;
  out_of_range.fill_b = 2147483648.0;
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, ai, bi, out_of_range); }, {"fill_b"});
  SparseOptions nan_fill;
  nan_fill.fill_a = std::numeric_limits<double>::quiet_NaN();
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, ai, bi, nan_fill); }, {"fill_a"});
  // f16: the fill is rounded to the dtype first (0.1 -> 0.0999755859375), then added in f32.
  const HostCoo ah = make_coo(1, 2, {0}, {0}, {1}, DType::f16);
  const HostCoo bh = make_coo(1, 2, {0}, {1}, {1}, DType::f16);
  SparseOptions tenth;
  tenth.fill_a = 0.1;
  const HostCoo h = combine<HostCoo>(BinaryOp::add, ah, bh, tenth);
  const float tenth_f16 = f16_bits_to_float(float_to_f16_bits(0.1f));
  const double want = f16_bits_to_float(float_to_f16_bits(1.0f + tenth_f16));
  EXPECT_EQ(entries(h), (std::vector<Entry>{{0, 0, 1}, {0, 1, want}}));
}

TEST(SparseUnionReference, ZerosAreKeptUnlessDropped) {
  const HostCoo a = make_coo(2, 2, {0, 0, 1}, {0, 1, 0}, {1, 0, 3});
  const HostCoo b = make_coo(2, 2, {0, 1}, {0, 1}, {1, -0.0});
  // (0,0): 1 - 1 = 0; (0,1): stored 0 - fill 0; (1,0): 3; (1,1): 0 - -0 = +0.
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, a, b)),
            (std::vector<Entry>{{0, 0, 0}, {0, 1, 0}, {1, 0, 3}, {1, 1, 0}}));
  SparseOptions drop;
  drop.drop_zeros = true;
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, a, b, drop)), (std::vector<Entry>{{1, 0, 3}}));
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::min, a, b, drop)), (std::vector<Entry>{{0, 0, 1}}));
}

/// The f32 value of a one-entry result at k, as bits.
std::uint32_t f32_bits(const HostCoo& m, std::int64_t k) {
  std::uint32_t u;
  std::memcpy(&u, static_cast<const float*>(m.vals()) + k, 4);
  return u;
}

TEST(SparseUnionReference, NaNAndSignedZeros) {
  const float nan = -std::numeric_limits<float>::quiet_NaN();  // a non-canonical NaN
  const std::uint32_t pz = 0, nz = 0x80000000u, cnan = 0x7FFFFFFFu;
  // (0,0): NaN vs 1; (0,1): -0 vs missing; (0,2): missing vs -0; (0,3): -0 vs +0.
  const HostCoo a = make_coo(1, 4, {0, 0, 0}, {0, 1, 3}, {nan, -0.0, -0.0});
  const HostCoo b = make_coo(1, 4, {0, 0, 0}, {0, 2, 3}, {1, -0.0, 0.0});
  struct Want {
    BinaryOp op;
    std::uint32_t bits[4];
  };
  // min and max give the first operand on equal ones (ops.hpp): -0 vs +0 is the first.
  const Want wants[] = {{BinaryOp::add, {cnan, pz, pz, pz}},
                        {BinaryOp::sub, {cnan, nz, pz, nz}},
                        {BinaryOp::min, {cnan, nz, pz, nz}},
                        {BinaryOp::max, {cnan, nz, pz, nz}}};
  for (const Want& w : wants) {
    const HostCoo c = combine<HostCoo>(w.op, a, b);
    ASSERT_EQ(c.nnz(), 4) << op_name(w.op);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(f32_bits(c, k), w.bits[k]) << op_name(w.op) << " " << k;
  }
  // drop_zeros drops ±0, keeps NaN.
  SparseOptions drop;
  drop.drop_zeros = true;
  EXPECT_EQ(combine<HostCoo>(BinaryOp::add, a, b, drop).nnz(), 1);
}

TEST(SparseUnionReference, EmptyDisjointAndIdenticalPatterns) {
  const HostCoo none = make_coo(3, 3, {}, {}, {});
  const HostCoo b = make_coo(3, 3, {2, 0, 2}, {1, 2, 1}, {1, 2, 3});
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, none, b)),
            (std::vector<Entry>{{0, 2, -2}, {2, 1, -4}}));
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, b, none)),
            (std::vector<Entry>{{0, 2, 2}, {2, 1, 4}}));
  EXPECT_EQ(combine<HostCoo>(BinaryOp::max, none, none).nnz(), 0);
  const HostCoo empty_shape = make_coo(0, 5, {}, {}, {});
  EXPECT_EQ(combine<HostCoo>(BinaryOp::add, empty_shape, empty_shape).nnz(), 0);
  const HostCoo disjoint = make_coo(3, 3, {1, 0}, {1, 0}, {5, 6});
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::add, b, disjoint)),
            (std::vector<Entry>{{0, 0, 6}, {0, 2, 2}, {1, 1, 5}, {2, 1, 4}}));
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::sub, b, b)),
            (std::vector<Entry>{{0, 2, 0}, {2, 1, 0}}));
}

// combine(op, a, b) agrees with the dense op on densified operands, everywhere the union
// stores; the dense forms agree with the dense op on densify(a) (fill 0) and dense.
TEST_F(SparseReferenceRandom, UnionAgreesWithDenseReference) {
  for (const bool unsorted : {false, true})
    for (const BinaryOp op : kUnionOps) {
      verify::CooGenOptions o;
      o.dtype = DType::i64;
      o.unsorted = unsorted;
      o.duplicate_fraction = unsorted ? 0.3 : 0.0;
      const HostCoo a = verify::random_coo(37, 53, 0.3, seed_, o);
      const HostCoo b = verify::random_coo(37, 53, 0.3, seed_ + 1, o);
      const HostTensor da = coo_to_dense<HostTensor>(a), db = coo_to_dense<HostTensor>(b);
      HostTensor want(DType::i64, Dims{37, 53});
      reference_binary(op, da.view(), db.view(), want.view());
      const HostCoo c = combine<HostCoo>(op, a, b);
      const HostTensor dc = coo_to_dense<HostTensor>(c);
      EXPECT_EQ(0, std::memcmp(dc.data(), want.data(), want.bytes())) << op_name(op);
      std::vector<char> stored(37 * 53, 0);
      for (const Entry& e : entries(coalesce<HostCoo>(a))) stored[e.r * 53 + e.c] = 1;
      for (const Entry& e : entries(coalesce<HostCoo>(b))) stored[e.r * 53 + e.c] = 1;
      EXPECT_EQ(c.nnz(), std::count(stored.begin(), stored.end(), 1)) << op_name(op);
      // Dense forms: allocating, into out, and accumulate into a copy of db.
      const HostTensor got = combine<HostTensor>(op, a, db.view());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes())) << op_name(op);
      HostTensor acc = to_host(db.view());
      accumulate(op, acc.view(), a);
      HostTensor acc_want(DType::i64, Dims{37, 53});
      reference_binary(op, db.view(), da.view(), acc_want.view());
      const HostCoo ca = coalesce<HostCoo>(a);
      std::vector<char> in_a(37 * 53, 0);
      for (const Entry& e : entries(ca)) in_a[e.r * 53 + e.c] = 1;
      for (int i = 0; i < 37 * 53; ++i)
        ASSERT_EQ(acc.data_as<std::int64_t>()[i],
                  in_a[i] ? acc_want.data_as<std::int64_t>()[i] : db.data_as<std::int64_t>()[i])
            << op_name(op) << " element " << i;
    }
}

// No columns and more rows than one run of rows (the CPU backend's runs of 2^16 elements, a row
// at least): nothing to compute, no pointer offset from the null data (found by the api fuzzer
// under UBSan).
TEST(SparseUnionReference, CombineWithDenseOfNoColumns) {
  const std::int64_t n = (std::int64_t{1} << 16) + 3;
  const HostCoo a = make_coo(n, 0, {}, {}, {});
  const HostTensor d(DType::f32, Dims{n, 0});
  const HostTensor got = combine<HostTensor>(BinaryOp::add, a, d.view());
  EXPECT_EQ(got.desc().shape, (Dims{n, 0}));
  HostTensor table(DType::f32, Dims{n, 0});
  accumulate(BinaryOp::add, table.view(), a);
}

TEST(SparseUnionReference, CombineWithBroadcastDense) {
  // a: (0,1) = 2 (1 + 1, duplicates), (1,2) = 4; 2x3.
  const HostCoo a = make_coo(2, 3, {1, 0, 0}, {2, 1, 1}, {4, 1, 1});
  const HostTensor row = make_tensor(Dims{3}, {10, 20, 30});
  EXPECT_EQ(floats(combine<HostTensor>(BinaryOp::sub, a, row.view())),
            (std::vector<float>{-10, -18, -30, -10, -20, -26}));
  SparseOptions fill;
  fill.fill_a = 25;
  EXPECT_EQ(floats(combine<HostTensor>(BinaryOp::min, a, row.view(), fill)),
            (std::vector<float>{10, 2, 25, 10, 20, 4}));
  const HostTensor col = make_tensor(Dims{2, 1}, {1, -1});
  EXPECT_EQ(floats(combine<HostTensor>(BinaryOp::max, a, col.view())),
            (std::vector<float>{1, 2, 1, 0, 0, 4}));
  const HostTensor scalar = make_tensor(Dims{}, {3});
  EXPECT_EQ(floats(combine<HostTensor>(BinaryOp::add, a, scalar.view())),
            (std::vector<float>{3, 5, 3, 3, 3, 7}));
  // Into a transposed out, and in place over dense itself.
  HostTensor t(DType::f32, Dims{3, 2});
  const TensorView tt{t.data(), TensorDesc::strided(DType::f32, {2, 3}, {1, 2}), Memory::host};
  combine(BinaryOp::add, a, scalar.view(), tt);
  EXPECT_EQ(floats(t), (std::vector<float>{3, 3, 5, 3, 3, 7}));
  HostTensor d = make_tensor(Dims{2, 3}, {1, 2, 3, 4, 5, 6});
  combine(BinaryOp::sub, a, d.view(), d.view());
  EXPECT_EQ(floats(d), (std::vector<float>{-1, 0, -3, -4, -5, -2}));
}

TEST(SparseUnionReference, AccumulateTouchesOnlyStoredCoordinates) {
  // a: (0,1) = 2 + 3 (duplicates, summed first), (1,0) = -1; unsorted.
  const HostCoo a = make_coo(2, 2, {0, 1, 0}, {1, 0, 1}, {2, -1, 3});
  const float nan = -std::numeric_limits<float>::quiet_NaN();
  HostTensor d = make_tensor(Dims{2, 2}, {-0.0, 10, 4, 0});
  static_cast<float*>(d.data())[3] = nan;
  accumulate(BinaryOp::add, d.view(), a);
  // (0,0) stays -0 and (1,1) keeps its NaN bits: not touched.
  std::uint32_t bits[4];
  std::memcpy(bits, d.data(), 16);
  EXPECT_EQ(bits[0], 0x80000000u);
  EXPECT_EQ(d.data_as<float>()[1], 15);
  EXPECT_EQ(d.data_as<float>()[2], 3);
  std::uint32_t nan_bits;
  std::memcpy(&nan_bits, &nan, 4);
  EXPECT_EQ(bits[3], nan_bits);
  // min: the masked form, min(d, Σa) only where a stores (not min(d, 0) elsewhere).
  HostTensor m = make_tensor(Dims{2, 2}, {7, 10, -4, 8});
  accumulate(BinaryOp::min, m.view(), a);
  EXPECT_EQ(floats(m), (std::vector<float>{7, 5, -4, 8}));
  HostTensor s = make_tensor(Dims{2, 2}, {7, 10, -4, 8});
  accumulate(BinaryOp::sub, s.view(), a);
  EXPECT_EQ(floats(s), (std::vector<float>{7, 5, -3, 8}));
  // Through strides: a transposed view.
  HostTensor t = make_tensor(Dims{2, 2}, {0, 0, 0, 0});
  const TensorView tt{t.data(), TensorDesc::strided(DType::f32, {2, 2}, {1, 2}), Memory::host};
  accumulate(BinaryOp::max, tt, a);
  EXPECT_EQ(floats(t), (std::vector<float>{0, 0, 5, 0}));
}

TEST(SparseUnionChecks, Arguments) {
  const HostCoo a = make_coo(2, 3, {0}, {1}, {1});
  const HostCoo b = make_coo(2, 3, {1}, {1}, {1});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::mul, a, b); },
                 {"combine", "add, subtract, minimum and maximum", "got multiply (the "});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::div, a, b); }, {"div"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, a, make_coo(3, 2, {}, {}, {})); },
                 {"combine: shapes differ", "2x3", "3x2"});
  const HostCoo i64 = make_coo(2, 3, {}, {}, {}, DType::f32, IndexType::i64);
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, a, i64); }, {"combine: index types differ"});
  expect_invalid([&] { combine<DeviceCoo>(BinaryOp::add, a, b); }, {"combine", "Host"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, make_coo(2, 3, {2}, {0}, {1}), b); },
                 {"a: entry 0", "(2, 0)", "2x3"});
  // Dense forms.
  HostTensor d = make_tensor(Dims{2, 3}, {0, 0, 0, 0, 0, 0});
  const HostTensor wrong = make_tensor(Dims{3, 2}, {0, 0, 0, 0, 0, 0});
  expect_invalid([&] { combine<HostTensor>(BinaryOp::add, a, wrong.view()); },
                 {"cannot broadcast (3,2)"});
  expect_invalid([&] { combine<HostTensor>(BinaryOp::mul, a, d.view()); }, {"combine", "mul"});
  SparseOptions drop;
  drop.drop_zeros = true;
  expect_invalid([&] { combine<HostTensor>(BinaryOp::add, a, d.view(), drop); }, {"drop_zeros"});
  expect_invalid([&] { accumulate(BinaryOp::add, d.view(), a, drop); }, {"drop_zeros"});
  HostTensor small(DType::f32, Dims{3});
  expect_invalid([&] { combine(BinaryOp::add, a, d.view(), small.view()); },
                 {"combine", "out must be a (2,3) tensor"});
  expect_invalid([&] { accumulate(BinaryOp::add, small.view(), a); },
                 {"accumulate", "dense must be a (2,3) tensor"});
  // dense is the output: it must hold the result dtype (an f32 dense and an f64 matrix give f64).
  const HostCoo a64 = make_coo(2, 3, {0}, {1}, {1}, DType::f64);
  expect_invalid([&] { accumulate(BinaryOp::add, d.view(), a64); },
                 {"accumulate: dense is f32 but the result of dense and a (f64) is f64"});
  HostTensor d64(DType::f64, Dims{2, 3});
  expect_invalid([&] { combine(BinaryOp::add, a, d64.view(), d.view()); },
                 {"combine: out is f32 but the result of f64 and a (f32) is f64"});
  // A broadcast (stride 0) dense cannot be written in place.
  HostTensor one(DType::f32, Dims{3});
  const TensorView broadcast{one.data(), TensorDesc::strided(DType::f32, {2, 3}, {0, 1}),
                             Memory::host};
  expect_invalid([&] { accumulate(BinaryOp::add, broadcast, a); }, {"accumulate", "revisits"});
  expect_invalid([&] { combine(BinaryOp::add, a, d.view(), broadcast); }, {"combine", "revisits"});
  // dense over a's own values.
  HostCoo big = make_coo(1, 6, {0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 6});
  const TensorView over_vals{big.vals(), TensorDesc::contiguous(DType::f32, {1, 6}), Memory::host};
  expect_invalid([&] { accumulate(BinaryOp::add, over_vals, big); }, {"a.vals"});
  // out overlapping dense other than exactly.
  HostTensor wide(DType::f32, Dims{2, 4});
  const TensorView left{wide.data(), TensorDesc::strided(DType::f32, {2, 3}, {4, 1}), Memory::host};
  const ConstTensorView right{static_cast<float*>(wide.data()) + 1,
                              TensorDesc::strided(DType::f32, {2, 3}, {4, 1}), Memory::host};
  expect_invalid([&] { combine(BinaryOp::add, a, right, left); }, {"overlaps", "dense"});
  // Bad indices throw before anything is written.
  HostTensor p = make_tensor(Dims{2, 3}, {1, 2, 3, 4, 5, 6});
  const HostCoo bad = make_coo(2, 3, {0, 1}, {0, 3}, {1, 1});
  expect_invalid([&] { accumulate(BinaryOp::add, p.view(), bad); }, {"a: entry 1"});
  expect_invalid([&] { combine(BinaryOp::add, bad, d.view(), p.view()); }, {"a: entry 1"});
  EXPECT_EQ(floats(p), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// ---- mixed value dtypes and scalar operands ---------------------------------------------------

/// Values both dtypes (and so every dtype they promote to) hold exactly.
std::vector<double> exact_values(DType a, DType b) {
  if (is_floating(a) && is_floating(b)) return {1, -2, 3, 4, 0.5};
  return {1, -2, 3, 4, 5};
}

/// op(a, b) of two sparse dtypes: the result dtype of NumPy's (or PyTorch's) rule, and the same
/// values as the operation on both operands made in that dtype.
TEST(SparsePromotion, MixedValueDtypesPromoteLikeTheDenseOperation) {
  for (Promotion rule : {Promotion::numpy, Promotion::torch})
    for (DType ta : kSparseDTypes)
      for (DType tb : kSparseDTypes) {
        const std::string ctx = std::string(dtype_name(ta)) + " " + dtype_name(tb) + " " +
                                promotion_name(rule);
        const std::vector<double> v = exact_values(ta, tb);
        // Unsorted, with a duplicate in each operand: summed first, in the result dtype.
        const std::vector<std::int64_t> ra = {1, 0, 2, 0, 1}, ca = {2, 1, 0, 1, 0};
        const std::vector<std::int64_t> rb = {0, 2, 1, 2, 1}, cb = {1, 0, 0, 2, 0};
        const HostCoo a = make_coo(3, 3, ra, ca, v, ta), b = make_coo(3, 3, rb, cb, v, tb);
        SparseOptions o;
        o.promotion = rule;
        const DType r = op_types(BinaryOp::multiply, rule, {ta}, {tb}).result;
        const HostCoo ar = make_coo(3, 3, ra, ca, v, r), br = make_coo(3, 3, rb, cb, v, r);
        const HostCoo got = multiply<HostCoo>(a, b, o);
        EXPECT_EQ(got.desc().dtype, r) << ctx;
        EXPECT_EQ(entries(got), entries(multiply<HostCoo>(ar, br))) << ctx;
        for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::maximum}) {
          const HostCoo u = combine<HostCoo>(op, a, b, o);
          EXPECT_EQ(u.desc().dtype, r) << ctx << " " << op_name(op);
          EXPECT_EQ(entries(u), entries(combine<HostCoo>(op, ar, br))) << ctx << " " << op_name(op);
        }
        // The dense forms: b densified, of tb.
        const HostTensor d = coo_to_dense<HostTensor>(b), dr = coo_to_dense<HostTensor>(br);
        const HostCoo s = multiply<HostCoo>(a, d.view(), o);
        EXPECT_EQ(s.desc().dtype, r) << ctx;
        EXPECT_EQ(entries(s), entries(multiply<HostCoo>(ar, dr.view()))) << ctx;
        const HostTensor e = combine<HostTensor>(BinaryOp::subtract, a, d.view(), o);
        const HostTensor er = combine<HostTensor>(BinaryOp::subtract, ar, dr.view());
        ASSERT_EQ(e.dtype(), r) << ctx;
        EXPECT_EQ(0, std::memcmp(e.data(), er.data(), er.bytes())) << ctx;
        HostTensor vals(r, Dims{a.nnz()}), vals_r(r, Dims{a.nnz()});
        multiply_values(a, d.view(), vals.view(), o);
        multiply_values(ar, dr.view(), vals_r.view());
        EXPECT_EQ(0, std::memcmp(vals.data(), vals_r.data(), vals_r.bytes())) << ctx;
      }
}

TEST(SparsePromotion, DenseOperandsOfAnyDtypeAndTheRulesDifferences) {
  const HostCoo a = make_coo(2, 3, {0, 1, 1}, {1, 0, 2}, {3, -2, 5}, DType::i32);
  // NumPy: i32 with f32 is f64; PyTorch: f32.
  const HostTensor f = make_tensor(Dims{3}, {0.5, 1.5, -1}, DType::f32);
  SparseOptions torch;
  torch.promotion = Promotion::torch;
  EXPECT_EQ(multiply<HostCoo>(a, f.view()).desc().dtype, DType::f64);
  EXPECT_EQ(multiply<HostCoo>(a, f.view(), torch).desc().dtype, DType::f32);
  EXPECT_EQ(entries(multiply<HostCoo>(a, f.view())),
            (std::vector<Entry>{{0, 1, 4.5}, {1, 0, -1}, {1, 2, -5}}));
  // Narrower dense dtypes (bool, u8) take the matrix's.
  const HostTensor m = make_tensor(Dims{2, 1}, {1, 0}, DType::b8);
  const HostCoo masked = multiply<HostCoo>(a, m.view());
  EXPECT_EQ(masked.desc().dtype, DType::i32);
  EXPECT_EQ(entries(masked), (std::vector<Entry>{{0, 1, 3}, {1, 0, 0}, {1, 2, 0}}));
  const HostTensor u = make_tensor(Dims{}, {200}, DType::u8);
  EXPECT_EQ(entries(combine<HostCoo>(BinaryOp::add, a, make_coo(2, 3, {0}, {0}, {7}, DType::i64))),
            (std::vector<Entry>{{0, 0, 7}, {0, 1, 3}, {1, 0, -2}, {1, 2, 5}}));
  const HostTensor sum = combine<HostTensor>(BinaryOp::add, a, u.view());
  EXPECT_EQ(sum.dtype(), DType::i32);
  // PyTorch refuses u16, u32 and u64 with another dtype.
  const HostTensor u32 = make_tensor(Dims{3}, {1, 2, 3}, DType::u32);
  EXPECT_EQ(multiply<HostCoo>(a, u32.view()).desc().dtype, DType::i64);
  expect_invalid([&] { multiply<HostCoo>(a, u32.view(), torch); }, {"i32", "u32"});
  // Outputs must hold the result dtype; accumulate's dense may be wider than the matrix.
  HostTensor acc = make_tensor(Dims{2, 3}, {1, 1, 1, 1, 1, 1}, DType::f64);
  accumulate(BinaryOp::add, acc.view(), make_coo(2, 3, {1}, {1}, {0.25}, DType::f32));
  EXPECT_EQ(acc.data_as<double>()[4], 1.25);
  HostTensor out32(DType::f32, Dims{2});
  expect_invalid([&] { multiply_values(a, f.view(), out32.view()); },
                 {"out_vals is f32 but a (i32) times dense (f32) is f64"});
}

// A broadcast (stride-0) dense operand of another dtype is converted element by element it
// holds, not materialized in its broadcast shape: here 2^40 elements (found by the api fuzzer;
// the conversion allocated the whole shape and threw std::bad_alloc).
TEST(SparsePromotion, BroadcastDenseOperandOfAnotherDtypeIsNotMaterialized) {
  const std::int64_t n = std::int64_t{1} << 40;
  const HostCoo a = make_coo(n, 3, {5, 7}, {0, 2}, {2, -1}, DType::f64, IndexType::i64);
  const HostTensor row = make_tensor(Dims{1, 3}, {0.5, 1, 3}, DType::f32);
  const ConstTensorView wide(row.data(), TensorDesc{DType::f32, Dims{n, 3}, Dims{0, 1}},
                             Memory::host);
  const HostCoo p = multiply<HostCoo>(a, wide);
  EXPECT_EQ(p.desc().dtype, DType::f64);
  EXPECT_EQ(entries(p), (std::vector<Entry>{{5, 0, 1}, {7, 2, -3}}));
  HostTensor out(DType::f64, Dims{2});
  multiply_values(a, wide, out.view());
  EXPECT_EQ(out.data_as<double>()[0], 1);
  EXPECT_EQ(out.data_as<double>()[1], -3);
}

TEST(SparsePromotion, ValuesOfOtherDtypesAreRefused) {
  for (DType t : kAllDTypes) {
    if (is_sparse_dtype(t)) continue;
    HostTensor rows(DType::i32, Dims{1}), vals(t, Dims{1});
    rows.data_as<std::int32_t>()[0] = 0;
    expect_invalid([&] { coo_view(rows.view(), rows.view(), vals.view(), 2, 2); },
                   {"COO values of dtype", dtype_name(t), "are not supported",
                    "f16, bf16, f32, f64, i32 or i64"});
  }
}

TEST(SparseScalars, MultiplyKeepsThePatternAndPromotesAsPythonScalars) {
  // Unsorted with a duplicate (0,1): 1.5 + 2 = 3.5, and a stored zero.
  const std::vector<std::int64_t> rows = {1, 0, 0, 2}, cols = {2, 1, 1, 0};
  for (DType t : kSparseDTypes) {
    const std::vector<double> v = is_floating(t) ? std::vector<double>{-3, 1.5, 2, 0}
                                                 : std::vector<double>{-3, 1, 2, 0};
    const HostCoo a = make_coo(3, 3, rows, cols, v, t);
    // A weak float keeps a float dtype (bf16 becomes f32, as ml_dtypes' bfloat16 does in
    // NumPy); an integer matrix becomes f64 (NumPy; PyTorch: f32, and bf16 stays bf16).
    const Scalar half = Scalar::weak_float(0.5);
    const DType r = t == DType::bf16 ? DType::f32 : is_floating(t) ? t : DType::f64;
    const HostCoo got = multiply<HostCoo>(a, half);
    EXPECT_EQ(got.desc().dtype, r) << dtype_name(t);
    // The same as the 0-d dense operand of the result dtype holding the scalar.
    const HostTensor d = make_tensor(Dims{}, {0.5}, r);
    EXPECT_EQ(entries(got), entries(multiply<HostCoo>(a, d.view()))) << dtype_name(t);
    EXPECT_EQ(got.nnz(), 3) << dtype_name(t);  // the zero stays
    SparseOptions drop;
    drop.drop_zeros = true;
    EXPECT_EQ(multiply<HostCoo>(a, Scalar::weak_int(0), drop).nnz(), 0) << dtype_name(t);
    SparseOptions torch;
    torch.promotion = Promotion::torch;
    EXPECT_EQ(multiply<HostCoo>(a, half, torch).desc().dtype, is_floating(t) ? t : DType::f32);
    // A typed scalar (a NumPy scalar, a 0-d tensor's value) promotes as a 0-d array.
    EXPECT_EQ(multiply<HostCoo>(a, Scalar::of(DType::f64, 2)).desc().dtype, DType::f64);
  }
  // NumPy rounds a weak scalar to the matrix's dtype first: 0.1 as f16 is 0.0999755859375.
  const HostCoo h = make_coo(1, 1, {0}, {0}, {1}, DType::f16);
  EXPECT_EQ(entries(multiply<HostCoo>(h, Scalar::weak_float(0.1))),
            (std::vector<Entry>{{0, 0, 0.0999755859375}}));
  // NumPy 2 refuses a Python integer the dtype cannot hold.
  const HostCoo i = make_coo(1, 1, {0}, {0}, {1}, DType::i32);
  expect_invalid([&] { multiply<HostCoo>(i, Scalar::weak_int(std::int64_t{1} << 40)); },
                 {"1099511627776"});
}

TEST(SparseScalars, AddingZeroIsTheMatrixAndAnyOtherValueIsRefused) {
  const HostCoo a = make_coo(2, 2, {1, 0, 1}, {1, 0, 1}, {2, -0.0, 3});
  const HostCoo want = coalesce<HostCoo>(a);
  for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract}) {
    const HostCoo z = combine<HostCoo>(op, a, Scalar::weak_int(0));
    EXPECT_EQ(z.desc().dtype, DType::f32);
    EXPECT_EQ(entries(z), entries(want)) << op_name(op);
    EXPECT_TRUE(std::signbit(value_at(z, 0))) << "a - 0 keeps -0 (SciPy: a copy)";
    // A typed f64 zero makes the result f64.
    EXPECT_EQ(combine<HostCoo>(op, a, Scalar::of(DType::f64, -0.0)).desc().dtype, DType::f64);
  }
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, a, Scalar::weak_float(1.5)); },
                 {"combine: add of a COO matrix and the nonzero scalar 1.5 (Python float)",
                  "SciPy"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::subtract, a, Scalar::weak_float(NAN)); },
                 {"subtract", "nonzero scalar nan"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::minimum, a, Scalar::weak_int(0)); },
                 {"combine: minimum of a COO matrix and a scalar is not sparse"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::multiply, a, Scalar::weak_int(0)); },
                 {"union operations"});
}

// ---- compare (compare.hpp): crossover, verdicts, refusals ----------------------------------

/// A row with the given density and speedups (dense 1 ms; the conversions make up the rest).
CompareRow compare_row(double density, double speedup, double speedup_converting) {
  CompareRow r;
  r.density = density;
  r.dense_ms = 1;
  r.coo_ms = 1 / speedup;
  r.to_coo_ms = 1 / speedup_converting - r.coo_ms;
  return r;
}

TEST(DenseOrCoo, CrossoverInterpolatedInLogLogAndVerdicts) {
  CompareResult c;
  c.rows = {compare_row(0.001, 8, 2), compare_row(0.01, 4, 0.5), compare_row(0.1, 0.25, 0.1)};
  // speedup 4 -> 0.25 between 1% and 10%: log speedup crosses 0 halfway in log density.
  ASSERT_TRUE(c.crossover().has_value());
  EXPECT_NEAR(*c.crossover(), std::sqrt(0.01 * 0.1), 1e-12);
  ASSERT_TRUE(c.crossover_converting().has_value());
  EXPECT_NEAR(*c.crossover_converting(), std::sqrt(0.001 * 0.01), 1e-12);
  EXPECT_EQ(c.verdict(), "COO*COO is faster than dense below 3.16% density (crossover interpolated)");
  c.op = BinaryOp::maximum;
  c.rows = {compare_row(0.01, 0.5, 0.2), compare_row(0.1, 0.25, 0.1)};
  EXPECT_FALSE(c.crossover().has_value());
  EXPECT_EQ(c.verdict(),
            "COO+COO is slower than dense at every density from 1% to 10% (0.50x to 0.25x)");
  c.rows = {compare_row(0.2, 2, 1)};
  EXPECT_EQ(c.verdict_converting(),
            "COO+COO with the conversions is 1.00x faster than dense at 20% density");
  c.rows[0].problem = "differs";
  EXPECT_EQ(c.failures(), 1);
  const std::string j = c.json();
  EXPECT_NE(j.find("\"crossover\": null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"verified\": false"), std::string::npos) << j;
}

TEST(DenseOrCoo, CompareRefusesBeforeAnythingRuns) {
  const auto spec = [](auto change) {
    CompareSpec s;
    s.nrows = 8;
    s.ncols = 8;
    s.memory = Memory::host;
    change(s);
    return s;
  };
  test::expect_invalid([&] { compare(spec([](CompareSpec& s) { s.densities = {0.1, 0}; })); },
                       {"density 0 is not in (0, 1]"});
  test::expect_invalid([&] { compare(spec([](CompareSpec& s) { s.densities = {}; })); },
                       {"no density given"});
  test::expect_invalid([&] { compare(spec([](CompareSpec& s) { s.ncols = 0; })); },
                       {"the shape 8x0 is not positive"});
  test::expect_invalid([&] { compare(spec([](CompareSpec& s) { s.dtype = DType::u8; })); },
                       {"u8 is not a COO value dtype"});
  test::expect_invalid([&] { compare(spec([](CompareSpec& s) { s.op = BinaryOp::divide; })); },
                       {"divide is not an operation COO runs"});
  test::expect_invalid(
      [&] { compare(spec([](CompareSpec& s) { s.nrows = s.ncols = 3000000; s.dtype = DType::f64; })); },
      {"3000000x3000000 f64: the dense forms need", "available"});
  const HostCoo a = verify::random_coo(4, 4, 0.5, 1), b = verify::random_coo(4, 5, 0.5, 2);
  const CooView va = a.view(), vb = b.view();
  test::expect_invalid([&] { compare(spec([&](CompareSpec& s) { s.b = &vb; })); },
                       {"B is given without A"});
  test::expect_invalid([&] { compare(spec([&](CompareSpec& s) { s.a = &va; s.b = &vb; })); },
                       {"A is f32 4x4 but B is f32 4x5"});
}

}  // namespace
}  // namespace ewise
