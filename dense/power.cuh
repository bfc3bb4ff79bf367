// dense/power.cuh — power over contiguous operands of one float dtype (f32, f16 or bf16): the
// converting kernel's fast path for its power calls. The flat converting kernel's steps that
// serve every dtype (loads by width, conversions and packing switched on the dtypes, a grid of
// one tile a warp) took x ** y to 1.25 times this kernel's time on an H200 (the same series),
// where the power itself is the work. Included by convert_division.cu.
#pragma once

#include <cstdint>

#include "convert.cuh"

namespace ewise::detail {

/// A power call's operands: a and out of one storage type T, b a tensor of T, its one element
/// (a held exponent) or a scalar (b null: b_value).
template <class T>
struct PowerArgs {
  const T* a = nullptr;
  const T* b = nullptr;
  T* out = nullptr;
  std::uint64_t n = 0;
  std::uint64_t head = 0;  ///< elements before out's first 16-byte boundary, one a thread
  float b_value = 0;
};

/// 16-byte vectors of T a lane takes per operand and tile: two of f32 (8 elements), one of a
/// 16-bit float (at two bf16 ** bf16 spilled). H200 test kernel, 2^26 floats: x ** 0.7 0.180 ms
/// at two against 0.186 at one, x ** 3 0.144 against 0.156 (with the next tile's loads early).
template <class T>
inline constexpr int kPowerVectors = sizeof(T) == 4 ? 2 : 1;

/// Waves of resident blocks the grid holds: four for f32 by a scalar exponent's functor, eight
/// otherwise. H200 test kernels, 2^26 elements: f32 ** -2 0.137 ms at four against 0.146 at one;
/// bf16 ** 0.5 0.068 at eight against 0.079 at one; f32 ** f32 (ops::Pow) 0.205 at eight
/// against 0.212 at one; bf16 ** bf16 (PowNarrow) 0.128 at eight against 0.130 at four.
template <class T, class F>
inline constexpr int kPowerWaves = sizeof(T) == 4 && !std::is_same_v<F, ops::Pow> ? 4 : 8;

/// Whether a lane loads its next tile before it computes this one: for every functor but
/// ops::Pow, and for ops::Pow on f32 by a held exponent. x ** 3 0.144 ms against 0.146,
/// x ** -2 0.155 against 0.168, f16 ** -2 0.087 against 0.096, f32 ** 0.7 0.169 against 0.176;
/// ops::Pow otherwise slower with it: f32 ** f32 0.258 against 0.205 (its two operands' next
/// tiles held in registers across the series), bf16 ** bf16 0.197 against 0.189 (H200 test
/// kernels).
template <class T, bool Held, class F>
inline constexpr bool kPowerPrefetch = !std::is_same_v<F, ops::Pow> || (Held && sizeof(T) == 4);

/// Stores w at p, 16-byte aligned in global memory, as one 16-byte store. Through a uint4
/// pointer the compiler split the 16-bit kernels' stores into four of 4 bytes (each warp's
/// touching four times the sectors: bf16 ** 3 ran at 0.159 ms against 0.070 for a copy).
__device__ __forceinline__ void store_vector(void* p, const std::uint32_t (&w)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)),
               "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
               : "memory");
}

/// out = f(a, b) for the elements of p: the head one a thread; tiles of 32 lanes' V vectors,
/// each lane's V vectors 32 apart (every load and store of a warp contiguous), a lane's
/// elements computed as one chunk with f's refused elements after it (apply_chunk) and stored
/// as cast_to<T> makes them (rounded once, NaN canonical); the tail one a thread. Persistent:
/// warps stride over the tiles, loading the next one first where Prefetch.
template <class T, bool Held, bool Prefetch, class F>
__device__ __forceinline__ void power_tiles(const F& f, const PowerArgs<T>& p) {
  constexpr int G = 16 / sizeof(T), V = kPowerVectors<T>, E = G * V;
  const float b0 = !Held ? 0.0f : p.b == nullptr ? p.b_value : to_compute(p.b[0]);
  const std::uint64_t tid = global_thread<std::uint64_t>();
  const std::uint64_t nthreads = grid_threads<std::uint64_t>();
  const auto one = [&](std::uint64_t i) {
    p.out[i] = cast_to<T>(f(to_compute(p.a[i]), Held ? b0 : to_compute(p.b[i])));
  };
  for (std::uint64_t i = tid; i < p.head; i += nthreads) one(i);
  const std::uint64_t lane = threadIdx.x % 32, tiles = (p.n - p.head) / (32 * E);
  const std::uint64_t step = nthreads / 32;
  const T* a = p.a + p.head;
  const T* b = Held ? nullptr : p.b + p.head;
  T* out = p.out + p.head;
  const auto load = [&](std::uint64_t tile, RawGroup (&ra)[V], RawGroup (&rb)[V]) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::uint64_t at = ((tile * V + v) * 32 + lane) * G;
      load_bytes<16>(a + at, ra[v]);
      if (!Held) load_bytes<16>(b + at, rb[v]);
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
        x[v * G + e] = to_compute(group_element<T>(ra[v], e));
        y[v * G + e] = Held ? b0 : to_compute(group_element<T>(rb[v], e));
      }
    apply_chunk(f, x, y, r);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      std::uint32_t w[4] = {};
