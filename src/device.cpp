#include "ewise/device.hpp"

#include <cuda_runtime_api.h>

#include "ewise/error.hpp"

namespace ewise {

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls are unaffected
    return detail::concat(cudaGetErrorName(err), ": ", cudaGetErrorString(err));
  }
  return count > 0 ? std::string() : std::string("the CUDA runtime reports 0 devices");
}

bool gpu_available() noexcept {
  try {
    return gpu_unavailable_reason().empty();
  } catch (...) {
    return false;
  }
}

DeviceInfo current_device_info() {
  DeviceInfo info;
  EWISE_CUDA_CHECK(cudaGetDevice(&info.ordinal));
  cudaDeviceProp p{};
  EWISE_CUDA_CHECK(cudaGetDeviceProperties(&p, info.ordinal));
  info.name = p.name;
  info.sm_count = p.multiProcessorCount;
  info.compute_major = p.major;
  info.compute_minor = p.minor;
  info.global_memory_bytes = p.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, info.ordinal));
  EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, info.ordinal));
  EWISE_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  EWISE_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

}  // namespace ewise
