// tests/testing/memory_use.hpp — device memory accounting for the soak and the failure-path
// tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ewise/error.hpp"
#include "ewise/memory.hpp"

namespace ewise::tools {

struct MemoryUse {
  std::uint64_t pool_used = 0;      ///< bytes allocated from ewise's pool and not freed
  std::uint64_t pool_reserved = 0;  ///< bytes ewise's pool holds (after trimming)
  std::uint64_t pool_high = 0;      ///< high-water mark of pool_used
  std::size_t device_used = 0;      ///< total - free after trimming the pools
};

/// Waits for all work, returns the unused memory of ewise's pool and of the device's default
/// pool (which the tests' own allocations use) to the driver, and measures.
inline MemoryUse memory_use() {
  EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  int device = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t default_pool;
  EWISE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, device));
  EWISE_CUDA_CHECK(cudaMemPoolTrimTo(default_pool, 0));
  trim_memory_pool(0);
  const MemoryPoolStats pool = memory_pool_stats();
  MemoryUse m;
  m.pool_used = pool.used;
  m.pool_reserved = pool.reserved;
  m.pool_high = pool.high;
  std::size_t free_bytes = 0, total = 0;
  EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  m.device_used = total - free_bytes;
  return m;
}

}  // namespace ewise::tools
