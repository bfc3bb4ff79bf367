// ewise/detail/dense/row_vectorized.cuh — the row_vectorized kernel: output inner stride 1, each
// input inner stride 1 or 0. 16-byte accesses along rows (element-wise where rows are not whole,
// aligned 16-byte vectors) while the other dims broadcast: bias add, column broadcast,
// per-channel scale, outer product, mixed N-D. Planned by plan_row_vectorized.
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

template <class Index>
struct RowArgs {
  /// Chunks of 32*U vectors (of V elements), one per warp and iteration. Runs: each row is cut
  /// into per_row_chunks chunks (the last one possibly partial), so a chunk lies in one row and
  /// its row offsets are computed once per thread. Else the chunks cut the row-major sequence of
  /// slots (rows * vectors per row) regardless of rows: each vector finds its own row (for rows
  /// much shorter than a chunk, where runs would leave most lanes idle).
  Index chunks = 0;
  bool runs = false;
  Index slots = 0;                    ///< rows * vectors per row
  Index per_row_vectors = 0;          ///< vectors per row
  FastDivmod<Index> per_row;          ///< vectors per row (slot -> row, vector)
  FastDivmod<Index> per_row_chunks;   ///< runs: chunks per row (chunk -> row, chunk in row)
  Strided<Index> rows;                ///< the outer dims (a single extent-1 dim for rank-1 plans)
  bool a_full = true, b_full = true;  ///< inner stride 1 (else 0: one value per row)
};

template <class T, class F, class Index, int V>
__global__ void __launch_bounds__(kMaxThreads)
    row_vectorized_kernel(F f, RowArgs<Index> p, T* out, const T* a, const T* b) {
  using P = Pack<T, V>;
  using Offset = typename Strided<Index>::Offset;
  constexpr int U = vector_unroll(sizeof(T));
  const Index lane = threadIdx.x % 32;
  const Index warps = grid_threads<Index>() / 32;
  // Lane l of a chunk takes its vectors l, l+32, ..., l+32*(U-1): every access coalesced, all
  // loaded before any store.
  for (Index chunk = global_thread<Index>() / 32; chunk < p.chunks; chunk += warps) {
    T* po[U];
    P x[U], y[U];
    bool valid[U];
    // Vector u at row offsets `off`, column (element) `col`.
    const auto load = [&](int u, const Offset (&off)[3], Offset col) {
      po[u] = out + off[0] + col;
      if (p.a_full) {
        x[u] = *reinterpret_cast<const P*>(a + off[1] + col);
      } else {
        const T v = a[off[1]];
#pragma unroll
        for (int e = 0; e < V; ++e) x[u].v[e] = v;
      }
      if (p.b_full) {
        y[u] = *reinterpret_cast<const P*>(b + off[2] + col);
      } else {
        const T v = b[off[2]];
#pragma unroll
        for (int e = 0; e < V; ++e) y[u].v[e] = v;
      }
    };
    if (p.runs) {
      Index row, k;
      p.per_row_chunks.divmod(chunk, row, k);
      Offset off[3];
      p.rows.offsets(row, off);
      const Index first = k * (32 * U) + lane;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Index vec = first + u * 32;
        valid[u] = vec < p.per_row_vectors;
        if (valid[u]) load(u, off, static_cast<Offset>(vec) * V);
      }
    } else {
      const Index first = chunk * (32 * U) + lane;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Index slot = first + u * 32;
        valid[u] = slot < p.slots;
        if (!valid[u]) continue;
        Index row, vec;
        p.per_row.divmod(slot, row, vec);
        Offset off[3];
        p.rows.offsets(row, off);
        load(u, off, static_cast<Offset>(vec) * V);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (valid[u]) *reinterpret_cast<P*>(po[u]) = apply_pack(f, x[u], y[u]);
  }
}

template <class T, class F>
void launch_row_vectorized(const F& f, const DensePlan& plan, cudaStream_t stream) {
  const RowPlan& row = plan.row;
  const auto run = [&](auto index, auto vector) {
    using Index = typename decltype(index)::type;
    constexpr int V = decltype(vector)::value;
    RowArgs<Index> p;
    p.chunks = static_cast<Index>(row.chunks);
    p.runs = row.runs;
    p.slots = static_cast<Index>(row.rows * row.per_row_vectors);
    p.per_row_vectors = static_cast<Index>(row.per_row_vectors);
    p.per_row = FastDivmod<Index>(static_cast<std::uint64_t>(row.per_row_vectors));
    p.per_row_chunks = FastDivmod<Index>(static_cast<std::uint64_t>(row.per_row_chunks));
    const int r = plan.plan.rank() - 1;
    int dims[kMaxRank];
    for (int d = 0; d < r; ++d) dims[d] = d;
    p.rows = make_strided<Index>(plan.plan, dims, r);
    p.a_full = row.a_full;
    p.b_full = row.b_full;
    const auto kernel = row_vectorized_kernel<T, F, Index, V>;
    launch("row_vectorized", kernel, grid_blocks(kernel, plan.grid, plan.threads), plan.threads,
           0, stream, f, p, static_cast<T*>(plan.out), static_cast<const T*>(plan.a),
           static_cast<const T*>(plan.b));
  };
  constexpr int kVector = kVectorBytes / sizeof(T);
  with_index(plan.wide, [&](auto index) {
    if (row.vector > 1)
      run(index, std::integral_constant<int, kVector>{});
    else
      run(index, std::integral_constant<int, 1>{});
  });
}

}  // namespace ewise::detail
