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

/// The tables of pow_series, made at compile time. The reduced argument m of a float lies in
/// [kPowSplitBits, kPowSplitBits + 2^23) by its bits (about [0.709, 1.418)), which split into 128
/// intervals j of 2^16 float bits each: log[j].invc = 1 / c_j, c_j the interval's middle, and
/// log[j].log2c = -log2(invc) (the interval holding 1: c = 1, log2c = 0), side by side for one
/// 16-byte load; exp2[i] = 2^(i / 128). 3 KB in all.
struct PowTables {
  struct alignas(16) Log {
    double invc, log2c;
  };
  Log log[128];
  double exp2[128];
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
inline constexpr double kLn2 = 0.69314718055994530942;
/// The bits where the reduced range starts: 1.0 (0x3F800000) lies in the middle of its interval
/// (0x3F7F8000 to 0x3F808000), so that no interval next to it starts just above 1, where the
/// log's result, 2^-12 and up, came out of log2c + log2(1 + r) with 5 bits cancelled.
inline constexpr std::uint32_t kPowSplitBits = 0x3F358000;

constexpr PowTables make_pow_tables() {
  PowTables t{};
  for (std::uint32_t j = 0; j < 128; ++j) {
    const double lo = constexpr_float(kPowSplitBits + (j << 16));
    const double hi = constexpr_float(kPowSplitBits + ((j + 1) << 16));
    const bool one = lo <= 1 && 1 < hi;
    t.log[j].invc = one ? 1 : 2 / (lo + hi);
    t.log[j].log2c = one ? 0 : -constexpr_ln(t.log[j].invc) / kLn2;
  }
  for (int i = 0; i < 128; ++i) t.exp2[i] = constexpr_exp(i * kLn2 / 128);
  return t;
}
#if defined(__CUDACC__)
static __device__ constexpr PowTables kPowTablesDevice = make_pow_tables();
#endif
inline constexpr PowTables kPowTables = make_pow_tables();

/// The static tables: the device's copy in device code, the host's in host code.
EWISE_HD const PowTables& pow_tables() {
#if defined(__CUDA_ARCH__)
  return kPowTablesDevice;
#else
  return kPowTables;
#endif
}

/// pow_series' Taylor coefficients: log2(1 + r) = r (l1 + r (l2 + ... + r l6)), l_i =
/// (-1)^(i+1) / (i ln 2); 2^q = 1 + q (e1 + q (e2 + q (e3 + q e4))), e_i = ln 2^i / i!. On the
/// device in constant memory, where an f64 fma reads them as operands (as immediates each was a
/// register move an element).
struct PowCoefficients {
  double l6, l5, l4, l3, l2, l1, e4, e3, e2, e1;
};
inline constexpr PowCoefficients kPowCoefficients = {
    -1 / (6 * kLn2), 1 / (5 * kLn2), -1 / (4 * kLn2), 1 / (3 * kLn2), -1 / (2 * kLn2), 1 / kLn2,
    kLn2 * kLn2 * kLn2 * kLn2 / 24, kLn2 * kLn2 * kLn2 / 6, kLn2 * kLn2 / 2, kLn2};
#if defined(__CUDACC__)
static __constant__ PowCoefficients kPowCoefficientsDevice = kPowCoefficients;
#endif

/// 2^s v for |s| < 1022 and a normal v whose result is normal: s added to v's exponent field.
EWISE_HD double scale_by_power_of_two(double v, int s) {
#if defined(__CUDA_ARCH__)
  // the high word alone (a 64-bit add is two instructions)
  return __hiloint2double(__double2hiint(v) + s * (1 << 20), __double2loint(v));
#else
  const auto shift = static_cast<std::uint64_t>(static_cast<std::int64_t>(s)) << 52;
  return bits_to_double(double_to_bits(v) + shift);
#endif
}

/// |a| ** b = 2^s v, v in [0.99, 2), for a normal float a and any float b where t = b log2|a| is
/// within (-126, 126) (the returned t): v within 2^-43.9 of its value (measured worst, against
/// long double: tests/test_reference.cpp; the bound is 2^-44.4 from the log's series where |t|
/// reaches 126, 2^-46.5 from t's rounding, 2^-49.6 from the exp's series). Elsewhere v and s mean
/// nothing, but no input faults (every index stays in its table), so that the caller computes it
/// for every element without a branch. In f64, without a division or f64 pow:
///   * |a| = 2^k m, m in [kPowSplitBits, + 2^23) by the bits, m's interval j;
///   * log2 m = log2c_j + log2(1 + r), r = m invc_j - 1 (exact in one fma: invc's 53 bits times
///     m's 24), |r| <= 2^-8, by the series to r^6 (the next term's share of the log is under
///     2^-50.8 of it, also where the log is near 0);
///   * t = (k + log2 m) b; n = t 128 rounded (by the 1.5 * 2^45 shift), q = t - n / 128 exactly,
///     |q| <= 2^-8; 2^t = 2^(n >> 7) 2^((n & 127) / 128) 2^q, 2^q by the series to q^4.
/// The tables' loads are from T: pow_tables(), or a copy the kernel staged in shared memory (a
/// warp's 32 random gathers from L1 ran x ** y at 0.91 of a copy's time, from shared memory at
/// 0.94: H200 test kernel).
EWISE_HD double pow_series(float a, float b, double& t, int& s, const PowTables& T) {
#if defined(__CUDA_ARCH__)
  const PowCoefficients& K = kPowCoefficientsDevice;
#else
  const PowCoefficients& K = kPowCoefficients;
#endif
  std::uint32_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  const std::uint32_t d = (bits & 0x7FFFFFFFu) - kPowSplitBits;
  const std::int32_t k = static_cast<std::int32_t>(d) >> 23;
  const std::uint32_t mbits = (d & 0x7FFFFFu) + kPowSplitBits;  // m's float bits
  // m as a double: its float bits moved to the f64 fields, the exponent rebiased (1023 - 127)
  const double m = bits_to_double((static_cast<std::uint64_t>(mbits) << 29) + (896ull << 52));
  const PowTables::Log c = T.log[(d >> 16) & 127u];
  const double r = ::fma(m, c.invc, -1.0);
  double p = ::fma(r, K.l6, K.l5);
  p = ::fma(p, r, K.l4);
  p = ::fma(p, r, K.l3);
  p = ::fma(p, r, K.l2);
  p = ::fma(p, r, K.l1);
  t = ::fma(p, r, static_cast<double>(k) + c.log2c) * static_cast<double>(b);
  const double shifted = t + 0x1.8p45;  // n in the low bits
  const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(double_to_bits(shifted)));
  const double q = t - (shifted - 0x1.8p45);
  double e = ::fma(q, K.e4, K.e3);
  e = ::fma(e, q, K.e2);
  e = ::fma(e, q, K.e1);
  e = ::fma(e, q, 1.0);
  s = n >> 7;
  return T.exp2[static_cast<std::uint32_t>(n) & 127u] * e;
}

