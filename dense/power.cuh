// dense/power.cuh — power over contiguous float operands (f32, f16, bf16): the converting
// kernel's fast path for its power calls of one dtype (a, b and out alike) and of mixed ones
// with an f32 result (bf16 ** f32, f16 ** bf16, f32 ** f16; a 16-bit a by an f32 exponent held:
// a scalar, a 0-d tensor). The flat converting kernel's steps that serve every dtype (loads by
// width, conversions and packing switched on the dtypes, a grid of one tile a warp) took
// x ** y to 1.25 times this kernel's time on an H200 (the same series), where the power itself
// is the work; bf16 ** f32 ran there at 1.26 times f32 ** f32's time here (0.2576 ms against
// 0.2042, 2^26 elements). Included by convert_division.cu.
#pragma once

#include <cstdint>

#include "convert.cuh"

namespace ewise::detail {

/// A power call's operands: a of storage type TA, out of TO, b a tensor of TB, its one element
/// (a held exponent) or a scalar (b null: b_value). TO is the widest of the loaded types (the
/// instantiations: one type, or an f32 out).
template <class TA, class TB, class TO>
struct PowerArgs {
  const TA* a = nullptr;
  const TB* b = nullptr;
  TO* out = nullptr;
  std::uint64_t n = 0;
  std::uint64_t head = 0;  ///< elements before out's first 16-byte boundary, one a thread
  float b_value = 0;
};

/// 16-byte vectors of out's type TO a lane takes per tile: two of f32 (8 elements), one of a
/// 16-bit float (at two bf16 ** bf16 spilled); each operand the same elements, in pieces of
/// 16 / sizeof(TO) of them (a 16-bit operand's with an f32 out: 8 bytes). H200 test kernel,
/// 2^26 floats: x ** 0.7 0.180 ms at two against 0.186 at one, x ** 3 0.144 against 0.156
/// (with the next tile's loads early).
template <class TO>
inline constexpr int kPowerVectors = sizeof(TO) == 4 ? 2 : 1;

/// Waves of resident blocks the grid holds: four for an f32 out by a scalar exponent's
/// functor, eight otherwise. H200 test kernels, 2^26 elements: f32 ** -2 0.137 ms at four
/// against 0.146 at one; bf16 ** 0.5 0.068 at eight against 0.079 at one; f32 ** f32 (ops::Pow)
/// 0.205 at eight against 0.212 at one; bf16 ** bf16 (PowNarrow) 0.128 at eight against 0.130
/// at four. Mixed dtypes (an f32 out) take f32's values, not measured for them.
template <class TO, class F>
inline constexpr int kPowerWaves = sizeof(TO) == 4 && !std::is_same_v<F, ops::Pow> ? 4 : 8;

/// Whether a lane loads its next tile before it computes this one: for every functor but
/// ops::Pow, and for ops::Pow into an f32 out by a held exponent. x ** 3 0.144 ms against
/// 0.146, x ** -2 0.155 against 0.168, f16 ** -2 0.087 against 0.096, f32 ** 0.7 0.169 against
/// 0.176; ops::Pow otherwise slower with it: f32 ** f32 0.258 against 0.205 (its two operands'
/// next tiles held in registers across the series), bf16 ** bf16 0.197 against 0.189 (H200
/// test kernels). Mixed dtypes (an f32 out) take f32's choice, not measured for them.
template <class TO, bool Held, class F>
inline constexpr bool kPowerPrefetch =
    !std::is_same_v<F, ops::Pow> || (Held && sizeof(TO) == 4);

/// Stores w at p, 16-byte aligned in global memory, as one 16-byte store. Through a uint4
/// pointer the compiler split the 16-bit kernels' stores into four of 4 bytes (each warp's
/// touching four times the sectors: bf16 ** 3 ran at 0.159 ms against 0.070 for a copy).
__device__ __forceinline__ void store_vector(void* p, const std::uint32_t (&w)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)),
               "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
               : "memory");
}

