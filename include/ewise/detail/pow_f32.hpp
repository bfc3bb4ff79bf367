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

/// The tables of pow_series, made at compile time: for the 128 intervals j of m in [sqrt(1/2),
/// sqrt(2)) that m's float bits above 0x3F3504F3 split into (2^16 bits each), log[j].invc =
/// 1 / c_j, c_j the interval's middle, and log[j].logc = ln c_j (the interval holding 1: c = 1,
/// logc = 0, so that ln m near 1 keeps its relative accuracy), side by side for one 16-byte
/// load; exp2[i] = 2^(i / 64).
struct PowTables {
  struct alignas(16) Log {
    double invc, logc;
  };
  Log log[128];
  double exp2[64];
};

/// ln x for x in [1/2, 2] and e^x for |x| <= 1 by their series, to about 2^-52, at compile time.
constexpr double constexpr_ln(double x) {
  const double s = (x - 1) / (x + 1), z = s * s;
  double sum = 0, power = s;
  for (int k = 1; k < 60; k += 2, power *= z) sum += power / k;
  return 2 * sum;
}
constexpr double constexpr_exp(double x) {
  double sum = 1, term = 1;
  for (int k = 1; k < 30; ++k) sum += term *= x / k;
  return sum;
}
/// The positive normal float whose bits are b, at compile time.
constexpr double constexpr_float(std::uint32_t b) {
  double v = 1 + (b & 0x7FFFFF) / 8388608.0;
  for (int e = static_cast<int>(b >> 23) - 127; e != 0; e += e > 0 ? -1 : 1) v *= e > 0 ? 2 : 0.5;
  return v;
}
inline constexpr std::uint32_t kSqrtHalfBits = 0x3F3504F3;  // the float under sqrt(1/2)

constexpr PowTables make_pow_tables() {
  PowTables t{};
  for (std::uint32_t j = 0; j < 128; ++j) {
    const double lo = constexpr_float(kSqrtHalfBits + (j << 16));
    const double hi = constexpr_float(kSqrtHalfBits + ((j + 1) << 16));
    const bool one = lo <= 1 && 1 < hi;
    t.log[j].invc = one ? 1 : 2 / (lo + hi);
    t.log[j].logc = one ? 0 : -constexpr_ln(t.log[j].invc);
  }
  for (int i = 0; i < 64; ++i) t.exp2[i] = constexpr_exp(i * 0.69314718055994530942 / 64);
  return t;
}
#if defined(__CUDACC__)
static __device__ constexpr PowTables kPowTablesDevice = make_pow_tables();
#endif
inline constexpr PowTables kPowTables = make_pow_tables();