/// Whether v, an approximation of a value within 2^(band - 53) of it, rounds to float as the
/// value does: |v| is in float's normal range and farther than 2^band of its ulps from a
/// rounding midpoint. (The 29 mantissa bits below float's 24 are 2^28 at a midpoint; an ulp of
/// v is 2^-52 of it at most. Across a power of two v and the value round to that power alike:
/// it is no midpoint.) About one value in 2^(28 - band) is refused.
EWISE_HD bool rounds_as_exact(double v, int band) {
  // in 32-bit words (64-bit compares are three instructions on the GPU): the range by the high
  // word alone without its sign (both bounds have a zero low word); |low 29 bits - 2^28| > 2^band.
  const std::uint64_t bits = double_to_bits(v);
  const auto high = static_cast<std::uint32_t>(bits >> 32) & 0x7FFFFFFFu;
  const auto low = static_cast<std::uint32_t>(bits) & 0x1FFFFFFFu;
  return high - 0x38100000u < 0x47F00000u - 0x38100000u &&
         low - ((1u << 28) - (1u << band)) > (2u << band);
}

/// float(pow(double(a), double(b))), out of line on the device: the rare case, whose ~200
/// instructions inlined into every element of a kernel's unrolled loop took registers the fast
/// paths needed. An integer b in [1, 64] of a finite nonzero base goes first by f64 binary
/// powering, each product's rounding error taken by fma: where none rounded (a base of few
/// significant bits) the float of the products is the exact power's. The device's f64 pow is not
/// correctly rounded, and where such a power lies on a float rounding midpoint it rounded the
/// other way from the host's (x ** 3 for 8 of 20439 bases of up to 13 bits, H200;
/// docs/reliability.md, bug 18). The error is exact while the product is 2^-969 or more.
#if defined(__CUDA_ARCH__)
__device__ __noinline__
#else
inline
#endif
float pow_by_f64(float a, float b) {
  const double x = a;
  if (b >= 1.0f && b <= 64.0f && ::truncf(b) == b && x != 0.0 && ::fabs(x) < INFINITY) {
    const auto product = [](double u, double w, bool& exact) {
      const double r = u * w;
      exact = exact && ::fma(u, w, -r) == 0.0 && ::fabs(r) >= 0x1p-969;
      return r;
    };
    bool exact = true;
    double p = x, v = 1.0;
    for (auto e = static_cast<unsigned>(b);; p = product(p, p, exact)) {
      if (e & 1u) v = product(v, p, exact);
      if ((e >>= 1) == 0) break;
    }
    if (exact) return static_cast<float>(v);
  }
  return static_cast<float>(::pow(x, static_cast<double>(b)));
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

/// 1 / f correctly rounded (IEEE division's value, subnormal results included).
EWISE_HD float reciprocal_rn(float f) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(f);
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

/// v[s] = a[s] ** e, e >= 1, by binary powering over a chunk of S elements: the squarings and
/// the products e's bits ask for, each step for every element, the first product taken as it is
/// (x ** 3 is two products). The base keeps its sign, so that an odd power has a's sign and a
/// zero base gives a zero of the power's sign without a select. e is the call's, so its branches
/// are uniform and the elements' products interleave; a branch per element made each element a
/// region of its own with its latencies exposed, and computing every bit's product with selects
/// instead cost four products where x ** 3 needs two.
template <class T, int S>
EWISE_HD void power_chunk(const float (&a)[S], unsigned e, T (&v)[S]) {
  T p[S];
  for (int s = 0; s < S; ++s) p[s] = static_cast<T>(a[s]);
  for (; (e & 1) == 0; e >>= 1)
    for (int s = 0; s < S; ++s) p[s] *= p[s];
  for (int s = 0; s < S; ++s) v[s] = p[s];
  for (e >>= 1; e != 0; e >>= 1) {
    for (int s = 0; s < S; ++s) p[s] *= p[s];
    if (e & 1)
      for (int s = 0; s < S; ++s) v[s] *= p[s];
  }
}

/// ±0 ** n for an integer n < 0: infinity, signed as the base for an odd n.
EWISE_HD float power_of_zero(float a, int n) {
  return (n & 1) ? ::copysignf(INFINITY, a) : INFINITY;
}

/// Power of an f32 compute type by a scalar integer exponent n, 0 < |n| <= 16, n != 2 (Pow's
/// value, by chunks: apply_chunk). a ** |n| by binary powering in f64 (at most 7 products,
/// their roundings compounded within 26 ulps), 1 / that for n < 0 (within 2^-44, 2^9 ulps), its
/// float where rounds_as_exact says it is certain; a zero base exactly (n > 0: the products'
/// zero; n < 0: power_of_zero). The rest (a power outside float's normal range, an infinite or
/// NaN base, and one value in 2^22 (n > 0) or 2^18 (n < 0) near a rounding midpoint) is refused,
/// to f64 pow. Where the products are exact (n > 0 times the base's significand bits at most 53:
/// a 16-bit base cubed) nothing is refused: the power's float is its conversion's, midpoints and
/// range alike (an f16 base cubed has one exact midpoint in 2^9, and refusing those ran f16 ** 3
/// at 4.7 times this in a test kernel).
struct PowSmallInt {
  int n;
  bool exact = false;  ///< n > 0 and every product of the base's values exact in f64
  /// r = a ** n for a chunk; returns the refused elements as bits (element s: bit s). n's sign
  /// and `exact` are the call's: their branches are uniform.
  template <int S>
  EWISE_HD unsigned chunk(const float (&a)[S], float (&r)[S]) const {
    double v[S];
    power_chunk(a, static_cast<unsigned>(n < 0 ? -n : n), v);
    unsigned refused = 0;
    if (n > 0) {
      for (int s = 0; s < S; ++s) r[s] = static_cast<float>(v[s]);
      if (!exact)
        for (int s = 0; s < S; ++s)
          refused |= static_cast<unsigned>(!rounds_as_exact(v[s], 6) & (a[s] != 0.0f)) << s;
    } else {
      for (int s = 0; s < S; ++s) {
        const double w = reciprocal(v[s]);
        r[s] = a[s] == 0.0f ? power_of_zero(a[s], n) : static_cast<float>(w);
        refused |= static_cast<unsigned>(!rounds_as_exact(w, 10) & (a[s] != 0.0f)) << s;
      }
    }
    return refused;
  }
  EWISE_HD float operator()(float a, float) const {
    const float x[1] = {a};
    float r[1];
    return chunk(x, r) == 0 ? r[0] : pow_by_f64(a, static_cast<float>(n));
  }
};

/// Power by a scalar integer exponent n, n != 0, 2, where every product of the base's values is
/// exact in float (|n| times the base's significand bits at most 24: bf16 ** ±3, f16 ** -2,
/// x ** ±1): PowSmallInt's value from f32 products, by chunks as PowSmallInt, refusing nothing.
/// a ** |n| is the exact power where it is a normal float (and, for n > 0, where it is infinite
/// or the base is zero or NaN: the exact value rounds there too); for n < 0 the correctly
/// rounded reciprocal of it is the exact power's float (of a zero base too: a signed infinity).
/// The rest (subnormal products of a nonzero base; for n < 0, infinite ones and NaN: rare, a
/// branch after the chunk) takes the exact power in f64 (|n| times the bits at most 24, and
/// within f64's range), then its float (n > 0) or its reciprocal's, correctly rounded in f64 and
/// then in float, which is the exact quotient's float (53 >= 2 * 24 + 2 bits: the second
/// rounding cannot spoil the first). No element is refused, so the kernels hold no call of the
/// full power, whose registers kept bf16 ** 3 at 64 a thread (H200 test kernel: 0.0742 ms at
/// 64, 0.069 without).
/// (A test against a band near the result's rounding midpoints, as in PowSmallInt, refused 0.8%
/// of bf16 values' exact cubes, whose low bits are no random pattern; with the approximate
/// reciprocal and such a band f16 ** -2 ran at 2.8 times this in a test kernel.)
struct PowSmallIntExact {
  int n;
  template <int S>
  EWISE_HD unsigned chunk(const float (&a)[S], float (&r)[S]) const {
    const unsigned m = static_cast<unsigned>(n < 0 ? -n : n);
    float v[S];
    power_chunk(a, m, v);
    unsigned rare = 0;
    if (n > 0) {
      for (int s = 0; s < S; ++s) {
        r[s] = v[s];
        rare |= static_cast<unsigned>((::fabsf(v[s]) < 0x1p-126f) & (a[s] != 0.0f)) << s;
      }
    } else {
      for (int s = 0; s < S; ++s) {
        r[s] = reciprocal_rn(v[s]);
        // & rather than &&: no branch
        const bool normal = (::fabsf(v[s]) >= 0x1p-126f) & (::fabsf(v[s]) < INFINITY);
        rare |= static_cast<unsigned>(!normal & (a[s] != 0.0f)) << s;
      }
    }
    if (rare != 0)
      for (int s = 0; s < S; ++s)
        if (rare >> s & 1u) {
          const float x[1] = {a[s]};
          double p[1];
          power_chunk(x, m, p);
          r[s] = static_cast<float>(n > 0 ? p[0] : 1.0 / p[0]);
        }
    return 0;
  }
  EWISE_HD float operator()(float a, float) const {
    const float x[1] = {a};
    float r[1];
    chunk(x, r);
    return r[0];
  }
};

/// a ** 0.5 of an f32 compute type: the square root, correctly rounded, which is f64 pow's float
/// for every float (all 2^32 compared on the host, docs/benchmarks.md); pow's +0 for -0 (where
/// sqrt keeps the sign) by the absolute value, and its +inf for -inf (where sqrt is NaN). Its own
/// functor so that x ** 0.5 runs at a copy's speed, as PyTorch's sqrt for it does.
struct PowSqrt {
  EWISE_HD float operator()(float a, float) const {
    return a == -INFINITY ? INFINITY : ::fabsf(::sqrtf(a));
  }
};

/// 1 / sqrt(a) within 2^-22.9 of it for a positive normal float: the hardware's approximation on
/// the device, the root's reciprocal on the host. Only ever a start that PowRsqrt refines.
EWISE_HD float rsqrt_approx(float a) {
#if defined(__CUDA_ARCH__)
  float g;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(g) : "f"(a));
  return g;
#else
  return 1.0f / ::sqrtf(a);
#endif
}

