// The rows suite (issue 35): row-sparse operands (sparse.hpp's RowSparseView) at an embedding
// gradient's shape: a 2^20 x 64 f32 table, gradients of 262,144 stored rows whose ids follow a
// Zipf law (exponent 1.1, ranks scattered over the table by a random permutation), in storage
// order with duplicates ("natural", an Embedding(sparse=True) gradient) and coalesced
// ("canonical"). Operations, each in both call patterns (harness.hpp):
//   accumulate  accumulate(add, table, g) into one working copy of the table (PyTorch
//               table.add_(g)); the timed calls keep adding into it
//   combine     combine(add, g1, g2): two micro-batches' gradients
//   coalesce    coalesce(g)
//   scale       multiply(g, a (nrows, 1) column): row scaling
// Every call with default options (index validation on). Verified before timing against the CPU
// backend, bit for bit: the same call on host copies (accumulate: from the same table).
// Bytes moved: the gradients' values and ids read once; accumulate: the touched rows of the
// table read and written; the others: the result's rows written (and scale's factor read).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "suites.hpp"

namespace ewise::bench {
namespace {

constexpr std::int64_t kRows = std::int64_t{1} << 20, kWidth = 64, kIds = 262144;

/// A host gradient: kIds Zipf-distributed row ids (int64) and their values in [-1, 1].
struct HostGradient {
  HostTensor rows{DType::i64, Dims{kIds}};
  HostTensor vals{DType::f32, Dims{kIds, kWidth}};
};

HostGradient draw_gradient(std::uint64_t seed, const std::vector<double>& cdf,
                           const std::vector<std::int64_t>& rank_to_row) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_real_distribution<float> v(-1.0f, 1.0f);
  HostGradient g;
  auto* rows = static_cast<std::int64_t*>(g.rows.data());
  for (std::int64_t k = 0; k < kIds; ++k) {
    const auto rank = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    rows[k] = rank_to_row[static_cast<std::size_t>(std::min<std::int64_t>(rank, kRows - 1))];
  }
  auto* vals = static_cast<float*>(g.vals.data());
  for (std::int64_t i = 0; i < kIds * kWidth; ++i) vals[i] = v(rng);
  return g;
}

/// A row-sparse result copied to the host, compared with the CPU backend's bit for bit.
bool same_rows(const DeviceRowSparse& got, const HostRowSparse& want, cudaStream_t stream) {
  if (got.nnz() != want.nnz()) return false;
  const std::size_t rb = static_cast<std::size_t>(got.nnz()) * sizeof(std::int64_t);
  const std::size_t vb = static_cast<std::size_t>(got.nnz() * kWidth) * sizeof(float);
  std::vector<unsigned char> rows(rb), vals(vb);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(rows.data(), got.rows(), rb, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaMemcpyAsync(vals.data(), got.vals(), vb, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::memcmp(rows.data(), want.rows(), rb) == 0 &&
         std::memcmp(vals.data(), want.vals(), vb) == 0;
}

void run_rows(Bench& bench) {
  cudaStream_t stream = bench.stream();
  // Zipf over ranks 1..kRows, then ranks scattered over the table's rows.
  std::vector<double> cdf(static_cast<std::size_t>(kRows));
  double total = 0;
  for (std::int64_t r = 0; r < kRows; ++r)
    cdf[static_cast<std::size_t>(r)] = total += std::pow(static_cast<double>(r + 1), -1.1);
  for (double& c : cdf) c /= total;
  std::vector<std::int64_t> rank_to_row(static_cast<std::size_t>(kRows));
  std::iota(rank_to_row.begin(), rank_to_row.end(), std::int64_t{0});
  std::shuffle(rank_to_row.begin(), rank_to_row.end(), std::mt19937_64(bench.next_seed()));
  const HostGradient h1 = draw_gradient(bench.next_seed(), cdf, rank_to_row);
  const HostGradient h2 = draw_gradient(bench.next_seed(), cdf, rank_to_row);
  const RowSparseView hv1 = row_sparse_view(h1.rows.view(), h1.vals.view(), kRows);
  const RowSparseView hv2 = row_sparse_view(h2.rows.view(), h2.vals.view(), kRows);
  const HostRowSparse hc1 = coalesce<HostRowSparse>(hv1);
  const DeviceTensor r1 = to_device(h1.rows.view(), stream), v1 = to_device(h1.vals.view(), stream);
  const DeviceTensor r2 = to_device(h2.rows.view(), stream), v2 = to_device(h2.vals.view(), stream);
  const RowSparseView g1 = row_sparse_view(r1.view(), v1.view(), kRows);
  const RowSparseView g2 = row_sparse_view(r2.view(), v2.view(), kRows);
  // the canonical form of g1 on the device, from the CPU backend's coalesce
  HostTensor c_rows(DType::i64, Dims{hc1.nnz()}), c_vals(DType::f32, Dims{hc1.nnz(), kWidth});
  std::memcpy(c_rows.data(), hc1.rows(), c_rows.bytes());
  std::memcpy(c_vals.data(), hc1.vals(), c_vals.bytes());
  const DeviceTensor cr = to_device(c_rows.view(), stream), cv = to_device(c_vals.view(), stream);
  const RowSparseView c1 = row_sparse_view(cr.view(), cv.view(), kRows, true);
  HostTensor h_table(DType::f32, Dims{kRows, kWidth}), h_column(DType::f32, Dims{kRows, 1});
  std::mt19937_64 rng(bench.next_seed());
  std::uniform_real_distribution<float> v(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < kRows * kWidth; ++i) static_cast<float*>(h_table.data())[i] = v(rng);
  for (std::int64_t i = 0; i < kRows; ++i) static_cast<float*>(h_column.data())[i] = v(rng);
  DeviceTensor table = to_device(h_table.view(), stream);
  const DeviceTensor column = to_device(h_column.view(), stream);
  constexpr double kRowBytes = kWidth * 4 + 8;  // a stored row's values and its id

  struct Form {
    const char* name;
    RowSparseView device, host;
    std::int64_t distinct;  ///< the rows it touches
  };
  const Form forms[] = {{"natural", g1, hv1, hc1.nnz()},
                        {"canonical", c1, hc1.view(), hc1.nnz()}};
  for (const Form& f : forms) {
    const auto record = [&](const char* op, double bytes) {
      Record r;
      r.suite = "rows";
      r.name = std::string(op) + "_" + f.name;
      r.impl = "automatic";
      r.dtype = "f32";
      r.params = {param("nrows", kRows), param("width", kWidth), param("stored", f.device.desc.nnz),
                  param("distinct", f.distinct)};
      r.bytes = bytes;
      return r;
    };
    const double touched = static_cast<double>(f.distinct) * kWidth * 4;
    const double read = static_cast<double>(f.device.desc.nnz) * kRowBytes;
    {  // accumulate
      Record r = record("accumulate", read + 2 * touched);
      HostTensor want = to_host(table.view(), stream);
      accumulate(BinaryOp::add, want.view(), f.host);
      accumulate(BinaryOp::add, table.view(), f.device, {}, stream);
      const HostTensor got = to_host(table.view(), stream);
      if (std::memcmp(got.data(), want.data(), got.bytes()) != 0) {
        bench.add_untimed(std::move(r), "failed", "accumulate differs from the CPU backend");
      } else {
        r.verified = "table == CPU backend's, bit for bit";
        const auto add = [&](std::int64_t) {
          accumulate(BinaryOp::add, table.view(), f.device, {}, stream);
        };
        r.stats = bench.time(add, 1);
        bench.add(std::move(r), 0);
      }
    }
    // bytes: what the call reads besides its first operand; the result's rows are added
    const auto result_case = [&](const char* op, double bytes, const HostRowSparse& want,
                                 const std::function<DeviceRowSparse()>& call) {
      Record r = record(op, read + bytes + static_cast<double>(want.nnz()) * kRowBytes);
      if (!same_rows(call(), want, stream)) {
        bench.add_untimed(std::move(r), "failed", "the result differs from the CPU backend's");
        return;
      }
      r.verified = "rows and values == CPU backend's, bit for bit";
      r.stats = bench.time([&](std::int64_t) { (void)call(); }, 1);
      bench.add(std::move(r), 0);
    };
    result_case("combine", static_cast<double>(kIds) * kRowBytes,
                combine<HostRowSparse>(BinaryOp::add, f.host, hv2),
                [&] { return combine(BinaryOp::add, f.device, g2, {}, stream); });
    result_case("coalesce", 0, coalesce<HostRowSparse>(f.host),
                [&] { return coalesce(f.device, {}, stream); });
    result_case("scale", static_cast<double>(f.distinct) * 4,
                multiply<HostRowSparse>(f.host, h_column.view()),
                [&] { return multiply(f.device, ConstTensorView(column.view()), {}, stream); });
  }
}

}  // namespace

std::vector<Case> rows_suite(Bench& bench) {
  return {{"rows: embedding gradients", [&bench] { run_rows(bench); }}};
}

}  // namespace ewise::bench
