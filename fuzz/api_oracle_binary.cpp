// fuzz/api_oracle_binary.cpp — the api oracle's binary call (api_oracle.hpp): its dtypes from
// the frameworks' own tables (promotion_tables.hpp) and the rules of ewise/promotion.hpp's and
// ewise/ops.hpp's text, and its expected values: each operand converted to the compute type,
// the ops.hpp functor, the result rounded to the result dtype, then cast to out's dtype.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "api_oracle.hpp"
#include "ewise/half.hpp"
#include "internal.hpp"
#include "promotion_tables.hpp"

namespace ewise::fuzz {
namespace {

using namespace tables;

DType numpy_promote(DType a, DType b) {
  return parse_dtype(kNumpyAdd[index_in(kNumpyOrder, a)][index_in(kNumpyOrder, b)]);
}

/// torch.promote_types; false where PyTorch refuses (u16, u32, u64 with a non-float).
bool torch_promote(DType a, DType b, DType& out) {
  if (a == b) {
    out = a;
    return true;
  }
  const auto barebones = [](DType t) { return t == DType::u16 || t == DType::u32 || t == DType::u64; };
  if (barebones(a) || barebones(b)) {
    if (!is_floating(a) && !is_floating(b)) return false;
    out = is_floating(a) ? a : b;
    return true;
  }
  out = parse_dtype(kTorchPromote[index_in(kTorchOrder, a)][index_in(kTorchOrder, b)]);
  return true;
}

/// NumPy 2 (NEP 50): arrays of any rank and typed scalars promote by the table; a Python
/// scalar y takes x's dtype by NumPy's own results with Python scalars (x is never one).
DType numpy_common(OperandType x, OperandType y) {
  if (y.weight != Weight::weak) return numpy_promote(x.dtype, y.dtype);
  const int i = index_in(kNumpyOrder, x.dtype);
  return parse_dtype(y.dtype == DType::b8    ? kNumpyWeakBool[i]
                     : y.dtype == DType::i64 ? kNumpyWeakInt[i]
                                             : kNumpyWeakFloat[i]);
}

/// torch.result_type: the operands in three classes (tensors with dims, 0-d tensors and typed
/// scalars, Python scalars: an int as i64, a float as the default dtype f32), each promoted
/// within; a lower class counts only when of a higher kind (combine_categories). False where
/// PyTorch refuses.
bool torch_common(OperandType x, OperandType y, DType& out) {
  struct Class {
    bool has = false;
    DType t = DType::b8;
  };
  Class cls[3];
  bool ok = true;
  for (const OperandType& o : {x, y}) {
    const int k = o.weight == Weight::tensor ? 0 : o.weight == Weight::zero_dim ? 1 : 2;
    const DType t = k == 2 && is_floating(o.dtype) ? DType::f32 : o.dtype;
    if (!cls[k].has) cls[k] = {true, t};
    else ok = torch_promote(cls[k].t, t, cls[k].t) && ok;
  }
  const auto combine = [](const Class& higher, const Class& lower, Class& result) {
    result = higher.has ? higher : lower;
    if (!higher.has || !lower.has || is_floating(higher.t)) return true;
    if (higher.t == DType::b8 || is_floating(lower.t))
      return torch_promote(higher.t, lower.t, result.t);
    return true;
  };
  Class low, all;
  if (!ok || !combine(cls[1], cls[2], low) || !combine(cls[0], low, all)) return false;
  out = all.t;
  return true;
}

/// Whether integer dtype t holds v.
bool holds(DType t, std::int64_t v) {
  const int bits = 8 * static_cast<int>(dtype_size(t));
  if (dtype_kind(t) == DTypeKind::unsigned_int)
    return v >= 0 && (bits == 64 || v < (std::int64_t{1} << bits));
  return bits == 64 || (v >= -(std::int64_t{1} << (bits - 1)) && v < (std::int64_t{1} << (bits - 1)));
}

/// v rounded to floating dtype t (bf16 through float: ewise/half.hpp).
double round_to(DType t, double v) {
  switch (t) {
    case DType::f16: return f16_bits_to_float(double_to_f16_bits(v));
    case DType::bf16: return bf16_bits_to_float(double_to_bf16_bits(v));
    case DType::f32: return static_cast<float>(v);
    default: return v;
  }
}

bool is_bitwise(BinaryOp op) {
  return op == BinaryOp::bitwise_and || op == BinaryOp::bitwise_or || op == BinaryOp::bitwise_xor;
}
bool is_comparison(BinaryOp op) {
  return op == BinaryOp::equal || op == BinaryOp::not_equal || op == BinaryOp::less ||
         op == BinaryOp::less_equal || op == BinaryOp::greater || op == BinaryOp::greater_equal;
}
bool is_logical(BinaryOp op) {
  return op == BinaryOp::logical_and || op == BinaryOp::logical_or || op == BinaryOp::logical_xor;
}

/// The C++ type of a compute dtype: float for the 16-bit floats and f32.
template <class F>
void with_compute(DType t, F&& f) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::b8: return f(bool{});
    case DType::i8: return f(std::int8_t{});
    case DType::u8: return f(std::uint8_t{});
    case DType::i16: return f(std::int16_t{});
    case DType::u16: return f(std::uint16_t{});
    case DType::i32: return f(std::int32_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u64: return f(std::uint64_t{});
  }
}

/// NumPy's cast of x to C: to bool, nonzero (NaN is true); otherwise C's conversion (integers
/// wrap; floats never reach an integer C: the compute dtype of a float operand is a float).
template <class C, class X>
C cast_to(X x) {
  if constexpr (std::is_same_v<C, bool>) return x != X(0);
  else return static_cast<C>(x);
}

template <class T>
T raw(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// The element of dtype t at p in compute type C.
template <class C>
C load_as(DType t, const std::uint8_t* p) {
  switch (t) {
    case DType::f16: return cast_to<C>(f16_bits_to_float(raw<std::uint16_t>(p)));
    case DType::bf16: return cast_to<C>(bf16_bits_to_float(raw<std::uint16_t>(p)));
    case DType::f32: return cast_to<C>(raw<float>(p));
    case DType::f64: return cast_to<C>(raw<double>(p));
    case DType::b8: return cast_to<C>(p[0] != 0);
    case DType::i8: return cast_to<C>(raw<std::int8_t>(p));
    case DType::u8: return cast_to<C>(p[0]);
    case DType::i16: return cast_to<C>(raw<std::int16_t>(p));
    case DType::u16: return cast_to<C>(raw<std::uint16_t>(p));
    case DType::i32: return cast_to<C>(raw<std::int32_t>(p));
    case DType::u32: return cast_to<C>(raw<std::uint32_t>(p));
    case DType::i64: return cast_to<C>(raw<std::int64_t>(p));
    case DType::u64: return cast_to<C>(raw<std::uint64_t>(p));
  }
  return C{};
}

template <class T>
void put(std::uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

/// x stored as dtype t, rounded once to nearest-even (the 16-bit floats from a float directly,
/// from other types through double), a NaN as the canonical NaN, integers wrapped.
template <class X>
void store_as(DType t, std::uint8_t* p, X x) {
  if constexpr (std::is_floating_point_v<X>) {
    if (std::isnan(x) && is_floating(t)) {
      const std::uint64_t bits = expected_nan_bits(t);
      std::memcpy(p, &bits, dtype_size(t));
      return;
    }
  }
  const auto half = [&](bool f16) -> std::uint16_t {
    if constexpr (std::is_same_v<X, float>) return f16 ? float_to_f16_bits(x) : float_to_bf16_bits(x);
    // bf16 through float, an integer to float directly (ml_dtypes' and PyTorch's casts)
    else return f16 ? double_to_f16_bits(static_cast<double>(x)) : float_to_bf16_bits(static_cast<float>(x));
  };
  switch (t) {
    case DType::f16: return put(p, half(true));
    case DType::bf16: return put(p, half(false));
    case DType::f32: return put(p, static_cast<float>(x));
    case DType::f64: return put(p, static_cast<double>(x));
    case DType::b8: return put(p, static_cast<std::uint8_t>(x != X(0)));
    case DType::i8: return put(p, static_cast<std::int8_t>(x));
    case DType::u8: return put(p, static_cast<std::uint8_t>(x));
    case DType::i16: return put(p, static_cast<std::int16_t>(x));
    case DType::u16: return put(p, static_cast<std::uint16_t>(x));
    case DType::i32: return put(p, static_cast<std::int32_t>(x));
    case DType::u32: return put(p, static_cast<std::uint32_t>(x));
    case DType::i64: return put(p, static_cast<std::int64_t>(x));
    case DType::u64: return put(p, static_cast<std::uint64_t>(x));
  }
}

/// The functor's value v stored in out's dtype: rounded to a 16-bit result dtype first (the
/// framework's result), then cast.
template <class V>
void store_result(DType result, DType out, std::uint8_t* p, V v) {
  if (result == DType::f16 || result == DType::bf16) {
    std::uint8_t bits[2];
    store_as(result, bits, v);
    return store_as(out, p, load_as<float>(result, bits));
  }
  store_as(out, p, v);
}

}  // namespace

BinaryTypes op_dtypes(BinaryOp op, Promotion rule, OperandType x, OperandType y) {
  BinaryTypes t;
  DType common = DType::f32;
  if (rule == Promotion::numpy) common = numpy_common(x, y);
  else if (!torch_common(x, y, common)) return t;
  t.valid = true;
  t.compute = t.result = common;
  if (op == BinaryOp::divide && !is_floating(common)) {  // true division: the default float
    t.compute = t.result = rule == Promotion::numpy ? DType::f64 : DType::f32;
  } else if (is_comparison(op)) {
    t.result = DType::b8;
    const auto signed_with_u64 = [](DType a, DType b) {
      return dtype_kind(a) == DTypeKind::signed_int && b == DType::u64;
    };
    // (ops.hpp: tensors, and a typed scalar with a tensor, not a Python int.)
    t.exact = rule == Promotion::numpy && x.weight != Weight::weak && y.weight != Weight::weak &&
              (signed_with_u64(x.dtype, y.dtype) || signed_with_u64(y.dtype, x.dtype));
  } else if (is_logical(op)) {
    t.compute = t.result = DType::b8;
  } else if (is_bitwise(op)) {
    t.valid = !is_floating(common);
  } else if (common == DType::b8) {
    if (op == BinaryOp::subtract) t.valid = false;
    const bool torch_power = op == BinaryOp::power && rule == Promotion::torch;  // stays bool
    if (!torch_power &&
        (op == BinaryOp::floor_divide || op == BinaryOp::remainder || op == BinaryOp::power))
      t.compute = t.result = DType::i8;  // NumPy's next loop after bool
  }
  return t;
}

BinaryTypes binary_types(const ApiCall& c) {
  const Promotion rule = c.dense.promotion;
  // A rank-0 view ranks as a 0-d tensor under PyTorch's rule, as a typed scalar does under both.
  const auto view = [&](const TensorDesc& d) {
    return OperandType{d.dtype, rule == Promotion::torch && d.rank() == 0 ? Weight::zero_dim
                                                                          : Weight::tensor};
  };
  const OperandType y = !c.y_scalar ? view(c.y.desc)
                        : c.scalar.weak() ? OperandType{c.scalar.dtype(), Weight::weak}
                                          : OperandType{c.scalar.dtype(), Weight::zero_dim};
  BinaryTypes t = op_dtypes(c.binop, rule, view(c.x.desc), y);
  const bool half = t.compute == DType::f16 || t.compute == DType::bf16;
  const bool torch_mul_y = rule == Promotion::torch && c.binop == BinaryOp::multiply &&
                           y.weight != Weight::tensor;
  t.x_round = half && c.x.desc.dtype != t.compute;
  t.y_round = half && !c.y_scalar && c.y.desc.dtype != t.compute && !torch_mul_y;
  if (!t.valid || !c.y_scalar) return t;
  // The scalar in the compute type: NumPy's rule converts it to the compute dtype first (and
  // refuses a Python int an integer compute dtype cannot hold); PyTorch's hands a Python scalar
  // to C as is, and a typed one so only to multiply.
  const Scalar& s = c.scalar;
  const bool integral = !is_floating(s.dtype());
  const bool wide_unsigned = dtype_kind(s.dtype()) == DTypeKind::unsigned_int;
  // A Python int the integer compute dtype cannot hold (NumPy's rule): refused, but a
  // comparison compares in the smallest dtype that holds both (ops.hpp), so exactly.
  if (rule == Promotion::numpy && s.weak() && integral && t.compute != DType::b8 &&
      !is_floating(t.compute) && !holds(t.compute, s.as_int()))
    (is_comparison(c.binop) ? t.exact : t.valid) = is_comparison(c.binop);
  with_compute(t.compute, [&](auto tag) {
    using C = decltype(tag);
    C v;
    if constexpr (std::is_floating_point_v<C>) {
      double d = !integral       ? s.as_double()
                 : wide_unsigned ? static_cast<double>(s.as_uint())
                                 : static_cast<double>(s.as_int());
      if ((rule == Promotion::numpy || !s.weak()) && !torch_mul_y) d = round_to(t.compute, d);
      v = static_cast<C>(d);
    } else if constexpr (std::is_same_v<C, bool>) {
      v = integral ? s.as_uint() != 0 : s.as_double() != 0;
    } else {
      v = wide_unsigned ? static_cast<C>(s.as_uint()) : static_cast<C>(s.as_int());
    }
    std::memcpy(&t.scalar_bits, &v, sizeof v);
  });
  return t;
}

bool same_kind(DType from, DType to) {
  return kNumpySameKind[index_in(kNumpyOrder, from)][index_in(kNumpyOrder, to)] != '.';
}

bool runs_typed_kernels(const ApiCall& c, const BinaryTypes& t) {
  const DType d = c.out.desc.dtype;
  bool original_dtype = false;
  for (DType k : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i64})
    original_dtype = original_dtype || d == k;
  bool original_op = false;
  for (BinaryOp k : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide,
                     BinaryOp::minimum, BinaryOp::maximum})
    original_op = original_op || c.binop == k;
  return original_dtype && original_op && c.x.desc.dtype == d && c.y.desc.dtype == d &&
         t.result == d && t.compute == d;
}

