// dense/cpu.cpp — the CPU backend of binary(): the dense plan (sorted and coalesced, innermost
// dimension last) run row by row, a row being the innermost dimension at each index of the
// others. Results are the CPU reference's (src/reference.cpp) bit for bit: the same loads,
// ops.hpp functors, roundings and casts (src/element.hpp), only arranged so that the compiler
// vectorizes them and no dtype is switched per element.
//   typed     a and b of the compute type's own dtype (or scalars), out of the result's: one
//             loop over the row with the functor on the stored values; separate loops for
//             stride 1 everywhere and for a held operand (stride 0, a scalar), which the
//             compiler vectorizes.
//   chunked   anything else (mixed dtypes, 16-bit floats, roundings, casts into out): chunks of
//             kChunk elements, each operand converted into a buffer of the compute type by a
//             loader chosen once for its dtype, the functor over the buffers, the results cast
//             into out by a storer chosen once for (result, out).
// The reference stays the tests' oracle (tests/test_cpu_dense.cpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu.hpp"
#include "cpu_power.hpp"
#include "cpu_targets.hpp"
#include "element.hpp"
#include "ewise/detail/apply_chunk.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/error.hpp"
#include "thread_pool.hpp"

namespace ewise::detail {
namespace {

#if EWISE_CPU_X86
/// Whether the CPU converts between f16 and float in hardware (F16C), asked once. The
/// conversions are IEEE's, round to nearest even, subnormals kept (F16C ignores MXCSR's DAZ
/// and FTZ), so they give float_to_f16_bits' and f16_bits_to_float's bits; a NaN is then
/// written as the canonical one (ops.hpp).
bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
__attribute__((target("avx,f16c"))) void f16_to_float_f16c(const std::uint16_t* q, std::int64_t m,
                                                           float* x) {
  std::int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    _mm256_storeu_ps(x + j,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + j))));
  for (; j < m; ++j) x[j] = _cvtsh_ss(q[j]);
}
__attribute__((target("avx,f16c"))) void float_to_f16_f16c(const float* v, std::int64_t m,
                                                           std::uint16_t* q) {
  std::int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + j),
                     _mm256_cvtps_ph(_mm256_loadu_ps(v + j), _MM_FROUND_TO_NEAREST_INT));
  for (; j < m; ++j) q[j] = _cvtss_sh(v[j], _MM_FROUND_TO_NEAREST_INT);
  for (j = 0; j < m; ++j)
    if (v[j] != v[j]) q[j] = 0x7FFF;
}
#endif

/// Elements a chunk of the chunked path: its three buffers stay in L1 (256 x 16 bytes at most
/// each).
constexpr std::int64_t kChunk = 256;

/// One row: n elements, each operand's first element and element stride (a held operand: 0).
struct Row {
  std::int64_t n = 0;
  std::byte* out = nullptr;
  const std::byte* a = nullptr;
  const std::byte* b = nullptr;
  std::int64_t so = 0, sa = 0, sb = 0;
};

/// The host storage type of dtype D (src/element.hpp's with_storage).
template <DType D>
struct Storage;
template <> struct Storage<DType::f16> { using type = std::uint16_t; };
template <> struct Storage<DType::bf16> { using type = std::uint16_t; };
template <> struct Storage<DType::f32> { using type = float; };
template <> struct Storage<DType::f64> { using type = double; };
template <> struct Storage<DType::i32> { using type = std::int32_t; };
template <> struct Storage<DType::i64> { using type = std::int64_t; };
template <> struct Storage<DType::b8> { using type = bool; };
template <> struct Storage<DType::i8> { using type = std::int8_t; };
template <> struct Storage<DType::u8> { using type = std::uint8_t; };
template <> struct Storage<DType::i16> { using type = std::int16_t; };
template <> struct Storage<DType::u16> { using type = std::uint16_t; };
template <> struct Storage<DType::u32> { using type = std::uint32_t; };
template <> struct Storage<DType::u64> { using type = std::uint64_t; };
template <DType D>
using StorageOf = typename Storage<D>::type;