#pragma unroll
      for (int e = 0; e < G; ++e)
        w[e * sizeof(T) / 4] |= static_cast<std::uint32_t>(to_bits(cast_to<T>(r[v * G + e])))
                                << (8 * (e * sizeof(T) % 4));
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
template <class T, bool Held, class F>
__global__ void __launch_bounds__(128, 8) power_kernel(F f, PowerArgs<T> p) {
  constexpr bool kPrefetch = kPowerPrefetch<T, Held, F>;
  if constexpr (kStagedTables<F, float>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    power_tiles<T, Held, kPrefetch>(PowStagedTables{&staged}, p);
  } else if constexpr (kNarrowPow<F>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    f.tables = &staged;
    power_tiles<T, Held, kPrefetch>(f, p);
  } else {
    power_tiles<T, Held, kPrefetch>(f, p);
  }
}

/// The functor power_kernel runs for f on storage type T: for a 16-bit T, PowRsqrtNarrow for
/// PowRsqrt and PowNarrow for ops::Pow (the hardware's approximations where they round alike);
/// f itself otherwise.
template <class T, class F>
auto stored_as(const F& f) {
  constexpr int kDropped = std::is_same_v<T, __half> ? 13 : 16;
  if constexpr (std::is_same_v<F, ops::detail::PowRsqrt> && sizeof(T) == 2)
    return ops::detail::PowRsqrtNarrow<kDropped>{};
  else if constexpr (std::is_same_v<F, ops::Pow> && sizeof(T) == 2)
    return PowNarrow<kDropped>{};
  else
    return f;
}

/// Runs the power call by power_kernel with functor f (ops::Pow, or pow_f32.hpp's functors for
/// a scalar exponent, as stored_as makes them) on kPowerWaves waves of resident blocks, where it
/// is one the kernel takes: a tensor of f32, f16 or bf16, the call's result and out of a's dtype,
/// neither operand rounded to the compute type; b a tensor of a's dtype or a scalar; a rank-1
/// plan with stride 1 for out and a, 1 or 0 for b; a and a tensor b at out's offset within 16
/// bytes. Returns whether it ran it.
template <class F>
bool run_power(const F& f, const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  const BroadcastPlan& P = plan.plan;
  const bool held = t.b_scalar || (P.rank() == 1 && P.strides[2][0] == 0);
  const auto phase = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16; };
  if (!(t.types.result == t.a && t.out == t.a && !t.a_scalar && !t.a_round && !t.b_round &&
        (t.b_scalar || t.b == t.a) && P.rank() == 1 && P.strides[0][0] == 1 &&
        P.strides[1][0] == 1 && (held || P.strides[2][0] == 1) &&
        phase(plan.a) == phase(plan.out) && (held || phase(plan.b) == phase(plan.out))))
    return false;
  const auto go = [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The functor's type, not const: the kernel's traits (kPowerWaves, kPowerPrefetch,
    // kStagedTables) and the tensor exponent's test below compare it with ops::Pow.
    using G = decltype(stored_as<T>(f));
    const G g = stored_as<T>(f);
    PowerArgs<T> p;
    p.a = static_cast<const T*>(plan.a);
    p.b = t.b_scalar ? nullptr : static_cast<const T*>(plan.b);
    p.out = static_cast<T*>(plan.out);
    p.n = static_cast<std::uint64_t>(plan.numel);
    p.head = std::min<std::uint64_t>((16 - phase(plan.out)) % 16 / sizeof(T), p.n);
    p.b_value = scalar_value<float>(t.b_value);
    const auto run = [&](auto kernel, std::int64_t per_thread) {
      GridPlan grid = plan.grid;
      grid.covers_work = false;
      grid.waves = kPowerWaves<T, G>;
      grid.need =
          std::max<std::int64_t>((plan.numel + 128 * per_thread - 1) / (128 * per_thread), 1);
      launch("power", kernel, grid_blocks(kernel, grid, 128), 128, 0, stream, g, p);
    };
    constexpr int V = 16 / sizeof(T) * kPowerVectors<T>;
    if (held) {
      run(power_kernel<T, true, G>, V);
      return true;
    }
    if constexpr (std::is_same_v<G, ops::Pow> || kNarrowPow<G>) {  // (the others': a scalar)
      run(power_kernel<T, false, G>, V);
      return true;
    }
    return false;
  };
  switch (t.a) {
    case DType::f32: return go(TypeTag<float>{});
    case DType::f16: return go(TypeTag<__half>{});
    case DType::bf16: return go(TypeTag<__nv_bfloat16>{});
    default: return false;
  }
}

}  // namespace ewise::detail
