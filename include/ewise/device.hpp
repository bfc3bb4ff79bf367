// ewise/device.hpp — what GPU, if any, ewise runs on.
#pragma once

#include <string>

namespace ewise {

/// True when the CUDA runtime reports at least one usable device.
bool gpu_available() noexcept;
/// Why no GPU is usable (the CUDA error name and message), or "" when one is.
std::string gpu_unavailable_reason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  int compute_major = 0, compute_minor = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_bytes = 0;
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int driver_version = 0, runtime_version = 0;
};

/// Properties of the current device; throws CudaError when there is none.
DeviceInfo current_device_info();

}  // namespace ewise
