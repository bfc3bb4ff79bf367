// ewise/detail/dense/vectorized.cuh — the vectorized kernel: rank-1 plans, output stride 1, each
// input stride 1 or 0 (same shape or scalar). 16-byte loads and stores, a scalar head up to the
// output's first 16-byte boundary and a scalar tail. Planned by plan_vectorized.
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

struct VectorizedArgs {
  std::int64_t n = 0;        ///< elements
  std::int64_t head = 0;     ///< leading scalar elements (out + head is 16-byte aligned)
  std::int64_t vectors = 0;  ///< 16-byte vectors after the head; the rest is a scalar tail
  bool a_full = true;        ///< a has stride 1 (else 0: one scalar)
  bool b_full = true;
};

template <class T, class F>
__global__ void __launch_bounds__(kMaxThreads)
    vectorized_kernel(F f, VectorizedArgs p, T* out, const T* a, const T* b) {
  constexpr int V = kVectorBytes / sizeof(T);
  using P = Pack<T, V>;
  const std::int64_t tid = global_thread<std::int64_t>(), nthreads = grid_threads<std::int64_t>();
  const T a0 = a[0], b0 = b[0];  // the values of scalar operands
  const auto scalar = [&](std::int64_t i) {
    out[i] = apply(f, p.a_full ? a[i] : a0, p.b_full ? b[i] : b0);
  };
  P a0v, b0v;  // scalar operands as vectors
#pragma unroll
  for (int e = 0; e < V; ++e) {
    a0v.v[e] = a0;
    b0v.v[e] = b0;
  }
  for (std::int64_t i = tid; i < p.head; i += nthreads) scalar(i);
  P* vout = reinterpret_cast<P*>(out + p.head);
  const P* va = reinterpret_cast<const P*>(a + p.head);
  const P* vb = reinterpret_cast<const P*>(b + p.head);
  // Each warp takes chunks of 32*U consecutive vectors (U per lane, 32 apart: every access
  // coalesced, a warp's accesses within 512*U contiguous bytes), all loaded before any store.
  constexpr int U = vector_unroll(sizeof(T));
  const std::int64_t lane = threadIdx.x % 32;
  const std::int64_t chunk_step = nthreads * U;  // nthreads is a multiple of 32
  for (std::int64_t v0 = (tid - lane) * U + lane; v0 < p.vectors; v0 += chunk_step) {
    P x[U], y[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t w = v0 + u * 32;
      if (w < p.vectors) {
        x[u] = p.a_full ? va[w] : a0v;
        y[u] = p.b_full ? vb[w] : b0v;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t w = v0 + u * 32;
      if (w < p.vectors) vout[w] = apply_pack(f, x[u], y[u]);
    }
  }
  for (std::int64_t i = p.head + p.vectors * V + tid; i < p.n; i += nthreads) scalar(i);
}

template <class T, class F>
void launch_vectorized(const F& f, const DensePlan& plan, cudaStream_t stream) {
  const VectorizedPlan& v = plan.vectorized;
  VectorizedArgs p;
  p.n = plan.numel;
  p.head = v.head;
  p.vectors = v.vectors;
  p.a_full = v.a_full;
  p.b_full = v.b_full;
  const auto kernel = vectorized_kernel<T, F>;
  launch("vectorized", kernel, grid_blocks(kernel, plan.grid, plan.threads), plan.threads, 0,
         stream, f, p, static_cast<T*>(plan.out), static_cast<const T*>(plan.a),
         static_cast<const T*>(plan.b));
}

}  // namespace ewise::detail
