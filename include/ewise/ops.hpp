// ewise/ops.hpp — the built-in binary operations and their exact semantics.
//
// The operations are NumPy's binary ufuncs, under NumPy's names; the short names of earlier
// releases (sub, mul, div, min, max) are aliases. What dtype each computes in and returns is
// ewise/promotion.hpp's op_types(): the operands are converted to the compute type (f32 for
// results of 16-bit floats, else the result's own type; bool for logical_*), combined by the
// functor below and rounded once to the result dtype, then cast to the output's dtype.
//
// Semantics, equal to NumPy's bit for bit wherever NumPy defines the result:
//   add, subtract, multiply   IEEE-754 on floats; integers wrap modulo 2^bits; on bool add is
//                             logical or and multiply logical and (subtract is refused).
//   divide                    true division: integer and bool operands are divided as floats
//                             (NumPy: f64; PyTorch: the default f32). x/0 is ±inf, 0/0 NaN.
//   floor_divide, remainder   Python's: the quotient rounded toward -inf and a remainder with the
//                             divisor's sign. Integers: x // 0 and x % 0 are 0 (NumPy warns and
//                             gives 0), MIN // -1 wraps to MIN. Floats: NumPy's npy_divmod
//                             (x // 0 is x/0; x % 0 is NaN; a zero remainder takes the divisor's
//                             sign).
//   power                     floats: pow computed in f64 and rounded once to the result (for
//                             f32 and 16-bit results a faster evaluation of the same value,
//                             detail/pow_f32.hpp); x ** 0 and 1 ** y are 1 for every x and y, NaN
//                             included. libm's pow (the CPU reference) and CUDA's differ in the
//                             last bit: the backends agree within 1 ulp of an f32 or 16-bit
//                             result (where the rounding is close enough to need f64 pow) and 2
//                             ulp of an f64 one. NumPy's f32 power is libm's powf, up to 1 ulp.
//                             Integers: exact, wrapping; a negative exponent, an error in NumPy,
//                             gives PyTorch's answer (1 for base 1, ±1 for base -1, else 0).
//   minimum, maximum          NaN propagating. Operands that compare equal (-0 and +0) give a
//                             (NumPy's choice for ±0 depends on the dtype and length).
//   fmin, fmax                NaN ignoring: a NaN operand gives the other one; ties give a.
//   equal ... greater_equal   IEEE comparison in the operands' common type, result bool. An
//                             integer with a Python int it cannot hold compares in the smallest
//                             dtype that holds both (int8 < 300 is true), as NumPy 2 does. A
//                             signed integer tensor with a u64 tensor compares exactly under
//                             NumPy's rule, as NumPy 2 does (not in their common dtype f64, where
//                             2^63 - 1 and 2^63 are equal; detail::CallTypes::exact), and so with
//                             a typed u64 or signed Scalar (src/call_types.cpp).
//   logical_and/or/xor        on each operand's truth (nonzero; NaN is true), result bool.
//   bitwise_and/or/xor        integers and bool only.
// NaN: every floating value an ewise operation writes (dense results, user functors' included;
// sparse products and sums, coalesce, conversions between COO and dense) is written as the
// canonical NaN when it is NaN: sign clear, every exponent and payload bit set (f16 and bf16
// 0x7FFF, f32 0x7FFFFFFF, f64 0x7FFFFFFFFFFFFFFF), whatever the NaN operands' signs and
// payloads. So "bit-identical" holds for NaN too.
// PyTorch differs from NumPy in: the dtype of divide on integers (above), the promotion rules
// (ewise/promotion.hpp), integer division by zero (PyTorch's CPU raises, its CUDA gives -1);
// ewise gives NumPy's values for both. PyTorch's f32 power is CUDA's powf (up to a few ulp from
// the correctly rounded result, which ewise's is in all but rare cases), and its 16-bit
// floor_divide and division by a scalar (a multiplication by the reciprocal) may differ from
// NumPy's in the last bit: ewise keeps NumPy's.
// For the built-in operations every GPU kernel and the CPU reference give bit-identical results
// (power on floats: within the ulp above).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#if defined(__CUDACC__)
#define EWISE_HD __host__ __device__ __forceinline__
#else
#define EWISE_HD inline
#endif

