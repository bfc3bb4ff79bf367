// Host tests of row-sparse operands (ewise/coo.hpp's RowSparseView) on the CPU backend:
// accumulate against the expanded COO matrix's accumulate (testing/row_sparse.hpp) over random
// shapes, dtypes, index types, operations, duplicates and strided tables; mixed dtypes; every
// argument check, with the table untouched after a refusal.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/row_sparse.hpp"

namespace ewise {
namespace {

using test::expect_invalid;
using test::RowCase;

constexpr BinaryOp kUnionOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};
constexpr DType kValueDTypes[] = {DType::f16, DType::bf16, DType::f32,
                                  DType::f64, DType::i32,  DType::i64};

/// A (nrows, width) view into `buffer` at row stride `row_stride` (>= width; the gap is never
/// written) or, with transposed, column-major (row stride 1, column stride nrows).
TensorView table_view(HostTensor& buffer, std::int64_t nrows, std::int64_t width,
                      std::int64_t row_stride, bool transposed) {
  const Dims strides = transposed ? Dims{1, nrows} : Dims{row_stride, 1};
  return {buffer.data(), TensorDesc::strided(buffer.dtype(), Dims{nrows, width}, strides),
          Memory::host};
}

bool same_bytes(const HostTensor& x, const HostTensor& y) {
  return x.bytes() == y.bytes() &&
         (x.bytes() == 0 || std::memcmp(x.data(), y.data(), x.bytes()) == 0);
}

TEST(RowSparseHost, MatchesTheExpandedCoo) {
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Shape {
    std::int64_t nrows, width, nnz;
  };
  const Shape shapes[] = {{1, 1, 1}, {9, 7, 5}, {40, 64, 33}, {300, 3, 250}, {5, 0, 3}, {6, 4, 0}};
  for (const Shape& s : shapes)
    for (const DType t : kValueDTypes)
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {false, true})
          for (const BinaryOp op : kUnionOps)
            for (const bool transposed : {false, true}) {
              const std::int64_t nnz = canonical ? std::min(s.nnz, s.nrows) : s.nnz;
              const RowCase a = test::random_rows(rng, s.nrows, s.width, nnz, t, index, canonical);
              const std::int64_t stride = s.width + 2;
              HostTensor start(t, Dims{std::max(s.nrows * stride, s.nrows * s.width)});
              test::fill_values(t, start.data(), start.numel(), rng);
              HostTensor got = to_host(start.view()), want = to_host(start.view());
              const HostCoo coo = test::expanded(a.view());
              accumulate(op, table_view(want, s.nrows, s.width, stride, transposed), coo.view());
              accumulate(op, table_view(got, s.nrows, s.width, stride, transposed), a.view());
              EXPECT_TRUE(same_bytes(got, want))
                  << dtype_name(t) << " " << op_name(op) << " " << s.nrows << "x" << s.width
                  << " nnz " << nnz << (canonical ? " canonical" : "")
                  << (transposed ? " transposed" : "") << " " << index_name(index);
            }
}

TEST(RowSparseHost, DuplicatesAreSummedInStorageOrderThenApplied) {
  // Rows 1, 0, 1, 1 of width 2. Row 1, column 0, in storage order in f32: 1e8 + 1 rounds to
  // 1e8 (its spacing is 8), then - 1e8 gives 0 (the exact sum is 1); op is applied once.
  HostTensor rows(DType::i64, Dims{4}), vals(DType::f32, Dims{4, 2});
  const std::int64_t r[] = {1, 0, 1, 1};
  const float v[] = {1e8f, 1, 3, 4, 1, 0, -1e8f, 2};
  std::memcpy(rows.data(), r, sizeof r);
  std::memcpy(vals.data(), v, sizeof v);
  HostTensor table(DType::f32, Dims{2, 2});
  const float t0[] = {10, 20, 10, 20};
  std::memcpy(table.data(), t0, sizeof t0);
  accumulate(BinaryOp::sub, table.view(), row_sparse_view(rows.view(), vals.view(), 2));
  const float* t = table.data_as<float>();
  EXPECT_EQ(t[0], 10 - 3.0f);
  EXPECT_EQ(t[1], 20 - 4.0f);
  EXPECT_EQ(t[2], 10.0f);
  EXPECT_EQ(t[3], 20 - 3.0f);
}

