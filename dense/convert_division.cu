// dense/convert_division.cu — the converting kernel for floor_divide, remainder, power, fmin,
// fmax (convert.cuh); power over contiguous float operands of one dtype, or of mixed ones with
// an f32 result, by power.cuh's kernel.
#include "convert.cuh"
#include "power.cuh"

namespace ewise::detail {

/// A power call in an f32 or 16-bit float compute type by functor f: power.cuh's kernel where
/// it takes the call, the converting kernel otherwise.
template <class F>
void run_float_power(const F& f, const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  if (!run_power(f, t, plan, stream)) launch_converting<F, float>(f, t, plan, stream);
}

void run_converting_division(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  // A scalar exponent's own functor (compute.hpp's with_scalar_power): f32 x ** 2, x ** 0.5 and
  // x ** -0.5 in the short operations' shape of the converting kernel (at a copy's speed there,
  // 0.130 ms on 2^26 floats of an H200 against 0.133 in the power kernel), the rest in the power
  // kernel where it takes the call (bf16 ** 0.5 0.068 ms there against 0.073).
  if (with_scalar_power(t, [&](auto f) {
        using F = decltype(f);
        if constexpr (std::is_same_v<F, ops::detail::PowSquare> ||
                      std::is_same_v<F, ops::detail::PowSqrt> ||
                      std::is_same_v<F, ops::detail::PowRsqrt>) {
          if (t.types.compute == DType::f32) return launch_converting<F, float>(f, t, plan, stream);
        }
        run_float_power(f, t, plan, stream);
      }))
    return;
  const DType c = t.types.compute;
  if (t.op == BinaryOp::power && (c == DType::f32 || c == DType::f16 || c == DType::bf16)) {
    run_float_power(ops::Pow{}, t, plan, stream);
    return;
  }
  run_converting_of<ops::FloorDiv, ops::Remainder, ops::Pow, ops::FMin, ops::FMax>(t, plan,
                                                                                   stream);
}
}  // namespace ewise::detail