#include <math.h>

#include "ewise/detail/pow_f32.hpp"

namespace ewise {

/// The built-in operations. The first six keep their values of earlier releases.
enum class BinaryOp : std::uint8_t {
  add,
  subtract,
  multiply,
  divide,
  minimum,
  maximum,
  floor_divide,
  remainder,
  power,
  fmin,
  fmax,
  equal,
  not_equal,
  less,
  less_equal,
  greater,
  greater_equal,
  logical_and,
  logical_or,
  logical_xor,
  bitwise_and,
  bitwise_or,
  bitwise_xor,
  // the short names of earlier releases
  sub = subtract,
  mul = multiply,
  div = divide,
  min = minimum,
  max = maximum,
};

inline constexpr BinaryOp kAllOps[] = {
    BinaryOp::add,          BinaryOp::subtract,    BinaryOp::multiply,    BinaryOp::divide,
    BinaryOp::minimum,      BinaryOp::maximum,     BinaryOp::floor_divide, BinaryOp::remainder,
    BinaryOp::power,        BinaryOp::fmin,        BinaryOp::fmax,        BinaryOp::equal,
    BinaryOp::not_equal,    BinaryOp::less,        BinaryOp::less_equal,  BinaryOp::greater,
    BinaryOp::greater_equal, BinaryOp::logical_and, BinaryOp::logical_or, BinaryOp::logical_xor,
    BinaryOp::bitwise_and,  BinaryOp::bitwise_or,  BinaryOp::bitwise_xor};

/// NumPy's name ("add", "subtract", ..., "bitwise_xor"); "unknown" outside the enum.
const char* op_name(BinaryOp op);
/// Parses NumPy's name or a short alias (sub, mul, div, min, max); throws InvalidArgument.
BinaryOp parse_op(std::string_view name);

/// What an operation returns, by kind (see promotion.hpp for the dtypes).
enum class OpFamily : std::uint8_t {
  arithmetic,  ///< the operands' common type (add ... fmax but divide)
  divide,      ///< a floating type
  comparison,  ///< bool, compared in the common type
  logical,     ///< bool, of bools
  bitwise,     ///< the common type, integers and bool only
};
OpFamily op_family(BinaryOp op);

/// Device-and-host functors over the compute types: bool, the integers, float and double.
namespace ops {

namespace detail {
template <class T>
EWISE_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}
/// Unsigned arithmetic of at least T's width and unsigned int's (bool excluded): wraps instead
/// of overflowing. (Narrower unsigned types would be promoted to int, where 65535 * 65535
/// overflows.)
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
EWISE_HD T floor_(T a) {
  if constexpr (std::is_same_v<T, float>) return ::floorf(a);
  else return ::floor(a);
}
template <class T>
EWISE_HD T copysign_(T a, T b) {
  if constexpr (std::is_same_v<T, float>) return ::copysignf(a, b);
  else return ::copysign(a, b);
}

template <class T>
EWISE_HD T trunc_(T a) {
  if constexpr (std::is_same_v<T, float>) return ::truncf(a);
  else return ::trunc(a);
}
template <class T>
EWISE_HD T fma_(T a, T b, T c) {
  if constexpr (std::is_same_v<T, float>) return ::fmaf(a, b, c);
  else return ::fma(a, b, c);
}

#ifdef __CUDA_ARCH__
/// a = k * b + r exactly, k the truncated quotient and r fmod's remainder, where the rounded
/// quotient q = a / b is under `limit` in magnitude and b is finite; false elsewhere. k starts
/// as trunc(q), the truncated quotient or one past it (where q rounded up to an integer); then
/// r = a - k * b is one fused multiply-add that rounds nothing (either remainder is a multiple
/// of the smaller ulp under |b|); where r's sign is not a's, k was one past: k steps back and b
/// goes into r (exactly: the sum is fmod's result). Device only: the host keeps the math
/// library's fmod, so the CPU reference checks this.
template <class T>
__device__ __forceinline__ bool trunc_divmod(T a, T b, T limit, T& q, T& k, T& r) {
  q = a / b;
  if (!(q < limit && q > -limit && b - b == T(0))) return false;  // b - b: NaN for an infinite b
  k = trunc_(q);
  r = fma_(-k, b, a);
  if (r != T(0) && (r < T(0)) != (a < T(0))) {
    r += copysign_(b, a);
    k -= copysign_(T(1), q);
  }
  return true;
}
#endif

/// fmod, exact: trunc_divmod on the device under 2^digits (the math library's loop over the
/// exponent difference made floor_divide 1.2 times slower than PyTorch's), else the library's.
template <class T>
EWISE_HD T fmod_(T a, T b) {
#ifdef __CUDA_ARCH__
  T q, k, r;
  if (trunc_divmod(a, b, std::is_same_v<T, float> ? T(0x1p24f) : T(0x1p53), q, k, r))
    return r == T(0) ? copysign_(T(0), a) : r;
#endif
  if constexpr (std::is_same_v<T, float>) return ::fmodf(a, b);
  else return ::fmod(a, b);
}

/// NumPy's npy_divmod for floats: the floored quotient, and the remainder in `mod`.
template <class T>
EWISE_HD T divmod(T a, T b, T& mod) {
  mod = fmod_(a, b);
  if (b == T(0)) return a / b;
  T div = (a - mod) / b;
  if (mod != T(0)) {
    if ((b < T(0)) != (mod < T(0))) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = copysign_(T(0), b);
  }
  T floordiv;
  if (div != T(0)) {
    floordiv = floor_(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = copysign_(T(0), a / b);
  }
  return floordiv;
}
}  // namespace detail

struct Add {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wrap_t<T>>(a) + static_cast<detail::wrap_t<T>>(b));
    else return a + b;
  }
};

