// ewise/detail/compute.hpp — what a mixed-dtype call computes in: the arithmetic type C of a
// compute dtype (float for f16, bf16 and f32; the dtype's own type otherwise), which operation
// functors apply to which C, and the checked description of a call's dtypes that the CPU
// reference and the converting GPU kernel share.
#pragma once

#include <cstdint>
#include <cstring>

#include <math.h>
#include <type_traits>

#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

template <class T>
struct ComputeTag {
  using type = T;
};

/// Calls f(ComputeTag<C>{}) with the arithmetic type C of compute dtype `t`.
template <class F>
decltype(auto) with_compute_type(DType t, F&& f) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::f32: return f(ComputeTag<float>{});
    case DType::f64: return f(ComputeTag<double>{});
    case DType::b8: return f(ComputeTag<bool>{});
    case DType::i8: return f(ComputeTag<std::int8_t>{});
    case DType::u8: return f(ComputeTag<std::uint8_t>{});
    case DType::i16: return f(ComputeTag<std::int16_t>{});
    case DType::u16: return f(ComputeTag<std::uint16_t>{});
    case DType::i32: return f(ComputeTag<std::int32_t>{});
    case DType::u32: return f(ComputeTag<std::uint32_t>{});
    case DType::i64: return f(ComputeTag<std::int64_t>{});
    case DType::u64: return f(ComputeTag<std::uint64_t>{});
  }
  throw_unknown_dtype(t);
}

/// The arithmetic type of an exact comparison of a signed integer with a u64 (CallTypes::exact).
__extension__ typedef __int128 ExactInt;  // (__extension__: a GCC and nvcc type, no ISO one)

/// Whether op_types() can give functor F the arithmetic type C (the pairs instantiated).
template <class F, class C>
inline constexpr bool kComputes = [] {
  constexpr bool is_bool = std::is_same_v<C, bool>;
  if constexpr (std::is_same_v<C, ExactInt>)
    return std::is_same_v<F, ops::Equal> || std::is_same_v<F, ops::NotEqual> ||
           std::is_same_v<F, ops::Less> || std::is_same_v<F, ops::LessEqual> ||
           std::is_same_v<F, ops::Greater> || std::is_same_v<F, ops::GreaterEqual>;
  else if constexpr (std::is_same_v<F, ops::LogicalAnd> || std::is_same_v<F, ops::LogicalOr> ||
                std::is_same_v<F, ops::LogicalXor>)
    return is_bool;
  else if constexpr (std::is_same_v<F, ops::Div>) return std::is_floating_point_v<C>;
  else if constexpr (std::is_same_v<F, ops::BitAnd> || std::is_same_v<F, ops::BitOr> ||
                     std::is_same_v<F, ops::BitXor>)
    return std::is_integral_v<C>;
  else if constexpr (std::is_same_v<F, ops::Sub> || std::is_same_v<F, ops::FloorDiv> ||
                     std::is_same_v<F, ops::Remainder>)
    return !is_bool;
  else return true;
}();

/// A checked call's dtypes: the operation, its types, each operand's dtype and, for a scalar
/// operand, its value in the compute type (scalar_value). The CPU reference and the converting
/// kernel run from this and the plan.
struct CallTypes {
  BinaryOp op = BinaryOp::add;
  OpTypes types;
  DType a = DType::f32, b = DType::f32, out = DType::f32;
  bool a_scalar = false, b_scalar = false;
  /// A scalar's value as the compute type's C, in the low bytes (memcpy).
  std::uint64_t a_value = 0, b_value = 0;
  /// The operand's elements are rounded to the compute dtype (a 16-bit float) after loading:
  /// an operand of another dtype there (PyTorch's 0-d tensors take the dimensioned operand's
  /// dtype, and both frameworks cast the operands to it).
  bool a_round = false, b_round = false;
  /// NumPy 2 compares a signed integer tensor with a u64 tensor exactly, not in their common
  /// dtype f64 (2^63 - 1 and 2^63 are one f64): then the arithmetic type is ExactInt, which
  /// holds both. types.compute stays f64, the dtype NumPy reports.
  bool exact = false;
};

/// A scalar operand's value (CallTypes::a_value, b_value) as C; C{} for ExactInt, which no
/// scalar takes.
template <class C>
EWISE_HD C scalar_value(std::uint64_t bits) {
  C v{};
  if constexpr (sizeof(C) <= sizeof bits) std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// Calls f(ComputeTag<C>{}) with the call's arithmetic type: ExactInt for an exact comparison,
/// else with_compute_type's.
template <class F>
decltype(auto) with_call_compute(const CallTypes& t, F&& f) {
  if (t.exact) return f(ComputeTag<ExactInt>{});
  return with_compute_type(t.types.compute, f);
}

/// For a power call in a float compute type (f32, f16, bf16) by a scalar exponent, calls
/// f(functor) with the functor that computes it and returns true: 2 → PowSquare (a * a), 0.5 →
/// PowSqrt (the root), -0.5 → PowRsqrt (the root's reciprocal), another integer up to 16 in
/// magnitude → PowSmallIntExact where every product of the base's values is exact in float
/// (|n| times the base's significand bits at most 24: bf16 ** ±3, f16 ** -2, x ** ±1), else
/// PowSmallInt (f64 products; none refused where those are exact: a 16-bit base to n > 0 with
/// n times its bits at most 53). Each gives
/// ops::Pow's value (pow_f32.hpp), faster. Returns false for any other call (ops::Pow). An
/// integer base's bits are taken as 24, which makes none of its products exact but x ** ±1.
/// Both backends pick by it: the GPU's in dense/convert_division.cu, the CPU's in dense/cpu.cpp.
template <class F>
bool with_scalar_power(const CallTypes& t, F&& f) {
  const DType c = t.types.compute;
  const bool float_compute = c == DType::f32 || c == DType::f16 || c == DType::bf16;
  if (t.op != BinaryOp::power || !t.b_scalar || !float_compute) return false;
  const float b = scalar_value<float>(t.b_value);
  if (b == 2.0f) {
    f(ops::detail::PowSquare{});
    return true;
  }
  if (b == 0.5f) {
    f(ops::detail::PowSqrt{});
    return true;
  }
  if (b == -0.5f) {
    f(ops::detail::PowRsqrt{});
    return true;
  }
  if (!(::truncf(b) == b && ::fabsf(b) <= 16.0f && b != 0.0f)) return false;
  const int n = static_cast<int>(b), m = n < 0 ? -n : n;
  const int base_bits = t.a == DType::bf16 ? 8 : t.a == DType::f16 ? 11 : 24;
  if (m * base_bits <= 24) f(ops::detail::PowSmallIntExact{n});
  else f(ops::detail::PowSmallInt{n, n > 0 && n * base_bits <= 53});
  return true;
}

/// The checked dtypes of op(a, b) into an output of dtype `out` (src/call_types.cpp): op_types
/// under `rule`, the result castable to `out` (same_kind), a scalar's value in the compute type
/// (NumPy's rule: converted to the compute dtype first, a Python integer it cannot hold refused;
/// PyTorch's: converted to C directly, integers wrapped). Throws InvalidArgument naming the
/// dtypes; checks nothing about shapes or memory.
CallTypes check_types(BinaryOp op, const Operand& a, const Operand& b, DType out, Promotion rule);

/// Whether the call runs the same-dtype kernels: no scalar, one dtype of the original six for
/// a, b, out, the result and the compute type, and one of the original six operations.
bool runs_typed(const CallTypes& t);

}  // namespace ewise::detail
