// The checked dtypes of a dense call (ewise/detail/compute.hpp): op typing, the output's cast
// and the scalar operands' values in the compute type.
#include <cstring>
#include <limits>
#include <utility>

#include "element.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/error.hpp"

namespace ewise::detail {

namespace {

std::string describe(const Operand& o) {
  if (o.is_scalar()) return o.scalar().str();
  return o.view().desc.str();
}

/// s as compute type C of compute dtype `compute` under `rule`; a floating value rounded to the
/// compute dtype first when `round`.
template <class C>
C scalar_value(const Scalar& s, DType compute, Promotion rule, bool round) {
  const DType from = s.dtype();
  if constexpr (std::is_same_v<C, bool>) {
    return is_floating(from) ? s.as_double() != 0 : s.as_uint() != 0;
  } else if constexpr (std::is_floating_point_v<C>) {
    double v = is_floating(from) ? s.as_double()
               : dtype_kind(from) == DTypeKind::unsigned_int ? static_cast<double>(s.as_uint())
                                                             : static_cast<double>(s.as_int());
    if (round) v = round_to(compute, v);
    return static_cast<C>(v);
  } else {
    EWISE_EXPECTS(!is_floating(from), "internal: a ", dtype_name(from),
                  " scalar computed in integer dtype ", dtype_name(compute));
    if (rule == Promotion::numpy && s.weak())
      EWISE_EXPECTS(fits(compute, s.as_int()), "Python integer ", s.as_int(),
                    " out of bounds for ", dtype_name(compute));
    return static_cast<C>(dtype_kind(from) == DTypeKind::unsigned_int ? s.as_uint()
                                                                      : static_cast<std::uint64_t>(s.as_int()));
  }
}

std::uint64_t scalar_bits(const Scalar& s, DType compute, Promotion rule, bool round) {
  return with_compute_type(compute, [&](auto tag) {
    using C = typename decltype(tag)::type;
    const C v = scalar_value<C>(s, compute, rule, round);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    return bits;
  });
}

/// The smallest integer dtype that holds v (signed when v is negative).
DType smallest_int_holding(std::int64_t v) {
  const DType candidates[] = {v < 0 ? DType::i8 : DType::u8, v < 0 ? DType::i16 : DType::u16,
                              v < 0 ? DType::i32 : DType::u32, DType::i64};
  for (DType d : candidates)
    if (fits(d, v)) return d;
  return DType::i64;
}

bool is_signed_int(DType d) { return dtype_kind(d) == DTypeKind::signed_int; }
/// A signed integer dtype with u64, either way round: the pairs NumPy 2 compares exactly.
bool signed_with_u64(DType x, DType y) {
  return (x == DType::u64 && is_signed_int(y)) || (y == DType::u64 && is_signed_int(x));
}

/// A comparison op(x, s) or op(s, x) (scalar_first) of a signed integer tensor x with a typed
/// u64 scalar s, or of a u64 tensor with a typed signed one, exactly, as NumPy 2 compares them
/// (in their common dtype f64, 2^63 - 1 and 2^63 would be one value; tensor pairs run in
/// ExactInt instead, CallTypes::exact). It runs in the tensor's 64-bit kind (sets `compute`):
/// with s itself where that kind holds it; else s is above every signed value (a u64 over
/// INT64_MAX) or below every u64 (a negative one), so every element has the same result, which
/// `op` is replaced by an ordering against the kind's extreme (INT64_MAX, 0) that gives it.
/// Returns the scalar to compare with.
Scalar exact_scalar_comparison(BinaryOp& op, DType& compute, const Scalar& s, DType tensor,
                               bool scalar_first) {
  const bool signed_tensor = is_signed_int(tensor);
  compute = signed_tensor ? DType::i64 : DType::u64;
  if (signed_tensor && s.as_uint() <= static_cast<std::uint64_t>(INT64_MAX))
    return Scalar::of_int(DType::i64, static_cast<std::int64_t>(s.as_uint()));
  if (!signed_tensor && s.as_int() >= 0)
    return Scalar::of_uint(DType::u64, static_cast<std::uint64_t>(s.as_int()));
  // Whether the first operand is the smaller for every element, and the one result.
  const bool first_less = scalar_first != signed_tensor;
  const bool result = op == BinaryOp::not_equal ||
                      ((op == BinaryOp::less || op == BinaryOp::less_equal) && first_less) ||
                      ((op == BinaryOp::greater || op == BinaryOp::greater_equal) && !first_less);
  // Against the extreme the order holds with equality possible: first <= second (first_less),
  // else first >= second; the non-strict order is then always true, the strict reverse never.
  op = first_less ? (result ? BinaryOp::less_equal : BinaryOp::greater)
                  : (result ? BinaryOp::greater_equal : BinaryOp::less);
  return signed_tensor ? Scalar::of_int(DType::i64, INT64_MAX) : Scalar::of_uint(DType::u64, 0);
}

constexpr DType kTypedDTypes[] = {DType::f16, DType::bf16, DType::f32,
                                  DType::f64, DType::i32,  DType::i64};

}  // namespace

CallTypes check_types(BinaryOp op, const Operand& a, const Operand& b, DType out,
                      Promotion rule) {
  EWISE_EXPECTS(!a.is_scalar() || !b.is_scalar(), op_name(op), " of two scalars (",
                a.scalar().str(), ", ", b.scalar().str(), "): at least one operand is a tensor");
  op_family(op);  // an op outside the enum throws here
  for (DType t : {a.type(rule).dtype, b.type(rule).dtype, out}) dtype_size(t);  // a bad dtype
  CallTypes t;
  t.op = op;
  t.types = op_types(op, rule, a.type(rule), b.type(rule));
  EWISE_EXPECTS(can_cast_same_kind(t.types.result, out), "cannot store the ",
                dtype_name(t.types.result), " result of ", op_name(op), "(", describe(a), ", ",
                describe(b), ") in an output of dtype ", dtype_name(out),
                " (casting='same_kind': floats do not cast to integers or bool, signed integers "
                "not to unsigned)");
  // NumPy 2 compares an integer array with a Python int its dtype cannot hold exactly (int8 < 300
  // is true everywhere): in the smallest dtype that holds both.
  if (op_family(op) == OpFamily::comparison && rule == Promotion::numpy)
    for (const auto& [s, other] : {std::pair{&a, &b}, std::pair{&b, &a}})
      if (s->is_scalar() && s->scalar().weak() && s->scalar().dtype() == DType::i64 &&
          !other->is_scalar() && is_integer(t.types.compute) &&
          !fits(t.types.compute, s->scalar().as_int()))
        t.types.compute = result_type(Promotion::numpy, {other->view().desc.dtype},
                                      {smallest_int_holding(s->scalar().as_int())});
  // NumPy 2 compares a signed integer with u64 exactly (exact_scalar_comparison, below for tensors).
  Scalar sa = a.is_scalar() ? a.scalar() : Scalar{}, sb = b.is_scalar() ? b.scalar() : Scalar{};
  if (op_family(op) == OpFamily::comparison && rule == Promotion::numpy &&
      a.is_scalar() != b.is_scalar()) {
    Scalar& s = a.is_scalar() ? sa : sb;
    const DType x = (a.is_scalar() ? b : a).view().desc.dtype;
    if (!s.weak() && signed_with_u64(s.dtype(), x))
      s = exact_scalar_comparison(t.op, t.types.compute, s, x, a.is_scalar());
  }
  t.out = out;
  t.a_scalar = a.is_scalar();
  t.b_scalar = b.is_scalar();
  t.a = t.a_scalar ? t.types.compute : a.view().desc.dtype;
  t.b = t.b_scalar ? t.types.compute : b.view().desc.dtype;
  // Operands are cast to the compute dtype first (for a 16-bit one, a rounding): NumPy's and
  // PyTorch's, Python scalars under NumPy's rule too. PyTorch hands a Python scalar to the
  // arithmetic type as it is, and its multiply reads a 0-d second operand so too (its CUDA
  // kernel's original_scalar_value).
  const bool torch_mul_b = rule == Promotion::torch && op == BinaryOp::multiply &&
                           (t.b_scalar || b.view().desc.rank() == 0);
  const auto rounds = [&](const Operand& o, bool second) {
    if (second && torch_mul_b) return false;
    return !o.is_scalar() || rule == Promotion::numpy || !o.scalar().weak();
  };
  if (t.a_scalar) t.a_value = scalar_bits(sa, t.types.compute, rule, rounds(a, false));
  if (t.b_scalar) t.b_value = scalar_bits(sb, t.types.compute, rule, rounds(b, true));
  t.exact = op_family(op) == OpFamily::comparison && rule == Promotion::numpy && !t.a_scalar &&
            !t.b_scalar && signed_with_u64(t.a, t.b);
  const bool half = t.types.compute == DType::f16 || t.types.compute == DType::bf16;
  t.a_round = half && !t.a_scalar && t.a != t.types.compute;
  t.b_round = half && !t.b_scalar && t.b != t.types.compute && rounds(b, true);
  return t;
}

bool runs_typed(const CallTypes& t) {
  if (t.a_scalar || t.b_scalar) return false;
  const DType d = t.out;
  if (t.a != d || t.b != d || t.types.result != d || t.types.compute != d) return false;
  if (static_cast<int>(t.op) > static_cast<int>(BinaryOp::maximum)) return false;
  for (DType k : kTypedDTypes)
    if (k == d) return true;
  return false;
}

}  // namespace ewise::detail