/// out = f(a, b) for the elements of p: the head one a thread; tiles of 32 lanes' V vectors of
/// out, each lane's V vectors 32 apart, and of each operand the same elements (G a piece: one
/// load of G * sizeof its type; every load and store of a warp contiguous), a lane's elements
/// computed as one chunk with f's refused elements after it (apply_chunk) and stored as
/// cast_to<TO> makes them (rounded once, NaN canonical); the tail one a thread. Persistent:
/// warps stride over the tiles, loading the next one first where Prefetch.
template <class TA, class TB, class TO, bool Held, bool Prefetch, class F>
__device__ __forceinline__ void power_tiles(const F& f, const PowerArgs<TA, TB, TO>& p) {
  constexpr int G = 16 / sizeof(TO), V = kPowerVectors<TO>, E = G * V;
  static_assert(sizeof(TA) <= sizeof(TO) && (Held || sizeof(TB) <= sizeof(TO)),
                "out's type is the widest loaded");
  const float b0 = !Held ? 0.0f : p.b == nullptr ? p.b_value : to_compute(p.b[0]);
  const std::uint64_t tid = global_thread<std::uint64_t>();
  const std::uint64_t nthreads = grid_threads<std::uint64_t>();
  const auto one = [&](std::uint64_t i) {
    p.out[i] = cast_to<TO>(f(to_compute(p.a[i]), Held ? b0 : to_compute(p.b[i])));
  };
  for (std::uint64_t i = tid; i < p.head; i += nthreads) one(i);
  const std::uint64_t lane = threadIdx.x % 32, tiles = (p.n - p.head) / (32 * E);
  const std::uint64_t step = nthreads / 32;
  const TA* a = p.a + p.head;
  const TB* b = Held ? nullptr : p.b + p.head;
  TO* out = p.out + p.head;
  const auto load = [&](std::uint64_t tile, RawGroup (&ra)[V], RawGroup (&rb)[V]) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::uint64_t at = ((tile * V + v) * 32 + lane) * G;
      load_bytes<G * sizeof(TA)>(a + at, ra[v]);
      if constexpr (!Held) load_bytes<G * sizeof(TB)>(b + at, rb[v]);
    }
  };
  RawGroup next_a[V], next_b[V];
  std::uint64_t tile = tid / 32;
  if (Prefetch && tile < tiles) load(tile, next_a, next_b);
  for (; tile < tiles; tile += step) {
    RawGroup ra[V], rb[V];
    if (Prefetch) {
#pragma unroll
      for (int v = 0; v < V; ++v) ra[v] = next_a[v], rb[v] = next_b[v];
      if (tile + step < tiles) load(tile + step, next_a, next_b);
    } else {
      load(tile, ra, rb);
    }
    float x[E], y[E], r[E];
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int e = 0; e < G; ++e) {
        x[v * G + e] = to_compute(group_element<TA>(ra[v], e));
        y[v * G + e] = Held ? b0 : to_compute(group_element<TB>(rb[v], e));
      }
    apply_chunk(f, x, y, r);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      std::uint32_t w[4] = {};
#pragma unroll
      for (int e = 0; e < G; ++e)
        w[e * sizeof(TO) / 4] |= static_cast<std::uint32_t>(to_bits(cast_to<TO>(r[v * G + e])))
                                 << (8 * (e * sizeof(TO) % 4));
      store_vector(out + ((tile * V + v) * 32 + lane) * G, w);
    }
  }
  for (std::uint64_t i = p.head + tiles * 32 * E + tid; i < p.n; i += nthreads) one(i);
}

