// dense/builtin.hpp — the built-in operations' kernels, one instantiation file per dtype
// (builtin_<dtype>.cu) so that they compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include "ewise/detail/dense/plan.hpp"
#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

/// Launches `op` as planned, for dtype D (defined in builtin_<D>.cu).
template <DType D>
void run_builtin(BinaryOp op, const DensePlan& plan, cudaStream_t stream);

template <>
void run_builtin<DType::f16>(BinaryOp, const DensePlan&, cudaStream_t);
template <>
void run_builtin<DType::bf16>(BinaryOp, const DensePlan&, cudaStream_t);
template <>
void run_builtin<DType::f32>(BinaryOp, const DensePlan&, cudaStream_t);
template <>
void run_builtin<DType::f64>(BinaryOp, const DensePlan&, cudaStream_t);
template <>
void run_builtin<DType::i32>(BinaryOp, const DensePlan&, cudaStream_t);
template <>
void run_builtin<DType::i64>(BinaryOp, const DensePlan&, cudaStream_t);

}  // namespace ewise::detail