/// Calls f(std::integral_constant<DType, D>{}) with dtype d as the constant D (the loaders and
/// storers are instantiated per dtype and chosen once a call).
template <class F>
decltype(auto) with_dtype_constant(DType d, F&& f) {
  switch (d) {
    case DType::f16: return f(std::integral_constant<DType, DType::f16>{});
    case DType::bf16: return f(std::integral_constant<DType, DType::bf16>{});
    case DType::f32: return f(std::integral_constant<DType, DType::f32>{});
    case DType::f64: return f(std::integral_constant<DType, DType::f64>{});
    case DType::i32: return f(std::integral_constant<DType, DType::i32>{});
    case DType::i64: return f(std::integral_constant<DType, DType::i64>{});
    case DType::b8: return f(std::integral_constant<DType, DType::b8>{});
    case DType::i8: return f(std::integral_constant<DType, DType::i8>{});
    case DType::u8: return f(std::integral_constant<DType, DType::u8>{});
    case DType::i16: return f(std::integral_constant<DType, DType::i16>{});
    case DType::u16: return f(std::integral_constant<DType, DType::u16>{});
    case DType::u32: return f(std::integral_constant<DType, DType::u32>{});
    case DType::u64: return f(std::integral_constant<DType, DType::u64>{});
  }
  throw_unknown_dtype(d);
}

/// The stored value of a floating result: the canonical NaN for a NaN (ops.hpp), else v.
template <class T>
T canonical(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) {
      T c;
      const std::uint64_t bits = canonical_nan_bits(sizeof(T) == 4 ? DType::f32 : DType::f64);
      std::memcpy(&c, &bits, sizeof c);
      return c;
    }
  }
  return v;
}

// ---- typed rows ----------------------------------------------------------------------------

/// out[i] = f(a[i], b[i]) over a row whose operands are stored as C and out as R (the functor's
/// result type); a0 / b0: a scalar operand's value (a_scalar / b_scalar).
template <class F, class C, class R>
EWISE_CPU_TARGETS void typed_row(const F& f, const Row& r, bool a_scalar, bool b_scalar, C a0,
                                 C b0) {
  R* o = reinterpret_cast<R*>(r.out);
  const C* a = reinterpret_cast<const C*>(r.a);
  const C* b = reinterpret_cast<const C*>(r.b);
  const std::int64_t n = r.n;
  const bool a_held = a_scalar || r.sa == 0, b_held = b_scalar || r.sb == 0;
  const C x0 = a_scalar ? a0 : a_held ? a[0] : C{}, y0 = b_scalar ? b0 : b_held ? b[0] : C{};
  if (r.so == 1 && !a_held && !b_held && r.sa == 1 && r.sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = canonical<R>(f(a[i], b[i]));
  } else if (r.so == 1 && !a_held && r.sa == 1 && b_held) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = canonical<R>(f(a[i], y0));
  } else if (r.so == 1 && a_held && !b_held && r.sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = canonical<R>(f(x0, b[i]));
  } else {
    const std::int64_t sa = a_held ? 0 : r.sa, sb = b_held ? 0 : r.sb;
    const C* pa = a_scalar ? &x0 : a;
    const C* pb = b_scalar ? &y0 : b;
    for (std::int64_t i = 0; i < n; ++i) o[i * r.so] = canonical<R>(f(pa[i * sa], pb[i * sb]));
  }
}

// ---- chunked rows --------------------------------------------------------------------------

/// m elements of dtype D from p (element stride s) as C: load_as's conversion, D fixed.
template <class C, DType D>
EWISE_CPU_TARGETS void load_chunk(const std::byte* p, std::int64_t s, std::int64_t m, C* x) {
  using T = StorageOf<D>;
  const T* q = reinterpret_cast<const T*>(p);
#if EWISE_CPU_X86
  if constexpr (D == DType::f16 && std::is_same_v<C, float>)
    if (s == 1 && has_f16c()) return f16_to_float_f16c(q, m, x);
#endif
  // stride 1 a loop of its own, which the compiler vectorizes
  const auto each = [&](auto stride) {
    for (std::int64_t j = 0; j < m; ++j) {
      const T v = q[j * stride];
      if constexpr (D == DType::f16 || D == DType::bf16) {
        const float f = D == DType::f16 ? f16_bits_to_float(v) : bf16_bits_to_float(v);
        if constexpr (std::is_same_v<C, bool>) x[j] = f != 0;
        else x[j] = static_cast<C>(f);
      } else if constexpr (std::is_same_v<C, bool>) {
        x[j] = v != T(0);
      } else {
        x[j] = static_cast<C>(v);
      }
    }
  };
  if (s == 1) each(std::integral_constant<std::int64_t, 1>{});
  else each(s);
}

template <class C>
using Loader = void (*)(const std::byte*, std::int64_t, std::int64_t, C*);

template <class C>
Loader<C> loader(DType d) {
  return with_dtype_constant(d, [](auto D) -> Loader<C> { return load_chunk<C, D.value>; });
}

