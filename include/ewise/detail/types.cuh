// ewise/detail/types.cuh — device element types of each DType and their compute types.
//
// f16 and bf16 are stored as __half / __nv_bfloat16 and computed in float; the others are
// computed in their own type. dispatch_dtype() calls a generic functor with a tag of the storage
// type, so one template serves every dtype.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/bit>

#include <cstdint>
#include <utility>

#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

template <class T>
struct TypeTag {
  using type = T;
};

template <class T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<__half> {
  using type = float;
};
template <>
struct ComputeType<__nv_bfloat16> {
  using type = float;
};
template <class T>
using compute_t = typename ComputeType<T>::type;

template <class T>
__host__ __device__ __forceinline__ compute_t<T> to_compute(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return x;
}

/// x, or the canonical NaN (ops.hpp) when x is NaN: positive, every payload bit set.
template <class C>
__host__ __device__ __forceinline__ C canonical_nan(C x) {
  if constexpr (std::is_same_v<C, float>)
    return x != x ? ::cuda::std::bit_cast<float>(std::uint32_t{0x7FFFFFFF}) : x;
  else if constexpr (std::is_same_v<C, double>)
    return x != x ? ::cuda::std::bit_cast<double>(std::uint64_t{0x7FFFFFFFFFFFFFFF}) : x;
  else return x;
}

/// The stored value of a computed result: rounded to nearest-even, NaN made canonical (in the
/// compute type; the f32 NaN 0x7FFFFFFF rounds to the 16-bit 0x7FFF whether the conversion keeps
/// the payload's leading bits or returns its own canonical NaN).
template <class T>
__host__ __device__ __forceinline__ T from_compute(compute_t<T> x) {
  x = canonical_nan(x);
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
  else return x;
}

/// Calls f(TypeTag<T>{}) with T the device storage type of `dtype`, one of the six dtypes the
/// same-dtype kernels (dense and sparse) are built for; throws for the others.
template <class F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f16: return f(TypeTag<__half>{});
    case DType::bf16: return f(TypeTag<__nv_bfloat16>{});
    case DType::f32: return f(TypeTag<float>{});
    case DType::f64: return f(TypeTag<double>{});
    case DType::i32: return f(TypeTag<std::int32_t>{});
    case DType::i64: return f(TypeTag<std::int64_t>{});
    default: break;
  }
  EWISE_EXPECTS(false, "no kernel of this operation for dtype ", dtype_name(dtype),
                " (it runs f16, bf16, f32, f64, i32 and i64)");
  return f(TypeTag<float>{});  // unreachable
}

/// Calls f(TypeTag<T>{}) with T the device storage type of any dtype (the harness's fill,
/// poison and gather kernels).
template <class F>
decltype(auto) dispatch_any_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::b8: return f(TypeTag<bool>{});
    case DType::i8: return f(TypeTag<std::int8_t>{});
    case DType::u8: return f(TypeTag<std::uint8_t>{});
    case DType::i16: return f(TypeTag<std::int16_t>{});
    case DType::u16: return f(TypeTag<std::uint16_t>{});
    case DType::u32: return f(TypeTag<std::uint32_t>{});
    case DType::u64: return f(TypeTag<std::uint64_t>{});
    default: return dispatch_dtype(dtype, std::forward<F>(f));
  }
}

/// The DType of a device storage type.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, __half>) return DType::f16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return DType::bf16;
  else if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::i32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::i64;
  else if constexpr (std::is_same_v<T, bool>) return DType::b8;
  else if constexpr (std::is_same_v<T, std::int8_t>) return DType::i8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::u8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return DType::i16;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::u16;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DType::u32;
  else {
    static_assert(std::is_same_v<T, std::uint64_t>, "not an ewise element type");
    return DType::u64;
  }
}

}  // namespace ewise::detail
