// ewise/promotion.hpp — mixed dtypes: the result dtype of a ⊙ b under NumPy 2's or PyTorch's
// rules, the dtype each operation computes in, the casts an output allows, and scalar operands.
//
//   result_type(Promotion::numpy, {DType::i32}, {DType::f32})  // f64 (NumPy 2)
//   result_type(Promotion::torch, {DType::i32}, {DType::f32})  // f32 (PyTorch)
//   op_types(BinaryOp::divide, Promotion::numpy, {DType::i32}, {DType::i32})  // f64, f64
//   ewise::binary(BinaryOp::multiply, x, Scalar::weak_float(0.5), out);       // x * 0.5
//
// NumPy's rule is NEP 50 (NumPy 2): arrays of any rank promote by their dtypes; a Python scalar
// (Weight::weak) takes the array's dtype when its kind (bool < integer < floating) is not
// higher, else the default of its kind (i64, f64) promoted with the array. bf16 promotes as
// ml_dtypes' bfloat16 does in NumPy's ufuncs: with bool, i8 and u8 to bf16, with i16, u16 and
// f16 to f32, with wider integers to f64, with a Python float to f32.
// PyTorch's rule is torch.result_type: tensors with dims promote by their dtypes (an integer with
// a float gives the float, u8 with i8 gives i16, f16 with bf16 gives f32; u16, u32 and u64
// promote only with a floating dtype, to it); a 0-d tensor or a Python scalar counts only when its kind is
// higher than the tensors', a Python float then as the default dtype f32.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// Whose promotion rules a call follows.
enum class Promotion : std::uint8_t {
  numpy,  ///< NumPy 2 (NEP 50); also CuPy's and the default
  torch,  ///< torch.result_type
};
const char* promotion_name(Promotion p);  ///< "numpy", "torch"

/// How an operand takes part in promotion.
enum class Weight : std::uint8_t {
  tensor,    ///< an array or tensor (NumPy: of any rank, 0-d included)
  zero_dim,  ///< a 0-d tensor (PyTorch ranks it below tensors with dims; NumPy as `tensor`)
  weak,      ///< a Python scalar: its dtype is b8 (bool), i64 (int) or f64 (float)
};

struct OperandType {
  DType dtype = DType::f32;
  Weight weight = Weight::tensor;
};

/// The common dtype of a and b under `rule`; throws InvalidArgument naming both when there is
/// none (PyTorch: u16, u32, u64 with another non-floating dtype; two weak scalars).
DType result_type(Promotion rule, OperandType a, OperandType b);

/// What an operation on a and b computes in and returns.
struct OpTypes {
  /// The dtype the operands are converted to before the operation (its arithmetic runs in f32
  /// when this is f16 or bf16): the common dtype; i8 for floor_divide, remainder and power on
  /// bools; the default float for divide on integers; b8 for the logical operations.
  DType compute = DType::f32;
  /// The dtype of the result: `compute`, or b8 for comparisons and logical operations.
  DType result = DType::f32;
};

/// The types of op(a, b) under `rule`. Throws InvalidArgument naming the op and the dtypes where
/// the framework refuses the operation: subtract on bools, bitwise operations on floats.
OpTypes op_types(BinaryOp op, Promotion rule, OperandType a, OperandType b);

/// NumPy's casting='same_kind': bool to anything, unsigned to any integer or float, signed to
/// signed integers and floats, floats to floats. The rule for a call's `out`.
bool can_cast_same_kind(DType from, DType to);

/// A scalar operand, passed to the kernel by value (nothing allocated, nothing copied).
class Scalar {
 public:
  /// Python scalars: weak in promotion (Weight::weak).
  static Scalar weak_bool(bool v);
  static Scalar weak_int(std::int64_t v);
  static Scalar weak_float(double v);
  /// A typed scalar (NumPy scalar, 0-d tensor value): promotes as a 0-d tensor of its dtype.
  /// The value is converted to the dtype (rounded to nearest-even for floats; an integer or bool
  /// dtype needs a value it holds exactly, else InvalidArgument).
  static Scalar of(DType dtype, double v);
  static Scalar of_int(DType dtype, std::int64_t v);
  static Scalar of_uint(DType dtype, std::uint64_t v);

  DType dtype() const noexcept { return dtype_; }
  bool weak() const noexcept { return weak_; }
  OperandType type() const noexcept {
    return {dtype_, weak_ ? Weight::weak : Weight::zero_dim};
  }
  /// The value, by the dtype's kind: floats (and the 16-bit ones, exactly) as double; signed
  /// integers and bool as int64; unsigned integers as uint64.
  double as_double() const noexcept { return f_; }
  std::int64_t as_int() const noexcept { return i_; }
  std::uint64_t as_uint() const noexcept { return u_; }
  std::string str() const;  ///< "2.5 (Python float)", "3 (i32)"

 private:
  /// A bool or integer scalar of `dtype` whose value has two's-complement bits `bits`.
  static Scalar integral(DType dtype, bool weak, std::uint64_t bits);

  DType dtype_ = DType::f64;
  bool weak_ = false;
  double f_ = 0;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
};

/// An operand of a dense operation (ewise/dense.hpp): a tensor view or a scalar, passed by value.
class Operand {
 public:
  Operand(const ConstTensorView& v) : view_(v) {}  // NOLINT: a view is an operand
  Operand(const TensorView& v) : view_(v) {}       // NOLINT
  /// A view's parts, so that a braced {data, desc, memory} is an operand as it is a view.
  Operand(const void* data, TensorDesc desc, Memory memory) : view_(data, desc, memory) {}
  /// Anything that converts to a view (DeviceTensor, HostTensor: ewise/buffer.hpp).
  template <class T, class = std::enable_if_t<std::is_convertible_v<const T&, ConstTensorView> &&
                                              !std::is_same_v<T, ConstTensorView> &&
                                              !std::is_same_v<T, TensorView>>>
  Operand(const T& t) : view_(static_cast<ConstTensorView>(t)) {}  // NOLINT
  Operand(const Scalar& s) : scalar_(s), is_scalar_(true) {}  // NOLINT

  bool is_scalar() const noexcept { return is_scalar_; }
  const ConstTensorView& view() const noexcept { return view_; }  ///< a view's (else empty)
  const Scalar& scalar() const noexcept { return scalar_; }       ///< a scalar's
  /// Its part in promotion: a scalar's type(); a view's dtype, zero_dim for a rank-0 view under
  /// PyTorch's rule.
  OperandType type(Promotion rule) const noexcept {
    if (is_scalar_) return scalar_.type();
    const bool zero_dim = rule == Promotion::torch && view_.desc.rank() == 0;
    return {view_.desc.dtype, zero_dim ? Weight::zero_dim : Weight::tensor};
  }

 private:
  ConstTensorView view_;
  Scalar scalar_;
  bool is_scalar_ = false;
};

}  // namespace ewise
