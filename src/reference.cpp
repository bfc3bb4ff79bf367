// The CPU reference backend: a plain loop over the plan, each element converted, combined by the
// ops.hpp functor in the compute type, rounded to the result dtype and cast to the output's.
//
// Floating results of 16-bit dtypes are computed in float and rounded once to the dtype: for
// add, subtract, multiply and divide that equals IEEE arithmetic in the dtype (24 >= 2*11+2),
// and it is NumPy's own definition of its float16 loops.
#include "ewise/reference.hpp"

#include <cstring>
#include <type_traits>

#include "element.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"

namespace ewise {

namespace {

/// v (the functor's result, in C or bool) rounded to the result dtype, then cast into `out`.
template <class V>
void store_result(DType result, DType out, std::byte* p, V v) {
  if (result == out || !is_floating(result) || result == DType::f32 || result == DType::f64) {
    detail::store_cast(out, p, v);  // the result dtype's value is v itself
    return;
  }
  // A 16-bit result cast to another dtype: round to it first, as the framework's result would be.
  std::uint64_t bits = 0;  // room for any dtype: the compiler cannot see that `result` is 16-bit
  detail::store_cast(result, reinterpret_cast<std::byte*>(&bits), v);
  detail::store_cast(out, p, detail::load_as<float>(result, reinterpret_cast<std::byte*>(&bits)));
}

}  // namespace

void reference_binary(BinaryOp op, const Operand& a, const Operand& b, const TensorView& out,
                      Promotion rule) {
  const detail::CallTypes t = detail::check_types(op, a, b, out.desc.dtype, rule);
  const TensorView ov = out;
  // A scalar is planned as a rank-0 operand of out's memory, never read.
  const auto view_of = [&](const Operand& o) {
    return o.is_scalar() ? ConstTensorView(nullptr, TensorDesc::contiguous(t.types.compute, {}),
                                           out.memory)
                         : o.view();
  };
  const BroadcastPlan plan =
      detail::plan_operands(view_of(a), view_of(b), ov, a.is_scalar(), b.is_scalar());
  EWISE_EXPECTS(out.memory == Memory::host, "the CPU reference needs host views, got ",
                memory_name(out.memory), " memory");
  reference_binary(t, plan, out.data, a.is_scalar() ? nullptr : a.view().data,
                   b.is_scalar() ? nullptr : b.view().data);
}

void reference_binary(const detail::CallTypes& t, const BroadcastPlan& plan, void* out,
                      const void* a, const void* b) {
  detail::with_call_compute(t, [&](auto tag) {
    using C = typename decltype(tag)::type;
    with_op(t.op, [&](auto f) {
      using F = decltype(f);
      if constexpr (detail::kComputes<F, C>) {
        const C av = detail::scalar_value<C>(t.a_value), bv = detail::scalar_value<C>(t.b_value);
        // An operand rounded to a 16-bit compute dtype first (CallTypes::a_round).
        const auto load = [&](DType d, bool round, const void* base, std::int64_t off) {
          const C v = detail::load_as<C>(d, detail::element_at(base, d, off));
          if constexpr (std::is_same_v<C, float>)
            if (round) return static_cast<C>(detail::round_to(t.types.compute, v));
          return v;
        };
        detail::for_each_coord(plan.shape, [&](std::int64_t, const Dims& c) {
          const C x = t.a_scalar ? av : load(t.a, t.a_round, a, detail::dot(c, plan.strides[1]));
          const C y = t.b_scalar ? bv : load(t.b, t.b_round, b, detail::dot(c, plan.strides[2]));
          store_result(t.types.result, t.out,
                       detail::element_at(out, t.out, detail::dot(c, plan.strides[0])), f(x, y));
        });
      } else {
        EWISE_EXPECTS(false, "internal: ", op_name(t.op), " does not compute in ",
                      dtype_name(t.types.compute));
      }
    });
  });
}

}  // namespace ewise
