// dense/dense.cpp — the dense entry points: the device entry's plan (checks, the operands'
// residency on the current device, then its cached properties), the allocating form, the CPU
// backend for host views, and the dispatch of the built-in operations to their per-dtype
// instantiations. The planner is dense/plan*.cpp.
#include "ewise/dense.hpp"

#include <cuda_runtime_api.h>

#include "builtin.hpp"
#include "residency.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"

namespace ewise {

namespace detail {

DensePlan prepare_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                        const DenseOptions& options, cudaStream_t stream) {
  DensePlan plan = check_dense(a, b, out, options);
  EWISE_EXPECTS(out.memory == Memory::device, "dense kernels need device views, got ",
                memory_name(out.memory), " memory");
  if (plan.numel == 0) return plan;  // nothing to launch
  DeviceOperands().add(a, "a").add(b, "b").add(out, "out").check(stream);
  plan_launch(plan, current_device_props());
  return plan;
}

DeviceTensor allocate_dense_output(const ConstTensorView& a, const ConstTensorView& b,
                                   const DenseOptions& options, cudaStream_t stream) {
  check_view(a, "input a");
  check_view(b, "input b");
  EWISE_EXPECTS(a.memory == Memory::device && b.memory == Memory::device,
                "the allocating form needs device views, got a on ", memory_name(a.memory),
                ", b on ", memory_name(b.memory));
  EWISE_EXPECTS(a.desc.dtype == b.desc.dtype, "dtypes differ: a is ", dtype_name(a.desc.dtype),
                ", b is ", dtype_name(b.desc.dtype), " (no type promotion: convert first)");
  const Dims shape = broadcast_shapes(a.desc.shape, b.desc.shape);
  // Another device's stream is an InvalidArgument before it allocates on it, as in binary();
  // binary() checks the operands.
  DeviceOperands().check(stream);
  return DeviceTensor(a.desc.dtype, shape, stream, options.memory);
}

}  // namespace detail

void binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
            const DenseOptions& options, cudaStream_t stream) {
  EWISE_EXPECTS(static_cast<int>(op) <= static_cast<int>(BinaryOp::max), "unknown binary op ",
                static_cast<int>(op));
  if (out.memory == Memory::host && a.memory == Memory::host && b.memory == Memory::host) {
    // The same checks as on the device (a named kernel too), then the CPU loop over the plan.
    const detail::DensePlan plan =
        detail::plan_dense(a, b, out, options, detail::host_device_props());
    reference_binary(op, plan.dtype, plan.plan, plan.out, plan.a, plan.b);
    return;
  }
  const detail::DensePlan plan = detail::prepare_dense(a, b, out, options, stream);
  if (plan.numel == 0) return;
  switch (plan.dtype) {
    case DType::f16:
      return detail::run_builtin<DType::f16>(op, plan, stream);
    case DType::bf16:
      return detail::run_builtin<DType::bf16>(op, plan, stream);
    case DType::f32:
      return detail::run_builtin<DType::f32>(op, plan, stream);
    case DType::f64:
      return detail::run_builtin<DType::f64>(op, plan, stream);
    case DType::i32:
      return detail::run_builtin<DType::i32>(op, plan, stream);
    case DType::i64:
      return detail::run_builtin<DType::i64>(op, plan, stream);
  }
  EWISE_EXPECTS(false, "unknown dtype ", static_cast<int>(plan.dtype));
}

DeviceTensor binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                    const DenseOptions& options, cudaStream_t stream) {
  DeviceTensor out = detail::allocate_dense_output(a, b, options, stream);
  binary(op, a, b, out.view(), options, stream);
  return out;
}

}  // namespace ewise