/// |a| ** b within 2^-40 of it (measured: tests/test_reference.cpp) for a normal float a, a normal
/// float b, where t = b ln|a| is in (-104, 88.73): then e^t. t's value is returned too: outside
/// that range (float's ±inf or ±0 beyond it, the caller decides) the returned value means nothing.
/// Any other input gives some value without a fault (every index stays in its table), so that
/// the caller computes it for every element without a branch.
/// In f64, without a division or f64 pow: |a| = 2^k m, m in [sqrt(1/2), sqrt(2)) (from the bits),
/// ln m = ln c_j + ln(1 + r), r = m / c_j - 1 (one fma; |r| < 2^-8, Taylor to r^6, the next
/// term under 2^-58); e^t = 2^(n / 64) e^q, |q| <= ln 2 / 128 (Taylor to q^4: 2^-44.5). Table
/// lookups are two loads from 2.5 KB (in L1).
EWISE_HD double pow_series(float a, float b, double& t) {
#if defined(__CUDA_ARCH__)
  const PowTables& T = kPowTablesDevice;
#else
  const PowTables& T = kPowTables;
#endif
  std::uint32_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  bits &= 0x7FFFFFFF;
  const std::int32_t k = static_cast<std::int32_t>(bits - kSqrtHalfBits) >> 23;
  const std::uint32_t mbits = bits - (static_cast<std::uint32_t>(k) << 23);  // m's float bits
  const std::uint32_t j = (mbits - kSqrtHalfBits) >> 16;
  // m as a double: its float bits moved to the f64 fields, the exponent rebiased (1023 - 127)
  const double m = bits_to_double((static_cast<std::uint64_t>(mbits) << 29) + (896ull << 52));
  const PowTables::Log c = T.log[j];
  const double r = ::fma(m, c.invc, -1.0), r2 = r * r;
  double p = ::fma(r, -1.0 / 6, 1.0 / 5);
  p = ::fma(p, r, -1.0 / 4);
  p = ::fma(p, r, 1.0 / 3);
  p = ::fma(p, r, -1.0 / 2);
  p = ::fma(p, r2, r);  // ln(1 + r)
  // k as a double by the 1.5 * 2^52 shift (a conversion instruction is a quarter-rate one)
  const double kd =
      bits_to_double(0x4338000000000000ull + static_cast<std::uint64_t>(k)) - 0x1.8p52;
  t = (::fma(kd, 0.69314718055994530942, c.logc) + p) * b;
  // n = rint(t 64 / ln 2) by the 1.5 * 2^52 shift (n in the low bits); q = t - n ln 2 / 64 with
  // ln 2 / 64 in two parts (the second about 2^-55 of the first)
  const double shifted = ::fma(t, 92.332482616893656, 0x1.8p52);
  const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(double_to_bits(shifted)));
  const double nd = shifted - 0x1.8p52;
  const double q = ::fma(-nd, 0x1.abc9e3b39803fp-62, ::fma(-nd, 0x1.62e42fefa39efp-7, t));
  double e = ::fma(q, 1.0 / 24, 1.0 / 6);
  e = ::fma(e, q, 1.0 / 2);
  e = ::fma(e, q, 1.0);
  e = ::fma(e, q, 1.0);
  // 2^(n >> 6) by the exponent field: T.exp2 * e is in [0.99, 1.99], the product a normal double
  const double v = T.exp2[n & 63] * e;
  return bits_to_double(double_to_bits(v) + (static_cast<std::uint64_t>(n >> 6) << 52));
}

/// Whether v > 0, an approximation of a value within 2^-40 of it, rounds to float as the value
/// does: v is in float's normal range and farther than 2^-35 of itself from a rounding midpoint.
/// (The 29 mantissa bits below float's 24 are 2^28 at a midpoint; 2^17 of v's ulps is 2^-35 of
/// v. Across a power of two v and the value round to that power alike: it is no midpoint.)
EWISE_HD bool rounds_as_exact(double v) {
  // in 32-bit words (64-bit compares are three instructions on the GPU): the range by the high
  // word alone (both bounds have a zero low word); |low 29 bits - 2^28| > 2^17.
  const std::uint64_t bits = double_to_bits(v);
  const auto high = static_cast<std::uint32_t>(bits >> 32);
  const auto low = static_cast<std::uint32_t>(bits) & 0x1FFFFFFFu;
  return high - 0x38100000u < 0x47F00000u - 0x38100000u &&
         low - ((1u << 28) - (1u << 17)) > (1u << 18);
}

/// float(pow(double(a), double(b))), out of line on the device: the rare case, whose ~200
/// instructions inlined into every element of a kernel's unrolled loop took registers the fast
/// paths needed.
#if defined(__CUDA_ARCH__)
__device__ __noinline__
#else
inline
#endif
float pow_by_f64(float a, float b) {
  return static_cast<float>(::pow(static_cast<double>(a), static_cast<double>(b)));
}

/// 1 / f within about an ulp: the hardware's approximation on the device (flushing subnormals),
/// the division on the host. Only ever an approximation whose certainty is tested after.
EWISE_HD float reciprocal_approx(float f) {
#if defined(__CUDA_ARCH__)
  float g;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(g) : "f"(f));
  return g;
#else
  return 1.0f / f;
#endif
}

/// 1 / v within 2^-44 of it for v within float's normal range (else a value rounds_as_exact
/// refuses): float's reciprocal_approx refined by one Newton step in f64.
EWISE_HD double reciprocal(double v) {
  const double q = reciprocal_approx(static_cast<float>(v));
  return ::fma(q, ::fma(-v, q, 1.0), q);
}