TEST(RowSparseHost, MixedDTypesPromoteAsTheCooForm) {
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Pair {
    DType table, vals;
  };
  for (const Pair p : {Pair{DType::f64, DType::f32}, Pair{DType::f32, DType::bf16},
                       Pair{DType::i64, DType::i32}, Pair{DType::f64, DType::i32}})
    for (const bool canonical : {false, true}) {
      const RowCase a = test::random_rows(rng, 50, 6, 20, p.vals, IndexType::i32, canonical);
      const HostTensor start = test::random_table(rng, p.table, 50, 6);
      HostTensor got = to_host(start.view()), want = to_host(start.view());
      const HostCoo coo = test::expanded(a.view());
      accumulate(BinaryOp::add, want.view(), coo.view());
      accumulate(BinaryOp::add, got.view(), a.view());
      EXPECT_TRUE(same_bytes(got, want)) << dtype_name(p.table) << " += " << dtype_name(p.vals);
    }
}

TEST(RowSparseHost, OneDimensionalValuesAreRowsOfOne) {
  HostTensor rows(DType::i32, Dims{3}), vals(DType::f64, Dims{3});
  const std::int32_t r[] = {2, 0, 2};
  const double v[] = {1.5, 2, 4};
  std::memcpy(rows.data(), r, sizeof r);
  std::memcpy(vals.data(), v, sizeof v);
  const RowSparseView a = row_sparse_view(rows.view(), vals.view(), 4);
  EXPECT_EQ(a.desc.ncols, 1);
  HostTensor table(DType::f64, Dims{4, 1});
  std::memset(table.data(), 0, table.bytes());
  accumulate(BinaryOp::max, table.view(), a);
  const double* t = table.data_as<double>();
  EXPECT_EQ(t[0], 2);
  EXPECT_EQ(t[1], 0);
  EXPECT_EQ(t[2], 5.5);
  EXPECT_EQ(t[3], 0);
}

// combine and coalesce of row-sparse operands: their expanded COO form is the COO operation's
// result on the operands' expanded forms, bit for bit (the same coordinates in the same order,
// duplicates summed in storage order, op applied once with the fills), over shapes, dtypes,
// mixed pairs, index types, canonical and duplicated operands, empty ones and rows of width 0.
TEST(RowSparseHost, CombineAndCoalesceMatchTheExpandedCoo) {
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Shape {
    std::int64_t nrows, width, na, nb;
  };
  const Shape shapes[] = {{1, 1, 1, 1}, {9, 7, 5, 8},  {40, 64, 33, 0}, {300, 3, 250, 90},
                          {5, 0, 3, 2}, {6, 4, 0, 0}, {70, 1, 0, 40}};
  struct Pair {
    DType a, b;
  };
  std::vector<Pair> pairs;
  for (const DType t : kValueDTypes) pairs.push_back({t, t});
  for (const Pair p : {Pair{DType::f32, DType::bf16}, Pair{DType::f16, DType::f64},
                       Pair{DType::i32, DType::i64}})
    pairs.push_back(p);
  for (const Shape& s : shapes)
    for (const Pair p : pairs)
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {false, true}) {
          const RowCase a = test::random_rows(rng, s.nrows, s.width,
                                              canonical ? std::min(s.na, s.nrows) : s.na, p.a,
                                              index, canonical);
          const RowCase b = test::random_rows(rng, s.nrows, s.width,
                                              canonical ? std::min(s.nb, s.nrows) : s.nb, p.b,
                                              index, canonical);
          const std::string where = std::string(dtype_name(p.a)) + " " + dtype_name(p.b) + " " +
                                    std::to_string(s.nrows) + "x" + std::to_string(s.width) +
                                    (canonical ? " canonical " : " ") + index_name(index);
          const HostRowSparse c = coalesce<HostRowSparse>(a.view());
          EXPECT_TRUE(c.desc().canonical);
          EXPECT_EQ(test::coo_difference(test::expanded(c.view()),
                                         coalesce<HostCoo>(test::expanded(a.view()))),
                    "")
              << "coalesce " << where;
          for (const BinaryOp op : kUnionOps) {
            SparseOptions o;
            if (is_floating(p.a) && is_floating(p.b) && rng() % 2) o.fill_a = 1.5, o.fill_b = -2;
            const HostRowSparse u = combine<HostRowSparse>(op, a.view(), b.view(), o);
            const HostCoo want =
                combine<HostCoo>(op, test::expanded(a.view()), test::expanded(b.view()), o);
            EXPECT_EQ(test::coo_difference(test::expanded(u.view()), want), "")
                << op_name(op) << " " << where << " fills " << o.fill_a << " " << o.fill_b;
          }
          if (HasFailure()) return;
        }
}