struct Sub {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;  // never called: refused on bool
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wrap_t<T>>(a) - static_cast<detail::wrap_t<T>>(b));
    else return a - b;
  }
};

struct Mul {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wrap_t<T>>(a) * static_cast<detail::wrap_t<T>>(b));
    else return a * b;
  }
};

/// True division: called with float or double only (op_types never computes it in integers).
struct Div {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    return a / b;
  }
};

struct FloorDiv {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (detail::is_int_v<T>) {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return Sub{}(T(0), a);  // MIN // -1 wraps to MIN
        const T q = static_cast<T>(a / b);
        return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
      } else {
        return static_cast<T>(a / b);
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      return a;  // never called: bool computes in i8
    } else {
#ifdef __CUDA_ARCH__
      // divmod's floored quotient without its second division: under 2^(digits - 3) the
      // quotient (a - mod) / b it rounds is within 0.375 of the integer k, which its rounding
      // to nearest returns; a zero quotient takes the sign of a / b, as there.
      T q, k, r;
      if (detail::trunc_divmod(a, b, std::is_same_v<T, float> ? T(0x1p21f) : T(0x1p50), q, k, r)) {
        if (r != T(0) && (r < T(0)) != (b < T(0))) k -= T(1);
        return k == T(0) ? detail::copysign_(T(0), q) : k;
      }
#endif
      T mod;
      return detail::divmod(a, b, mod);
    }
  }
};

struct Remainder {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (detail::is_int_v<T>) {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);  // MIN % -1 would trap
        const T r = static_cast<T>(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      } else {
        return static_cast<T>(a % b);
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      return false;  // never called: bool computes in i8
    } else {
      T mod;
      detail::divmod(a, b, mod);
      return mod;
    }
  }
};