/// A positive normal float's f64 by its bits (the exponent rebiased, the significand moved up):
/// integer operations, where a conversion instruction runs at an eighth of f64's rate (H200).
EWISE_HD double positive_normal_to_double(float a) {
  std::uint32_t u;
  std::memcpy(&u, &a, sizeof u);
  return bits_to_double((static_cast<std::uint64_t>(u) << 29) + (std::uint64_t{1023 - 127} << 52));
}

/// a ** -0.5 of an f32 compute type: 1 / sqrt(a) correctly rounded, which is f64 pow's float
/// (all 2^32 floats compared, docs/benchmarks.md). A subnormal a is scaled by 2^24 first and its
/// root by 2^12 after, so that x below is a positive normal float. rsqrt_approx's start r is
/// refined by one Newton step in f64 to d, within 2^-45 of the root; d truncated to float's 24
/// bits is f, and the root lies between f's rounding midpoints on either side (it is no farther
/// than 2^-45 from d, which lies in [f, f + ulp)), so it rounds to f or to f + ulp as it lies
/// below or above the midpoint m = f + ulp / 2: m has 25 bits, so m * m is exact in f64 and
/// fma(m * m, x, -1) has the exact sign of m^2 x - 1. About 25 instructions, conversions by
/// bits: with conversion instructions bf16 ** -0.5 took 1.26 times as long (H200); with its
/// special values selected rather than branched to, 1.07 times.
struct PowRsqrt {
  EWISE_HD float operator()(float a, float) const {
    const bool tiny = a < 0x1p-126f;
    const float scaled = tiny ? a * 0x1p24f : a;
    const double x = positive_normal_to_double(scaled);
    const double r = positive_normal_to_double(rsqrt_approx(scaled));
    const double half_x = bits_to_double(double_to_bits(x) - (std::uint64_t{1} << 52));
    const double d = ::fma(r, ::fma(-half_x * r, r, 0.5), r);
    const std::uint64_t f = double_to_bits(d) & ~std::uint64_t{0x1FFFFFFF};
    const double m = bits_to_double(f | 0x10000000u);
    const bool above = ::fma(m * m, x, -1.0) < 0.0;
    // f's float bits (the exponent rebiased back), the next float's where the root lies above m,
    // and the exponent raised by 12 for a scaled subnormal
    const auto bits = static_cast<std::uint32_t>((f >> 29) - (std::uint64_t{1023 - 127} << 23)) +
                      static_cast<std::uint32_t>(above) + (tiny ? 12u << 23 : 0u);
    float root;
    std::memcpy(&root, &bits, sizeof root);
    // & rather than &&; the rest (rare) is a branch of the compiler's, uniform in practice
    const bool finite_positive = (a > 0.0f) & (a < INFINITY);
    return finite_positive     ? root
           : a == 0.0f         ? INFINITY
           : ::fabsf(a) == INFINITY ? 0.0f
           : a < 0.0f          ? NAN
                               : a + a;  // a NaN, quiet
  }
};

