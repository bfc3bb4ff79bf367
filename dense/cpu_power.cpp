// dense/cpu_power.cpp — the CPU backend's f32 power (ops::Pow in the f32 compute type, and
// pow_f32.hpp's PowSmallInt and PowRsqrt for a scalar exponent) four elements at a time in AVX2
// with FMA (ops::Pow eight at a time in AVX-512 where the CPU has it): pow_f32_fast's,
// PowSmallInt's and PowRsqrt's operations in the same order on each lane, so the same bits;
// what they refuse goes to the functor itself.
// One element at a time the series took ~10 ns (with FMA; ~30 without, where fma() is a libm
// routine), NumPy's own SIMD powf ~1 (AVX-512).
#include "cpu_power.hpp"

#include <cstdint>
#include <cstring>

#include "element.hpp"
#include "ewise/ops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EWISE_CPU_POWER_AVX2 1
#include <immintrin.h>
#else
#define EWISE_CPU_POWER_AVX2 0
#endif

namespace ewise::detail {

#if EWISE_CPU_POWER_AVX2
namespace {

using ops::detail::kPowCoefficients;
using ops::detail::kPowSplitBits;
using ops::detail::kPowTables;

/// x < c as unsigned 32-bit lanes (AVX2 compares signed: both flipped at the sign bit).
__attribute__((target("avx2"))) __m128i less_unsigned(__m128i x, std::uint32_t c) {
  const __m128i sign = _mm_set1_epi32(static_cast<int>(0x80000000u));
  return _mm_cmpgt_epi32(_mm_xor_si128(_mm_set1_epi32(static_cast<int>(c)), sign),
                         _mm_xor_si128(x, sign));
}

/// The low 32 bits of each 64-bit lane.
__attribute__((target("avx2"))) __m128i low_words(__m256i v) {
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/// base[index] for four 32-bit indices. (The masked gather, from zeros: the plain one's
/// undefined source draws an uninitialized-use warning from GCC 12.)
__attribute__((target("avx2"))) __m256d gather(const double* base, __m128i index) {
  return _mm256_mask_i32gather_pd(_mm256_setzero_pd(), base, index,
                                  _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), 8);
}

/// pow_f32_fast of four lanes: r = the values, returns the accepted lanes as bits (lane i: bit
/// i). The steps are pow_series' and pow_f32_fast's, each named as there.
__attribute__((target("avx2,fma"), always_inline)) inline unsigned pow_fast4(const float* a4,
                                                                            const float* b4,
                                                                            float* r4) {
  const auto& K = kPowCoefficients;
  const __m128 a = _mm_loadu_ps(a4), b = _mm_loadu_ps(b4);
  const __m128i bits = _mm_castps_si128(a);
  const __m128i d = _mm_sub_epi32(_mm_and_si128(bits, _mm_set1_epi32(0x7FFFFFFF)),
                                  _mm_set1_epi32(static_cast<int>(kPowSplitBits)));
  const __m128i k = _mm_srai_epi32(d, 23);
  const __m128i mbits = _mm_add_epi32(_mm_and_si128(d, _mm_set1_epi32(0x7FFFFF)),
                                      _mm_set1_epi32(static_cast<int>(kPowSplitBits)));
  const __m256d m = _mm256_castsi256_pd(
      _mm256_add_epi64(_mm256_slli_epi64(_mm256_cvtepu32_epi64(mbits), 29),
                       _mm256_set1_epi64x(static_cast<long long>(896ull << 52))));
  // the interval's (invc, log2c): a 16-byte entry, so the doubles' index is 2 j (and 2 j + 1)
  const __m128i j2 = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(d, 16), _mm_set1_epi32(127)), 1);
  const double* log = &kPowTables.log[0].invc;
  const __m256d invc = gather(log, j2);
  const __m256d log2c = gather(log + 1, j2);
  const __m256d r = _mm256_fmadd_pd(m, invc, _mm256_set1_pd(-1.0));
  __m256d p = _mm256_fmadd_pd(r, _mm256_set1_pd(K.l6), _mm256_set1_pd(K.l5));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(K.l4));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(K.l3));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(K.l2));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(K.l1));
  const __m256d t = _mm256_mul_pd(
      _mm256_fmadd_pd(p, r, _mm256_add_pd(_mm256_cvtepi32_pd(k), log2c)), _mm256_cvtps_pd(b));
  const __m256d big = _mm256_set1_pd(0x1.8p45);
  const __m256d shifted = _mm256_add_pd(t, big);
  const __m128i n = low_words(_mm256_castpd_si256(shifted));
  const __m256d q = _mm256_sub_pd(t, _mm256_sub_pd(shifted, big));
  __m256d e = _mm256_fmadd_pd(q, _mm256_set1_pd(K.e4), _mm256_set1_pd(K.e3));
  e = _mm256_fmadd_pd(e, q, _mm256_set1_pd(K.e2));
  e = _mm256_fmadd_pd(e, q, _mm256_set1_pd(K.e1));
  e = _mm256_fmadd_pd(e, q, _mm256_set1_pd(1.0));
  const __m128i s = _mm_srai_epi32(n, 7);
  const __m256d v = _mm256_mul_pd(
      gather(kPowTables.exp2, _mm_and_si128(n, _mm_set1_epi32(127))), e);
  // pow_f32_fast: the scaled value's float, negated for a negative base to an odd integer
  const __m256i vbits = _mm256_castpd_si256(v);
  const __m128 f = _mm256_cvtpd_ps(_mm256_castsi256_pd(
      _mm256_add_epi64(vbits, _mm256_slli_epi64(_mm256_cvtepi32_epi64(s), 52))));
  const __m128i uy = _mm_castps_si128(_mm_add_ps(b, _mm_set1_ps(0x1.8p23f)));
  const __m128 y = _mm_castsi128_ps(uy);
  const __m128i normal =
      less_unsigned(_mm_sub_epi32(_mm_and_si128(bits, _mm_set1_epi32(0x7FFFFFFF)),
                                  _mm_set1_epi32(0x00800000)),
                    0x7F000000u);
  const __m128i b_integer = _mm_castps_si128(
      _mm_and_ps(_mm_cmp_ps(_mm_sub_ps(y, _mm_set1_ps(0x1.8p23f)), b, _CMP_EQ_OQ),
                 _mm_cmp_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), b), _mm_set1_ps(0x1p22f),
                            _CMP_LT_OQ)));
  const __m128i negative = _mm_srai_epi32(bits, 31);  // all ones where a's sign is set
  const __m128i odd = _mm_slli_epi32(uy, 31);         // uy's last bit at the sign
  _mm_storeu_ps(r4, _mm_xor_ps(f, _mm_castsi128_ps(_mm_and_si128(negative, odd))));
  const __m128i in_range = low_words(_mm256_castpd_si256(
      _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), t), _mm256_set1_pd(126.0), _CMP_LT_OQ)));
  // far_from_midpoint's test, negated: the low 29 bits within 2^13 of 2^28
  const __m128i near = less_unsigned(
      _mm_sub_epi32(_mm_and_si128(low_words(vbits), _mm_set1_epi32(0x1FFFFFFF)),
                    _mm_set1_epi32((1 << 28) - (1 << 12))),
      (1u << 13) + 1);
  const __m128i sign_ok = _mm_or_si128(_mm_andnot_si128(negative, _mm_set1_epi32(-1)), b_integer);
  const __m128i ok =
      _mm_and_si128(_mm_and_si128(normal, sign_ok), _mm_andnot_si128(near, in_range));
  return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(ok)));
}

