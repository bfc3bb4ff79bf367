// dense/dense.cpp — the dense entry points: the call's dtypes checked (check_types), the device
// entry's plan (checks, the operands' residency on the current device, then its cached
// properties), the allocating form, the CPU backend for host views, and the dispatch to the
// same-dtype kernels (per-dtype instantiations) or the converting kernel. The planner is
// dense/plan*.cpp.
#include "ewise/dense.hpp"

#include <cuda_runtime_api.h>

#include "builtin.hpp"
#include "convert.hpp"
#include "cpu.hpp"
#include "residency.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/error.hpp"

namespace ewise {

namespace detail {

DensePlan prepare_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                        const DenseOptions& options, cudaStream_t stream,
                        const CallTypes* types) {
  DensePlan plan = check_dense(a, b, out, options, types);
  EWISE_EXPECTS(out.memory == Memory::device, "dense kernels need device views, got ",
                memory_name(out.memory), " memory");
  if (plan.numel == 0) return plan;  // nothing to launch
  DeviceOperands ops;
  if (plan.a) ops.add(a, "a");
  if (plan.b) ops.add(b, "b");
  ops.add(out, "out").check(stream);
  plan_launch(plan, current_device_props());
  return plan;
}

DeviceTensor allocate_dense_output(DType dtype, const Operand& a, const Operand& b,
                                   const DenseOptions& options, cudaStream_t stream) {
  Dims shape;
  for (const Operand* o : {&a, &b}) {
    if (o->is_scalar()) continue;
    const ConstTensorView& v = o->view();
    check_view(v, o == &a ? "input a" : "input b");
    EWISE_EXPECTS(v.memory == Memory::device, "the allocating form needs device views, got ",
                  o == &a ? "a" : "b", " on ", memory_name(v.memory));
  }
  shape = broadcast_shapes(a.is_scalar() ? Dims{} : a.view().desc.shape,
                           b.is_scalar() ? Dims{} : b.view().desc.shape);
  // Another device's stream is an InvalidArgument before it allocates on it, as in binary();
  // binary() checks the operands.
  DeviceOperands().check(stream);
  return DeviceTensor(dtype, shape, stream, options.memory);
}

DeviceTensor allocate_dense_output(BinaryOp op, const Operand& a, const Operand& b,
                                   const DenseOptions& options, cudaStream_t stream) {
  EWISE_EXPECTS(!a.is_scalar() || !b.is_scalar(), op_name(op),
                " of two scalars: at least one operand is a tensor");
  const OpTypes t =
      op_types(op, options.promotion, a.type(options.promotion), b.type(options.promotion));
  return allocate_dense_output(t.result, a, b, options, stream);
}

/// The view the planner sees for an operand: its own, or for a scalar a rank-0 placeholder in
/// out's memory that no kernel reads.
ConstTensorView planned_view(const Operand& o, const TensorView& out, const CallTypes& types) {
  if (!o.is_scalar()) return o.view();
  return {out.data, TensorDesc::contiguous(types.types.compute, {}), out.memory};
}

}  // namespace detail

bool kernel_supports(Kernel kernel, BinaryOp op, const Operand& a, const Operand& b,
                     const TensorView& out, Promotion promotion) {
  const detail::CallTypes types = detail::check_types(op, a, b, out.desc.dtype, promotion);
  const ConstTensorView av = detail::planned_view(a, out, types);
  const ConstTensorView bv = detail::planned_view(b, out, types);
  const detail::DensePlan c = detail::check_dense(av, bv, out, DenseOptions{}, &types);
  if (c.converting) return kernel == Kernel::automatic || kernel == Kernel::general;
  return kernel_supports(kernel, av, bv, out);
}

void binary(BinaryOp op, const Operand& a, const Operand& b, const TensorView& out,
            const DenseOptions& options, cudaStream_t stream) {
  const detail::CallTypes types =
      detail::check_types(op, a, b, out.desc.dtype, options.promotion);
  const ConstTensorView av = detail::planned_view(a, out, types);
  const ConstTensorView bv = detail::planned_view(b, out, types);
  if (out.memory == Memory::host && av.memory == Memory::host && bv.memory == Memory::host) {
    // The same checks as on the device (a named kernel too), then the CPU backend.
    const detail::DensePlan plan =
        detail::plan_dense(av, bv, out, options, detail::host_device_props(), &types);
    detail::run_cpu(types, plan);
    return;
  }
  const detail::DensePlan plan = detail::prepare_dense(av, bv, out, options, stream, &types);
  if (plan.numel == 0) return;
  if (plan.converting) return detail::run_converting(types, plan, stream);
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
    default:
      break;
  }
  EWISE_EXPECTS(false, "internal: no same-dtype kernels for ", dtype_name(plan.dtype));
}

DeviceTensor binary(BinaryOp op, const Operand& a, const Operand& b, const DenseOptions& options,
                    cudaStream_t stream) {
  DeviceTensor out = detail::allocate_dense_output(op, a, b, options, stream);
  binary(op, a, b, out.view(), options, stream);
  return out;
}

}  // namespace ewise
