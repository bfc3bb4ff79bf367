// src/residency.hpp — the last check of every entry point that works on device views: that
// the memory each view reaches is there for the current device, and that the stream is the
// current device's (residency.cpp).
//
// A kernel that reads host memory, another device's memory or bytes past the end of an
// allocation faults with an illegal address: a sticky error that breaks the CUDA context for
// the whole process. The views' descriptors cannot tell, so before anything is launched or
// copied the entry point asks the driver about each distinct pointer and throws
// InvalidArgument instead. It runs after the pure argument checks (which the host tests
// exercise with fake device pointers) and costs one cudaPointerGetAttributes and one
// cuMemGetAddressRange per distinct pointer, plus one cudaStreamGetDevice for a stream other
// than the default ones.
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
///   * the bytes a view reaches (negative strides included) must lie inside the mapped memory
///     of the allocation its pointer is in; for memory mapped piece by piece into one
///     reservation (cuMemMap: PyTorch's expandable segments) the pieces count as one;
///   * a stream must belong to the current device (the default streams always do).
/// A failed query of the CUDA runtime leaves no error pending.
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
