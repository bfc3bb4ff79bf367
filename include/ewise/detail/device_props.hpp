// ewise/detail/device_props.hpp — the device properties the planners use, queried once per
// device and cached.
#pragma once

#include <cstdint>

namespace ewise::detail {

/// What a planner needs to know about a device. Plain data: planners are pure functions of it.
struct DeviceProps {
  int ordinal = -1;                 ///< CUDA device ordinal; -1 for the host backend
  int cc = 0;                       ///< compute capability, major * 10 + minor (90 = sm_90)
  int sm_count = 1;                 ///< multiprocessors
  int max_threads_per_sm = 2048;    ///< resident threads per multiprocessor
  std::int64_t max_shared = 48 << 10;  ///< shared memory a block may opt in to, bytes
  std::int64_t l2_bytes = 0;        ///< L2 cache size, bytes
};

/// The fixed properties the host backend (host views, select_kernel, kernel_supports) plans
/// with: no CUDA call. Kernel choice does not depend on them; the launch fields they give are
/// never used for a launch. No shared-memory limit: the CPU backend stages nothing, so a
/// kernel named on host views is refused only by its rule, as kernel_supports says.
constexpr DeviceProps host_device_props() {
  DeviceProps p;
  p.max_shared = INT64_MAX;
  return p;
}

/// The properties of device `ordinal`: queried from the CUDA runtime on the first call for that
/// ordinal, then cached for the process (thread-safe; a failed query is retried by the next
/// call). Throws CudaError when the query fails.
DeviceProps device_props(int ordinal);

/// device_props of the current device (cudaGetDevice on every call, the properties cached).
DeviceProps current_device_props();

}  // namespace ewise::detail
