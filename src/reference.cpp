// The CPU reference backend: plain loops, each operation spelled out in a wider type.
//
// Floating dtypes are computed in double and rounded once to the dtype (via float for f16 and
// bf16). For a single +, -, *, / the double result is the exact result correctly rounded to 53
// bits, and rounding that to 24 and then 11 (or 8) bits gives the correctly rounded result
// (53 >= 2*24+2 and 24 >= 2*11+2), so the reference equals IEEE arithmetic in the dtype and the
// GPU's float computation for f16/bf16 bit for bit.
#include "ewise/reference.hpp"

#include <cmath>

#include "element.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"

namespace ewise {

double reference_apply(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::min:
      if (std::isnan(a) || std::isnan(b)) return std::nan("");
      return b < a ? b : a;
    case BinaryOp::max:
      if (std::isnan(a) || std::isnan(b)) return std::nan("");
      return a < b ? b : a;
  }
  return 0;
}

std::int64_t reference_apply_int(BinaryOp op, DType dtype, std::int64_t a, std::int64_t b) {
  const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  std::uint64_t r = 0;
  switch (op) {
    case BinaryOp::add: r = ua + ub; break;
    case BinaryOp::sub: r = ua - ub; break;
    case BinaryOp::mul: r = ua * ub; break;
    case BinaryOp::div:
      if (b == 0) r = 0;                  // documented: x / 0 == 0
      else if (b == -1) r = 0 - ua;       // MIN / -1 wraps to MIN
      else r = static_cast<std::uint64_t>(a / b);
      break;
    case BinaryOp::min: r = static_cast<std::uint64_t>(b < a ? b : a); break;
    case BinaryOp::max: r = static_cast<std::uint64_t>(a < b ? b : a); break;
  }
  if (dtype == DType::i32)  // wrap to 32 bits, then sign-extend
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(r));
  return static_cast<std::int64_t>(r);
}

void reference_binary(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                      const TensorView& out) {
  const BroadcastPlan plan = plan_binary(a, b, out);
  EWISE_EXPECTS(out.memory == Memory::host, "the CPU reference needs host views, got ",
                memory_name(out.memory), " memory");
  reference_binary(op, out.desc.dtype, plan, out.data, a.data, b.data);
}

void reference_binary(BinaryOp op, DType t, const BroadcastPlan& plan, void* out, const void* a,
                      const void* b) {
  detail::for_each_coord(plan.shape, [&](std::int64_t, const Dims& c) {
    const std::byte* pa = detail::element_at(a, t, detail::dot(c, plan.strides[1]));
    const std::byte* pb = detail::element_at(b, t, detail::dot(c, plan.strides[2]));
    std::byte* po = detail::element_at(out, t, detail::dot(c, plan.strides[0]));
    if (is_floating(t))
      detail::store_double(t, po, reference_apply(op, detail::load_double(t, pa),
                                                  detail::load_double(t, pb)));
    else
      detail::store_int(t, po, reference_apply_int(op, t, detail::load_int(t, pa),
                                               detail::load_int(t, pb)));
  });
}

}  // namespace ewise