/// a ** b (ops::Pow) stored as a 16-bit float keeping all but the low D of float's 23 mantissa
/// bits (bf16: 16; f16: 13, in its normal range): Pow's float rounded to it, from the hardware's
/// log2 and exp2 approximations where that is certain. a = m 2^e with m in [2^-0.5, 2^0.5);
/// b e = be + be_lo exactly (fma); n = rint(t), t = b log2(a); f = b log2(m) + (be - n) + be_lo,
/// about t - n; p = 2^f 2^n. f's error: log2's on m, within 2^-22 (CUDA's documented __log2f
/// bound on [0.5, 2]) times |b|, and the roundings of be - n and of f's two sums. p's relative
/// error is then within ln 2 err(f) + 2^-22 (ex2's on [-1, 1]), at most 0.7 err(f) 2^24 + 4 of
/// p's ulps, and Pow's float half an ulp more, so both round alike where p's dropped bits lie
/// farther than 0.75 err(f) 2^24 + 6 from the format's midpoint (a binade's edge is no
/// midpoint). The rest take Pow (its series from the tables the kernel staged in shared memory:
/// a refused element's warp waits for it): non-positive, subnormal, infinite and NaN bases,
/// results outside the format's normal range, and those near its rounding midpoints (one
/// element in 2^12 to 2^9 for exponents of a few units; more for large ones, whose log2 error
/// b scales; by the band above, not measured). Checked against Pow over every pair of 16-bit
/// values of each format and every base with random f32 exponents on an H200; bf16 ** bf16
/// 0.128 ms against the series' 0.189 (test kernel, 2^26 elements; docs/benchmarks.md).
template <int D>
struct PowNarrow {
  static_assert(D == 16 || D == 13, "bf16 or f16");
  const ops::detail::PowTables* tables = nullptr;  ///< staged by power_kernel
  __device__ __forceinline__ bool fast(float a, float b, float& r) const {
    const std::uint32_t ua = __float_as_uint(a);
    const std::int32_t e = static_cast<std::int32_t>(ua - 0x3F3504F3u) >> 23;  // 2^-0.5's bits
    const float m = __uint_as_float(ua - (static_cast<std::uint32_t>(e) << 23));
    float l, q;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(m));
    // Integers to and from float by the 1.5 * 2^23 bias, not conversion instructions (which
    // share the MUFU pipe with lg2 and ex2).
    constexpr float kBias = 0x1.8p23f;
    const float fe = __uint_as_float(0x4B400000u + static_cast<std::uint32_t>(e)) - kBias;
    const float be = b * fe, be_lo = fmaf(b, fe, -be);  // b e = be + be_lo exactly
    const float biased = fminf(fmaxf(fmaf(b, l, be), -256.0f), 256.0f) + kBias;  // NaN: -256
    const float n = biased - kBias;  // rint(t), ties to even
    const float d = be - n, f = fmaf(b, l, d) + be_lo;
    const float err = fabsf(b) * 0x1p-22f + (fabsf(d) + 2.0f * fabsf(f)) * 0x1p-24f;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(f));
    const std::uint32_t up = __float_as_uint(q) + ((__float_as_uint(biased) - 0x4B400000u) << 23);
    r = __uint_as_float(up);
    const float low = __uint_as_float(0x4B000000u | (up & ((1u << D) - 1))) - 0x1p23f;
    const bool far = fabsf(low - static_cast<float>(1u << (D - 1))) > fmaf(err, 0x1.8p23f, 6.0f);
    const bool positive_normal = ua - 0x00800000u < 0x7F000000u;
    // p's biased exponent (9 bits with the sign: an n that wrapped lies outside) within the
    // format's normal range: bf16 a normal float, f16 [2^-14, 2^16) (65520 and up round to inf)
    constexpr std::uint32_t kLow = D == 16 ? 1 : 113, kHigh = D == 16 ? 254 : 142;
    const bool in_range = (up >> 23) - kLow <= kHigh - kLow;
    return far & positive_normal & in_range;
  }
  __device__ float operator()(float a, float b) const {
    float r;
    return ops::detail::pow_f32_fast(a, b, r, *tables) ? r : ops::Pow{}(a, b);
  }
};
template <class F>
inline constexpr bool kNarrowPow = false;
template <int D>
inline constexpr bool kNarrowPow<PowNarrow<D>> = true;

/// The power kernel: power_tiles, with ops::Pow's tables (kStagedTables) first copied to shared
/// memory by the whole block, for ops::Pow and PowNarrow's refused elements.
template <class TA, class TB, class TO, bool Held, class F>
__global__ void __launch_bounds__(128, 8) power_kernel(F f, PowerArgs<TA, TB, TO> p) {
  constexpr bool kPrefetch = kPowerPrefetch<TO, Held, F>;
  if constexpr (kStagedTables<F, float>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    power_tiles<TA, TB, TO, Held, kPrefetch>(PowStagedTables{&staged}, p);
  } else if constexpr (kNarrowPow<F>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    f.tables = &staged;
    power_tiles<TA, TB, TO, Held, kPrefetch>(f, p);
  } else {
    power_tiles<TA, TB, TO, Held, kPrefetch>(f, p);
  }
}

/// The functor power_kernel runs for f with results stored as TO (the call's result type): for
/// a 16-bit TO, PowRsqrtNarrow for PowRsqrt and PowNarrow for ops::Pow (the hardware's
/// approximations where they round alike); f itself otherwise.
template <class TO, class F>
auto stored_as(const F& f) {
  constexpr int kDropped = std::is_same_v<TO, __half> ? 13 : 16;
  if constexpr (std::is_same_v<F, ops::detail::PowRsqrt> && sizeof(TO) == 2)
    return ops::detail::PowRsqrtNarrow<kDropped>{};
  else if constexpr (std::is_same_v<F, ops::Pow> && sizeof(TO) == 2)
    return PowNarrow<kDropped>{};
  else
    return f;
}

/// Whether power_kernel is built for with_scalar_power's or ops::Pow's functor F (before
/// stored_as) on a of TA, b of TB and out of TO, with a held exponent (a scalar, whose TB is the
/// compute type, or a tensor's one element) or a tensor of them. One type (TA = TB = TO): a held
/// exponent by every functor, a tensor by ops::Pow. An f32 out of mixed types: a tensor of a
/// type other than a's by ops::Pow; an f32 exponent held over a 16-bit a by every functor. None
/// for the short functors into an f32 out (PowSquare, PowSqrt, PowRsqrt: the converting kernel
/// runs them, convert_division.cu).
template <class TA, class TB, class TO, bool Held, class F>
inline constexpr bool kPowerKernel =
    !(std::is_same_v<TO, float> && (std::is_same_v<F, ops::detail::PowSquare> ||
                                    std::is_same_v<F, ops::detail::PowSqrt> ||
                                    std::is_same_v<F, ops::detail::PowRsqrt>)) &&
    (Held || std::is_same_v<F, ops::Pow>) &&
    ((std::is_same_v<TA, TB> && std::is_same_v<TB, TO>) ||
     (std::is_same_v<TO, float> &&
      (Held ? std::is_same_v<TB, float> && sizeof(TA) == 2 : !std::is_same_v<TA, TB>)));

