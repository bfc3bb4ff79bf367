// GPU tests of row-sparse accumulate (sparse/rows.cu), combine, coalesce and multiply by a dense
// (rows_union.cu), and the conversions to and from COO (rows_convert.cu):
// bit for bit against the CPU backend
// (itself checked against the expanded COO form in test_rows_host.cpp) over random shapes,
// dtypes, index types, operations, duplicates with hot rows, strided tables, every path
// (canonical in place, sorted runs by one block for small operands or by the device sort); the
// refusals of bad indices with the table untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/gpu_test.hpp"
#include "testing/row_sparse.hpp"

namespace ewise {
namespace {

using test::expect_invalid;
using test::RowCase;

/// A row-sparse operand copied to the device.
struct DeviceRows {
  DeviceTensor rows, vals;
  RowSparseView view;
  explicit DeviceRows(const RowCase& a, cudaStream_t stream = nullptr)
      : rows(to_device(a.rows.view(), stream)), vals(to_device(a.vals.view(), stream)),
        view(row_sparse_view(rows.view(), vals.view(), a.nrows, a.canonical)) {}
};

/// The table's (nrows, width) view into a buffer: row stride width + 3, or column-major.
template <class Tensor>
TensorView table_view(Tensor& buffer, std::int64_t nrows, std::int64_t width, bool transposed,
                      Memory memory) {
  const Dims strides = transposed ? Dims{1, nrows} : Dims{width + 3, 1};
  return {buffer.data(), TensorDesc::strided(buffer.dtype(), Dims{nrows, width}, strides),
          memory};
}

bool same_bytes(const HostTensor& x, const HostTensor& y) {
  return x.bytes() == y.bytes() && std::memcmp(x.data(), y.data(), x.bytes()) == 0;
}

/// accumulate(op) of a into a random table on both backends; the whole buffers compared (the
/// gaps of a strided table must stay as they were).
void check_case(const RowCase& a, DType table_dtype, BinaryOp op, bool transposed,
                const SparseOptions& options, cudaStream_t stream, std::mt19937_64& rng,
                const std::string& what) {
  const std::int64_t nrows = a.nrows, width = a.vals.desc().rank() == 2 ? a.vals.shape()[1] : 1;
  HostTensor start(table_dtype, Dims{std::max<std::int64_t>(1, nrows * (width + 3))});
  test::fill_values(table_dtype, start.data(), start.numel(), rng);
  HostTensor want = to_host(start.view());
  accumulate(op, table_view(want, nrows, width, transposed, Memory::host), a.view());
  DeviceTensor table = to_device(start.view(), stream);
  const DeviceRows d(a, stream);
  accumulate(op, table_view(table, nrows, width, transposed, Memory::device), d.view, options,
             stream);
  EXPECT_TRUE(same_bytes(to_host(table.view(), stream), want)) << what;
}

TEST(RowSparseGpu, MatchesTheCpuBackend) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct Shape {
    std::int64_t nrows, width, nnz;
  };
  // Hot rows take half the stored rows (random_rows): {200, 65, 3000} and {50, 5, 2000} give
  // runs of hundreds, past kLongRun (rows.cu's long_rows_kernel, partial column slabs). Up to
  // kSmallRows (4096) unsorted stored rows take the small path (one block sorts them), more
  // the sorted path's device sort: {3000, 9, 5000} and {200, 65, 9000}.
  const Shape shapes[] = {{1, 1, 1},      {17, 3, 40},   {300, 64, 200},  {1000, 65, 900},
                          {64, 300, 50},  {5, 0, 4},     {7, 5, 0},       {200, 65, 3000},
                          {50, 5, 2000},  {3000, 9, 5000}, {200, 65, 9000}};
  const bool small = test::sanitizer_sizes();
  for (const Shape& s : shapes)
    for (const DType t : test::sweep_dtypes())
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {false, true})
          for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
            if (small && op != BinaryOp::add && op != BinaryOp::max) continue;
            const std::int64_t nnz = canonical ? std::min(s.nnz, s.nrows) : s.nnz;
            const RowCase a = test::random_rows(rng, s.nrows, s.width, nnz, t, index, canonical);
            const bool transposed = rng() % 2 == 0;
            SparseOptions options;
            options.validate_indices = rng() % 4 != 0;
            check_case(a, t, op, transposed, options, stream, rng,
                       std::string(dtype_name(t)) + " " + op_name(op) + " " +
                           std::to_string(s.nrows) + "x" + std::to_string(s.width) + " nnz " +
                           std::to_string(nnz) + (canonical ? " canonical" : "") +
                           (transposed ? " transposed " : " ") + index_name(index));
          }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(RowSparseGpu, LongRunsKeepStorageOrder) {
  EWISE_REQUIRE_GPU();
  // One hot row stored 20001 times among others (a frequent embedding id), values whose f32
  // sum depends on the order: large and small magnitudes alternating.
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  const std::int64_t n = 30001, width = 33, nrows = 100;
  RowCase a{HostTensor(DType::i64, Dims{n}), HostTensor(DType::f32, Dims{n, width}), nrows, false};
  for (std::int64_t k = 0; k < n; ++k) {
    a.rows.data_as<std::int64_t>()[k] = k % 3 == 2 ? static_cast<std::int64_t>(rng() % nrows) : 7;
    for (std::int64_t c = 0; c < width; ++c)
      a.vals.data_as<float>()[k * width + c] =
          static_cast<float>((k % 2 ? 1e7 : 1.0) * (static_cast<double>(rng() % 2001) - 1000));
  }
  for (const DType table : {DType::f32, DType::f64})
    check_case(a, table, BinaryOp::add, false, {}, nullptr, rng,
               std::string("hot row into ") + dtype_name(table));
}

