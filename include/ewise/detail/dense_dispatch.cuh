// ewise/detail/dense_dispatch.cuh — from a DenseLaunch (dense_plan.hpp) to one kernel launch.
//
// launch_dense<T>(f, launch, stream) builds the chosen kernel's argument struct and grid from the
// plan and launches it through detail::launch. It is instantiated for the built-in operations in
// the library (dense/builtin_*.cu) and for a user's functor by ewise/dense.cuh.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ewise/detail/dense_kernels.cuh"
#include "ewise/detail/dense_plan.hpp"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

/// The dims `dims[0..n)` of `plan` (outermost first) as a device Strided map (innermost first);
/// n == 0 gives one dim of extent 1.
template <class Index>
Strided<Index> make_strided(const BroadcastPlan& plan, const int* dims, int n) {
  using Offset = typename Strided<Index>::Offset;
  Strided<Index> s;
  s.rank = n > 0 ? n : 1;
  for (int j = 0; j < n; ++j) {
    const int d = dims[n - 1 - j];
    s.extent[j] = FastDivmod<Index>(static_cast<std::uint64_t>(plan.shape[d]));
    for (int k = 0; k < 3; ++k) s.stride[k][j] = static_cast<Offset>(plan.strides[k][d]);
  }
  return s;
}

/// The grid of a grid-stride kernel that needs `need` blocks: at most the configured blocks, or
/// by default the blocks of `kernel` (with `smem` bytes of dynamic shared memory) that are
/// resident on the device at once (one full wave, so no block waits for another to finish).
template <class... Params>
unsigned grid_blocks(void (*kernel)(Params...), std::int64_t need, const DenseLaunch& L,
                     int threads, std::size_t smem = 0) {
  std::int64_t cap = L.blocks;
  if (cap == 0) {
    int per_sm = 0;
    EWISE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    cap = static_cast<std::int64_t>(std::max(per_sm, 1)) * L.sm_count;
  }
  return static_cast<unsigned>(std::clamp<std::int64_t>(need, 1, cap));
}

/// Blocks of `threads` for `work` threads.
inline std::int64_t blocks_for(std::int64_t work, int threads) {
  return (work + threads - 1) / threads;
}

template <class T, class F, class Index>
void launch_general(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  int dims[kMaxRank];
  for (int d = 0; d < L.plan.rank(); ++d) dims[d] = d;
  const auto p = make_strided<Index>(L.plan, dims, L.plan.rank());
  const auto kernel = general_kernel<T, F, Index>;
  launch("general", kernel, grid_blocks(kernel, blocks_for(L.numel, L.threads), L, L.threads),
         L.threads, 0, stream, f, p, static_cast<Index>(L.numel), static_cast<T*>(L.out),
         static_cast<const T*>(L.a), static_cast<const T*>(L.b));
}

template <class T, class F>
void launch_vectorized(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  constexpr int V = kVectorBytes / sizeof(T);
  VectorizedArgs p;
  p.n = L.numel;
  p.head = L.head;
  p.vectors = (L.numel - L.head) / V;
  const int r = L.plan.rank() - 1;
  p.a_full = r >= 0 && L.plan.strides[1][r] == 1;
  p.b_full = r >= 0 && L.plan.strides[2][r] == 1;
  const std::int64_t work =
      L.head == L.numel
          ? L.numel
          : std::max<std::int64_t>((p.vectors + kVectorUnroll<T> - 1) / kVectorUnroll<T>, V);
  const auto kernel = vectorized_kernel<T, F>;
  launch("vectorized", kernel, grid_blocks(kernel, blocks_for(work, L.threads), L, L.threads),
         L.threads, 0, stream, f, p, static_cast<T*>(L.out), static_cast<const T*>(L.a),
         static_cast<const T*>(L.b));
}

template <class T, class F, class Index, int V>
void launch_row_vectorized(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  const int r = L.plan.rank() - 1;
  const std::int64_t inner = L.plan.shape[r];
  RowArgs<Index> p;
  const std::int64_t per_row = inner / V, rows = L.numel / inner;
  const std::int64_t slots = rows * per_row;
  p.slots = static_cast<Index>(slots);
  p.per_row_vectors = static_cast<Index>(per_row);
  p.per_row = FastDivmod<Index>(static_cast<std::uint64_t>(per_row));
  // Runs (one row-offset computation per chunk) unless they would idle more than 1/8 of the
  // lanes: partial last chunks of rows shorter than 8 chunks.
  constexpr std::int64_t C = 32 * kVectorUnroll<T>;
  const std::int64_t per_row_chunks = (per_row + C - 1) / C;
  p.runs = per_row_chunks * C * 8 <= per_row * 9;
  p.per_row_chunks = FastDivmod<Index>(static_cast<std::uint64_t>(per_row_chunks));
  const std::int64_t chunks = p.runs ? rows * per_row_chunks : (slots + C - 1) / C;
  p.chunks = static_cast<Index>(chunks);
  int dims[kMaxRank];
  for (int d = 0; d < r; ++d) dims[d] = d;
  p.rows = make_strided<Index>(L.plan, dims, r);
  p.a_full = L.plan.strides[1][r] == 1;
  p.b_full = L.plan.strides[2][r] == 1;
  const auto kernel = row_vectorized_kernel<T, F, Index, V>;
  launch("row_vectorized", kernel,
         grid_blocks(kernel, blocks_for(chunks * 32, L.threads), L, L.threads), L.threads, 0,
         stream, f, p, static_cast<T*>(L.out), static_cast<const T*>(L.a),
         static_cast<const T*>(L.b));
}