/// "" where host row-sparse r is COO matrix m grouped by row (to_row_sparse's contract, m
/// canonical): r canonical, one stored row for each row index m has entries at, in order, each
/// holding m's values at their columns and zero bytes at the others; else what differs first.
std::string grouping_difference(const RowSparseView& r, const HostCoo& m) {
  const std::int64_t width = m.desc().ncols, n = m.nnz();
  const std::size_t size = dtype_size(m.desc().dtype);
  const auto at = [](const void* p, IndexType t, std::int64_t k) -> std::int64_t {
    return t == IndexType::i32 ? static_cast<const std::int32_t*>(p)[k]
                               : static_cast<const std::int64_t*>(p)[k];
  };
  if (!r.desc.canonical || r.desc.ncols != width || r.desc.nrows != m.desc().nrows ||
      r.desc.dtype != m.desc().dtype || r.desc.index != m.desc().index)
    return "descriptors differ";
  std::vector<unsigned char> want;
  std::int64_t stored = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    const std::int64_t row = at(m.rows(), m.desc().index, e);
    if (e == 0 || row != at(m.rows(), m.desc().index, e - 1)) {
      if (stored >= r.desc.nnz || at(r.rows, r.desc.index, stored) != row)
        return "stored row " + std::to_string(stored) + " is not row " + std::to_string(row);
      ++stored;
      want.resize(static_cast<std::size_t>(stored * width) * size, 0);
    }
    const auto col = at(m.cols(), m.desc().index, e);
    std::memcpy(want.data() + static_cast<std::size_t>((stored - 1) * width + col) * size,
                static_cast<const unsigned char*>(m.vals()) + static_cast<std::size_t>(e) * size,
                size);
  }
  if (stored != r.desc.nnz) return std::to_string(r.desc.nnz) + " stored rows, not " +
                                   std::to_string(stored);
  if (!want.empty() && std::memcmp(want.data(), r.vals, want.size()) != 0) return "values differ";
  return "";
}

// to_coo(row-sparse a) is coalesce(a) spelled out (its expanded COO, bit for bit: canonical,
// zeros kept), and to_row_sparse of that gives coalesce(a) back; to_row_sparse(COO m) is
// coalesce(m) grouped by row, zeros filled in (sorted and shuffled m, duplicates, explicit
// zeros among the values); over random shapes, dtypes, index types, empty matrices and rows of
// width 1; drop_zeros refused by both.
TEST(RowSparseHost, ConversionsToAndFromCoo) {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::mt19937_64 rng(seed);
  struct Shape {
    std::int64_t nrows, width, n;
  };
  const Shape shapes[] = {{1, 1, 1}, {9, 7, 12}, {40, 64, 33}, {300, 3, 250}, {6, 4, 0},
                          {70, 1, 40}, {5, 0, 3}};
  for (const Shape& s : shapes)
    for (const DType t : kValueDTypes)
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {false, true}) {
          const RowCase a = test::random_rows(
              rng, s.nrows, s.width, canonical ? std::min(s.n, s.nrows) : s.n, t, index, canonical);
          const std::string where = std::string(dtype_name(t)) + " " + std::to_string(s.nrows) +
                                    "x" + std::to_string(s.width) +
                                    (canonical ? " canonical " : " ") + index_name(index);
          const HostRowSparse c = coalesce<HostRowSparse>(a.view());
          const HostCoo m = to_coo<HostCoo>(a.view());
          EXPECT_EQ(test::coo_difference(m.view(), test::expanded(c.view())), "") << where;
          const HostRowSparse back = to_row_sparse<HostRowSparse>(m.view());
          EXPECT_EQ(test::coo_difference(test::expanded(back.view()), test::expanded(c.view())),
                    "")
              << "round trip " << where;
          if (HasFailure()) return;
        }
  for (const DType t : kValueDTypes)
    for (const IndexType index : {IndexType::i32, IndexType::i64})
      for (const bool shuffled : {false, true}) {
        const HostCoo x =
            verify::random_coo(200, 37, 0.05, rng(),
                               test::conversion_coo_options(t, index, shuffled));
        const HostRowSparse r = to_row_sparse<HostRowSparse>(x.view());
        EXPECT_EQ(grouping_difference(r.view(), coalesce<HostCoo>(x.view())), "")
            << dtype_name(t) << " " << index_name(index) << (shuffled ? " shuffled" : "");
      }
  SparseOptions drop;
  drop.drop_zeros = true;
  const RowCase a = test::random_rows(rng, 9, 3, 4, DType::f32, IndexType::i32, false);
  expect_invalid([&] { (void)to_coo<HostCoo>(a.view(), drop); }, {"to_coo", "drop_zeros"});
  const HostCoo x = verify::random_coo(9, 3, 0.5, seed);
  expect_invalid([&] { (void)to_row_sparse<HostRowSparse>(x.view(), drop); },
                 {"to_row_sparse", "drop_zeros"});
}