// The small path at its bounds (rows.cu's block sorts of 1024, 2048 and 4096 stored rows) and
// one past each (the next sort; past 4096 the sorted path): one row stored at every position
// (a run of the whole operand, long_rows_kernel on a list made on the device), hot rows among
// uniform ones, all rows distinct but shuffled; values whose f32 sums depend on the order.
TEST(RowSparseGpu, SmallOperandsAtTheirBound) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  for (const std::int64_t n : {1, 1024, 1025, 2048, 2049, 4095, 4096, 4097})
    for (const std::int64_t width : {std::int64_t{1}, std::int64_t{33}, std::int64_t{128}})
      for (const int kind : {0, 1, 2}) {
        const std::int64_t nrows = kind == 2 ? n + 7 : 300;
        RowCase a{HostTensor(DType::i32, Dims{n}), HostTensor(DType::f32, Dims{n, width}),
                  nrows, false};
        auto* rows = a.rows.data_as<std::int32_t>();
        for (std::int64_t k = 0; k < n; ++k)
          rows[k] = kind == 0 ? 299 : static_cast<std::int32_t>(kind == 1 && k % 2 ? rng() % 3 : k);
        if (kind == 2) std::shuffle(rows, rows + n, rng);
        if (kind == 1)
          for (std::int64_t k = 0; k < n; k += 2)
          rows[k] = static_cast<std::int32_t>(rng() % nrows);
        for (std::int64_t k = 0; k < n * width; ++k)
          a.vals.data_as<float>()[k] =
              static_cast<float>((k % 2 ? 1e7 : 1.0) * (static_cast<double>(rng() % 2001) - 1000));
        SparseOptions options;
        options.validate_indices = kind != 1;
        check_case(a, DType::f32, kind == 2 ? BinaryOp::max : BinaryOp::add, false, options,
                   nullptr, rng,
                   "n " + std::to_string(n) + " width " + std::to_string(width) + " kind " +
                       std::to_string(kind));
      }
}

TEST(RowSparseGpu, MixedDTypes) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Pair {
    DType table, vals;
  };
  for (const Pair p : {Pair{DType::f64, DType::f32}, Pair{DType::f32, DType::bf16},
                       Pair{DType::f32, DType::f16}, Pair{DType::i64, DType::i32}})
    for (const bool canonical : {false, true}) {
      const RowCase a = test::random_rows(rng, 400, 24, 300, p.vals, IndexType::i64, canonical);
      check_case(a, p.table, BinaryOp::add, false, {}, nullptr, rng,
                 std::string(dtype_name(p.table)) + " += " + dtype_name(p.vals));
    }
}

/// A device row-sparse result copied to the host, as a view's owner.
struct HostCopy {
  HostTensor rows, vals;
  CooDesc desc;
  explicit HostCopy(const DeviceRowSparse& m)
      : rows(m.desc().index == IndexType::i32 ? DType::i32 : DType::i64, Dims{m.nnz()}),
        vals(m.desc().dtype, Dims{m.nnz(), m.desc().ncols}), desc(m.desc()) {
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
    if (rows.bytes() > 0)
      EWISE_CUDA_CHECK(cudaMemcpy(rows.data(), m.rows(), rows.bytes(), cudaMemcpyDeviceToHost));
    if (vals.bytes() > 0)
      EWISE_CUDA_CHECK(cudaMemcpy(vals.data(), m.vals(), vals.bytes(), cudaMemcpyDeviceToHost));
  }
  RowSparseView view() const { return {rows.data(), vals.data(), desc, Memory::host}; }
};