struct Pow {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (detail::is_int_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0);
      }
      detail::wrap_t<T> r = 1, base = static_cast<detail::wrap_t<T>>(a);
      for (auto e = static_cast<detail::wrap_t<T>>(b); e != 0; e >>= 1) {
        if (e & 1) r = static_cast<detail::wrap_t<T>>(r * base);
        base = static_cast<detail::wrap_t<T>>(base * base);
      }
      return static_cast<T>(r);
    } else if constexpr (std::is_same_v<T, bool>) {
      return a || !b;  // PyTorch's rule (NumPy's computes bools in i8)
    } else {
      // C's pow: x ** 0 and 1 ** y are 1 for every x and y, signaling NaNs too (where glibc's
      // pow returns NaN and CUDA's 1).
      if (b == T(0) || a == T(1)) return T(1);
      if constexpr (std::is_same_v<T, float>) return detail::pow_f32(a, b);
      else return ::pow(a, b);
    }
  }
  /// The f32 power's common cases alone (false where only operator() gives r): the converting
  /// kernel runs this for a chunk of elements, then operator() for those it refused, so that
  /// f64 pow's code sits outside the chunk's unrolled loop.
  EWISE_HD bool fast(float a, float b, float& r) const { return detail::pow_f32_fast(a, b, r); }
};

struct Min {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if (detail::is_nan(a) || detail::is_nan(b)) return a + b;  // a NaN
    return b < a ? b : a;
  }
};

struct Max {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if (detail::is_nan(a) || detail::is_nan(b)) return a + b;  // a NaN
    return a < b ? b : a;
  }
};

struct FMin {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if (detail::is_nan(b)) return a;
    if (detail::is_nan(a)) return b;
    return b < a ? b : a;
  }
};

struct FMax {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if (detail::is_nan(b)) return a;
    if (detail::is_nan(a)) return b;
    return a < b ? b : a;
  }
};

struct Equal {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a == b; }
};
struct NotEqual {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a != b; }
};
struct Less {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a < b; }
};
struct LessEqual {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a <= b; }
};
struct Greater {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a > b; }
};
struct GreaterEqual {
  template <class T>
  EWISE_HD bool operator()(T a, T b) const { return a >= b; }
};

/// The logical operations take their operands' truth (the caller converts them to bool).
struct LogicalAnd {
  EWISE_HD bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOr {
  EWISE_HD bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalXor {
  EWISE_HD bool operator()(bool a, bool b) const { return a != b; }
};

struct BitAnd {
  template <class T>
  EWISE_HD T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitOr {
  template <class T>
  EWISE_HD T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitXor {
  template <class T>
  EWISE_HD T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

/// NumPy's names for the functors of earlier releases.
using Subtract = Sub;
using Multiply = Mul;
using Divide = Div;
using Minimum = Min;
using Maximum = Max;

}  // namespace ops

namespace detail {
[[noreturn]] void throw_unknown_op(BinaryOp op);  ///< InvalidArgument naming the value
}  // namespace detail

/// Calls f(functor) with the ops:: functor of `op` (throws InvalidArgument outside the enum).
template <class F>
decltype(auto) with_op(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::add: return f(ops::Add{});
    case BinaryOp::subtract: return f(ops::Sub{});
    case BinaryOp::multiply: return f(ops::Mul{});
    case BinaryOp::divide: return f(ops::Div{});
    case BinaryOp::minimum: return f(ops::Min{});
    case BinaryOp::maximum: return f(ops::Max{});
    case BinaryOp::floor_divide: return f(ops::FloorDiv{});
    case BinaryOp::remainder: return f(ops::Remainder{});
    case BinaryOp::power: return f(ops::Pow{});
    case BinaryOp::fmin: return f(ops::FMin{});
    case BinaryOp::fmax: return f(ops::FMax{});
    case BinaryOp::equal: return f(ops::Equal{});
    case BinaryOp::not_equal: return f(ops::NotEqual{});
    case BinaryOp::less: return f(ops::Less{});
    case BinaryOp::less_equal: return f(ops::LessEqual{});
    case BinaryOp::greater: return f(ops::Greater{});
    case BinaryOp::greater_equal: return f(ops::GreaterEqual{});
    case BinaryOp::logical_and: return f(ops::LogicalAnd{});
    case BinaryOp::logical_or: return f(ops::LogicalOr{});
    case BinaryOp::logical_xor: return f(ops::LogicalXor{});
    case BinaryOp::bitwise_and: return f(ops::BitAnd{});
    case BinaryOp::bitwise_or: return f(ops::BitOr{});
    case BinaryOp::bitwise_xor: return f(ops::BitXor{});
  }
  detail::throw_unknown_op(op);
}

}  // namespace ewise
