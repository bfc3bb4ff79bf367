// ewise/detail/dense/sliding.cuh — the sliding kernels (sliding, sliding_shared): rank-2
// plans with a vector operand; each thread loads one vector element and applies it to
// sliding_factor rows (row vector) or columns (column vector) (the paper's §III.D; sliding_shared
// stages the block's vector elements in shared memory, §III.E). Planned by plan_sliding.
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

/// sliding and sliding_shared. Block (32, by). Row vector: a block tile is 32 columns by
/// by*factor rows; thread (tx, ty) loads the vector element of its column once and applies it to
/// rows ty, ty+by, ... Column vector: a tile is by rows by 32*factor columns; thread (tx, ty)
/// loads the element of its row once and applies it to columns tx, tx+32, ...
/// Shared: the block's vector elements are loaded by its first row (row vector) or first
/// column (column vector) of threads into shared memory and read from there.
template <class T, class F, bool kShared>
__global__ void __launch_bounds__(kMaxThreads)
    sliding_kernel(F f, MatrixVector<std::uint64_t> p, std::int64_t tiles_x, std::int64_t tiles_y,
                   T* out, const T* mat, const T* vec) {
  __shared__ alignas(T) unsigned char shared_bytes[kShared ? 32 * sizeof(T) : 1];
  T* shared_vec = reinterpret_cast<T*>(shared_bytes);
  const std::int64_t tx = threadIdx.x, ty = threadIdx.y, by = blockDim.y;
  const auto rows = static_cast<std::int64_t>(p.rows), cols = static_cast<std::int64_t>(p.cols);
  const std::int64_t factor = p.sliding_factor;
  // `count` elements from (r, c) in steps of (dr, dc): kSlideUnroll matrix loads before the stores.
  const auto slide = [&](std::int64_t r, std::int64_t c, std::int64_t dr, std::int64_t dc,
                         std::int64_t count, T v) {
    const T* m = mat + r * p.mat_row + c * p.mat_col;
    T* o = out + r * p.out_row + c * p.out_col;
    const std::int64_t m_step = dr * p.mat_row + dc * p.mat_col;
    const std::int64_t o_step = dr * p.out_row + dc * p.out_col;
    for (std::int64_t k0 = 0; k0 < count; k0 += kSlideUnroll) {
      T x[kSlideUnroll];
#pragma unroll
      for (int u = 0; u < kSlideUnroll; ++u)
        if (k0 + u < count) x[u] = m[u * m_step];
#pragma unroll
      for (int u = 0; u < kSlideUnroll; ++u)
        if (k0 + u < count) o[u * o_step] = apply_mv(f, p, x[u], v);
      m += kSlideUnroll * m_step;
      o += kSlideUnroll * o_step;
    }
  };
  for (std::int64_t bty = blockIdx.y; bty < tiles_y; bty += gridDim.y) {
    for (std::int64_t btx = blockIdx.x; btx < tiles_x; btx += gridDim.x) {
      if (p.row_vector) {
        const std::int64_t c = btx * 32 + tx;
        T v{};
        if constexpr (kShared) {
          if (ty == 0 && c < cols) shared_vec[tx] = vec[c * p.vec_stride];
          __syncthreads();
          if (c < cols) v = shared_vec[tx];
        } else {
          if (c < cols) v = vec[c * p.vec_stride];
        }
        // rows r, r + by, ... below `rows`, at most `factor` of them
        const std::int64_t r = bty * by * factor + ty;
        if (c < cols && r < rows) slide(r, c, by, 0, min_of(factor, (rows - r + by - 1) / by), v);
      } else {
        const std::int64_t r = bty * by + ty;
        T v{};
        if constexpr (kShared) {
          if (tx == 0 && r < rows) shared_vec[ty] = vec[r * p.vec_stride];
          __syncthreads();
          if (r < rows) v = shared_vec[ty];
        } else {
          if (r < rows) v = vec[r * p.vec_stride];
        }
        const std::int64_t c = btx * 32 * factor + tx;
        if (r < rows && c < cols) slide(r, c, 0, 32, min_of(factor, (cols - c + 31) / 32), v);
      }
      if constexpr (kShared) __syncthreads();  // shared_vec is rewritten for the next tile
    }
  }
}

template <class T, class F>
void launch_sliding(const F& f, const DensePlan& plan, cudaStream_t stream) {
  const MatrixVectorPlan& mv = plan.matrix_vector;
  const auto p = make_matrix_vector<std::uint64_t>(plan);
  const MatrixVectorPointers<T> ptr(plan);
  const bool shared = plan.kernel == Kernel::sliding_shared;
  launch(shared ? "sliding_shared" : "sliding",
         shared ? sliding_kernel<T, F, true> : sliding_kernel<T, F, false>,
         dim3(mv.grid_x, mv.grid_y), dim3(32, static_cast<unsigned>(plan.threads / 32)), 0, stream,
         f, p, mv.tiles_x, mv.tiles_y, ptr.out, ptr.mat, ptr.vec);
}

}  // namespace ewise::detail