void expect_binary(const ApiCall& c, const BinaryTypes& t, Bytes& arena) {
  const auto arena_elem = static_cast<std::int64_t>(dtype_size(c.dtype));
  const auto at = [&](const ArenaView& v, const Dims& coord) {
    return v.offset * arena_elem +
           offset_at(v.desc, coord) * static_cast<std::int64_t>(dtype_size(v.desc.dtype));
  };
  const auto run = [&](auto tag) {
    using C = decltype(tag);
    with_op(c.binop, [&](auto f) {
      using F = decltype(f);
      constexpr bool bitwise = std::is_same_v<F, ops::BitAnd> || std::is_same_v<F, ops::BitOr> ||
                               std::is_same_v<F, ops::BitXor>;
      constexpr bool comparison =
          std::is_same_v<F, ops::Equal> || std::is_same_v<F, ops::NotEqual> ||
          std::is_same_v<F, ops::Less> || std::is_same_v<F, ops::LessEqual> ||
          std::is_same_v<F, ops::Greater> || std::is_same_v<F, ops::GreaterEqual>;
      if constexpr (std::is_same_v<C, i128> && !comparison) {
        return;  // i128 (every i64 and u64 value) compares only: BinaryTypes::exact
      } else if constexpr (!bitwise || std::is_integral_v<C>) {
        for_each_coord(c.out.desc.shape, [&](const Dims& coord) {
          C x = load_as<C>(c.x.desc.dtype, c.arena.data() + at(c.x, coord));
          C y;
          if constexpr (std::is_same_v<C, i128>)  // a scalar, exactly
            y = dtype_kind(c.scalar.dtype()) == DTypeKind::unsigned_int ? i128(c.scalar.as_uint())
                                                                        : i128(c.scalar.as_int());
          else std::memcpy(&y, &t.scalar_bits, sizeof y);
          if (!c.y_scalar) y = load_as<C>(c.y.desc.dtype, c.arena.data() + at(c.y, coord));
          if constexpr (std::is_same_v<C, float>) {
            if (t.x_round) x = static_cast<float>(round_to(t.compute, x));
            if (t.y_round) y = static_cast<float>(round_to(t.compute, y));
          }
          store_result(t.result, c.out.desc.dtype, arena.data() + at(c.out, coord), f(x, y));
        });
      }
    });
  };
  if (t.exact) run(i128{});
  else with_compute(t.compute, run);
}

Bytes convert_elements(const Bytes& from, DType from_dtype, DType to) {
  const std::size_t fs = dtype_size(from_dtype), ts = dtype_size(to), n = from.size() / fs;
  Bytes out(n * ts);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint8_t* p = from.data() + k * fs;
    std::uint8_t* q = out.data() + k * ts;
    if (is_floating(from_dtype)) store_as(to, q, load_as<double>(from_dtype, p));
    else if (dtype_kind(from_dtype) == DTypeKind::unsigned_int)
      store_as(to, q, load_as<std::uint64_t>(from_dtype, p));
    else store_as(to, q, load_as<std::int64_t>(from_dtype, p));  // signed integers and bool
  }
  return out;
}

}  // namespace ewise::fuzz
