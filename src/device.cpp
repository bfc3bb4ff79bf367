#include "ewise/device.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include "ewise/detail/device_props.hpp"
#include "ewise/error.hpp"

namespace ewise {

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls are unaffected
    // The plain cause first, then CUDA's words.
#ifdef EWISE_NO_CUDA
    const char* plain = "";  // the build's no-driver runtime says why (src/no_cuda)
#else
    const char* plain = err == cudaErrorInsufficientDriver
                            ? "no NVIDIA driver, or one older than the CUDA runtime ewise was "
                              "built with; "
                        : err == cudaErrorNoDevice ? "no CUDA GPU in this machine; "
                                                   : "";
#endif
    return detail::concat(plain, cudaGetErrorName(err), ": ", cudaGetErrorString(err));
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

namespace detail {

namespace {

DeviceProps query_device_props(int ordinal) {
  const auto attribute = [ordinal](cudaDeviceAttr attr) {
    int value = 0;
    EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
    return value;
  };
  DeviceProps p;
  p.ordinal = ordinal;
  p.cc = 10 * attribute(cudaDevAttrComputeCapabilityMajor) +
         attribute(cudaDevAttrComputeCapabilityMinor);
  p.sm_count = attribute(cudaDevAttrMultiProcessorCount);
  p.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  p.max_shared = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  p.l2_bytes = attribute(cudaDevAttrL2CacheSize);
  return p;
}

/// Ordinals below this are cached (one slot each, lock-free once filled); higher ones, on
/// machines with more devices than any current host has, are queried on every call.
constexpr int kCachedDevices = 64;

struct CacheSlot {
  std::once_flag once;
  DeviceProps props;
};
CacheSlot cache[kCachedDevices];

}  // namespace

DeviceProps device_props(int ordinal) {
  if (ordinal < 0 || ordinal >= kCachedDevices) return query_device_props(ordinal);
  CacheSlot& slot = cache[ordinal];
  std::call_once(slot.once, [&] { slot.props = query_device_props(ordinal); });
  return slot.props;
}

DeviceProps current_device_props() {
  int ordinal = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&ordinal));
  return device_props(ordinal);
}

}  // namespace detail

}  // namespace ewise