/// The tiled kernel with tiles of `Shape` (TileShape<T, V>); V > 1 needs L.tile_vector_ok.
template <class T, class F, class Shape>
void launch_tiled_shape(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  const int r = L.plan.rank() - 1, t = L.tile_dim;
  TiledArgs p;
  p.rows = L.plan.shape[t];
  p.cols = L.plan.shape[r];
  for (int k = 0; k < 3; ++k) {
    p.row_stride[k] = L.plan.strides[k][t];
    p.col_stride[k] = L.plan.strides[k][r];
  }
  constexpr std::int64_t R = Shape::kUnitRows * Shape::kVector,
                         C = Shape::kUnitCols * Shape::kVector;
  const std::int64_t col_tiles = (p.cols + C - 1) / C, row_tiles = (p.rows + R - 1) / R;
  p.tiles = L.numel / (p.rows * p.cols) * row_tiles * col_tiles;
  p.per_batch = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(row_tiles * col_tiles));
  p.per_band = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(kBand * col_tiles));
  p.full_bands = static_cast<std::uint64_t>(row_tiles / kBand);
  const std::int64_t last = row_tiles % kBand;
  p.last_band = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(last > 0 ? last : kBand));
  int dims[kMaxRank], n = 0;
  for (int d = 0; d < r; ++d)
    if (d != t) dims[n++] = d;
  p.batch = make_strided<std::uint64_t>(L.plan, dims, n);
  p.staged_a = L.staged_a;
  p.staged_b = L.staged_b;
  // kStages buffers of one tile per staged input.
  const std::size_t smem = static_cast<std::size_t>(Shape::kStages) *
                           static_cast<std::size_t>(p.staged_a + p.staged_b) * kTileBytes<T, Shape>;
  const auto kernel = tiled_kernel<T, F, Shape>;
  if (smem > 48 * 1024)
    EWISE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  launch("tiled", kernel, grid_blocks(kernel, p.tiles, L, kTileThreads, smem), kTileThreads, smem,
         stream, f, p, static_cast<T*>(L.out), static_cast<const T*>(L.a),
         static_cast<const T*>(L.b));
}

/// The tiled kernel: 16-byte units where the plan and the pointers allow it and the tiles'
/// shared memory fits the device, else element by element.
template <class T, class F>
void launch_tiled(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  constexpr int V = kVectorBytes / sizeof(T);
  using Vector = TileShape<T, V>;
  const std::int64_t smem = std::int64_t{Vector::kStages} *
                            static_cast<std::int64_t>(L.staged_a + L.staged_b) *
                            kTileBytes<T, Vector>;
  if (L.tile_vector_ok && smem <= L.max_shared)
    launch_tiled_shape<T, F, Vector>(f, L, stream);
  else
    launch_tiled_shape<T, F, TileShape<T, 1>>(f, L, stream);
}

/// The matrix-vector view of a launch's rank-2 plan.
template <class Index>
MatrixVector<Index> make_matrix_vector(const DenseLaunch& L) {
  using Offset = typename MatrixVector<Index>::Offset;
  const BroadcastPlan& P = L.plan;
  const int vec = L.vector_operand, mat = 3 - vec;
  MatrixVector<Index> p;
  p.rows = static_cast<Index>(P.shape[0]);
  p.cols = static_cast<Index>(P.shape[1]);
  p.out_row = static_cast<Offset>(P.strides[0][0]);
  p.out_col = static_cast<Offset>(P.strides[0][1]);
  p.mat_row = static_cast<Offset>(P.strides[mat][0]);
  p.mat_col = static_cast<Offset>(P.strides[mat][1]);
  p.vec_stride = static_cast<Offset>(P.strides[vec][L.row_vector ? 1 : 0]);
  p.vector_is_a = vec == 1;
  p.row_vector = L.row_vector;
  p.div_cols = FastDivmod<Index>(static_cast<std::uint64_t>(P.shape[1]));
  p.sliding_factor = L.sliding_factor;
  return p;
}