/// The dense factors a row-sparse (nrows, width) operand is multiplied by in the tests: the
/// whole table (row-major or column-major), a column vector (row scaling), a row vector and a
/// 0-d scalar, of dtype t, random values; `buffers` holds their storage.
std::vector<ConstTensorView> dense_factors(DType t, std::int64_t nrows, std::int64_t width,
                                           std::vector<HostTensor>& buffers,
                                           std::mt19937_64& rng) {
  const Dims shapes[] = {Dims{nrows, width}, Dims{width, nrows}, Dims{nrows, 1}, Dims{width},
                         Dims{}};
  std::vector<ConstTensorView> views;
  for (const Dims& shape : shapes) {
    buffers.emplace_back(t, shape);
    HostTensor& b = buffers.back();
    test::fill_values(t, b.data(), b.numel(), rng);
    views.push_back(b.view());
  }
  // the second as the column-major (nrows, width) table
  views[1] = ConstTensorView(buffers[1].data(),
                             TensorDesc::strided(t, Dims{nrows, width}, Dims{1, nrows}),
                             Memory::host);
  return views;
}

// multiply(row-sparse a, dense): its expanded COO form is multiply(COO, dense) on a's expanded
// form, bit for bit (a coalesced, each value times dense's element at its row and column,
// rounded once), for every factor shape, dtypes and mixed pairs, canonical and duplicated
// operands, empty ones and rows of width 0; and by scalars as multiply(COO, scalar).
TEST(RowSparseHost, MultiplyByDenseMatchesTheExpandedCoo) {
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Shape {
    std::int64_t nrows, width, nnz;
  };
  const Shape shapes[] = {{1, 1, 1}, {9, 7, 12}, {40, 64, 33}, {300, 3, 250}, {5, 0, 3},
                          {6, 4, 0}};
  struct Pair {
    DType a, dense;
  };
  std::vector<Pair> pairs;
  for (const DType t : kValueDTypes) pairs.push_back({t, t});
  for (const Pair p : {Pair{DType::f32, DType::f64}, Pair{DType::bf16, DType::f32},
                       Pair{DType::i32, DType::f32}, Pair{DType::i64, DType::i32}})
    pairs.push_back(p);
  for (const Shape& s : shapes)
    for (const Pair p : pairs)
      for (const bool canonical : {false, true}) {
        const IndexType index = rng() % 2 ? IndexType::i32 : IndexType::i64;
        const RowCase a = test::random_rows(rng, s.nrows, s.width,
                                            canonical ? std::min(s.nnz, s.nrows) : s.nnz, p.a,
                                            index, canonical);
        std::vector<HostTensor> buffers;
        for (const ConstTensorView& d : dense_factors(p.dense, s.nrows, s.width, buffers, rng)) {
          const HostRowSparse m = multiply<HostRowSparse>(a.view(), d);
          EXPECT_TRUE(m.desc().canonical);
          EXPECT_EQ(test::coo_difference(test::expanded(m.view()),
                                         multiply<HostCoo>(test::expanded(a.view()), d)),
                    "")
              << dtype_name(p.a) << " x " << dtype_name(p.dense) << " " << d.desc.shape.str()
              << " " << s.nrows << "x" << s.width << (canonical ? " canonical" : "");
        }
        for (const Scalar& x : {Scalar::weak_float(-2.5), Scalar::weak_int(3),
                                Scalar::of(DType::f64, 0.1)}) {
          const HostRowSparse m = multiply<HostRowSparse>(a.view(), x);
          EXPECT_EQ(test::coo_difference(test::expanded(m.view()),
                                         multiply<HostCoo>(test::expanded(a.view()), x)),
                    "")
              << dtype_name(p.a) << " x " << x.str();
        }
        if (HasFailure()) return;
      }
}

