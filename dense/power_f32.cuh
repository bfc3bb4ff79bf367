// dense/power_f32.cuh — f32 ** f32 into f32 over contiguous, 16-byte aligned operands: the
// converting kernel's fast path for its most common power call. The flat converting kernel's
// steps that serve every dtype (loads by width, conversions and packing switched on the dtypes)
// took x ** y to 1.25 times this kernel's time on an H200, where the series itself is the work.
// Included by convert_division.cu.
#pragma once

#include <cstdint>

#include "convert.cuh"

namespace ewise::detail {

struct PowerF32Args {
  const float* a = nullptr;
  const float* b = nullptr;  ///< the exponents (held: their one element; null: b_value)
  float* out = nullptr;
  std::uint64_t n = 0;
  float b_value = 0;  ///< a scalar exponent
};

/// out = a ** b: persistent blocks whose warps stride over tiles of 32 V float4 of out, each
/// lane's V float4 32 apart (every load and store of a warp contiguous); the series' tables in
/// shared memory; refused elements after their tile (apply_chunk); NaN results stored
/// canonical; the last n % (128 V) elements one a thread. V = 2 for a tensor exponent, 1 for a
/// held one (H200 test kernel, 2^26 floats: x ** y 0.204 ms at V = 2 against 0.213 at 1,
/// x ** 0.7 0.178 at 1 against 0.194 at 2). Held: b is p.b's one element or p.b_value.
template <bool Held>
__global__ void __launch_bounds__(128, 8) power_f32_kernel(PowerF32Args p) {
  constexpr int V = Held ? 1 : 2;
  __shared__ ops::detail::PowTables staged;
  stage_pow_tables(staged);
  const PowStagedTables f{&staged};
  const float b0 = !Held ? 0.0f : p.b == nullptr ? p.b_value : p.b[0];
  const std::uint64_t tid = global_thread<std::uint64_t>();
  const std::uint64_t nthreads = grid_threads<std::uint64_t>();
  const std::uint64_t lane = threadIdx.x % 32, tiles = p.n / (128 * V);
  const auto* a4 = reinterpret_cast<const float4*>(p.a);
  const auto* b4 = reinterpret_cast<const float4*>(p.b);
  auto* out4 = reinterpret_cast<float4*>(p.out);
  for (std::uint64_t tile = tid / 32; tile < tiles; tile += nthreads / 32) {
    float x[4 * V], y[4 * V], r[4 * V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::uint64_t i = (tile * V + v) * 32 + lane;
      const float4 xa = a4[i];
      x[4 * v] = xa.x, x[4 * v + 1] = xa.y, x[4 * v + 2] = xa.z, x[4 * v + 3] = xa.w;
      const float4 yb = Held ? make_float4(b0, b0, b0, b0) : b4[i];
      y[4 * v] = yb.x, y[4 * v + 1] = yb.y, y[4 * v + 2] = yb.z, y[4 * v + 3] = yb.w;
    }
    apply_chunk(f, x, y, r);
#pragma unroll
    for (int e = 0; e < 4 * V; ++e) r[e] = canonical_nan(r[e]);  // (ops.hpp: NaN)
#pragma unroll
    for (int v = 0; v < V; ++v)
      out4[(tile * V + v) * 32 + lane] =
          make_float4(r[4 * v], r[4 * v + 1], r[4 * v + 2], r[4 * v + 3]);
  }
  for (std::uint64_t i = tiles * 128 * V + tid; i < p.n; i += nthreads)
    p.out[i] = canonical_nan(f(p.a[i], Held ? b0 : p.b[i]));
}

/// Runs the call by power_f32_kernel, one wave of resident blocks, where it is one the kernel
/// takes: power in the f32 compute type with an f32 result, a an f32 tensor, b an f32 tensor or
/// scalar, out f32, none rounded; a rank-1 plan with stride 1 for out and a, 1 or 0 for b; a,
/// out and a tensor b at 16-byte boundaries. Returns whether it ran it.
inline bool run_power_f32(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  const BroadcastPlan& P = plan.plan;
  const auto aligned = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
  };
  const bool held = t.b_scalar || (P.rank() == 1 && P.strides[2][0] == 0);
  if (!(t.op == BinaryOp::power && t.types.compute == DType::f32 &&
        t.types.result == DType::f32 && t.out == DType::f32 && t.a == DType::f32 &&
        !t.a_scalar && !t.a_round && !t.b_round && (t.b_scalar || t.b == DType::f32) &&
        P.rank() == 1 && P.strides[0][0] == 1 && P.strides[1][0] == 1 &&
        (held || P.strides[2][0] == 1) && aligned(plan.out) && aligned(plan.a) &&
        (held || aligned(plan.b))))
    return false;
  PowerF32Args p;
  p.a = static_cast<const float*>(plan.a);
  p.out = static_cast<float*>(plan.out);
  p.n = static_cast<std::uint64_t>(plan.numel);
  p.b = t.b_scalar ? nullptr : static_cast<const float*>(plan.b);
  p.b_value = scalar_value<float>(t.b_value);
  const auto run = [&](auto kernel, int v) {  // v: V
    GridPlan grid = plan.grid;
    grid.covers_work = false;
    grid.waves = 1;
    grid.need = std::max<std::int64_t>((plan.numel + 128 * 4 * v - 1) / (128 * 4 * v), 1);
    launch("power f32", kernel, grid_blocks(kernel, grid, 128), 128, 0, stream, p);
  };
  if (held) run(power_f32_kernel<true>, 1);
  else run(power_f32_kernel<false>, 2);
  return true;
}

}  // namespace ewise::detail
