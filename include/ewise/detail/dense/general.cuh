// ewise/detail/dense/general.cuh — the general kernel: any plan. Grid-stride; each thread finds
// its element's coordinates from the linear index by fast divmod and its offsets as
// dot(coordinates, strides) (the paper's N-d algorithm, §III.B-C). Planned by plan_general.
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    general_kernel(F f, Strided<Index> p, Index n, T* out, const T* a, const T* b) {
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>()) {
    typename Strided<Index>::Offset off[3];
    p.offsets(i, off);
    out[off[0]] = apply(f, a[off[1]], b[off[2]]);
  }
}

template <class T, class F>
void launch_general(const F& f, const DensePlan& plan, cudaStream_t stream) {
  with_index(plan.wide, [&](auto index) {
    using Index = typename decltype(index)::type;
    int dims[kMaxRank];
    for (int d = 0; d < plan.plan.rank(); ++d) dims[d] = d;
    const auto p = make_strided<Index>(plan.plan, dims, plan.plan.rank());
    const auto kernel = general_kernel<T, F, Index>;
    launch("general", kernel, grid_blocks(kernel, plan.grid, plan.threads), plan.threads, 0,
           stream, f, p, static_cast<Index>(plan.numel), static_cast<T*>(plan.out),
           static_cast<const T*>(plan.a), static_cast<const T*>(plan.b));
  });
}

}  // namespace ewise::detail
