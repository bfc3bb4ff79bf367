// ewise/reference.hpp — the CPU reference backend.
//
// The oracle for every GPU test and the backend used for host views (the fallback when no GPU is
// present). Deliberately plain: one loop over the output's linear index, offsets by the plan,
// each element converted to the compute type on its own (src/element.hpp's casts), combined by
// the ops.hpp functor and rounded to the result dtype, then cast to the output's dtype. Same
// semantics as ewise/ops.hpp and ewise/promotion.hpp; checked against NumPy in the Python tests.
#pragma once

#include "ewise/broadcast.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// out = a ⊙ b on host views (or scalars), with the same checks as ewise::binary.
void reference_binary(BinaryOp op, const Operand& a, const Operand& b, const TensorView& out,
                      Promotion rule = Promotion::numpy);

/// out = a ⊙ b over a plan already made and checked (plan_binary's, or the dense planner's
/// sorted and coalesced one) with the call's checked dtypes (detail::check_types): `out`, `a` and
/// `b` are host pointers to element (0,...,0) of each operand (a scalar's is not read), `plan`
/// gives every element's offsets. Nothing is checked.
void reference_binary(const detail::CallTypes& types, const BroadcastPlan& plan, void* out,
                      const void* a, const void* b);

}  // namespace ewise