/// a ** -0.5 stored as a 16-bit float keeping all but the low D of float's 23 mantissa bits
/// (bf16: 16; f16: 13, in its normal range): PowRsqrt's value rounded to it, from the hardware's
/// approximation g alone where that is certain. g is within 2^-22.9 (2.2 ulps) of the root and
/// PowRsqrt's float within 2 floats of g, so both round alike where g's dropped bits are 3 or
/// more from the format's midpoint (bits are monotonic; a binade's edge is no midpoint); the
/// rest (one in 2^(D - 2.3)) take PowRsqrt. 8 instructions an element for 25 (benchmarks.md).
template <int D>
struct PowRsqrtNarrow {
  static_assert(D == 16 || D == 13, "bf16 or f16");
  EWISE_HD bool fast(float a, float, float& r) const {
    std::uint32_t ua, ug;
    std::memcpy(&ua, &a, sizeof ua);
    r = rsqrt_approx(a);
    std::memcpy(&ug, &r, sizeof ug);
    const bool far = (ug & ((1u << D) - 1)) - ((1u << (D - 1)) - 2) > 4u;  // |low - half| > 2
    const bool positive_normal = ua - 0x00800000u < 0x7F000000u;  // (hence g normal)
    // f16: g in [2^-14, 2^15), its normal range (below it a subnormal's midpoints differ)
    const bool in_range = D == 16 || ug - ((127u - 14) << 23) < (29u << 23);
    return far & positive_normal & in_range;
  }
  EWISE_HD float operator()(float a, float b) const { return PowRsqrt{}(a, b); }
};

