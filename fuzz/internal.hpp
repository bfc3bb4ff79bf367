// fuzz/internal.hpp — what the fuzz entry files (fuzz/entries_*.cpp, fuzz/api_oracle*.cpp)
// share: the invariant check, a descriptor's offsets computed straight from it, and the plan
// entry's operands.
#pragma once

#include <cstdint>

#include "entries.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

// Throws Violation with the streamed message parts; they are only evaluated on failure.
#define EWISE_FUZZ_REQUIRE(cond, ...)                                                  \
  do {                                                                                 \
    if (!(cond)) throw ::ewise::fuzz::Violation(::ewise::detail::concat(__VA_ARGS__)); \
  } while (0)

namespace ewise::fuzz {

/// Element offset of `d` (broadcast, right-aligned) at coordinate `coord` of a larger shape,
/// computed straight from the descriptor.
inline std::int64_t offset_at(const TensorDesc& d, const Dims& coord) {
  const int lead = coord.size() - d.rank();
  std::int64_t off = 0;
  for (int j = 0; j < d.rank(); ++j)
    if (d.shape[j] != 1) off += coord[lead + j] * d.strides[j];
  return off;
}

/// An operand of the plan entry: a descriptor at a data address (never dereferenced except
/// through the plan entry's arena).
struct Operand {
  TensorDesc desc;
  std::uintptr_t address = 0;
  Memory memory = Memory::host;
  ConstTensorView view() const {
    return {reinterpret_cast<const void*>(address), desc, memory};
  }
};

/// The dense planner's invariants on operands plan_binary accepted as `plan` (entries_dense.cpp).
void check_dense_plan(const BroadcastPlan& plan, const Operand& out, const Operand& a,
                      const Operand& b, Kernel named, std::uint64_t seed);

}  // namespace ewise::fuzz
