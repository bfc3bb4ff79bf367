// tests/testing/memory_use.hpp — device memory accounting for the soak and the failure-path
// tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ewise/error.hpp"

namespace ewise::tools {

struct MemoryUse {
  std::uint64_t pool_used = 0;      ///< bytes allocated from the default pool and not freed
  std::uint64_t pool_reserved = 0;  ///< bytes the default pool holds (after trimming)
  std::uint64_t pool_high = 0;      ///< high-water mark of pool_used
  std::size_t device_used = 0;      ///< total - free after trimming the pool
};

/// Waits for all work, returns the default pool's unused memory to the driver and measures.
inline MemoryUse memory_use() {
  EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  int device = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool;
  EWISE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  EWISE_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  MemoryUse m;
  EWISE_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &m.pool_used));
  EWISE_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &m.pool_reserved));
  EWISE_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &m.pool_high));
  std::size_t free_bytes = 0, total = 0;
  EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  m.device_used = total - free_bytes;
  return m;
}

}  // namespace ewise::tools