/// a ** 2 of an f32 compute type: a * a, f64 pow's float (a square is exact in f64). Its own
/// functor so that x ** 2 runs in the short operations' kernel shape (convert.cuh's FlatShape).
struct PowSquare {
  EWISE_HD float operator()(float a, float) const { return a * a; }
};

/// Whether v > 0, an approximation within 2^-43.9 of a value in [0.99, 2) (pow_series'), rounds
/// to float as the value does: farther than 2^12 of v's ulps (2^-41 of v at least) from a
/// rounding midpoint (the 29 mantissa bits below float's 24 are 2^28 there). Across a power of
/// two v and the value round to that power alike: it is no midpoint. About one value in 2^16 is
/// refused: each cost its warp a call of f64 pow, and with a band of 2^-33 (one in 2^8, where
/// shorter series made the band wider) those calls were a third of the kernel's instructions.
EWISE_HD bool far_from_midpoint(double v) {
  const auto low = static_cast<std::uint32_t>(double_to_bits(v)) & 0x1FFFFFFFu;
  return low - ((1u << 28) - (1u << 12)) > (1u << 13);
}

/// float(pow(double(a), double(b))) where it is certain, at a fraction of f64 pow's cost; false
/// elsewhere (then pow_by_f64). The common case alone, each test a few instructions: a normal
/// (finite, nonzero, not subnormal, by its bits without the sign); a > 0, or b an integer under
/// 2^22 in magnitude (|a| ** b, negated for an odd b: b + 1.5 * 2^23 rounds b to an integer y
/// whose last bit is y's parity); t = b log2|a| within (-126, 126), so that the result is a
/// normal float; pow_series' value far_from_midpoint. b needs no test of its own: a zero or
/// subnormal b makes t (about) 0 and the value 1, an infinite or NaN one t infinite or NaN.
/// Everything else goes to pow_by_f64: zero, subnormal, infinite and NaN bases, results near or
/// past float's range, about one element in 2^16 near a rounding midpoint (a square at an exact
/// midpoint among them). Every path is computed and the result selected, without a branch, so
/// that the compiler interleaves a chunk's elements.
EWISE_HD bool pow_f32_fast(float a, float b, float& r, const PowTables& T = pow_tables()) {
  double t;
  int s;
  const double v = pow_series(a, b, t, s, T);
  std::uint32_t ua, uy;
  std::memcpy(&ua, &a, sizeof ua);
  const float y = b + 0x1.8p23f;
  std::memcpy(&uy, &y, sizeof uy);
  const bool normal = (ua & 0x7FFFFFFFu) - 0x00800000u < 0x7F000000u;
  const bool b_integer = (y - 0x1.8p23f == b) & (::fabsf(b) < 0x1p22f);
  const bool negative = (ua >> 31) != 0u;
  const float f = static_cast<float>(scale_by_power_of_two(v, s));
  r = negative && (uy & 1u) != 0u ? -f : f;
  // & rather than &&: no branch
  return normal & (!negative | b_integer) & (::fabs(t) < 126.0) & far_from_midpoint(v);
}

/// pow_f32_fast's float, else f64 pow's; for b = 2 float's own product (a square, exact in f64,
/// may lie on a rounding midpoint, which f64 pow may miss on the device by an ulp; a * a rounds
/// it once, correctly).
EWISE_HD float pow_f32(float a, float b, const PowTables& T = pow_tables()) {
  float r;
  if (pow_f32_fast(a, b, r, T)) return r;
  return b == 2.0f ? a * a : pow_by_f64(a, b);
}

}  // namespace ewise::ops::detail
