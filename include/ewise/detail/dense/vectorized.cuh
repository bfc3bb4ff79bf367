// ewise/detail/dense/vectorized.cuh — the vectorized kernel: any plan whose output is
// contiguous as a whole. The output is one flat range: a scalar head up to its first 16-byte
// boundary, 16-byte vectors, a scalar tail — once, whatever the rows. Each input is read as
// 16-byte vectors (laid out like the output), held in a register (a scalar), or gathered element
// by element through its strides (a broadcast along rows or columns, an outer product, an odd
// row width, a misaligned start). Planned by plan_vectorized.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

struct VectorizedArgs {
  std::int64_t n = 0;        ///< elements
  std::int64_t head = 0;     ///< leading scalar elements (out + head is 16-byte aligned)
  std::int64_t vectors = 0;  ///< 16-byte vectors after the head; the rest is a scalar tail
  /// Each input's VectorAccess as flags: read as vectors; else held, unless gathered. Plain
  /// flags keep the loop of kernels without a gathered input the same as a rank-1 kernel's
  /// (H100: comparing the enum in the loop cost the f32 scalar broadcast 5%).
  bool a_vector = true, b_vector = true;
  bool a_gather = false, b_gather = false;
};

/// The plan's dims (innermost first) for kernels that gather an input; nothing otherwise.
template <class Index, bool Gather>
struct GatherMap {
  Strided<Index> map;
};
template <class Index>
struct GatherMap<Index, false> {};

/// Elements i .. i + V - 1 of the gathered inputs into x and y. The first element's offsets come
/// from the divmod chain and the next ones step along the innermost dim. Rows of at least V
/// elements end at most once inside a vector: the chain runs once more, for the first element
/// of the next row, and each element picks its side without a branch (a per-element recompute
/// at the row end left about half of a warp's lanes idle: H100 Nsight Compute, 18 of 32 lanes
/// active on 7x7 planes). Shorter rows step element by element, the chain again at each end.
template <class T, int V, class Index>
EWISE_DEVICE void gather(const Strided<Index>& m, Index i, const VectorizedArgs& p, const T* a,
                         const T* b, Pack<T, V>& x, Pack<T, V>& y) {
  using Offset = typename Strided<Index>::Offset;
  Offset off[3];
  Index inner;
  m.offsets(i, off, inner);
  const Index n0 = m.extent[0].divisor;
  const Offset sa = m.stride[1][0], sb = m.stride[2][0];
  if (n0 >= static_cast<Index>(V)) {
    const auto left = static_cast<Offset>(n0 - inner);  // elements before the row's end, >= 1
    // Long rows: most vectors lie in one row, and stepping alone serves them; in short rows the
    // lanes that cross a row end would leave the others idle, so every lane takes both sides
    // (H100 bf16, outer product over 4097-wide rows: 11% less time than both sides always; the
    // short-row shapes in docs/benchmarks.md).
    if (n0 >= static_cast<Index>(kLongRow) && left >= V) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (p.a_gather) x.v[e] = a[off[1] + e * sa];
        if (p.b_gather) y.v[e] = b[off[2] + e * sb];
      }
      return;
    }
    Offset next[3];
    m.offsets(i + static_cast<Index>(left), next);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const bool here = e < left;
      if (p.a_gather) x.v[e] = a[here ? off[1] + e * sa : next[1] + (e - left) * sa];
      if (p.b_gather) y.v[e] = b[here ? off[2] + e * sb : next[2] + (e - left) * sb];
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (e > 0) {
      if (++inner == n0) {
        m.offsets(i + static_cast<Index>(e), off, inner);
      } else {
        off[1] += sa;
        off[2] += sb;
      }
    }
    if (p.a_gather) x.v[e] = a[off[1]];
    if (p.b_gather) y.v[e] = b[off[2]];
  }
}

template <class T, class F, class Index, bool Gather>
__global__ void __launch_bounds__(kMaxThreads)
    vectorized_kernel(F f, VectorizedArgs p, GatherMap<Index, Gather> g, T* out, const T* a,
                      const T* b) {
  constexpr int V = kVectorBytes / sizeof(T);
  using P = Pack<T, V>;
  const std::int64_t tid = global_thread<std::int64_t>(), nthreads = grid_threads<std::int64_t>();
  const T a0 = a[0], b0 = b[0];  // the values of scalar inputs
  // Element i alone: a vector input's offset is i (it is laid out like the output).
  const auto scalar = [&](std::int64_t i) {
    T x = p.a_vector ? a[i] : a0, y = p.b_vector ? b[i] : b0;
    if constexpr (Gather) {
      typename Strided<Index>::Offset off[3];
      g.map.offsets(static_cast<Index>(i), off);
      if (p.a_gather) x = a[off[1]];
      if (p.b_gather) y = b[off[2]];
    }
    out[i] = apply(f, x, y);
  };
  P a0v, b0v;  // scalar inputs as vectors
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
        x[u] = p.a_vector ? va[w] : a0v;
        y[u] = p.b_vector ? vb[w] : b0v;
        if constexpr (Gather) gather(g.map, static_cast<Index>(p.head + w * V), p, a, b, x[u], y[u]);
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
  p.a_vector = v.a == VectorAccess::vector;
  p.b_vector = v.b == VectorAccess::vector;
  p.a_gather = v.a == VectorAccess::gather;
  p.b_gather = v.b == VectorAccess::gather;
  const auto run = [&](auto index, auto gathers) {
    using Index = typename decltype(index)::type;
    constexpr bool Gather = decltype(gathers)::value;
    GatherMap<Index, Gather> g;
    if constexpr (Gather) {
      int dims[kMaxRank];
      for (int d = 0; d < plan.plan.rank(); ++d) dims[d] = d;
      g.map = make_strided<Index>(plan.plan, dims, plan.plan.rank());
    }
    const auto kernel = vectorized_kernel<T, F, Index, Gather>;
    launch("vectorized", kernel, grid_blocks(kernel, plan.grid, plan.threads), plan.threads, 0,
           stream, f, p, g, static_cast<T*>(plan.out), static_cast<const T*>(plan.a),
           static_cast<const T*>(plan.b));
  };
  if (!v.gathers()) return run(TypeTag<std::uint32_t>{}, std::false_type{});
  with_index(plan.wide, [&](auto index) { run(index, std::true_type{}); });
}

}  // namespace ewise::detail