/// less_unsigned of eight lanes.
__attribute__((target("avx2"))) __m256i less_unsigned8(__m256i x, std::uint32_t c) {
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  return _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_set1_epi32(static_cast<int>(c)), sign),
                            _mm256_xor_si256(x, sign));
}

// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports at every use (GCC bug 105593); the code here reads no
// undefined lane.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
/// pow_fast4 of eight lanes in AVX-512 (the doubles eight to a register): the same steps. The
/// exponents b come as a register, so that a loop with one exponent hoists what it derives.
__attribute__((target("avx512f,avx2,fma"), always_inline)) inline unsigned pow_fast8(
    const float* a8, __m256 b, float* r8) {
  const auto& K = kPowCoefficients;
  const __m256 a = _mm256_loadu_ps(a8);
  const __m256i bits = _mm256_castps_si256(a);
  const __m256i d = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)),
                                     _mm256_set1_epi32(static_cast<int>(kPowSplitBits)));
  const __m256i k = _mm256_srai_epi32(d, 23);
  const __m256i mbits = _mm256_add_epi32(_mm256_and_si256(d, _mm256_set1_epi32(0x7FFFFF)),
                                         _mm256_set1_epi32(static_cast<int>(kPowSplitBits)));
  const __m512d m = _mm512_castsi512_pd(
      _mm512_add_epi64(_mm512_slli_epi64(_mm512_cvtepu32_epi64(mbits), 29),
                       _mm512_set1_epi64(static_cast<long long>(896ull << 52))));
  const __m256i j2 =
      _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(d, 16), _mm256_set1_epi32(127)), 1);
  const double* log = &kPowTables.log[0].invc;
  const __m512d invc = _mm512_i32gather_pd(j2, log, 8);
  const __m512d log2c = _mm512_i32gather_pd(j2, log + 1, 8);
  const __m512d r = _mm512_fmadd_pd(m, invc, _mm512_set1_pd(-1.0));
  __m512d p = _mm512_fmadd_pd(r, _mm512_set1_pd(K.l6), _mm512_set1_pd(K.l5));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(K.l4));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(K.l3));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(K.l2));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(K.l1));
  const __m512d t = _mm512_mul_pd(
      _mm512_fmadd_pd(p, r, _mm512_add_pd(_mm512_cvtepi32_pd(k), log2c)), _mm512_cvtps_pd(b));
  const __m512d big = _mm512_set1_pd(0x1.8p45);
  const __m512d shifted = _mm512_add_pd(t, big);
  const __m256i n = _mm512_cvtepi64_epi32(_mm512_castpd_si512(shifted));
  const __m512d q = _mm512_sub_pd(t, _mm512_sub_pd(shifted, big));
  __m512d e = _mm512_fmadd_pd(q, _mm512_set1_pd(K.e4), _mm512_set1_pd(K.e3));
  e = _mm512_fmadd_pd(e, q, _mm512_set1_pd(K.e2));
  e = _mm512_fmadd_pd(e, q, _mm512_set1_pd(K.e1));
  e = _mm512_fmadd_pd(e, q, _mm512_set1_pd(1.0));
  const __m256i s = _mm256_srai_epi32(n, 7);
  const __m512d v = _mm512_mul_pd(
      _mm512_i32gather_pd(_mm256_and_si256(n, _mm256_set1_epi32(127)), kPowTables.exp2, 8), e);
  const __m512i vbits = _mm512_castpd_si512(v);
  const __m256 f = _mm512_cvtpd_ps(_mm512_castsi512_pd(
      _mm512_add_epi64(vbits, _mm512_slli_epi64(_mm512_cvtepi32_epi64(s), 52))));
  const __m256i uy = _mm256_castps_si256(_mm256_add_ps(b, _mm256_set1_ps(0x1.8p23f)));
  const __m256 y = _mm256_castsi256_ps(uy);
  const __m256i normal =
      less_unsigned8(_mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)),
                                      _mm256_set1_epi32(0x00800000)),
                     0x7F000000u);
  const __m256i b_integer = _mm256_castps_si256(
      _mm256_and_ps(_mm256_cmp_ps(_mm256_sub_ps(y, _mm256_set1_ps(0x1.8p23f)), b, _CMP_EQ_OQ),
                    _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), b),
                                  _mm256_set1_ps(0x1p22f), _CMP_LT_OQ)));
  const __m256i negative = _mm256_srai_epi32(bits, 31);
  const __m256i odd = _mm256_slli_epi32(uy, 31);
  _mm256_storeu_ps(r8, _mm256_xor_ps(f, _mm256_castsi256_ps(_mm256_and_si256(negative, odd))));
  const __mmask8 in_range = _mm512_cmp_pd_mask(_mm512_abs_pd(t), _mm512_set1_pd(126.0),
                                               _CMP_LT_OQ);
  const __m256i near = less_unsigned8(
      _mm256_sub_epi32(_mm256_and_si256(_mm512_cvtepi64_epi32(vbits),
                                        _mm256_set1_epi32(0x1FFFFFFF)),
                       _mm256_set1_epi32((1 << 28) - (1 << 12))),
      (1u << 13) + 1);
  const __m256i sign_ok =
      _mm256_or_si256(_mm256_andnot_si256(negative, _mm256_set1_epi32(-1)), b_integer);
  const __m256i ok = _mm256_andnot_si256(near, _mm256_and_si256(normal, sign_ok));
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(ok))) & in_range;
}

