// The promotion rules of ewise/promotion.hpp, as tables of NumPy 2's and PyTorch's behaviour
// (checked against both in python/tests/test_dtypes.py).
#include "ewise/promotion.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "element.hpp"
#include "ewise/error.hpp"

namespace ewise {

namespace {

int kind_rank(DType t) {
  switch (dtype_kind(t)) {
    case DTypeKind::boolean: return 0;
    case DTypeKind::signed_int:
    case DTypeKind::unsigned_int: return 1;
    case DTypeKind::floating: return 2;
  }
  return 0;
}

DType signed_of_size(std::size_t bytes) {
  switch (bytes) {
    case 1: return DType::i8;
    case 2: return DType::i16;
    case 4: return DType::i32;
    default: return DType::i64;
  }
}

/// Two integer dtypes (NumPy and PyTorch agree where PyTorch promotes at all).
DType promote_ints(DType a, DType b) {
  const bool sa = dtype_kind(a) == DTypeKind::signed_int;
  const bool sb = dtype_kind(b) == DTypeKind::signed_int;
  const std::size_t za = dtype_size(a), zb = dtype_size(b);
  if (sa == sb) return za >= zb ? a : b;
  const DType s = sa ? a : b, u = sa ? b : a;
  if (dtype_size(u) < dtype_size(s)) return s;
  if (dtype_size(u) < 8) return signed_of_size(2 * dtype_size(u));
  return DType::f64;  // u64 with a signed integer (NumPy; PyTorch refuses u64 earlier)
}

/// NumPy 2's promotion of two dtypes (arrays, or NumPy scalars).
DType numpy_promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::b8) return b;
  if (b == DType::b8) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (!fa && !fb) return promote_ints(a, b);
  if (fa && fb) {
    if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16))
      return DType::f32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  const DType f = fa ? a : b, i = fa ? b : a;
  const std::size_t zi = dtype_size(i);
  switch (f) {
    case DType::f16: return zi == 1 ? DType::f16 : zi == 2 ? DType::f32 : DType::f64;
    case DType::bf16: return zi == 1 ? DType::bf16 : zi == 2 ? DType::f32 : DType::f64;
    case DType::f32: return zi <= 2 ? DType::f32 : DType::f64;
    default: return DType::f64;
  }
}

bool torch_unpromotable(DType t) {
  return t == DType::u16 || t == DType::u32 || t == DType::u64;
}

/// torch.promote_types.
DType torch_promote(DType a, DType b) {
  if (a == b) return a;
  if (torch_unpromotable(a) || torch_unpromotable(b)) {  // c10::promoteTypes' rule for them
    if (is_floating(a)) return a;
    if (is_floating(b)) return b;
    EWISE_EXPECTS(false, "PyTorch does not promote ", dtype_name(a), " with ", dtype_name(b),
                  " (u16, u32 and u64 promote only with a floating dtype, to it)");
  }
  if (a == DType::b8) return b;
  if (b == DType::b8) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (!fa && !fb) return promote_ints(a, b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16))
    return DType::f32;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

/// NEP 50: a Python scalar of dtype `weak` (b8, i64, f64) with an operand of dtype `strong`.
DType numpy_weak(DType strong, DType weak) {
  if (kind_rank(weak) <= kind_rank(strong)) {
    // ml_dtypes' bfloat16 takes a Python float to f32 in NumPy's ufuncs.
    if (strong == DType::bf16 && weak == DType::f64) return DType::f32;
    return strong;
  }
  return numpy_promote(strong, weak == DType::f64 ? DType::f64 : DType::i64);
}

/// torch.result_type's combine_categories: `higher` wins unless `lower` is of a higher kind.
DType torch_combine(DType higher, bool has_higher, DType lower) {
  if (!has_higher) return lower;
  if (is_floating(higher)) return higher;
  if (higher == DType::b8 || is_floating(lower)) return torch_promote(higher, lower);
  return higher;
}

DType torch_result(OperandType a, OperandType b) {
  // The three priority classes: tensors with dims, 0-d tensors, Python scalars (a Python float
  // as the default dtype f32).
  bool has[3] = {false, false, false};
  DType cls[3] = {DType::b8, DType::b8, DType::b8};
  for (const OperandType& o : {a, b}) {
    const int k = static_cast<int>(o.weight);
    DType t = o.dtype;
    if (o.weight == Weight::weak && is_floating(t)) t = DType::f32;
    cls[k] = has[k] ? torch_promote(cls[k], t) : t;
    has[k] = true;
  }
  const DType low = torch_combine(cls[1], has[1], cls[2]);
  return torch_combine(cls[0], has[0], low);
}

void check_weak_dtype(OperandType o) {
  EWISE_EXPECTS(o.weight != Weight::weak || o.dtype == DType::b8 || o.dtype == DType::i64 ||
                    o.dtype == DType::f64,
                "a Python scalar's dtype is bool, i64 or f64, not ", dtype_name(o.dtype));
}

}  // namespace

const char* promotion_name(Promotion p) { return p == Promotion::torch ? "torch" : "numpy"; }

DType result_type(Promotion rule, OperandType a, OperandType b) {
  check_weak_dtype(a);
  check_weak_dtype(b);
  EWISE_EXPECTS(a.weight != Weight::weak || b.weight != Weight::weak,
                "two Python scalars (", dtype_name(a.dtype), ", ", dtype_name(b.dtype),
                "): at least one operand must be a tensor");
  if (rule == Promotion::torch) return torch_result(a, b);
  if (a.weight == Weight::weak) return numpy_weak(b.dtype, a.dtype);
  if (b.weight == Weight::weak) return numpy_weak(a.dtype, b.dtype);
  return numpy_promote(a.dtype, b.dtype);
}

