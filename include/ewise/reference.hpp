// ewise/reference.hpp — the CPU reference backend.
//
// The oracle for every GPU test and the backend used for host views (the fallback when no GPU is
// present). Deliberately plain: one loop over the output's linear index, offsets by the plan,
// each operation written out in a wider type (double for floating types, 64-bit two's-complement
// arithmetic for integers) and rounded once to the output dtype. Same semantics as ewise/ops.hpp.
#pragma once

#include "ewise/broadcast.hpp"
#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// out = a ⊙ b on host views, with the same checks as ewise::binary.
void reference_binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                      const TensorView& out);

/// out = a ⊙ b over a plan already made and checked (plan_binary's, or the dense planner's
/// sorted and coalesced one): `out`, `a` and `b` are host pointers to element (0,...,0) of each
/// operand, `plan` gives every element's offsets. Nothing is checked.
void reference_binary(BinaryOp op, DType dtype, const BroadcastPlan& plan, void* out,
                      const void* a, const void* b);

/// One element of op in the reference's arithmetic for floating dtypes, in double.
double reference_apply(BinaryOp op, double a, double b);
/// One element of op for integer dtypes: 64-bit two's complement, wrapped to the dtype's width.
std::int64_t reference_apply_int(BinaryOp op, DType dtype, std::int64_t a, std::int64_t b);

}  // namespace ewise
