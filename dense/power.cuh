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
/// bf16 ** 0.5 0.068 at eight against 0.079 at one; ops::Pow at eight against one: f32 ** f32
/// 0.205 against 0.212, bf16 ** bf16 0.189 against 0.211, bf16 ** 0.7 0.162 against 0.177.
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

/// The power kernel: power_tiles, with ops::Pow's tables (kStagedTables) first copied to shared
/// memory by the whole block.
template <class T, bool Held, class F>
__global__ void __launch_bounds__(128, 8) power_kernel(F f, PowerArgs<T> p) {
  if constexpr (kStagedTables<F, float>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    power_tiles<T, Held, kPowerPrefetch<T, Held, F>>(PowStagedTables{&staged}, p);
  } else {
    power_tiles<T, Held, kPowerPrefetch<T, Held, F>>(f, p);
  }
}

/// The functor power_kernel runs for f on storage type T: PowRsqrtNarrow for PowRsqrt with a
/// 16-bit result (the hardware's approximation where it rounds alike), f itself otherwise.
template <class T, class F>
auto stored_as(const F& f) {
  if constexpr (std::is_same_v<F, ops::detail::PowRsqrt> && sizeof(T) == 2)
    return ops::detail::PowRsqrtNarrow<std::is_same_v<T, __half> ? 13 : 16>{};
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
    if constexpr (std::is_same_v<G, ops::Pow>) {  // (the other functors' exponent is a scalar)
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
