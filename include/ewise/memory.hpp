// ewise/memory.hpp — where ewise's device memory comes from.
//
// Every device allocation ewise makes — results and temporaries alike — goes through a
// MemoryResource, a small stream-ordered allocator interface (RMM's device_memory_resource,
// reduced to its two calls). Which one:
//   1. the resource named in the call (DenseOptions::memory, SparseOptions::memory, the
//      `memory` argument of dense_to_coo, DeviceBuffer, DeviceTensor and to_device): it serves
//      every temporary and the result of that call, else
//   2. the device's default resource, set with set_default_memory_resource, else
//   3. ewise's own memory pool for the device (pool_memory_resource).
//
// ewise's pool is a cudaMemPool of its own per device whose release threshold keeps freed memory
// for the next call: a synchronization between calls (a timing loop, a host read) does not hand
// it back to the driver, so the next call does not have to map it again (H100: a COO ⊙ dense
// call synchronizing between calls takes less than half the time; docs/benchmarks.md). The
// device's default pool and the caller's process-wide CUDA settings are not touched.
// trim_memory_pool returns what the pool holds unused.
//
// Lifetimes: a resource must outlive every buffer allocated from it. A buffer is freed on the
// stream it was allocated on, so that stream must outlive the buffer, as with cudaFreeAsync, or
// the buffer must first be given another stream (DeviceBuffer::set_stream, and the same on
// DeviceTensor and DeviceCoo). A free that the runtime refuses leaves no error behind for a
// later call to report: ewise's pool clears it, waits for the device and frees on the default
// stream.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstddef>
#include <cstdint>

namespace ewise {

/// A stream-ordered device memory resource. Implementations must be thread-safe: ewise may call
/// them from any thread that calls ewise.
class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  /// At least `bytes` (> 0) bytes of device memory, 256-byte aligned, usable by work queued on
  /// `stream` after this call. Throws (ewise::CudaError, std::bad_alloc, or the allocator's own
  /// exception) when it cannot; ewise lets the exception pass to its caller unchanged.
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  /// Frees `p`, returned by allocate(bytes, ...), once the work queued on `stream` before this
  /// call is done. Must not throw.
  virtual void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept = 0;
};

/// ewise's memory pool for `device` (-1: the current device) as a resource. Created on first use,
/// lives until the process ends. Throws CudaError when the device has no memory pools.
MemoryResource* pool_memory_resource(int device = -1);

/// Sets the resource ewise uses on `device` (-1: the current device) when a call's options name
/// none; nullptr restores ewise's pool. Returns the previous setting (nullptr for the pool).
/// Thread-safe; calls already running keep the resource they started with.
MemoryResource* set_default_memory_resource(MemoryResource* resource, int device = -1);

/// The resource ewise uses on `device` (-1: the current device) when a call's options name none.
MemoryResource* default_memory_resource(int device = -1);

/// Bytes held by ewise's pool on a device.
struct MemoryPoolStats {
  std::uint64_t used = 0;      ///< allocated and not yet freed
  std::uint64_t reserved = 0;  ///< taken from the driver (used plus kept free memory)
  std::uint64_t high = 0;      ///< high-water mark of `used` since the pool was created
};

/// What ewise's pool on `device` (-1: the current device) holds. Creates the pool if needed.
MemoryPoolStats memory_pool_stats(int device = -1);

/// Returns the free memory of ewise's pool on `device` (-1: current) to the driver, keeping at
/// most `keep_bytes` reserved (cudaMemPoolTrimTo). Memory still in use stays. Does not
/// synchronize: memory whose stream-ordered free has not yet run is returned by a later trim.
void trim_memory_pool(std::size_t keep_bytes = 0, int device = -1);

namespace detail {

/// Names the resource of one ewise call: while it lives, allocations on this thread that name
/// no resource of their own use `resource` (nullptr changes nothing). Entry points create one
/// from their options, so every temporary and result of the call comes from the caller's
/// resource without each allocation site passing it along. Nests; not copyable.
class CallMemory {
 public:
  explicit CallMemory(MemoryResource* resource) noexcept;
  ~CallMemory();
  CallMemory(const CallMemory&) = delete;
  CallMemory& operator=(const CallMemory&) = delete;

 private:
  MemoryResource* previous_;
};

/// The resource of the innermost CallMemory on this thread, or nullptr.
MemoryResource* call_memory() noexcept;

}  // namespace detail
}  // namespace ewise
