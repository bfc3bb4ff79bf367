// dense/convert_division.cu — the converting kernel for floor_divide, remainder, power, fmin,
// fmax (convert.cuh); power over contiguous operands of one float dtype by power.cuh's kernel.
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
  const bool float_power = t.op == BinaryOp::power &&
                           (t.types.compute == DType::f32 || t.types.compute == DType::f16 ||
                            t.types.compute == DType::bf16);
  if (float_power && t.b_scalar) {
    // By a scalar integer exponent up to 16 (x ** 3, x ** -2): functors of that path alone
    // (pow_f32.hpp; the same values): f64 products instead of Pow's series, or f32 products
    // where those are exact (a bf16 base cubed); x ** 2 one of its own, a * a, in the short
    // operations' shape of the converting kernel, and x ** 0.5 its root. base_bits: the base's
    // significand bits (an integer base's are taken as 24, which makes none of its products
    // exact but x ** ±1).
    const float b = scalar_value<float>(t.b_value);
    if (b == 2.0f) {
      launch_converting<ops::detail::PowSquare, float>({}, t, plan, stream);
      return;
    }
    if (b == 0.5f) {
      launch_converting<ops::detail::PowSqrt, float>({}, t, plan, stream);
      return;
    }
    if (::truncf(b) == b && ::fabsf(b) <= 16.0f && b != 0.0f) {
      const int n = static_cast<int>(b);
      const int base_bits = t.a == DType::bf16 ? 8 : t.a == DType::f16 ? 11 : 24;
      if ((n < 0 ? -n : n) * base_bits <= 24)
        run_float_power(ops::detail::PowSmallIntExact{n}, t, plan, stream);
      else
        run_float_power(ops::detail::PowSmallInt{n, n > 0 && n * base_bits <= 53}, t, plan, stream);
      return;
    }
  }
  if (float_power) {
    run_float_power(ops::Pow{}, t, plan, stream);
    return;
  }
  run_converting_of<ops::FloorDiv, ops::Remainder, ops::Pow, ops::FMin, ops::FMax>(t, plan,
                                                                                   stream);
}
}  // namespace ewise::detail