TEST(RowSparseHost, CombineAndCoalesceRefuseBadArguments) {
  HostTensor rows(DType::i32, Dims{3}), vals(DType::f32, Dims{3, 2});
  const std::int32_t good[] = {0, 2, 3};
  std::memcpy(rows.data(), good, sizeof good);
  for (std::int64_t i = 0; i < 6; ++i) vals.data_as<float>()[i] = 1;
  const auto a = [&](std::int64_t nrows = 4, bool canonical = false) {
    return row_sparse_view(rows.view(), vals.view(), nrows, canonical);
  };
  expect_invalid([&] { combine<HostRowSparse>(BinaryOp::mul, a(), a()); },
                 {"union operations", "mul"});
  SparseOptions drop;
  drop.drop_zeros = true;
  expect_invalid([&] { combine<HostRowSparse>(BinaryOp::add, a(), a(), drop); }, {"drop_zeros"});
  expect_invalid([&] { coalesce<HostRowSparse>(a(), drop); }, {"drop_zeros"});
  expect_invalid([&] { combine<HostRowSparse>(BinaryOp::add, a(), a(5)); },
                 {"different shapes", "4 x 2", "5 x 2"});
  HostTensor rows64(DType::i64, Dims{3}), narrow(DType::f32, Dims{3, 1});
  for (std::int64_t k = 0; k < 3; ++k) rows64.data_as<std::int64_t>()[k] = good[k];
  expect_invalid([&] {
    combine<HostRowSparse>(BinaryOp::add, a(), row_sparse_view(rows64.view(), vals.view(), 4));
  }, {"i32", "i64"});
  expect_invalid([&] {
    combine<HostRowSparse>(BinaryOp::add, a(), row_sparse_view(rows.view(), narrow.view(), 4));
  }, {"4 x 2", "4 x 1"});
  const std::int32_t out_of_range[] = {0, 2, 4};
  std::memcpy(rows.data(), out_of_range, sizeof out_of_range);
  expect_invalid([&] { coalesce<HostRowSparse>(a()); }, {"stored row 2", "row index 4"});
  expect_invalid([&] { combine<HostRowSparse>(BinaryOp::max, a(5), a()); },
                 {"different shapes"});
  const std::int32_t repeated[] = {0, 2, 2};
  std::memcpy(rows.data(), repeated, sizeof repeated);
  expect_invalid([&] { combine<HostRowSparse>(BinaryOp::add, a(), a(4, true)); },
                 {"b is marked canonical", "stored row 2"});
  expect_invalid([&] { combine<DeviceRowSparse>(BinaryOp::add, a(), a()); }, {"host"});
  // multiply by a dense that does not broadcast to 4 x 2, with drop_zeros, into device memory
  std::memcpy(rows.data(), good, sizeof good);
  HostTensor wrong(DType::f32, Dims{3, 2}), factor(DType::f32, Dims{4, 1});
  expect_invalid([&] { multiply<HostRowSparse>(a(), wrong.view()); }, {"(3,2)", "(4,2)"});
  expect_invalid([&] { multiply<HostRowSparse>(a(), factor.view(), drop); }, {"drop_zeros"});
  expect_invalid([&] { multiply<DeviceRowSparse>(a(), factor.view()); }, {"host"});
}

