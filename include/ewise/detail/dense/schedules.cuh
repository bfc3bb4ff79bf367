// ewise/detail/dense/schedules.cuh — the d2ltvm and Knet matrix-vector schedules (continuous,
// alternate, baseline), kept for comparison with the sliding kernels: rank-2 plans with a
// vector operand, out and the matrix row-major contiguous. Planned by plan_schedule.
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

template <class T, class F, class Index>
EWISE_DEVICE void contiguous_mv_element(const F& f, const MatrixVector<Index>& p, Index i, T* out,
                                        const T* mat, const T* vec) {
  Index row, col;
  p.div_cols.divmod(i, row, col);
  const auto v = static_cast<typename MatrixVector<Index>::Offset>(p.row_vector ? col : row);
  out[i] = apply_mv(f, p, mat[i], vec[v * p.vec_stride]);
}

/// d2ltvm continuous schedule: thread t computes elements [t*chunk, (t+1)*chunk).
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    continuous_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index begin = global_thread<Index>() * p.chunk;
  const Index end = begin + p.chunk < n ? begin + p.chunk : n;
  for (Index i = begin; i < end; ++i) contiguous_mv_element(f, p, i, out, mat, vec);
}

/// d2ltvm alternate schedule: thread t computes elements t, t + nb*nt, t + 2*nb*nt, ...
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    alternate_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>())
    contiguous_mv_element(f, p, i, out, mat, vec);
}

/// Knet's vector broadcast: z[i] = x[(i/sx)%nx] op y[i] with hardware division; sx = 1,
/// nx = cols for a row vector, sx = cols, nx = rows for a column vector.
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    baseline_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index sx = p.row_vector ? Index{1} : p.cols, nx = p.row_vector ? p.cols : p.rows;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>()) {
    const auto v = static_cast<typename MatrixVector<Index>::Offset>((i / sx) % nx);
    out[i] = apply_mv(f, p, mat[i], vec[v * p.vec_stride]);
  }
}

template <class T, class F>
void launch_schedule(const F& f, const DensePlan& plan, cudaStream_t stream) {
  with_index(plan.wide, [&](auto index) {
    using Index = typename decltype(index)::type;
    auto p = make_matrix_vector<Index>(plan);
    const MatrixVectorPointers<T> ptr(plan);
    const auto run = [&](const char* name, auto kernel) {
      const unsigned nb = grid_blocks(kernel, plan.grid, plan.threads);
      // continuous: each of the nb * nt threads takes one contiguous chunk of the elements.
      const std::int64_t all = std::int64_t{nb} * plan.threads;
      if (plan.kernel == Kernel::continuous)
        p.chunk = static_cast<Index>((plan.numel + all - 1) / all);
      launch(name, kernel, nb, plan.threads, 0, stream, f, p, ptr.out, ptr.mat, ptr.vec);
    };
    switch (plan.kernel) {
      case Kernel::continuous:
        return run("continuous", continuous_kernel<T, F, Index>);
      case Kernel::alternate:
        return run("alternate", alternate_kernel<T, F, Index>);
      default:
        return run("baseline", baseline_kernel<T, F, Index>);
    }
  });
}

}  // namespace ewise::detail
