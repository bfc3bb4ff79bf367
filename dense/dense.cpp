// dense/dense.cpp — the dense entry points: launch configuration from the current device,
// the allocating form, and the dispatch of the built-in operations to their per-dtype
// instantiations. Validation, planning and kernel choice are in dense/plan.cpp.
#include "ewise/dense.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "builtin.hpp"
#include "ewise/detail/dense_plan.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"

namespace ewise {

namespace detail {

DenseLaunch prepare_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                          const DenseOptions& options) {
  DenseLaunch L = plan_dense(a, b, out, options);
  EWISE_EXPECTS(out.memory == Memory::device, "dense kernels need device views, got ",
                memory_name(out.memory), " memory");
  if (L.numel == 0) return L;
  int device = 0, sms = 0, threads_per_sm = 0, max_shared = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&device));
  EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  EWISE_CUDA_CHECK(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  EWISE_CUDA_CHECK(
      cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (L.threads == 0) L.threads = kDenseThreads;
  L.sm_count = sms;
  L.max_shared = max_shared;
  if (L.sliding_factor == 0 && L.plan.rank() == 2) {
    // The smallest factor that leaves about two waves of threads: reuse without idle SMs.
    const std::int64_t rows = L.plan.shape[0], cols = L.plan.shape[1];
    const std::int64_t target = 2 * static_cast<std::int64_t>(sms) * threads_per_sm;
    const std::int64_t most =
        L.row_vector ? (rows + L.threads / 32 - 1) / (L.threads / 32) : (cols + 31) / 32;
    L.sliding_factor = static_cast<int>(std::clamp<std::int64_t>(
        (rows * cols + target - 1) / target, 1, std::max<std::int64_t>(most, 1)));
  }
  if (L.sliding_factor == 0) L.sliding_factor = 1;
  return L;
}

DeviceTensor allocate_dense_output(const ConstTensorView& a, const ConstTensorView& b,
                                   cudaStream_t stream) {
  check_view(a, "input a");
  check_view(b, "input b");
  EWISE_EXPECTS(a.memory == Memory::device && b.memory == Memory::device,
                "the allocating form needs device views, got a on ", memory_name(a.memory),
                ", b on ", memory_name(b.memory));
  EWISE_EXPECTS(a.desc.dtype == b.desc.dtype, "dtypes differ: a is ", dtype_name(a.desc.dtype),
                ", b is ", dtype_name(b.desc.dtype), " (no type promotion: convert first)");
  return DeviceTensor(a.desc.dtype, broadcast_shapes(a.desc.shape, b.desc.shape), stream);
}

}  // namespace detail

void binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
            const DenseOptions& options, cudaStream_t stream) {
  EWISE_EXPECTS(static_cast<int>(op) <= static_cast<int>(BinaryOp::max), "unknown binary op ",
                static_cast<int>(op));
  if (out.memory == Memory::host && a.memory == Memory::host && b.memory == Memory::host) {
    (void)detail::plan_dense(a, b, out, options);  // the same checks as on the device
    reference_binary(op, a, b, out);
    return;
  }
  const detail::DenseLaunch L = detail::prepare_dense(a, b, out, options);
  if (L.numel == 0) return;
  switch (L.dtype) {
    case DType::f16:
      return detail::run_builtin<DType::f16>(op, L, stream);
    case DType::bf16:
      return detail::run_builtin<DType::bf16>(op, L, stream);
    case DType::f32:
      return detail::run_builtin<DType::f32>(op, L, stream);
    case DType::f64:
      return detail::run_builtin<DType::f64>(op, L, stream);
    case DType::i32:
      return detail::run_builtin<DType::i32>(op, L, stream);
    case DType::i64:
      return detail::run_builtin<DType::i64>(op, L, stream);
  }
  EWISE_EXPECTS(false, "unknown dtype ", static_cast<int>(L.dtype));
}

DeviceTensor binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                    const DenseOptions& options, cudaStream_t stream) {
  DeviceTensor out = detail::allocate_dense_output(a, b, stream);
  binary(op, a, b, out.view(), options, stream);
  return out;
}

}  // namespace ewise
