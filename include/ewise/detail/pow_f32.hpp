// ewise/detail/pow_f32.hpp — power in the f32 compute type (f32 and 16-bit float results):
// f64 pow's value rounded to float, at a fraction of f64 pow's cost. Included by ewise/ops.hpp.
#pragma once

#include <cstdint>
#include <cstring>

#include <math.h>

namespace ewise::ops::detail {

/// The f64 whose bits are u, and back (memcpy: no aliasing; a register move on either side).
EWISE_HD double bits_to_double(std::uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}
EWISE_HD std::uint64_t double_to_bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

/// x ** y for x > 0 finite (an f32's value) and y finite, with a relative error under 2^-40 where
/// the result is within float's normal range: e^t, t = y ln x. ln x = k ln 2 + ln m with m in
/// [sqrt(1/2), sqrt(2)), ln m by the atanh series of s = (m - 1) / (m + 1); e^t = 2^n e^q with
/// |q| <= ln(2) / 2, e^q by Taylor's series. Returns t's value too, so that the caller tells
/// overflow and underflow from a value to round.
EWISE_HD double exp_log_series(double x, double y, double& t) {
  // x = 2^k * m: x is a normal double, so its exponent field is k + 1023 and its mantissa bits
  // under 1023's exponent field are m in [1, 2), halved above sqrt(2).
  const std::uint64_t bits = double_to_bits(x);
  int k = static_cast<int>(bits >> 52) - 1023;
  double m = bits_to_double((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++k;
  }
  // |s| < 0.1716. m - 1 and m + 1 are exact (m has 24 bits); 1 / (m + 1) is float's division
  // refined by one Newton step (error 2^-47).
  const double den = m + 1.0;
  double r = static_cast<double>(1.0f / static_cast<float>(den));
  r = r + r * (1.0 - den * r);
  const double s = (m - 1.0) * r, z = s * s;
  // ln m = 2 s (1 + z/3 + ... + z^8/17); the next term, z^9/19, is under 2^-49 (z < 0.0295).
  const double p =
      2.0 + z * (2.0 / 3 + z * (2.0 / 5 + z * (2.0 / 7 + z * (2.0 / 9 + z * (2.0 / 11 +
      z * (2.0 / 13 + z * (2.0 / 15 + z * (2.0 / 17))))))));
  t = y * (k * 0.69314718055994530942 + s * p);
  if (!(t > -87.33 && t < 88.72)) return 0.0;  // outside [2^-126, 2^128): the caller decides
  // n * ln 2's high part is exact (32 low zero bits); e^q to q^11/11!: the next term < 2^-47.
  const double n = ::rint(t * 1.4426950408889634);
  const double q = (t - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  const double e =
      1.0 + q * (1.0 + q * (1.0 / 2 + q * (1.0 / 6 + q * (1.0 / 24 + q * (1.0 / 120 +
      q * (1.0 / 720 + q * (1.0 / 5040 + q * (1.0 / 40320 + q * (1.0 / 362880 +
      q * (1.0 / 3628800 + q * (1.0 / 39916800)))))))))));
  return e * bits_to_double(static_cast<std::uint64_t>(static_cast<std::int64_t>(n) + 1023) << 52);
}

/// Whether v > 0, an approximation of a value within 2^-40 of it, rounds to float as the value
/// does: v is in float's normal range and farther than 2^-35 of itself from a rounding midpoint.
/// (The 29 mantissa bits below float's 24 are 2^28 at a midpoint; 2^17 of v's ulps is 2^-35 of
/// v. Across a power of two v and the value round to that power alike: it is no midpoint.)
EWISE_HD bool rounds_as_exact(double v) {
  if (!(v >= 0x1p-126 && v < 0x1p128)) return false;
  const std::int64_t low = static_cast<std::int64_t>(double_to_bits(v) & 0x1FFFFFFF) - (1 << 28);
  return low > (1 << 17) || low < -(1 << 17);
}

/// An unevaluated sum h + l of floats with |l| <= ulp(h) / 2: about 48 bits, in f32 operations
/// (f64 operations and conversions are the slow ones on the GPU).
struct Float2 {
  float h, l;
};

/// x * y within 2^-45 of it: the high parts' product exactly (p and fma's error term), the
/// cross terms rounded, l * l dropped; renormalized by Fast2Sum (|p| >= |e|).
EWISE_HD Float2 mul2(Float2 x, Float2 y) {
  const float p = x.h * y.h;
  const float e = ::fmaf(x.h, y.l, ::fmaf(x.l, y.h, ::fmaf(x.h, y.h, -p)));
  const float h = p + e;
  return {h, e - (h - p)};
}

/// 1 / x within 2^-45 of it: q = 1 / x.h, then q (1 + r) with r = 1 - q x (its first fma exact:
/// a correctly rounded quotient's residual is a float).
EWISE_HD Float2 rcp2(Float2 x) {
  const float q = 1.0f / x.h;
  const float r = ::fmaf(-q, x.l, ::fmaf(-q, x.h, 1.0f));
  const float c = q * r;
  const float h = q + c;
  return {h, c - (h - q)};
}

/// Whether x.h is the float nearest to every value within 2^-38 of x.h + x.l (x.h > 0, the
/// nearest float to x.h + x.l): x.h in [2^-90, 2^90] (no subnormal part anywhere) and x.l
/// farther than 2^-35 x.h from the midpoint toward x.h's neighbour on x.l's side.
EWISE_HD bool rounds_as_exact(Float2 x) {
  if (!(x.h >= 0x1p-90f && x.h <= 0x1p90f)) return false;
  std::uint32_t bits;
  std::memcpy(&bits, &x.h, sizeof bits);
  bits = x.l < 0.0f ? bits - 1 : bits + 1;
  float next;
  std::memcpy(&next, &bits, sizeof next);
  const float half = 0.5f * ::fabsf(next - x.h);  // (exact: adjacent normal floats)
  return ::fabsf(half - ::fabsf(x.l)) > x.h * 0x1p-35f;
}

/// float(pow(double(a), double(b))), out of line on the device: pow_f32's rare case, whose ~200
/// instructions inlined into every element of a kernel's unrolled loop took registers the fast
/// path needed.
#if defined(__CUDA_ARCH__)
__device__ __noinline__
#else
inline
#endif
float pow_by_f64(float a, float b) {
  return static_cast<float>(::pow(static_cast<double>(a), static_cast<double>(b)));
}

/// a ** n for an integer n, 0 < |n| <= 16, as pow_f32 gives it: float's a * a, a, 1 / a for n = 2,
/// 1, -1; else for a finite nonzero base |a| ** |n| by binary powering of Float2s (at most 8
/// products, their errors doubled by each squaring after them; within 2^-43 of it, 1 / that for
/// n < 0), its float where rounds_as_exact, with the sign of a for an odd n; a zero base as C's
/// pow; else f64 pow's. Also the functor of a scalar exponent alone (PowSmallInt), whose kernel
/// then holds none of pow_f32's other paths.
EWISE_HD float pow_small_int(float a, int n) {
  // Float's own operations are the correctly rounded power, which only a square meets at a
  // rounding midpoint: f64 pow's float without an f64 operation or conversion (as
  // float(double(a) * double(a)), a ** 2 took 20% longer than a * b on an H200).
  if (n == 2) return a * a;
  if (n == 1) return a;
  if (n == -1) return 1.0f / a;
  const float sign = (n & 1) != 0 ? ::copysignf(1.0f, a) : 1.0f;  // (-0's sign too)
  if (::fabsf(a) < INFINITY) {  // (false for NaN)
    if (a == 0.0f) return sign * (n < 0 ? INFINITY : 0.0f);
    Float2 base{::fabsf(a), 0.0f}, v{1.0f, 0.0f};
    for (int e = n < 0 ? -n : n;;) {
      if (e & 1) v = mul2(v, base);
      if ((e >>= 1) == 0) break;
      base = mul2(base, base);  // (never past the power: squared only while bits remain)
    }
    if (n < 0) v = rcp2(v);
    if (rounds_as_exact(v)) return sign * v.h;
  }
  return pow_by_f64(a, static_cast<float>(n));
}

/// Power of an f32 compute type by a scalar integer exponent n, 0 < |n| <= 16 (Pow's value).
struct PowSmallInt {
  int n;
  EWISE_HD float operator()(float a, float) const { return pow_small_int(a, n); }
};

/// float(pow(double(a), double(b))) for b != 0 and a != 1 (Pow handles those), computed so that
/// most elements cost a few f32 operations (integer exponents up to 16) or ~35 f64 ones (other
/// exponents) instead of f64 pow's ~200 (with which f32 power took 3.4 times PyTorch's powf on
/// an H200).
///
/// Integer |b| <= 16: pow_small_int. Otherwise, for a finite nonzero base (negative only with an
/// integer exponent: then |a| ** b, negated for an odd b) an approximation v of |a| ** b within
/// 2^-40 is made in f64 by exp_log_series. Where rounds_as_exact(v), the exact power and f64 pow
/// (within 2^-52 of it) round to the float v does: v's is returned. Elsewhere (near a midpoint:
/// about one element in 2^11; a subnormal result; a NaN or infinite operand) the result is f64
/// pow's, rounded; a result far beyond float's range is ±inf or ±0. b = 1/2 is float's sqrt(a);
/// a zero base and a negative base with a non-integer exponent follow C's pow.
EWISE_HD float pow_f32(float a, float b) {
  if (b == 2.0f) return a * a;  // (pow_small_int's too; first here: x ** 2 took 8% longer after
                                // the integer test)
  const bool b_integer = ::truncf(b) == b;
  if (b_integer && ::fabsf(b) <= 16.0f) return pow_small_int(a, static_cast<int>(b));
  // sqrt is correctly rounded and never meets a midpoint (sqrt(-0) and sqrt(-inf) are not pow's)
  if (b == 0.5f && a > 0.0f) return ::sqrtf(a);
  // b odd: |b| under 2^24 (every float from 2^24 up is even) and its low bit set.
  const bool b_odd = b_integer && ::fabsf(b) < 0x1p24f && (static_cast<std::int32_t>(b) & 1) != 0;
  const float sign = b_odd ? ::copysignf(1.0f, a) : 1.0f;  // (-0's sign too)
  if (::fabsf(b) < INFINITY && ::fabsf(a) < INFINITY) {  // (false for NaN)
    if (a == 0.0f) return sign * (b < 0.0f ? INFINITY : 0.0f);
    if (a < 0.0f && !b_integer) return NAN;
    double t;
    const double v = exp_log_series(::fabs(static_cast<double>(a)), b, t);
    // over float's largest value by more than half an ulp (its ln is 88.7228), or under half the
    // smallest subnormal (2^-150: -103.97)
    if (t > 88.73) return sign * INFINITY;
    if (t < -104.0) return sign * 0.0f;
    if (rounds_as_exact(v)) return sign * static_cast<float>(v);
  }
  return pow_by_f64(a, b);
}

}  // namespace ewise::ops::detail