// combine and coalesce of row-sparse operands (sparse/rows_union.cu) against the CPU backend
// (itself checked against the expanded COO form in test_rows_host.cpp), bit for bit: shapes
// with hot rows (runs of hundreds, past kLongRun: rows.cuh's long_rows_kernel; {20, 11, 5000,
// 4000}: one of thousands, past kVeryLong, a's rows and b's each over several chunks), widths
// across kRowCols' groups and kSlab's, and 0, empty operands, every sweep dtype and a mixed
// pair, both index types, canonical and duplicated operands, the fills.
TEST(RowSparseGpu, CombineAndCoalesceMatchTheCpuBackend) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct Shape {
    std::int64_t nrows, width, na, nb;
  };
  const Shape shapes[] = {{1, 1, 1, 1},     {17, 3, 40, 9},  {300, 64, 200, 0}, {1000, 65, 900, 700},
                          {64, 300, 50, 64}, {5, 0, 4, 3},    {7, 5, 0, 0},      {200, 9, 3000, 40},
                          {50, 5, 0, 2000},  {20, 11, 5000, 4000}};
  const bool small = test::sanitizer_sizes();
  const auto expect_same = [&](const DeviceRowSparse& got, const HostRowSparse& want,
                               const std::string& what) {
    const HostCopy h(got);
    EXPECT_EQ(test::coo_difference(test::expanded(h.view()), test::expanded(want.view())), "")
        << what;
    EXPECT_EQ(got.nnz(), want.nnz()) << what;
    EXPECT_TRUE(got.desc().canonical) << what;
    if (want.nnz() > 0)
      EXPECT_EQ(std::memcmp(h.rows.data(), want.rows(), h.rows.bytes()), 0) << what << ": rows";
  };
  for (const Shape& s : shapes)
    for (const DType t : test::sweep_dtypes())
      for (const IndexType index : {IndexType::i32, IndexType::i64})
        for (const bool canonical : {false, true}) {
          const auto draw = [&](std::int64_t n, DType dt) {
            return test::random_rows(rng, s.nrows, s.width, canonical ? std::min(n, s.nrows) : n,
                                     dt, index, canonical);
          };
          const DType tb = rng() % 4 == 0 ? DType::f32 : t;  // a mixed pair now and then
          const RowCase a = draw(s.na, t), b = draw(s.nb, tb);
          const DeviceRows da(a, stream), db(b, stream);
          const std::string where = std::string(dtype_name(t)) + " " + dtype_name(tb) + " " +
                                    std::to_string(s.nrows) + "x" + std::to_string(s.width) +
                                    (canonical ? " canonical " : " ") + index_name(index);
          SparseOptions o;
          o.validate_indices = rng() % 4 != 0;
          expect_same(coalesce(da.view, o, stream), coalesce<HostRowSparse>(a.view()),
                      "coalesce " + where);
          for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
            if (small && op != BinaryOp::add) continue;
            if (is_floating(t) && is_floating(tb) && rng() % 2) o.fill_a = 0.5, o.fill_b = -3;
            expect_same(combine(op, da.view, db.view, o, stream),
                        combine<HostRowSparse>(op, a.view(), b.view(), o),
                        std::string(op_name(op)) + " " + where);
          }
          if (HasFailure()) break;
        }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// to_coo and to_row_sparse on the GPU (rows_convert.cu) against the CPU backend, bit for bit:
