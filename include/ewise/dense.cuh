// ewise/dense.cuh — dense element-wise operations with a user's own binary functor (CUDA code).
//
//   struct Hypot { __device__ float operator()(float x, float y) const { return hypotf(x, y); }
//                  __device__ double operator()(double x, double y) const { return hypot(x, y); }
//                  ... };
//   ewise::binary(Hypot{}, a, b, out, {}, stream);
//   // only f32 and f16 instantiated (faster to compile); other dtypes throw:
//   ewise::binary<ewise::dtype_mask({DType::f32, DType::f16})>(Hypot{}, a, b, out);
//
// Same broadcasting, checks, kernels, options and dispatch as ewise::binary in dense.hpp (see
// there), on device views only (host or mixed views throw InvalidArgument). The functor is
// copied to the device by value and called in device code as f(x, y) with the compute types of
// the dtype (float for f16 and bf16, else the dtype's own type: double, int32_t, int64_t); its
// result is converted to the compute type and rounded once to the dtype. Each dtype in the mask
// instantiates every kernel for F, so restrict the mask to the dtypes you call it with.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <type_traits>

#include "ewise/dense.hpp"
#include "ewise/detail/dense/dispatch.cuh"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/types.cuh"

namespace ewise {

/// A set of dtypes as a bit mask (bit i = DType value i), for the functor entry's template
/// parameter.
constexpr unsigned dtype_mask(std::initializer_list<DType> dtypes) {
  unsigned m = 0;
  for (DType t : dtypes) m |= 1u << static_cast<unsigned>(t);
  return m;
}
inline constexpr unsigned kAllDTypesMask =
    dtype_mask({DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i64});

namespace detail {

/// Throws unless `dtype` is in `Mask`.
template <unsigned Mask>
void check_functor_dtype(DType dtype) {
  EWISE_EXPECTS((Mask >> static_cast<unsigned>(dtype)) & 1u,
                "this functor entry was not "
                "instantiated for dtype ",
                dtype_name(dtype), " (its dtype mask is ", Mask, ")");
}

/// Throws unless a, b and out share one dtype (a user functor is not promoted).
inline void check_one_dtype(DType a, DType b, DType out) {
  EWISE_EXPECTS(a == b && b == out, "a user functor takes operands of one dtype: a is ",
                dtype_name(a), ", b is ", dtype_name(b), ", out is ", dtype_name(out),
                " (the built-in operations promote: ewise/dense.hpp)");
}

}  // namespace detail

/// out = f(a, b) with broadcasting, on device views, asynchronously on `stream`.
template <unsigned Mask = kAllDTypesMask, class F,
          std::enable_if_t<!std::is_same_v<std::decay_t<F>, BinaryOp>, int> = 0>
void binary(const F& f, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
            const DenseOptions& options = {}, cudaStream_t stream = nullptr) {
  detail::check_one_dtype(a.desc.dtype, b.desc.dtype, out.desc.dtype);
  detail::check_functor_dtype<Mask>(out.desc.dtype);
  const detail::DensePlan plan = detail::prepare_dense(a, b, out, options, stream);
  if (plan.numel == 0) return;
  detail::dispatch_dtype(plan.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((Mask >> static_cast<unsigned>(detail::dtype_of<T>())) & 1u)
      detail::launch_dense<T>(f, plan, stream);
  });
}

/// Allocating form: a new contiguous device tensor of the broadcast shape, on `stream`.
template <unsigned Mask = kAllDTypesMask, class F,
          std::enable_if_t<!std::is_same_v<std::decay_t<F>, BinaryOp>, int> = 0>
DeviceTensor binary(const F& f, const ConstTensorView& a, const ConstTensorView& b,
                    const DenseOptions& options = {}, cudaStream_t stream = nullptr) {
  detail::check_one_dtype(a.desc.dtype, b.desc.dtype, a.desc.dtype);
  detail::check_functor_dtype<Mask>(a.desc.dtype);
  DeviceTensor out = detail::allocate_dense_output(a.desc.dtype, a, b, options, stream);
  binary<Mask>(f, a, b, out.view(), options, stream);
  return out;
}

}  // namespace ewise
