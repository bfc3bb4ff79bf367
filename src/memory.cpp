// src/memory.cpp — ewise's per-device memory pools and the default-resource table
// (ewise/memory.hpp).
#include "ewise/memory.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "ewise/error.hpp"
#include "own_allocations.hpp"

namespace ewise {
namespace {

/// Device ordinals ewise keeps per-device state for (pools, default resources).
constexpr int kMaxDevices = 64;

/// `device`, or the current device for -1; throws InvalidArgument for an ordinal the runtime
/// does not have.
int resolve_device(int device) {
  if (device < 0) {
    EWISE_EXPECTS(device == -1, "device ordinal must be -1 (the current device) or >= 0, not ",
                  device);
    EWISE_CUDA_CHECK(cudaGetDevice(&device));
  }
  static const int count = [] {
    int n = 0;
    EWISE_CUDA_CHECK(cudaGetDeviceCount(&n));
    return n;
  }();
  EWISE_EXPECTS(device < count, "device ", device, " does not exist (", count, " devices)");
  EWISE_EXPECTS(device < kMaxDevices, "device ", device, " is past the ", kMaxDevices,
                " devices ewise supports");
  return device;
}

/// Makes `device` current for the lifetime of the guard, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device &&
        cudaSetDevice(device) == cudaSuccess)
      restore_ = true;
  }
  ~DeviceGuard() {
    if (restore_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

/// A cudaMemPool of ewise's own on one device that keeps its freed memory (release threshold
/// UINT64_MAX) until trim_memory_pool.
class PoolResource final : public MemoryResource {
 public:
  explicit PoolResource(int device) : device_(device) {
    int supported = 0;
    EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    EWISE_EXPECTS(supported != 0, "device ", device,
                  " has no stream-ordered memory pools; pass a MemoryResource of your own");
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    EWISE_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    EWISE_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all));
  }

  /// Records the allocation in detail::own_allocations(), so that the residency check of the
  /// calls using it asks the driver nothing.
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    EWISE_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, stream));
    try {
      detail::own_allocations().add(p, bytes, device_);
    } catch (...) {
      release(p, stream);
      throw;
    }
    return p;
  }

  /// Forgets the allocation before its free is issued: from then on the pool may hand its
  /// address out again, to be recorded anew.
  void deallocate(void* p, std::size_t /*bytes*/, cudaStream_t stream) noexcept override {
    detail::own_allocations().remove(p);
    release(p, stream);
  }

  cudaMemPool_t pool() const noexcept { return pool_; }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;

  /// Frees p once the work queued on `stream` is done.
  void release(void* p, cudaStream_t stream) noexcept {
    if (cudaFreeAsync(p, stream) == cudaSuccess) return;
    // The runtime refused the stream (or the context is broken). Clear the failed call's error so
    // that no later call reports it as its own, wait until no work can still use p, and free it
    // in order on the default stream.
    (void)cudaGetLastError();
    const DeviceGuard guard(device_);
    (void)cudaDeviceSynchronize();
    (void)cudaFreeAsync(p, nullptr);
    (void)cudaGetLastError();
  }
};

/// The pools, created on first use and never destroyed: buffers may be freed during static
/// destruction, and the driver releases the pools with the process.
PoolResource& pool(int device) {
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<PoolResource*, kMaxDevices> pools{};
  std::call_once(once[static_cast<std::size_t>(device)], [device] {
    pools[static_cast<std::size_t>(device)] = new PoolResource(device);
  });
  return *pools[static_cast<std::size_t>(device)];
}

std::array<std::atomic<MemoryResource*>, kMaxDevices>& defaults() {
  static std::array<std::atomic<MemoryResource*>, kMaxDevices> table{};
  return table;
}

thread_local MemoryResource* t_call_memory = nullptr;

std::uint64_t pool_attribute(cudaMemPool_t p, cudaMemPoolAttr attr) {
  std::uint64_t v = 0;
  EWISE_CUDA_CHECK(cudaMemPoolGetAttribute(p, attr, &v));
  return v;
}

}  // namespace

MemoryResource* pool_memory_resource(int device) { return &pool(resolve_device(device)); }

MemoryResource* set_default_memory_resource(MemoryResource* resource, int device) {
  return defaults()[static_cast<std::size_t>(resolve_device(device))].exchange(resource);
}

MemoryResource* default_memory_resource(int device) {
  device = resolve_device(device);
  MemoryResource* r = defaults()[static_cast<std::size_t>(device)].load();
  return r != nullptr ? r : &pool(device);
}

MemoryPoolStats memory_pool_stats(int device) {
  const cudaMemPool_t p = pool(resolve_device(device)).pool();
  MemoryPoolStats s;
  s.used = pool_attribute(p, cudaMemPoolAttrUsedMemCurrent);
  s.reserved = pool_attribute(p, cudaMemPoolAttrReservedMemCurrent);
  s.high = pool_attribute(p, cudaMemPoolAttrUsedMemHigh);
  return s;
}

void trim_memory_pool(std::size_t keep_bytes, int device) {
  EWISE_CUDA_CHECK(cudaMemPoolTrimTo(pool(resolve_device(device)).pool(), keep_bytes));
}

namespace detail {

CallMemory::CallMemory(MemoryResource* resource) noexcept : previous_(t_call_memory) {
  if (resource != nullptr) t_call_memory = resource;
}

CallMemory::~CallMemory() { t_call_memory = previous_; }

MemoryResource* call_memory() noexcept { return t_call_memory; }

}  // namespace detail
}  // namespace ewise