// random row-sparse operands (duplicates with hot rows; canonical) spelled out and grouped back,
// random COO matrices (sorted; shuffled with duplicates) grouped by row; every sweep dtype, both
// index types, empty operands, rows of width 0 and 1.
TEST(RowSparseGpu, ConversionsMatchTheCpuBackend) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct Shape {
    std::int64_t nrows, width, n;
  };
  const Shape shapes[] = {{1, 1, 1}, {17, 3, 40}, {300, 64, 200}, {5, 0, 4},
                          {7, 5, 0}, {200, 9, 3000}, {90, 1, 80}};
  const auto rows_difference = [](const RowSparseView& got, const RowSparseView& want) {
    return test::coo_difference(test::expanded(got), test::expanded(want));
  };
  for (const DType t : test::sweep_dtypes())
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      for (const Shape& s : shapes)
        for (const bool canonical : {false, true}) {
          const RowCase a = test::random_rows(
              rng, s.nrows, s.width, canonical ? std::min(s.n, s.nrows) : s.n, t, index, canonical);
          const DeviceRows da(a, stream);
          const std::string where = std::string(dtype_name(t)) + " " + std::to_string(s.nrows) +
                                    "x" + std::to_string(s.width) +
                                    (canonical ? " canonical " : " ") + index_name(index);
          const DeviceCoo m = to_coo(da.view, {}, stream);
          EXPECT_EQ(test::coo_difference(to_host(m.view(), stream).view(),
                                         to_coo<HostCoo>(a.view()).view()),
                    "")
              << "to_coo " << where;
          const HostCopy back(to_row_sparse(m.view(), {}, stream));
          EXPECT_EQ(rows_difference(back.view(), coalesce<HostRowSparse>(a.view()).view()), "")
              << "round trip " << where;
        }
      for (const bool shuffled : {false, true}) {
        const HostCoo x =
            verify::random_coo(500, 70, 0.03, rng(),
                               test::conversion_coo_options(t, index, shuffled));
        const DeviceCoo dx = to_device(x.view(), stream);
        const HostRowSparse want = to_row_sparse<HostRowSparse>(x.view());
        const HostCopy got(to_row_sparse(dx.view(), {}, stream));
        EXPECT_EQ(rows_difference(got.view(), want.view()), "")
            << "to_row_sparse " << dtype_name(t) << " " << index_name(index)
            << (shuffled ? " shuffled" : "");
        EXPECT_TRUE(got.desc.canonical);
      }
      if (HasFailure()) break;
    }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// multiply(row-sparse a, dense) (rows_union.cu: sorted runs, long runs, and a canonical a in
