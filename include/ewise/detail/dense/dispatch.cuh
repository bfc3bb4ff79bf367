// ewise/detail/dense/dispatch.cuh — from a DensePlan to its kernel launch. Decides nothing:
// switches on the planned kernel to its family's launcher, which builds the kernel's argument
// struct from the plan and launches through detail::launch. Instantiated for the built-in
// operations in the library (dense/builtin_*.cu) and for a user's functor by ewise/dense.cuh.
#pragma once

#include "ewise/detail/dense/general.cuh"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/dense/row_vectorized.cuh"
#include "ewise/detail/dense/schedules.cuh"
#include "ewise/detail/dense/sliding.cuh"
#include "ewise/detail/dense/tiled.cuh"
#include "ewise/detail/dense/vectorized.cuh"
#include "ewise/error.hpp"

namespace ewise::detail {

/// Runs out = f(a, b) as planned by plan_dense. T is the storage type of plan.dtype.
template <class T, class F>
void launch_dense(const F& f, const DensePlan& plan, cudaStream_t stream) {
  if (plan.numel == 0) return;
  switch (plan.kernel) {
    case Kernel::general:
      return launch_general<T>(f, plan, stream);
    case Kernel::vectorized:
      return launch_vectorized<T>(f, plan, stream);
    case Kernel::row_vectorized:
      return launch_row_vectorized<T>(f, plan, stream);
    case Kernel::tiled:
      return launch_tiled<T>(f, plan, stream);
    case Kernel::sliding:
    case Kernel::sliding_shared:
      return launch_sliding<T>(f, plan, stream);
    case Kernel::continuous:
    case Kernel::alternate:
    case Kernel::baseline:
      return launch_schedule<T>(f, plan, stream);
    case Kernel::automatic:
      break;
  }
  EWISE_EXPECTS(false, "launch_dense: kernel ", kernel_name(plan.kernel), " was not resolved");
}

}  // namespace ewise::detail
