// GPU tests of the device's element casts (dense/convert_elements.cuh) where a kernel's result
// relies on the hardware's own behaviour rather than on a test of its own.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dense/convert_elements.cuh"
#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

/// Counts the float NaNs (all 2^24 - 2: each sign, each nonzero mantissa) whose cast_to f16 and
/// bf16 is not the canonical NaN 0x7FFF: counts[0] f16, counts[1] bf16.
__global__ void count_noncanonical_nan_casts(unsigned long long* counts) {
  const std::uint32_t step = gridDim.x * blockDim.x;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (1u << 24); i += step) {
    if ((i & 0x7FFFFFu) == 0) continue;  // the infinities
    const float x = __uint_as_float((i >> 23) << 31 | 0x7F800000u | (i & 0x7FFFFFu));
    if (__half_as_ushort(detail::cast_to<__half>(x)) != 0x7FFF) atomicAdd(&counts[0], 1ull);
    if (__bfloat16_as_ushort(detail::cast_to<__nv_bfloat16>(x)) != 0x7FFF)
      atomicAdd(&counts[1], 1ull);
  }
}

// Every kernel's store of a float result into f16 or bf16 (cast_to) relies on the hardware's
// conversion to give the canonical NaN for any NaN (convert_elements.cuh): all of them checked.
TEST(CastsGpu, FloatToHalfGivesTheCanonicalNaN) {
  EWISE_REQUIRE_GPU();
  DeviceBuffer counts(2 * sizeof(unsigned long long));
  EWISE_CUDA_CHECK(cudaMemset(counts.data(), 0, counts.size()));
  auto* c = static_cast<unsigned long long*>(counts.data());
  count_noncanonical_nan_casts<<<1024, 256>>>(c);
  EWISE_CUDA_CHECK(cudaGetLastError());
  unsigned long long host[2];
  EWISE_CUDA_CHECK(cudaMemcpy(host, c, sizeof host, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 0u) << "f16";
  EXPECT_EQ(host[1], 0u) << "bf16";
}

}  // namespace
}  // namespace ewise
