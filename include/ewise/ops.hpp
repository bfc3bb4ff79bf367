// ewise/ops.hpp — the built-in binary operations and their exact semantics.
//
// Floating types (f16, bf16 are computed in f32 and rounded once to nearest-even; f32 and f64 in
// their own type): IEEE-754 add, sub, mul, div (x/0 is ±inf, 0/0 is NaN).
// min and max propagate NaN: if either operand is NaN the result is NaN. When the operands
// compare equal (including -0 and +0) the result is `a`.
// Integer types (i32, i64): add, sub and mul wrap modulo 2^bits (two's complement); div
// truncates toward zero; x / 0 is 0 and MIN / -1 is MIN (wrapping), so no input is undefined.
// NaN: every floating value an ewise operation writes (dense results, user functors' included;
// sparse products and sums, coalesce, conversions between COO and dense) is written as the
// canonical NaN when it is NaN: sign clear, every exponent and payload bit set (f16 and bf16
// 0x7FFF, f32 0x7FFFFFFF, f64 0x7FFFFFFFFFFFFFFF), whatever the NaN operands' signs and
// payloads. So "bit-identical" holds for NaN too.
// For the built-in operations every GPU kernel and the CPU reference give bit-identical results.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#if defined(__CUDACC__)
#define EWISE_HD __host__ __device__ __forceinline__
#else
#define EWISE_HD inline
#endif

namespace ewise {

enum class BinaryOp : std::uint8_t { add, sub, mul, div, min, max };

inline constexpr BinaryOp kAllOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                                       BinaryOp::div, BinaryOp::min, BinaryOp::max};

const char* op_name(BinaryOp op);  ///< "add", "sub", "mul", "div", "min", "max"
/// Parses an op name as printed by op_name; throws InvalidArgument otherwise.
BinaryOp parse_op(std::string_view name);

/// Device-and-host functors over the compute types float, double, int32_t and int64_t.
namespace ops {

namespace detail {
template <class T>
EWISE_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}
template <class T>
using wide_unsigned_t = std::make_unsigned_t<T>;
}  // namespace detail

struct Add {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wide_unsigned_t<T>>(a) +
                            static_cast<detail::wide_unsigned_t<T>>(b));
    else return a + b;
  }
};

struct Sub {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wide_unsigned_t<T>>(a) -
                            static_cast<detail::wide_unsigned_t<T>>(b));
    else return a - b;
  }
};

struct Mul {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<detail::wide_unsigned_t<T>>(a) *
                            static_cast<detail::wide_unsigned_t<T>>(b));
    else return a * b;
  }
};

struct Div {
  template <class T>
  EWISE_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);
      if (b == T(-1)) return Sub{}(T(0), a);  // wraps MIN / -1 to MIN
      return a / b;
    } else {
      return a / b;
    }
  }
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

}  // namespace ops
}  // namespace ewise