/// m results v rounded to the result dtype Result, then cast into dtype Out at p (element
/// stride s): store_result's sequence (src/reference.cpp), both dtypes fixed.
template <class V, DType Result, DType Out>
EWISE_CPU_TARGETS void store_chunk(const V* v, std::int64_t m, std::byte* p, std::int64_t s) {
  const std::int64_t size = static_cast<std::int64_t>(sizeof(StorageOf<Out>));
  constexpr bool via16 = Result != Out && (Result == DType::f16 || Result == DType::bf16);
#if EWISE_CPU_X86
  if constexpr (Out == DType::f16 && !via16 && std::is_same_v<V, float>)
    if (s == 1 && has_f16c()) return float_to_f16_f16c(v, m, reinterpret_cast<std::uint16_t*>(p));
#endif
  const auto each = [&](auto stride) {  // as in load_chunk
    for (std::int64_t j = 0; j < m; ++j) {
      std::byte* q = p + j * stride * size;
      if constexpr (via16) {
        std::uint16_t bits = 0;
        store_cast(Result, reinterpret_cast<std::byte*>(&bits), v[j]);
        store_cast(Out, q, load_as<float>(Result, reinterpret_cast<const std::byte*>(&bits)));
      } else {
        store_cast(Out, q, v[j]);
      }
    }
  };
  if (s == 1) each(std::integral_constant<std::int64_t, 1>{});
  else each(s);
}

template <class V>
using Storer = void (*)(const V*, std::int64_t, std::byte*, std::int64_t);

template <class V, DType Result>
Storer<V> storer_into(DType out) {
  return with_dtype_constant(out,
                             [](auto D) -> Storer<V> { return store_chunk<V, Result, D.value>; });
}

/// The storer of results V of dtype `result` into dtype `out`: a 16-bit result cast into
/// another dtype is rounded to it first; any other result's value is v itself.
template <class V>
Storer<V> storer(DType result, DType out) {
  if (result != out && result == DType::f16) return storer_into<V, DType::f16>(out);
  if (result != out && result == DType::bf16) return storer_into<V, DType::bf16>(out);
  return storer_into<V, DType::f64>(out);  // (f64: any result that is not a 16-bit float)
}

/// x rounded to 16-bit dtype t and back (a_round / b_round: C is float).
void round16(DType t, float* x, std::int64_t m) {
  for (std::int64_t j = 0; j < m; ++j)
    x[j] = static_cast<float>(round_to(t, static_cast<double>(x[j])));
}

/// Whether F is applied by chunks (apply_chunk: a fast path over the chunk, F itself for the
/// elements it refused) in compute type C: ops::Pow and pow_f32.hpp's integer exponents.
template <class F, class C>
inline constexpr bool kChunked = kHasFast<F, C> || kHasChunk<F, C, 8>;

/// z[j] = f(x[j], y[j]) for m elements by apply_chunk, 8 at a time as a GPU lane takes them, the
/// last m % 8 one by one.
template <class F, class C, class R>
void apply_chunks(const F& f, const C* x, const C* y, R* z, std::int64_t m) {
  constexpr int S = 8;
  std::int64_t j = 0;
  for (; j + S <= m; j += S) {
    C xs[S], ys[S];
    R zs[S];
    std::copy(x + j, x + j + S, xs);
    std::copy(y + j, y + j + S, ys);
    apply_chunk(f, xs, ys, zs);
    std::copy(zs, zs + S, z + j);
  }
  for (; j < m; ++j) z[j] = f(x[j], y[j]);
}