/// Whether four doubles round to float as the values they approximate within 2^(band - 53) do
/// (rounds_as_exact, pow_f32.hpp): all ones in a lane where they do.
__attribute__((target("avx2"), always_inline)) inline __m128i rounds_as_exact4(__m256d v,
                                                                              int band) {
  const __m256i bits = _mm256_castpd_si256(v);
  const __m128i high = _mm_and_si128(low_words(_mm256_srli_epi64(bits, 32)),
                                     _mm_set1_epi32(0x7FFFFFFF));
  const __m128i low = _mm_and_si128(low_words(bits), _mm_set1_epi32(0x1FFFFFFF));
  const __m128i in_range =
      less_unsigned(_mm_sub_epi32(high, _mm_set1_epi32(0x38100000)), 0x47F00000u - 0x38100000u);
  const __m128i near = less_unsigned(
      _mm_sub_epi32(low, _mm_set1_epi32(static_cast<int>((1u << 28) - (1u << band)))),
      (2u << band) + 1);
  return _mm_andnot_si128(near, in_range);
}

/// PowSmallInt's chunk (pow_f32.hpp) of four lanes, the same operations in its order: r = the
/// values, returns the accepted lanes as bits. n's bits and sign are the call's (uniform).
__attribute__((target("avx2,fma"), always_inline)) inline unsigned small_int4(
    const float* a4, float* r4, const ops::detail::PowSmallInt& f) {
  const __m128 a = _mm_loadu_ps(a4);
  __m256d p = _mm256_cvtps_pd(a);
  auto e = static_cast<unsigned>(f.n < 0 ? -f.n : f.n);
  for (; (e & 1) == 0; e >>= 1) p = _mm256_mul_pd(p, p);
  __m256d v = p;
  for (e >>= 1; e != 0; e >>= 1) {
    p = _mm256_mul_pd(p, p);
    if (e & 1) v = _mm256_mul_pd(v, p);
  }
  const __m128i zero = _mm_castps_si128(_mm_cmp_ps(a, _mm_setzero_ps(), _CMP_EQ_OQ));
  __m128i ok;
  if (f.n > 0) {
    _mm_storeu_ps(r4, _mm256_cvtpd_ps(v));
    // exact: every lane but a NaN base's (left to the functor, whose NaN the caller stores)
    ok = f.exact ? _mm_castps_si128(_mm_cmp_ps(a, a, _CMP_ORD_Q))
                 : _mm_or_si128(rounds_as_exact4(v, 6), zero);
  } else {
    // reciprocal(): float's reciprocal of v's float, one Newton step in f64
    const __m256d q = _mm256_cvtps_pd(_mm_div_ps(_mm_set1_ps(1.0f), _mm256_cvtpd_ps(v)));
    const __m256d w = _mm256_fmadd_pd(q, _mm256_fnmadd_pd(v, q, _mm256_set1_pd(1.0)), q);
    // power_of_zero: infinity, with the base's sign for an odd n
    const __m128 sign = (f.n & 1) ? _mm_and_ps(a, _mm_set1_ps(-0.0f)) : _mm_setzero_ps();
    const __m128 inf = _mm_or_ps(_mm_set1_ps(INFINITY), sign);
    _mm_storeu_ps(r4, _mm_blendv_ps(_mm256_cvtpd_ps(w), inf, _mm_castsi128_ps(zero)));
    ok = _mm_or_si128(rounds_as_exact4(w, 10), zero);
  }
  return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(ok)));
}