/// x ** e for 0 <= e <= 31 by binary powering (x, x^2, x^4, x^8 squared in turn), every product
/// made and the ones e's bits do not ask for dropped by a select, without a branch (see
/// pow_small_int_fast); in double (PowSmallInt) or float (PowSmallInt16).
template <class T>
EWISE_HD T power_by_bits(T x, unsigned e) {
  T v = (e & 1) ? x : T(1), p = x * x;
  v = (e & 2) ? v * p : v;
  p *= p;
  v = (e & 4) ? v * p : v;
  p *= p;
  v = (e & 8) ? v * p : v;
  return (e & 16) ? v * (p * p) : v;
}

/// a ** n's float for an integer n, 0 < |n| <= 16, n != 2 (PowSquare's), where it is certain
/// (false elsewhere: a zero, infinite or NaN base, or a result near a rounding midpoint or
/// beyond float's normal range, about one element in 2^11): |a| ** |n| by binary powering in f64
/// (at most 8 products, within 2^-49), 1 / that for n < 0 (2^-43), its float where
/// rounds_as_exact, with a's sign for an odd n. Without a branch, so that the compiler
/// interleaves the elements of a kernel's chunk: with one (a test for n = 2, 1, -1) each element
/// was a region of its own with its f64 latencies exposed (H200 test kernel, 2^26 floats, x ** 3:
/// 0.207 ms against 0.142, a copy's 0.140).
EWISE_HD bool pow_small_int_fast(float a, int n, float& r) {
  const unsigned e = static_cast<unsigned>(n < 0 ? -n : n);
  double v = power_by_bits<double>(::fabsf(a), e);
  v = n < 0 ? reciprocal(v) : v;
  const bool ok = rounds_as_exact(v);
  r = static_cast<float>(ok ? v : 0.0);
  r = (e & 1) ? ::copysignf(r, a) : r;
  return ok;
}

/// Power of an f32 compute type by a scalar integer exponent n, 0 < |n| <= 16, n != 2 (Pow's
/// value): pow_small_int_fast, f64 pow's float where it is not certain.
struct PowSmallInt {
  int n;
  EWISE_HD bool fast(float a, float, float& r) const { return pow_small_int_fast(a, n, r); }
  EWISE_HD float operator()(float a, float b) const {
    float r;
    return fast(a, b, r) ? r : pow_by_f64(a, static_cast<float>(n));
  }
};

/// Power by a scalar integer exponent n, 0 < |n| <= 16, n != 2, of a call whose result is a
/// 16-bit float (the functor's float is rounded on to it): PowSmallInt's value after that
/// rounding, mostly from f32 products alone. |a| ** |n| by binary powering in float (at most 8
/// products whose errors add up to 15 ulps at n = 16), its reciprocal for n < 0 (the hardware's
/// approximation on the device, one more ulp), is within 2^-19.9 of the exact power and of its
/// float. Where it lies more than 64 ulps from a midpoint of the 16-bit format (its low bits
/// below that format's mantissa against the half-way pattern) in that format's normal range, the
/// exact power's float is no such midpoint either and lies on the same side: both round to the
/// same 16-bit value (about one element in 2^9 (bf16) or 2^6 (f16) is left to PowSmallInt).
/// Where every product is exact (n > 0 and n times the base's significand bits at most 24: bf16
/// ** 3) v is the exact power: no test (0.8% of bf16 values' exact cubes, whose low bits are no
/// random pattern, fell within the band, and PowSmallInt's work for them took bf16 ** 3 to 0.15
/// ms in a test kernel, against 0.087 for bf16 ** -2).
struct PowSmallInt16 {
  int n;
  int low_bits;      ///< float mantissa bits under the 16-bit format's: 16 (bf16), 13 (f16)
  float min_normal;  ///< its smallest normal value (under it the spacing is no longer relative)
  bool exact;        ///< every product of the base's values is exact in float
  EWISE_HD bool fast(float a, float, float& r) const {
    const unsigned e = static_cast<unsigned>(n < 0 ? -n : n);
    float v = power_by_bits<float>(::fabsf(a), e);
    v = n < 0 ? reciprocal_approx(v) : v;
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint32_t low = bits & ((1u << low_bits) - 1u), half = 1u << (low_bits - 1);
    const std::uint32_t off = low > half ? low - half : half - low;
    r = (e & 1) ? ::copysignf(v, a) : v;
    return v >= min_normal && v < INFINITY && (exact || off > 64u);
  }
  EWISE_HD float operator()(float a, float b) const {
    float r;
    return fast(a, b, r) ? r : PowSmallInt{n}(a, b);
  }
};