/// Calls g(TypeTag<T>{}) with the storage type T of a float dtype d (f32, f16, bf16) and
/// returns what it returns; false for another dtype.
template <class G>
bool with_power_storage(DType d, G&& g) {
  switch (d) {
    case DType::f32: return g(TypeTag<float>{});
    case DType::f16: return g(TypeTag<__half>{});
    case DType::bf16: return g(TypeTag<__nv_bfloat16>{});
    default: return false;
  }
}

/// Runs the power call by power_kernel with functor f (ops::Pow, or pow_f32.hpp's functors for
/// a scalar exponent, as stored_as makes them) on kPowerWaves waves of resident blocks, where it
/// is one the kernel takes: out of the call's result dtype; a a tensor and b a tensor or a
/// scalar, of f32, f16 or bf16, neither rounded to the compute type; one dtype for a, b and
/// out, or the compute type f32 (mixed dtypes, kPowerKernel's); a rank-1 plan with stride 1 for
/// out and a, 1 or 0 for b; after out's head (its elements before a 16-byte boundary) a and a
/// tensor b at their pieces' boundaries (16 bytes; 8 for a 16-bit operand with an f32 out).
/// Returns whether it ran it.
template <class F>
bool run_power(const F& f, const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  const BroadcastPlan& P = plan.plan;
  const bool held = t.b_scalar || (P.rank() == 1 && P.strides[2][0] == 0);
  if (!(t.types.result == t.out && !t.a_scalar && !t.a_round && !t.b_round &&
        (t.types.compute == DType::f32 || (t.a == t.out && t.b == t.out)) && P.rank() == 1 &&
        P.strides[0][0] == 1 && P.strides[1][0] == 1 && (held || P.strides[2][0] == 1)))
    return false;
  const auto address = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); };
  const std::uint64_t head = (16 - address(plan.out) % 16) % 16 / dtype_size(t.out);
  const auto go = [&](auto ta, auto tb, auto to) {
    using TA = typename decltype(ta)::type;
    using TB = typename decltype(tb)::type;
    using TO = typename decltype(to)::type;
    constexpr bool kHeld = kPowerKernel<TA, TB, TO, true, F>;
    constexpr bool kTensor = kPowerKernel<TA, TB, TO, false, F>;
    if constexpr (kHeld || kTensor) {
      // each operand's pieces of G elements aligned after the head (out's by the head itself)
      constexpr std::uint64_t G = 16 / sizeof(TO);
      const auto at_piece = [&](const void* ptr, std::uint64_t size) {
        return (address(ptr) + head * size) % (G * size) == 0;
      };
      if (!(held ? kHeld : kTensor) || !at_piece(plan.a, sizeof(TA)) ||
          (!held && !at_piece(plan.b, sizeof(TB))))
        return false;
      // The functor's type, not const: the kernel's traits (kPowerWaves, kPowerPrefetch,
      // kStagedTables) compare it with ops::Pow.
      using H = decltype(stored_as<TO>(f));
      const H h = stored_as<TO>(f);
      PowerArgs<TA, TB, TO> p;
      p.a = static_cast<const TA*>(plan.a);
      p.b = t.b_scalar ? nullptr : static_cast<const TB*>(plan.b);
      p.out = static_cast<TO*>(plan.out);
      p.n = static_cast<std::uint64_t>(plan.numel);
      p.head = std::min<std::uint64_t>(head, p.n);
      p.b_value = scalar_value<float>(t.b_value);
      const auto run = [&](auto kernel) {
        constexpr std::int64_t kPerThread = G * kPowerVectors<TO>;
        GridPlan grid = plan.grid;
        grid.covers_work = false;
        grid.waves = kPowerWaves<TO, H>;
        grid.need = std::max<std::int64_t>(
            (plan.numel + 128 * kPerThread - 1) / (128 * kPerThread), 1);
        launch("power", kernel, grid_blocks(kernel, grid, 128), 128, 0, stream, h, p);
      };
      if (held) {
        if constexpr (kHeld) run(power_kernel<TA, TB, TO, true, H>);
      } else {
        if constexpr (kTensor) run(power_kernel<TA, TB, TO, false, H>);
      }
      return true;
    } else {
      return false;
    }
  };
  return with_power_storage(t.a, [&](auto ta) {
    return with_power_storage(t.b, [&](auto tb) {
      return with_power_storage(t.out, [&](auto to) { return go(ta, tb, to); });
    });
  });
}

}  // namespace ewise::detail
