// ewise/broadcast.hpp — NumPy broadcasting and the plan every dense backend executes.
//
// broadcast_shapes() applies NumPy's rules: shapes are right-aligned, and each pair of extents
// must be equal or one of them 1. A BroadcastPlan maps every output coordinate to an element
// offset of each operand (operand 0 is the output, 1 is a, 2 is b) through per-operand strides
// over the output shape; a broadcast dimension has stride 0. coalesce() simplifies a plan
// without changing any offset: it drops extent-1 dimensions and merges neighbouring dimensions
// that are contiguous for every operand.
#pragma once

#include <array>
#include <cstdint>

#include "ewise/tensor.hpp"

namespace ewise {

/// The broadcast shape of a and b; throws InvalidArgument naming both shapes and the dimension,
/// e.g. "cannot broadcast (3,4) with (5,4): dim 0 is 3 vs 5".
Dims broadcast_shapes(const Dims& a, const Dims& b);

/// Strides that read `in` over `out_shape` (right-aligned; stride 0 where `in` is broadcast).
/// Throws InvalidArgument when `in` does not broadcast to `out_shape`.
Dims broadcast_strides(const TensorDesc& in, const Dims& out_shape);

struct BroadcastPlan {
  static constexpr int kOperands = 3;  ///< 0 = output, 1 = a, 2 = b
  Dims shape;                          ///< the output shape (outermost first)
  std::array<Dims, kOperands> strides; ///< element strides of each operand over `shape`

  int rank() const noexcept { return shape.size(); }
  std::int64_t numel() const { return shape.product(); }
  /// Element offset of operand `k` at the output's linear (row-major) index `i`.
  std::int64_t offset(int k, std::int64_t i) const noexcept;
};

/// Plan for out = a ⊙ b. Throws InvalidArgument when a and b do not broadcast or when out's
/// shape is not exactly their broadcast shape. Dtypes are the caller's (ewise/promotion.hpp).
BroadcastPlan make_plan(const TensorDesc& out, const TensorDesc& a, const TensorDesc& b);

/// Equivalent plan of lowest rank: same offsets for every output index.
BroadcastPlan coalesce(const BroadcastPlan& plan);

/// coalesce() of `plan` with its dims permuted (dim j taken from plan's dim order[j]; a
/// permutation changes no offset), written into `out`, a default-constructed plan: the dense
/// planner orders and coalesces each call's plan in place, without a temporary plan.
void coalesce(const BroadcastPlan& plan, const int* order, BroadcastPlan& out);

/// Throws InvalidArgument when `out` overlaps `in` other than exactly (same data, same
/// descriptor: in-place use). Memory spans are compared, so interleaved views of one buffer
/// count as overlapping. `what` names the input ("a" or "b").
void check_no_partial_overlap(const ConstTensorView& out, const ConstTensorView& in,
                              const char* what);

/// Every check of out = a ⊙ b but the dtypes' (ewise/promotion.hpp), then the plan (not yet
/// coalesced): views valid (non-null data when non-empty), all three in the same memory, shapes
/// broadcast to exactly out's shape, out not overlapping itself, out overlapping neither input
/// except exactly (same data, descriptor and dtype). Throws InvalidArgument naming the values.
/// Used by every dense backend.
BroadcastPlan plan_binary(const ConstTensorView& a, const ConstTensorView& b,
                          const TensorView& out);

namespace detail {
/// plan_binary where a scalar operand is a rank-0 placeholder view in out's memory: its data
/// is neither checked nor compared with out's.
BroadcastPlan plan_operands(const ConstTensorView& a, const ConstTensorView& b,
                            const TensorView& out, bool a_scalar, bool b_scalar);
}  // namespace detail

}  // namespace ewise