template <class T>
struct MatrixVectorPointers {
  T* out;
  const T* mat;
  const T* vec;
  explicit MatrixVectorPointers(const DenseLaunch& L)
      : out(static_cast<T*>(L.out)),
        mat(static_cast<const T*>(L.vector_operand == 1 ? L.b : L.a)),
        vec(static_cast<const T*>(L.vector_operand == 1 ? L.a : L.b)) {}
};

template <class T, class F, bool kShared>
void launch_sliding(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  const auto p = make_matrix_vector<std::uint64_t>(L);
  const MatrixVectorPointers<T> ptr(L);
  const std::int64_t by = L.threads / 32, factor = L.sliding_factor;
  const auto rows = static_cast<std::int64_t>(p.rows), cols = static_cast<std::int64_t>(p.cols);
  // Row vector: tiles of 32 columns x by*factor rows; column vector: by rows x 32*factor columns.
  const std::int64_t tiles_x =
      L.row_vector ? (cols + 31) / 32 : (cols + 32 * factor - 1) / (32 * factor);
  const std::int64_t tiles_y =
      L.row_vector ? (rows + by * factor - 1) / (by * factor) : (rows + by - 1) / by;
  const dim3 grid(
      static_cast<unsigned>(std::min<std::int64_t>(tiles_x, std::numeric_limits<int>::max())),
      static_cast<unsigned>(std::min<std::int64_t>(tiles_y, 65535)));
  launch(kShared ? "sliding_shared" : "sliding", sliding_kernel<T, F, kShared>, grid,
         dim3(32, static_cast<unsigned>(by)), 0, stream, f, p, tiles_x, tiles_y, ptr.out, ptr.mat,
         ptr.vec);
}

template <class T, class F, class Index>
void launch_schedule(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  auto p = make_matrix_vector<Index>(L);
  const MatrixVectorPointers<T> ptr(L);
  const std::int64_t n = L.numel, nt = L.threads;
  // d2ltvm: with more elements than nb*nt threads, nb blocks and several elements per thread;
  // otherwise one element per thread.
  const auto run = [&](const char* name, auto kernel) {
    const std::int64_t nb = grid_blocks(kernel, blocks_for(n, L.threads), L, L.threads);
    if (L.kernel == Kernel::continuous) p.chunk = static_cast<Index>((n + nb * nt - 1) / (nb * nt));
    launch(name, kernel, static_cast<unsigned>(nb), L.threads, 0, stream, f, p, ptr.out, ptr.mat,
           ptr.vec);
  };
  switch (L.kernel) {
    case Kernel::continuous:
      return run("continuous", continuous_kernel<T, F, Index>);
    case Kernel::alternate:
      return run("alternate", alternate_kernel<T, F, Index>);
    default:
      return run("baseline", baseline_kernel<T, F, Index>);
  }
}

/// Runs out = f(a, b) as planned by prepare_dense. T is the storage type of L.dtype.
template <class T, class F>
void launch_dense(const F& f, const DenseLaunch& L, cudaStream_t stream) {
  if (L.numel == 0) return;
  constexpr int V = kVectorBytes / sizeof(T);
  switch (L.kernel) {
    case Kernel::general:
      if (L.wide)
        launch_general<T, F, std::uint64_t>(f, L, stream);
      else
        launch_general<T, F, std::uint32_t>(f, L, stream);
      return;
    case Kernel::vectorized:
      launch_vectorized<T, F>(f, L, stream);
      return;
    case Kernel::row_vectorized:
      if (L.row_vector_ok) {
        if (L.wide)
          launch_row_vectorized<T, F, std::uint64_t, V>(f, L, stream);
        else
          launch_row_vectorized<T, F, std::uint32_t, V>(f, L, stream);
      } else {
        if (L.wide)
          launch_row_vectorized<T, F, std::uint64_t, 1>(f, L, stream);
        else
          launch_row_vectorized<T, F, std::uint32_t, 1>(f, L, stream);
      }
      return;
    case Kernel::tiled:
      launch_tiled<T, F>(f, L, stream);
      return;
    case Kernel::sliding:
      launch_sliding<T, F, false>(f, L, stream);
      return;
    case Kernel::sliding_shared:
      launch_sliding<T, F, true>(f, L, stream);
      return;
    case Kernel::continuous:
    case Kernel::alternate:
    case Kernel::baseline:
      if (L.wide)
        launch_schedule<T, F, std::uint64_t>(f, L, stream);
      else
        launch_schedule<T, F, std::uint32_t>(f, L, stream);
      return;
    case Kernel::automatic:
      break;
  }
  EWISE_EXPECTS(false, "launch_dense: kernel ", kernel_name(L.kernel), " was not resolved");
}

}  // namespace ewise::detail
