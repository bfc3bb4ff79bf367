// src/residency.hpp — the last check of every entry point that works on device views: that
// the memory each view reaches is there for the current device, and that the stream is the
// current device's (residency.cpp).
//
// A kernel that reads host memory, another device's memory or bytes past the end of an
// allocation faults with an illegal address: a sticky error that breaks the CUDA context for
// the whole process. The views' descriptors cannot tell, so before anything is launched or
// copied the entry point looks each distinct pointer up among the live allocations of ewise's
// own pools (own_allocations.hpp), else asks the driver about it, and throws InvalidArgument
// instead. It runs after the pure argument checks (which the host tests exercise with fake
// device pointers). Cost: one cudaGetDevice per check and one cudaStreamGetDevice for a stream
// other than the default ones; per distinct pointer in memory of ewise's pools (every ewise
// result and temporary unless the caller names a MemoryResource of its own) a map search under
// a shared lock, no driver call and no allocation; per other distinct pointer one
// cuPointerGetAttributes (H100: about 0.2 µs for the 8 attributes asked), which
// settles plain cudaMalloc memory (PyTorch's and CuPy's caching allocators), and for other
// memory (other pools, cuMemMap, pinned, managed) one cuMemGetAddressRange more and two
// queries per further piece a view reaches into; plus one cuCtxGetCurrent per check that asks
// the driver at all.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

/// The device operands of one call, collected with add() and checked with check(stream).
///
/// Rules (each broken one throws InvalidArgument naming the operand and the values):
///   * host memory CUDA neither allocated nor registered is rejected;
///   * device memory must be the current device's (ewise runs on the calling thread's current
///     device; peer access does not change that);
///   * managed memory, and pinned or registered host memory the device addresses at the same
///     pointer, are accepted on any device;
///   * the bytes a view reaches (negative strides included) must lie inside the allocation its
///     pointer is in: an allocation of ewise's pools exactly as ewise made it (a view reaching
///     into a neighbouring allocation of the same pool is rejected too); a cudaMalloc
///     allocation as the driver's range gives it; other memory by its mapped pieces, since the
///     range the driver gives for pool and cuMemMap memory is the whole reservation, mapped or
///     not. For memory mapped piece by piece into one reservation (cuMemMap: PyTorch's
///     expandable segments; pools not ewise's) the pieces count as one;
///   * a stream must belong to the current device (the default streams always do).
/// Memory of ewise's pools is device memory of the device the pool belongs to, so of the rules
/// above only the current-device rule and the extent rule apply to it. A failed query leaves no
/// error pending in the CUDA runtime.
class DeviceOperands {
 public:
  /// Adds a tensor view when it is a device view with at least one element. `what` names it
  /// in messages and must outlive the check.
  DeviceOperands& add(const ConstTensorView& v, const char* what);
  /// Adds the rows, cols and vals arrays of a device COO view with at least one entry.
  DeviceOperands& add(const CooView& v, const char* what);

  /// Checks the stream and the operands added; throws InvalidArgument or CudaError.
  void check(cudaStream_t stream) const;

  /// The bytes one operand reaches: [data + begin, data + end).
  struct Operand {
    const void* data = nullptr;
    std::int64_t begin = 0, end = 0;
    const char* what = "";
    const char* part = "";  ///< "rows", "cols" or "vals" for a COO operand, else ""
  };

 private:
  static constexpr int kMaxOperands = 8;  // multiply(COO, COO): 6 arrays
  Operand operands_[kMaxOperands];
  int count_ = 0;

  void push(const Operand& o);
};

}  // namespace ewise::detail