/// The functor's value, a NaN as the canonical one (element.hpp's bits): the lanes' own results
/// are never NaN, so that z holds what the backend stores.
float canonical_nan(float v) {
  if (v == v) return v;
  const auto bits = static_cast<std::uint32_t>(canonical_nan_bits(DType::f32));
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// PowRsqrt (pow_f32.hpp) of four lanes, its steps on each: the start 1 / sqrt, correctly
/// rounded in float as on the host, then the Newton step and the midpoint's test in f64 (here
/// with conversion instructions: a lane's float is exact in f64 and f's double exact in float).
/// r = the values; returns the positive finite lanes as bits (the others: the functor's).
__attribute__((target("avx2,fma"), always_inline)) inline unsigned rsqrt4(const float* a4,
                                                                         float* r4) {
  const __m128 a = _mm_loadu_ps(a4);
  const __m128 tiny = _mm_cmp_ps(a, _mm_set1_ps(0x1p-126f), _CMP_LT_OQ);
  const __m128 scaled = _mm_blendv_ps(a, _mm_mul_ps(a, _mm_set1_ps(0x1p24f)), tiny);
  const __m256d x = _mm256_cvtps_pd(scaled);
  const __m256d r = _mm256_cvtps_pd(_mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(scaled)));
  const __m256d half_x = _mm256_mul_pd(x, _mm256_set1_pd(0.5));
  const __m256d e = _mm256_fnmadd_pd(_mm256_mul_pd(half_x, r), r, _mm256_set1_pd(0.5));
  const __m256d d = _mm256_fmadd_pd(r, e, r);
  const __m256d f = _mm256_and_pd(d, _mm256_castsi256_pd(_mm256_set1_epi64x(~0x1FFFFFFFll)));
  const __m256d m = _mm256_or_pd(f, _mm256_castsi256_pd(_mm256_set1_epi64x(0x10000000)));
  const __m256d s = _mm256_fmsub_pd(_mm256_mul_pd(m, m), x, _mm256_set1_pd(1.0));
  const __m128i above =
      low_words(_mm256_castpd_si256(_mm256_cmp_pd(s, _mm256_setzero_pd(), _CMP_LT_OQ)));
  __m128i bits = _mm_sub_epi32(_mm_castps_si128(_mm256_cvtpd_ps(f)), above);
  bits = _mm_add_epi32(bits, _mm_and_si128(_mm_castps_si128(tiny), _mm_set1_epi32(12 << 23)));
  _mm_storeu_ps(r4, _mm_castsi128_ps(bits));
  const __m128i u = _mm_castps_si128(a);
  return static_cast<unsigned>(_mm_movemask_ps(
      _mm_castsi128_ps(less_unsigned(_mm_sub_epi32(u, _mm_set1_epi32(1)), 0x7F7FFFFFu))));
}

