// dense/builtin.cuh — the definition of run_builtin, included by the builtin_<dtype>.cu files.
#pragma once

#include "builtin.hpp"
#include "ewise/detail/dense_dispatch.cuh"

namespace ewise::detail {

template <DType D>
void run_builtin(BinaryOp op, const DenseLaunch& launch, cudaStream_t stream) {
  dispatch_dtype(D, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (dtype_of<T>() == D) {  // only D's storage type instantiates kernels
      switch (op) {
        case BinaryOp::add:
          return launch_dense<T>(ops::Add{}, launch, stream);
        case BinaryOp::sub:
          return launch_dense<T>(ops::Sub{}, launch, stream);
        case BinaryOp::mul:
          return launch_dense<T>(ops::Mul{}, launch, stream);
        case BinaryOp::div:
          return launch_dense<T>(ops::Div{}, launch, stream);
        case BinaryOp::min:
          return launch_dense<T>(ops::Min{}, launch, stream);
        case BinaryOp::max:
          return launch_dense<T>(ops::Max{}, launch, stream);
      }
      EWISE_EXPECTS(false, "unknown binary op ", static_cast<int>(op));
    }
  });
}

}  // namespace ewise::detail