// one pass) against the CPU backend, bit for bit: factors of every broadcast shape (the whole
// table row- and column-major, a column vector, a row vector, a 0-d scalar), a mixed pair, both
// index checks' settings; a canonical a with a bad row refused.
TEST(RowSparseGpu, MultiplyByDenseMatchesTheCpuBackend) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  struct Shape {
    std::int64_t nrows, width, nnz;
  };
  const Shape shapes[] = {{1, 1, 1}, {17, 3, 40}, {300, 65, 200}, {200, 9, 3000}, {20, 11, 5000},
                          {5, 0, 4}, {7, 5, 0}};
  for (const Shape& s : shapes)
    for (const DType t : test::sweep_dtypes())
      for (const bool canonical : {false, true}) {
        const DType td = rng() % 4 == 0 ? DType::f64 : t;  // a mixed pair now and then
        const RowCase a = test::random_rows(rng, s.nrows, s.width,
                                            canonical ? std::min(s.nnz, s.nrows) : s.nnz, t,
                                            rng() % 2 ? IndexType::i32 : IndexType::i64,
                                            canonical);
        const DeviceRows da(a);
        const Dims shapes_of[] = {Dims{s.nrows, s.width}, Dims{s.width, s.nrows},
                                  Dims{s.nrows, 1}, Dims{s.width}, Dims{}};
        for (std::size_t f = 0; f < std::size(shapes_of); ++f) {
          HostTensor h(td, shapes_of[f]);
          test::fill_values(td, h.data(), h.numel(), rng);
          const DeviceTensor d = to_device(h.view());
          // the second as the column-major (nrows, width) table
          const TensorDesc desc = f == 1 ? TensorDesc::strided(td, Dims{s.nrows, s.width},
                                                               Dims{1, s.nrows})
                                         : h.view().desc;
          SparseOptions o;
          o.validate_indices = rng() % 4 != 0;
          const DeviceRowSparse got =
              multiply(da.view, ConstTensorView(d.data(), desc, Memory::device), o);
          const HostRowSparse want =
              multiply<HostRowSparse>(a.view(), ConstTensorView(h.data(), desc, Memory::host));
          const HostCopy hg(got);
          EXPECT_EQ(test::coo_difference(test::expanded(hg.view()), test::expanded(want.view())), "")
              << dtype_name(t) << " x " << dtype_name(td) << " " << desc.shape.str() << " "
              << s.nrows << "x" << s.width << (canonical ? " canonical" : "");
          EXPECT_TRUE(got.desc().canonical);
        }
        if (HasFailure()) return;
      }
  RowCase bad = test::random_rows(rng, 10, 4, 3, DType::f32, IndexType::i64, true);
  bad.rows.data_as<std::int64_t>()[2] = 10;
  const DeviceRows dbad(bad);
  const DeviceTensor factor = to_device(HostTensor(DType::f32, Dims{10, 1}).view());
  expect_invalid([&] { multiply(dbad.view, factor.view()); }, {"stored row 2", "row index 10"});
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(RowSparseGpu, CombineRefusesBadIndices) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  const auto operand = [&](const std::vector<std::int64_t>& rows, bool canonical) {
    RowCase a{HostTensor(DType::i64, Dims{static_cast<std::int64_t>(rows.size())}),
              HostTensor(DType::f32, Dims{static_cast<std::int64_t>(rows.size()), 3}), 20,
              canonical};
    std::memcpy(a.rows.data(), rows.data(), rows.size() * 8);
    test::fill_values(DType::f32, a.vals.data(), a.vals.numel(), rng);
    return a;
  };
  const RowCase good = operand({4, 1, 4}, false);
  const DeviceRows dgood(good);
  const auto run = [&](const std::vector<std::int64_t>& rows, bool canonical, bool as_b) {
    const DeviceRows d(operand(rows, canonical));
    if (as_b) combine(BinaryOp::add, dgood.view, d.view);
    else coalesce(d.view);
  };
  expect_invalid([&] { run({3, 20, 1}, false, false); }, {"a: stored row 1", "row index 20"});
  expect_invalid([&] { run({3, 1, -2}, false, true); }, {"b: stored row 2", "row index -2"});
  expect_invalid([&] { run({1, 5, 5}, true, true); },
                 {"b is marked canonical", "stored row 2", "row index 5"});
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(RowSparseGpu, RefusesBadIndicesBeforeWriting) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(verify::seed_from_env_or_random());
  const HostTensor start = test::random_table(rng, DType::f32, 50, 8);
  DeviceTensor table = to_device(start.view());
  const auto run = [&](const std::vector<std::int32_t>& rows, bool canonical) {
    RowCase a{HostTensor(DType::i32, Dims{static_cast<std::int64_t>(rows.size())}),
              HostTensor(DType::f32, Dims{static_cast<std::int64_t>(rows.size()), 8}), 50,
              canonical};
    std::memcpy(a.rows.data(), rows.data(), rows.size() * 4);
    test::fill_values(DType::f32, a.vals.data(), a.vals.numel(), rng);
    const DeviceRows d(a);
    accumulate(BinaryOp::add, table.view(), d.view);
  };
  const auto unchanged = [&] { EXPECT_TRUE(same_bytes(to_host(table.view()), start)); };
  // The small path (checked as its block reads them) and the canonical one (a pass of its
  // own): the first bad stored row named, nothing written.
  expect_invalid([&] { run({3, 1, 50, 2, 60}, false); }, {"stored row 2", "row index 50", "[0, 50)"});
  unchanged();
  expect_invalid([&] { run({3, -4, 1}, false); }, {"stored row 1", "row index -4"});
  unchanged();
  // Past the small path's bound (4096 stored rows): the device sort's key pass checks them.
  std::vector<std::int32_t> many(5000);
  for (std::size_t k = 0; k < many.size(); ++k) many[k] = static_cast<std::int32_t>(k * 7 % 50);
  many[4500] = 51;
  many[4700] = -1;
  expect_invalid([&] { run(many, false); }, {"stored row 4500", "row index 51"});
  unchanged();
  expect_invalid([&] { run({1, 3, 49, 50}, true); }, {"stored row 3", "row index 50"});
  unchanged();
  expect_invalid([&] { run({1, 3, 3, 9}, true); },
                 {"marked canonical", "stored row 2", "row index 3", "row index 3"});
  unchanged();
  // Misaligned device values: refused before anything is launched.
  DeviceTensor rows = to_device(HostTensor(DType::i32, Dims{2}).view());
  DeviceBuffer raw(2 * 8 * 4 + 4);
  const ConstTensorView misaligned{static_cast<std::byte*>(raw.data()) + 2,
                                   TensorDesc::contiguous(DType::f32, Dims{2, 8}), Memory::device};
  expect_invalid([&] {
    accumulate(BinaryOp::add, table.view(), row_sparse_view(rows.view(), misaligned, 50));
  }, {"vals", "not aligned"});
  unchanged();
}

}  // namespace
}  // namespace ewise
