// dense/builtin.cuh — the built-in operations for one storage type, included by the
// builtin_<dtype>.cu files: each defines run_builtin<dtype_of<T>()> as launch_builtin<T>.
#pragma once

#include <type_traits>

#include "builtin.hpp"
#include "ewise/detail/dense/dispatch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"

namespace ewise::detail {

/// Launches `op` as planned on elements of storage type T.
template <class T>
void launch_builtin(BinaryOp op, const DensePlan& plan, cudaStream_t stream) {
  switch (op) {
    case BinaryOp::add:
      return launch_dense<T>(ops::Add{}, plan, stream);
    case BinaryOp::sub:
      return launch_dense<T>(ops::Sub{}, plan, stream);
    case BinaryOp::mul:
      return launch_dense<T>(ops::Mul{}, plan, stream);
    case BinaryOp::div:  // integers divide truly into a float: the converting kernel's
      if constexpr (!std::is_integral_v<T>) return launch_dense<T>(ops::Div{}, plan, stream);
      break;
    case BinaryOp::min:
      return launch_dense<T>(ops::Min{}, plan, stream);
    case BinaryOp::max:
      return launch_dense<T>(ops::Max{}, plan, stream);
    default:  // the other operations run the converting kernel (runs_typed)
      break;
  }
  EWISE_EXPECTS(false, "internal: ", op_name(op), " has no same-dtype kernel for ",
                dtype_name(dtype_of<T>()));
}

}  // namespace ewise::detail