/// The lanes of each power: four(a, b, r) the values of four lanes and the accepted ones as bits,
/// one(a, b) the functor itself.
struct PowLanes {
  __attribute__((target("avx2,fma"))) unsigned four(const float* a, const float* b,
                                                    float* r) const {
    return pow_fast4(a, b, r);
  }
  float one(float a, float b) const { return ops::Pow{}(a, b); }
};
struct SmallIntLanes {
  const ops::detail::PowSmallInt& f;
  __attribute__((target("avx2,fma"))) unsigned four(const float* a, const float*, float* r) const {
    return small_int4(a, r, f);
  }
  float one(float a, float) const { return f(a, 0.0f); }
};
struct RsqrtLanes {
  __attribute__((target("avx2,fma"))) unsigned four(const float* a, const float*, float* r) const {
    return rsqrt4(a, r);
  }
  float one(float a, float) const { return ops::detail::PowRsqrt{}(a, -0.5f); }
};

/// z = x ** y over m floats by the lanes L, two four-lane groups an iteration (f32 ** f32 3.8 ns
/// an element against 4.5 at one group, one core of the 2-core CI machine), the functor itself
/// for the refused lanes and the last m % 8 (built for AVX2 with FMA too: the series' fma one
/// instruction). z may be x (in place): an iteration's inputs are copied before its lanes store.
/// y is read where it is given (ops::Pow's tensor exponent), else every exponent is y0.
template <class L>
__attribute__((target("avx2,fma"))) void power_loop(const float* x, const float* y, float y0,
                                                     float* z, std::int64_t m, const L& lanes) {
  const auto one = [&](float a, float b) { return canonical_nan(lanes.one(a, b)); };
  std::int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    float a[8], b[8];
    for (int i = 0; i < 8; ++i) a[i] = x[j + i];
    for (int i = 0; i < 8; ++i) b[i] = y != nullptr ? y[j + i] : y0;
    const unsigned accepted = lanes.four(a, b, z + j) | lanes.four(a + 4, b + 4, z + j + 4) << 4;
    if (accepted != 0xFFu)
      for (int i = 0; i < 8; ++i)
        if (!(accepted >> i & 1u)) z[j + i] = one(a[i], b[i]);
  }
  for (; j < m; ++j) z[j] = one(x[j], y != nullptr ? y[j] : y0);
}