/// a ** 2 of an f32 compute type: a * a, f64 pow's float (a square is exact in f64). Its own
/// functor so that x ** 2 runs in the short operations' kernel shape (convert.cuh's FlatShape).
struct PowSquare {
  EWISE_HD float operator()(float a, float) const { return a * a; }
};

/// x << s, 0 from s = 32 up (a funnel shift on the device, which clamps s at 32).
EWISE_HD std::uint32_t shift_left_or_zero(std::uint32_t x, std::uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_lc(0u, x, s);
#else
  return s < 32 ? x << s : 0u;
#endif
}

/// float(pow(double(a), double(b))) where it is certain, at a fraction of f64 pow's cost (with
/// which f32 power took 3.4 times PyTorch's powf on an H200); false elsewhere (then pow_by_f64).
///
/// The common case alone, every test in a few integer instructions: a and b normal (finite,
/// nonzero, not subnormal, by their bits without the sign), a > 0 or b an integer (|a| ** b,
/// negated for an odd b), t = b ln|a| within (-88, 88) and pow_series' value certain
/// (rounds_as_exact: the exact power and f64 pow, within 2^-52 of it, round to the float v
/// does). Everything else goes to pow_by_f64: zero, subnormal, infinite and NaN operands, results
/// near or past float's range, about one element in 2^11 near a rounding midpoint (a square at
/// an exact midpoint among them). Every path is computed and the result selected, without a
/// branch, so that the compiler interleaves a chunk's elements (x ** 0.7 in a test kernel:
/// 0.374 ms with branches, 0.334 without); dropping the selects for over- and underflow and
/// b = 2 and the float compares for each range took x ** 0.7 there from 0.324 to 0.296 ms (H100).
EWISE_HD bool pow_f32_fast(float a, float b, float& r) {
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  double t;
  const double v = pow_series(a, b, t);
  const bool normal = (ua & 0x7FFFFFFFu) - 0x00800000u < 0x7F000000u &&
                      (ub & 0x7FFFFFFFu) - 0x00800000u < 0x7F000000u;
  // b's exponent field e: from e = 127 (|b| >= 1) b is an integer where no bit under its units
  // bit is set (ub shifted left by e - 118 keeps just those; from e = 150 none is left), and odd
  // where the units bit (the top bit after a shift by e - 119) is set.
  const std::uint32_t e = ub >> 23 & 0xFFu;
  const bool b_integer = e >= 127u && shift_left_or_zero(ub, e - 118u) == 0u;
  const bool b_odd = b_integer && (shift_left_or_zero(ub, e - 119u) >> 31) != 0u;
  const bool negative = (ua >> 31) != 0u;
  const float f = static_cast<float>(v);
  r = negative && b_odd ? -f : f;
  return normal && (!negative || b_integer) && ::fabs(t) < 88.0 && rounds_as_exact(v);
}

/// pow_f32_fast's float, else f64 pow's; for b = 2 float's own product (a square, exact in f64,
/// may lie on a rounding midpoint, which f64 pow may miss on the device by an ulp; a * a rounds
/// it once, correctly).
EWISE_HD float pow_f32(float a, float b) {
  float r;
  if (pow_f32_fast(a, b, r)) return r;
  return b == 2.0f ? a * a : pow_by_f64(a, b);
}

}  // namespace ewise::ops::detail