template <class F, class C>
EWISE_CPU_TARGETS void chunked_row(const F& f, const CallTypes& t, const Row& r, Loader<C> la,
                                   Loader<C> lb, Storer<decltype(F{}(C{}, C{}))> st, C a0,
                                   C b0) {
  using R = decltype(F{}(C{}, C{}));
  C x[kChunk], y[kChunk];
  R z[kChunk];
  const std::int64_t wa = t.a_scalar ? 0 : static_cast<std::int64_t>(dtype_size(t.a));
  const std::int64_t wb = t.b_scalar ? 0 : static_cast<std::int64_t>(dtype_size(t.b));
  const std::int64_t wo = static_cast<std::int64_t>(dtype_size(t.out));
  for (std::int64_t i0 = 0; i0 < r.n; i0 += kChunk) {
    const std::int64_t m = std::min(kChunk, r.n - i0);
    if (t.a_scalar) std::fill(x, x + m, a0);
    else la(r.a + i0 * r.sa * wa, r.sa, m, x);
    if (t.b_scalar) std::fill(y, y + m, b0);
    else lb(r.b + i0 * r.sb * wb, r.sb, m, y);
    if constexpr (std::is_same_v<C, float>) {
      if (t.a_round) round16(t.types.compute, x, m);
      if (t.b_round) round16(t.types.compute, y, m);
    }
    // f32 power by the SIMD paths where the CPU has AVX2 and FMA (cpu_power.cpp); a functor
    // by chunks otherwise (its series' fma() then glibc's software routine)
    if constexpr (std::is_same_v<F, ops::Pow> && std::is_same_v<C, float>) {
      if (!power_f32_simd(x, y, 0.0f, z, m)) apply_chunks(f, x, y, z, m);
    } else if constexpr (std::is_same_v<F, ops::detail::PowSmallInt>) {
      if (!power_int_simd(f, x, z, m)) apply_chunks(f, x, y, z, m);
    } else if constexpr (std::is_same_v<F, ops::detail::PowRsqrt>) {
      if (!power_rsqrt_simd(x, z, m))
        for (std::int64_t j = 0; j < m; ++j) z[j] = f(x[j], y[j]);
    } else if constexpr (kChunked<F, C>) {
      apply_chunks(f, x, y, z, m);
    } else {
      for (std::int64_t j = 0; j < m; ++j) z[j] = f(x[j], y[j]);
    }
    st(z, m, r.out + i0 * r.so * wo, r.so);
  }
}

// ---- the plan's rows -----------------------------------------------------------------------

/// Calls row(Row) for the plan's elements [begin, end) in row-major order, row by row (a row: the
/// innermost dimension at each index of the others; the first and last may be partial), the
/// offsets kept by an odometer started at begin's row.
template <class RowFn>
void for_rows_in(const CallTypes& t, const DensePlan& plan, std::int64_t begin, std::int64_t end,
                 RowFn&& row) {
  const BroadcastPlan& p = plan.plan;
  const int inner = p.rank() - 1;
  const std::int64_t wo = static_cast<std::int64_t>(dtype_size(t.out));
  const std::int64_t wa = t.a_scalar ? 0 : static_cast<std::int64_t>(dtype_size(t.a));
  const std::int64_t wb = t.b_scalar ? 0 : static_cast<std::int64_t>(dtype_size(t.b));
  const std::int64_t n = p.shape[inner];
  Row r;
  r.so = p.strides[0][inner];
  r.sa = t.a_scalar ? 0 : p.strides[1][inner];
  r.sb = t.b_scalar ? 0 : p.strides[2][inner];
  // begin's row as coordinates of the outer dimensions, and their offsets
  Dims coord = Dims::of_rank(inner, 0);
  std::int64_t off[3] = {0, 0, 0};
  for (std::int64_t k = begin / n, d = inner - 1; d >= 0; --d) {
    coord[d] = k % p.shape[d];
    k /= p.shape[d];
    for (int j = 0; j < 3; ++j) off[j] += coord[d] * p.strides[j][d];
  }
  for (std::int64_t at = begin; at < end;) {
    const std::int64_t c = at % n, m = std::min(n - c, end - at);  // row's first element, count
    r.n = m;
    r.out = static_cast<std::byte*>(plan.out) + (off[0] + c * r.so) * wo;
    r.a = static_cast<const std::byte*>(plan.a) + (off[1] + c * r.sa) * wa;  // a scalar's: never read
    r.b = static_cast<const std::byte*>(plan.b) + (off[2] + c * r.sb) * wb;
    row(r);
    at += m;
    for (int d = inner - 1; d >= 0; --d) {
      for (int j = 0; j < 3; ++j) off[j] += p.strides[j][d];
      if (++coord[d] < p.shape[d]) break;
      for (int j = 0; j < 3; ++j) off[j] -= p.strides[j][d] * p.shape[d];
      coord[d] = 0;
    }
  }
}

/// Calls row(Row) for every element of the plan, row by row: in parts of at least
/// kElementsPerPart consecutive elements on the CPU backend's threads (src/thread_pool.hpp),
/// each part its own rows. Element-wise results do not depend on the split.
template <class RowFn>
void for_each_row(const CallTypes& t, const DensePlan& plan, RowFn&& row) {
  const std::int64_t numel = plan.plan.numel();
  const int parts = parts_for(numel);
  if (parts == 1) return for_rows_in(t, plan, 0, numel, row);
  const std::int64_t base = numel / parts, extra = numel % parts;  // the first `extra` take one more
  const auto start = [&](std::int64_t i) { return base * i + std::min(i, extra); };
  run_parts(parts, [&](int i) { for_rows_in(t, plan, start(i), start(i + 1), row); });
}