/// power_loop's f32 ** y in AVX-512: two eight-lane groups an iteration, the rest by power_loop.
/// (A loop of its own: lanes of one instruction set inline only into a loop built for it.) A
/// held exponent (Held: y0, y null) stays in one register, what pow_fast8 derives from it out of
/// the loop. An iteration's bases are copied and its exponents loaded before its lanes store
/// (z may be x or y).
template <bool Held>
__attribute__((target("avx512f,avx2,fma"))) void pow_loop_avx512(const float* x, const float* y,
                                                                  float y0, float* z,
                                                                  std::int64_t m) {
  const __m256 held = _mm256_set1_ps(y0);
  std::int64_t j = 0;
  for (; j + 16 <= m; j += 16) {
    float a[16];
    for (int i = 0; i < 16; ++i) a[i] = x[j + i];
    const __m256 b0 = Held ? held : _mm256_loadu_ps(y + j);
    const __m256 b1 = Held ? held : _mm256_loadu_ps(y + j + 8);
    const unsigned accepted = pow_fast8(a, b0, z + j) | pow_fast8(a + 8, b1, z + j + 8) << 8;
    if (accepted != 0xFFFFu) {
      float b[16];
      _mm256_storeu_ps(b, b0);
      _mm256_storeu_ps(b + 8, b1);
      for (int i = 0; i < 16; ++i)
        if (!(accepted >> i & 1u)) z[j + i] = canonical_nan(ops::Pow{}(a[i], b[i]));
    }
  }
  power_loop(x + j, Held ? nullptr : y + j, y0, z + j, m - j, PowLanes{});
}

#pragma GCC diagnostic pop

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("fma");
  return yes;
}

bool has_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

}  // namespace
#endif

bool power_f32_simd(const float* x, const float* y, float y0, float* z, std::int64_t m) {
#if EWISE_CPU_POWER_AVX2
  if (!has_avx2_fma()) return false;
  if (!has_avx512()) power_loop(x, y, y0, z, m, PowLanes{});
  else if (y == nullptr) pow_loop_avx512<true>(x, y, y0, z, m);
  else pow_loop_avx512<false>(x, y, y0, z, m);
  return true;
#else
  (void)x, (void)y, (void)y0, (void)z, (void)m;
  return false;
#endif
}

bool power_int_simd(const ops::detail::PowSmallInt& f, const float* x, float* z, std::int64_t m) {
#if EWISE_CPU_POWER_AVX2
  if (!has_avx2_fma()) return false;
  power_loop(x, nullptr, 0.0f, z, m, SmallIntLanes{f});
  return true;
#else
  (void)f, (void)x, (void)z, (void)m;
  return false;
#endif
}

bool power_rsqrt_simd(const float* x, float* z, std::int64_t m) {
#if EWISE_CPU_POWER_AVX2
  if (!has_avx2_fma()) return false;
  power_loop(x, nullptr, 0.0f, z, m, RsqrtLanes{});
  return true;
#else
  (void)x, (void)z, (void)m;
  return false;
#endif
}

}  // namespace ewise::detail