TEST(RowSparseHost, RefusesBadArgumentsBeforeWriting) {
  HostTensor rows(DType::i32, Dims{3}), vals(DType::f32, Dims{3, 2});
  const std::int32_t good[] = {0, 2, 3};
  std::memcpy(rows.data(), good, sizeof good);
  for (std::int64_t i = 0; i < 6; ++i) vals.data_as<float>()[i] = 1;
  HostTensor table(DType::f32, Dims{4, 2});
  std::memset(table.data(), 0, table.bytes());
  const HostTensor before = to_host(table.view());
  const auto a = [&](bool canonical = false) {
    return row_sparse_view(rows.view(), vals.view(), 4, canonical);
  };
  const auto unchanged = [&] { EXPECT_TRUE(same_bytes(table, before)); };

  expect_invalid([&] { accumulate(BinaryOp::mul, table.view(), a()); }, {"union operations", "mul"});
  SparseOptions drop;
  drop.drop_zeros = true;
  expect_invalid([&] { accumulate(BinaryOp::add, table.view(), a(), drop); }, {"drop_zeros"});
  HostTensor narrow(DType::f32, Dims{4, 3}), wide(DType::f16, Dims{4, 2});
  expect_invalid([&] { accumulate(BinaryOp::add, narrow.view(), a()); }, {"(4,2)", "row-sparse"});
  HostTensor f64_vals(DType::f64, Dims{3, 2});
  expect_invalid([&] {
    accumulate(BinaryOp::add, table.view(), row_sparse_view(rows.view(), f64_vals.view(), 4));
  }, {"dense is f32", "f64", "needs that dtype"});
  const TensorView revisiting{table.data(), TensorDesc::strided(DType::f32, Dims{4, 2}, Dims{0, 1}),
                              Memory::host};
  expect_invalid([&] { accumulate(BinaryOp::add, revisiting, a()); }, {"revisits"});
  // The table over a's own values: 3 stored rows of 2 viewed as a (3, 2) table.
  const TensorView over_vals{vals.data(), TensorDesc::contiguous(DType::f32, Dims{3, 2}),
                             Memory::host};
  expect_invalid([&] {
    accumulate(BinaryOp::add, over_vals, row_sparse_view(rows.view(), vals.view(), 3));
  }, {"a.vals"});

  const std::int32_t out_of_range[] = {0, 2, 4};
  std::memcpy(rows.data(), out_of_range, sizeof out_of_range);
  expect_invalid([&] { accumulate(BinaryOp::add, table.view(), a()); },
                 {"stored row 2", "row index 4", "[0, 4)"});
  const std::int32_t negative[] = {0, -1, 3};
  std::memcpy(rows.data(), negative, sizeof negative);
  expect_invalid([&] { accumulate(BinaryOp::add, table.view(), a()); },
                 {"stored row 1", "row index -1"});
  const std::int32_t repeated[] = {0, 2, 2};
  std::memcpy(rows.data(), repeated, sizeof repeated);
  expect_invalid([&] { accumulate(BinaryOp::add, table.view(), a(true)); },
                 {"marked canonical", "stored row 2", "row index 2"});
  accumulate(BinaryOp::add, table.view(), a());  // the same rows not marked: duplicates
  EXPECT_EQ(table.data_as<float>()[4], 2.0f);
  std::memcpy(table.data(), before.data(), table.bytes());
  unchanged();

  HostTensor short_vals(DType::f32, Dims{2, 2}), rows2d(DType::i32, Dims{3, 1});
  expect_invalid([&] { row_sparse_view(rows.view(), short_vals.view(), 4); },
                 {"nnz = 3", "(2,2)"});
  expect_invalid([&] { row_sparse_view(rows2d.view(), vals.view(), 4); }, {"1-D", "rows"});
  HostTensor f32_rows(DType::f32, Dims{3});
  expect_invalid([&] { row_sparse_view(f32_rows.view(), vals.view(), 4); }, {"i32 or i64"});
  expect_invalid([&] { row_sparse_view(rows.view(), vals.view(), -1); }, {"negative"});
  unchanged();
}

}  // namespace
}  // namespace ewise