OpTypes op_types(BinaryOp op, Promotion rule, OperandType a, OperandType b) {
  const DType common = result_type(rule, a, b);
  const auto refuse = [&](const char* why) {
    EWISE_EXPECTS(false, op_name(op), " is not defined for ", dtype_name(a.dtype), " and ",
                  dtype_name(b.dtype), " (common dtype ", dtype_name(common), "): ", why);
  };
  switch (op_family(op)) {
    case OpFamily::divide:
      if (!is_floating(common))
        return rule == Promotion::torch ? OpTypes{DType::f32, DType::f32}
                                        : OpTypes{DType::f64, DType::f64};
      return {common, common};
    case OpFamily::comparison: return {common, DType::b8};
    case OpFamily::logical: return {DType::b8, DType::b8};
    case OpFamily::bitwise:
      if (is_floating(common)) refuse("bitwise operations take integers and bool");
      return {common, common};
    case OpFamily::arithmetic:
      if (common == DType::b8) {
        if (op == BinaryOp::subtract)
          refuse("subtracting bools is not supported (NumPy and PyTorch refuse it; use "
                 "bitwise_xor or logical_xor)");
        if (op == BinaryOp::power && rule == Promotion::torch)
          return {DType::b8, DType::b8};  // torch.pow on bools stays bool: x ** y = x or not y
        if (op == BinaryOp::floor_divide || op == BinaryOp::remainder || op == BinaryOp::power)
          return {DType::i8, DType::i8};  // NumPy has no bool loop: its next one is int8
      }
      return {common, common};
  }
  return {common, common};
}

bool can_cast_same_kind(DType from, DType to) {
  switch (dtype_kind(from)) {
    case DTypeKind::boolean: return true;
    case DTypeKind::unsigned_int: return to != DType::b8;
    case DTypeKind::signed_int:
      return dtype_kind(to) == DTypeKind::signed_int || is_floating(to);
    case DTypeKind::floating: return is_floating(to);
  }
  return false;
}

// ---- Scalar -------------------------------------------------------------------------------

Scalar Scalar::integral(DType dtype, bool weak, std::uint64_t bits) {
  Scalar s;
  s.dtype_ = dtype;
  s.weak_ = weak;
  s.u_ = bits;
  s.i_ = static_cast<std::int64_t>(bits);
  s.f_ = dtype_kind(dtype) == DTypeKind::unsigned_int ? static_cast<double>(s.u_)
                                                     : static_cast<double>(s.i_);
  return s;
}

Scalar Scalar::weak_bool(bool v) { return integral(DType::b8, true, v); }

Scalar Scalar::weak_int(std::int64_t v) {
  return integral(DType::i64, true, static_cast<std::uint64_t>(v));
}

Scalar Scalar::weak_float(double v) {
  Scalar s;
  s.dtype_ = DType::f64;
  s.weak_ = true;
  s.f_ = v;
  return s;
}

Scalar Scalar::of(DType dtype, double v) {
  if (!is_floating(dtype)) {
    EWISE_EXPECTS(v == std::trunc(v) && std::isfinite(v), "a ", dtype_name(dtype),
                  " scalar needs an integral value, not ", v);
    if (dtype_kind(dtype) == DTypeKind::unsigned_int) {
      EWISE_EXPECTS(v >= 0 && v < 18446744073709551616.0, v, " is out of range for ",
                    dtype_name(dtype));
      return of_uint(dtype, static_cast<std::uint64_t>(v));
    }
    EWISE_EXPECTS(v >= -9223372036854775808.0 && v < 9223372036854775808.0, v,
                  " is out of range for ", dtype_name(dtype));
    return of_int(dtype, static_cast<std::int64_t>(v));
  }
  Scalar s;
  s.dtype_ = dtype;
  s.f_ = detail::round_to(dtype, v);
  return s;
}

Scalar Scalar::of_int(DType dtype, std::int64_t v) {
  if (is_floating(dtype)) return of(dtype, static_cast<double>(v));
  if (dtype_kind(dtype) == DTypeKind::unsigned_int) {
    EWISE_EXPECTS(v >= 0, v, " is out of range for ", dtype_name(dtype));
    return of_uint(dtype, static_cast<std::uint64_t>(v));
  }
  EWISE_EXPECTS(detail::fits(dtype, v), v, " is out of range for ", dtype_name(dtype));
  return integral(dtype, false, static_cast<std::uint64_t>(v));
}

Scalar Scalar::of_uint(DType dtype, std::uint64_t v) {
  if (is_floating(dtype)) return of(dtype, static_cast<double>(v));
  if (dtype_kind(dtype) != DTypeKind::unsigned_int) {
    EWISE_EXPECTS(v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), v,
                  " is out of range for ", dtype_name(dtype));
    return of_int(dtype, static_cast<std::int64_t>(v));
  }
  EWISE_EXPECTS(dtype == DType::u64 || v < (std::uint64_t{1} << (8 * dtype_size(dtype))), v,
                " is out of range for ", dtype_name(dtype));
  return integral(dtype, false, v);
}

std::string Scalar::str() const {
  std::string v = is_floating(dtype_) ? detail::concat(f_)
                  : dtype_kind(dtype_) == DTypeKind::unsigned_int ? std::to_string(u_)
                  : dtype_ == DType::b8 ? (i_ ? "True" : "False")
                                        : std::to_string(i_);
  if (!weak_) return v + " (" + dtype_name(dtype_) + ")";
  return v + (dtype_ == DType::b8 ? " (Python bool)" : dtype_ == DType::i64 ? " (Python int)"
                                                                            : " (Python float)");
}

}  // namespace ewise