/// The storage dtype of a compute type C where it has one of its own (nothing for ExactInt).
template <class C>
constexpr bool kHasDType = !std::is_same_v<C, ExactInt>;

/// The call by functor f in arithmetic type C: typed rows where every loaded dtype is C's own
/// (no 16-bit float: C is then float, stored otherwise), out is the result's and f takes no
/// chunks; chunked rows otherwise.
template <class F, class C>
void run_functor(const F& f, const CallTypes& t, const DensePlan& plan) {
  using R = decltype(f(C{}, C{}));
  const C a0 = scalar_value<C>(t.a_value), b0 = scalar_value<C>(t.b_value);
  const DType c = t.types.compute;
  constexpr bool pow = std::is_same_v<F, ops::Pow> && std::is_same_v<C, float>;
  constexpr bool pow_int = std::is_same_v<F, ops::detail::PowSmallInt>;
  constexpr bool pow_rsqrt = std::is_same_v<F, ops::detail::PowRsqrt>;
  // (PowRsqrt's f32 rows: the SIMD path below, not typed_row's loop, which the compiler does
  // not vectorize)
  const bool own = kHasDType<C> && !kChunked<F, C> && !pow_rsqrt && c != DType::f16 &&
                   c != DType::bf16 && (t.a_scalar || t.a == c) && (t.b_scalar || t.b == c) &&
                   t.out == t.types.result &&
                   (std::is_same_v<R, C> ? t.out == c : t.out == DType::b8);
  if (own) {
    for_each_row(t, plan,
                 [&](const Row& r) { typed_row<F, C, R>(f, r, t.a_scalar, t.b_scalar, a0, b0); });
    return;
  }
  const Loader<C> la = t.a_scalar ? nullptr : loader<C>(t.a);
  const Loader<C> lb = t.b_scalar ? nullptr : loader<C>(t.b);
  const Storer<R> st = storer<R>(t.types.result, t.out);
  // f32 power over stride-1 f32 rows: the SIMD paths (cpu_power.cpp) from a and b straight into
  // out, which they store canonical (through the chunk's buffers: x ** 3 2.2 ns an element a
  // thread, ~1 of it the buffers' copies); any other row through the chunks.
  if constexpr (pow || pow_int || pow_rsqrt) {
    const bool f32 = !t.a_scalar && !t.a_round && t.a == DType::f32 && t.out == DType::f32 &&
                     t.types.result == DType::f32 &&
                     (!pow || t.b_scalar || (!t.b_round && t.b == DType::f32));
    if (f32) {
      for_each_row(t, plan, [&](const Row& r) {
        float* out = reinterpret_cast<float*>(r.out);
        const float* a = reinterpret_cast<const float*>(r.a);
        // (a scalar exponent, or one element held along the row: every exponent y0)
        const bool held = t.b_scalar || r.sb == 0;
        const bool rows = r.so == 1 && r.sa == 1 && (!pow || r.sb == 1 || held);
        if (rows) {
          if constexpr (pow_int) {
            if (power_int_simd(f, a, out, r.n)) return;
          } else if constexpr (pow_rsqrt) {
            if (power_rsqrt_simd(a, out, r.n)) return;
          } else {
            const auto* b = reinterpret_cast<const float*>(r.b);
            const float y0 = t.b_scalar ? b0 : held ? *b : 0.0f;
            if (power_f32_simd(a, held ? nullptr : b, y0, out, r.n)) return;
          }
        }
        chunked_row<F, C>(f, t, r, la, lb, st, a0, b0);
      });
      return;
    }
  }
  for_each_row(t, plan, [&](const Row& r) { chunked_row<F, C>(f, t, r, la, lb, st, a0, b0); });
}

}  // namespace

void run_cpu(const CallTypes& t, const DensePlan& plan) {
  if (plan.numel == 0) return;
  // a scalar exponent's own power functor, as the GPU's (compute.hpp)
  if (with_scalar_power(t, [&](auto f) { run_functor<decltype(f), float>(f, t, plan); })) return;
  with_call_compute(t, [&](auto tag) {
    using C = typename decltype(tag)::type;
    with_op(t.op, [&](auto f) {
      using F = decltype(f);
      if constexpr (kComputes<F, C>) {
        run_functor<F, C>(f, t, plan);
      } else {
        EWISE_EXPECTS(false, "internal: ", op_name(t.op), " does not compute in ",
                      dtype_name(t.types.compute));
      }
    });
  });
}

}  // namespace ewise::detail
