#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "check.hpp"
#include "coo_device.cuh"
#include "coo_oracle.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"

namespace ewise::bench {
namespace {

__device__ bool same_bits(float x, float y) {
  std::uint32_t bx, by;
  memcpy(&bx, &x, sizeof bx);
  memcpy(&by, &y, sizeof by);
  return bx == by;
}

__device__ void report(bool ok, std::int64_t k, unsigned long long* bad) {
  if (ok) return;
  atomicAdd(bad, 1ull);
  atomicMin(bad + 1, static_cast<unsigned long long>(k));
}

__global__ void equal_kernel(const std::int32_t* rows, const std::int32_t* cols, const float* vals,
                             std::int64_t n, std::int64_t ncols, const std::int64_t* keys,
                             const float* want, unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(std::int64_t{rows[k]} * ncols + cols[k] == keys[k] && same_bits(vals[k], want[k]), k,
           bad);
}

__global__ void values_kernel(const std::int32_t* rows, const std::int32_t* cols,
                              const float* vals, std::int64_t n, const float* dense,
                              std::int64_t rs, std::int64_t cs, const float* out,
                              unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(same_bits(out[k], ops::Mul{}(vals[k], dense[rows[k] * rs + cols[k] * cs])), k, bad);
}

__global__ void dense_equal_kernel(const float* got, const float* want, std::int64_t n,
                                   unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(same_bits(got[k], want[k]), k, bad);
}

// The first bad entry's description, or "" when none.
std::string first_bad(DeviceBuffer& d_bad, std::int64_t n, cudaStream_t stream,
                      const char* what = "entries") {
  unsigned long long got[2];
  EWISE_CUDA_CHECK(cudaMemcpyAsync(got, d_bad.data(), sizeof got, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (got[0] == 0) return "";
  return detail::concat(got[0], " of ", n, " ", what, " differ; the first is number ", got[1]);
}

DeviceBuffer bad_counter(cudaStream_t stream) {
  DeviceBuffer d_bad(2 * sizeof(unsigned long long), stream);
  const unsigned long long init[2] = {0, std::numeric_limits<unsigned long long>::max()};
  EWISE_CUDA_CHECK(
      cudaMemcpyAsync(d_bad.data(), init, sizeof init, cudaMemcpyHostToDevice, stream));
  return d_bad;
}
}  // namespace

std::string check_equal(const CooView& got, const OracleCoo& want, cudaStream_t stream) {
  expect_i32_f32(got.desc, "check_equal");
  if (got.desc.nnz != want.nnz)
    throw VerifyError(detail::concat("result has nnz ", got.desc.nnz, ", the oracle ", want.nnz));
  if (want.nnz > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_equal", equal_kernel, grid_for(want.nnz), kThreads, 0, stream,
                   static_cast<const std::int32_t*>(got.rows),
                   static_cast<const std::int32_t*>(got.cols), static_cast<const float*>(got.vals),
                   want.nnz, want.ncols, static_cast<const std::int64_t*>(want.keys.data()),
                   static_cast<const float*>(want.vals.data()),
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, want.nnz, stream);
    if (!why.empty()) throw VerifyError("against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", want.nnz, " entries bit-exact");
}

std::string check_values(const CooView& a, const ConstTensorView& dense,
                         const ConstTensorView& out_vals, cudaStream_t stream) {
  expect_i32_f32(a.desc, "check_values");
  EWISE_EXPECTS(out_vals.memory == Memory::device && out_vals.desc.dtype == DType::f32 &&
                    out_vals.desc.is_contiguous() && out_vals.desc.numel() == a.desc.nnz,
                "check_values: out_vals must be a contiguous device f32 tensor of nnz elements");
  const auto [rs, cs] = dense_strides(dense, a.desc.nrows, a.desc.ncols);
  if (a.desc.nnz > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_values", values_kernel, grid_for(a.desc.nnz), kThreads, 0, stream,
                   static_cast<const std::int32_t*>(a.rows),
                   static_cast<const std::int32_t*>(a.cols), static_cast<const float*>(a.vals),
                   a.desc.nnz, static_cast<const float*>(dense.data), rs, cs,
                   static_cast<const float*>(out_vals.data),
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, a.desc.nnz, stream);
    if (!why.empty()) throw VerifyError("multiply_values against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", a.desc.nnz, " values bit-exact");
}

std::string check_dense_equal(const ConstTensorView& got, const ConstTensorView& want,
                              cudaStream_t stream) {
  for (const ConstTensorView* v : {&got, &want})
    EWISE_EXPECTS(v->memory == Memory::device && v->desc.dtype == DType::f32 &&
                      v->desc.is_contiguous(),
                  "check_dense_equal takes contiguous device f32 tensors, got ", v->desc.str());
  EWISE_EXPECTS(got.desc.shape == want.desc.shape, "check_dense_equal: shapes differ");
  const std::int64_t n = want.desc.numel();
  if (n > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_dense_equal", dense_equal_kernel, grid_for(n), kThreads, 0,
                   stream, static_cast<const float*>(got.data),
                   static_cast<const float*>(want.data), n,
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, n, stream, "elements");
    if (!why.empty()) throw VerifyError("against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", n, " elements bit-exact");
}

}  // namespace ewise::bench
