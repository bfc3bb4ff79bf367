#include "ewise/broadcast.hpp"

#include <algorithm>
#include <numeric>

#include "checked.hpp"
#include "ewise/error.hpp"

namespace ewise {

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  const int rank = std::max(a.size(), b.size());
  Dims out;
  for (int i = 0; i < rank; ++i) {
    // i counts dims of the result from the left; each operand is right-aligned.
    const int ia = i - (rank - a.size()), ib = i - (rank - b.size());
    const std::int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    EWISE_EXPECTS(x == y || x == 1 || y == 1, "cannot broadcast ", a.str(), " with ", b.str(),
                  ": dim ", i, " is ", x, " vs ", y);
    out.push_back(x == 1 ? y : x);
  }
  return out;
}

Dims broadcast_strides(const TensorDesc& in, const Dims& out_shape) {
  EWISE_EXPECTS(in.rank() <= out_shape.size(), "cannot broadcast ", in.shape.str(), " to ",
                out_shape.str(), ": rank ", in.rank(), " > ", out_shape.size());
  const int lead = out_shape.size() - in.rank();
  Dims s;
  for (int i = 0; i < lead; ++i) s.push_back(0);
  for (int i = 0; i < in.rank(); ++i) {
    const std::int64_t x = in.shape[i], y = out_shape[lead + i];
    EWISE_EXPECTS(x == y || x == 1, "cannot broadcast ", in.shape.str(), " to ",
                  out_shape.str(), ": dim ", lead + i, " is ", x, " vs ", y);
    s.push_back((x == 1 && y != 1) ? 0 : in.strides[i]);
  }
  return s;
}

std::int64_t BroadcastPlan::offset(int k, std::int64_t i) const noexcept {
  std::int64_t off = 0;
  for (int d = rank() - 1; d >= 0; --d) {
    off += (i % shape[d]) * strides[k][d];
    i /= shape[d];
  }
  return off;
}

BroadcastPlan make_plan(const TensorDesc& out, const TensorDesc& a, const TensorDesc& b) {
  const Dims shape = broadcast_shapes(a.shape, b.shape);
  EWISE_EXPECTS(out.shape == shape, "output shape ", out.shape.str(),
                " is not the broadcast shape ", shape.str(), " of ", a.shape.str(), " and ",
                b.shape.str());
  // Built from its parts (not assigned into a default plan: that would clear it first).
  BroadcastPlan p{shape, {out.strides, broadcast_strides(a, shape), broadcast_strides(b, shape)}};
  // Extent-1 dims of the output may carry any stride; normalise to 0 so coalescing can drop them.
  for (int d = 0; d < shape.size(); ++d)
    if (shape[d] == 1)
      for (auto& s : p.strides) s[d] = 0;
  return p;
}

BroadcastPlan coalesce(const BroadcastPlan& plan) {
  int order[kMaxRank];
  std::iota(order, order + plan.rank(), 0);
  BroadcastPlan out;
  coalesce(plan, order, out);
  return out;
}

void coalesce(const BroadcastPlan& plan, const int* order, BroadcastPlan& out) {
  if (plan.numel() == 0) {  // nothing to address: keep one empty dim
    out.shape.push_back(0);
    for (auto& s : out.strides) s.push_back(0);
    return;
  }
  for (int j = 0; j < plan.rank(); ++j) {
    const int d = order[j];
    const std::int64_t n = plan.shape[d];
    if (n == 1) continue;
    const int last = out.shape.size() - 1;
    // Merge where the outer dim's stride is this one's times n (a product past int64 is no
    // view's stride: no merge, and no overflow).
    bool merge = last >= 0;
    for (int k = 0; k < BroadcastPlan::kOperands && merge; ++k) {
      std::int64_t step = 0;
      merge = !detail::mul_overflows(plan.strides[k][d], n, &step) && out.strides[k][last] == step;
    }
    if (merge) {
      out.shape[last] *= n;
      for (int k = 0; k < BroadcastPlan::kOperands; ++k) out.strides[k][last] = plan.strides[k][d];
    } else {
      out.shape.push_back(n);
      for (int k = 0; k < BroadcastPlan::kOperands; ++k) out.strides[k].push_back(plan.strides[k][d]);
    }
  }
}

void check_no_partial_overlap(const ConstTensorView& out, const ConstTensorView& in,
                              const char* what) {
  if (out.desc.numel() == 0 || in.desc.numel() == 0 || out.memory != in.memory) return;
  if (out.data == in.data && out.desc.shape == in.desc.shape &&
      out.desc.strides == in.desc.strides && out.desc.dtype == in.desc.dtype)
    return;  // exactly in place
  // Byte ranges [lo, hi) in 128 bits: address + offset * element size cannot overflow there.
  const auto range = [](const ConstTensorView& v) {
    const auto elem = static_cast<detail::int128>(dtype_size(v.desc.dtype));
    const auto base = static_cast<detail::int128>(reinterpret_cast<std::uintptr_t>(v.data));
    return std::pair{base + v.desc.min_offset() * elem, base + (v.desc.max_offset() + 1) * elem};
  };
  const auto [olo, ohi] = range(out);
  const auto [ilo, ihi] = range(in);
  EWISE_EXPECTS(ohi <= ilo || ihi <= olo, "output ", out.desc.str(), " at ", out.data,
                " partially overlaps input ", what, " ", in.desc.str(), " at ", in.data,
                " (only exact in-place use is allowed)");
}

BroadcastPlan detail::plan_operands(const ConstTensorView& a, const ConstTensorView& b,
                                   const TensorView& out, bool a_scalar, bool b_scalar) {
  if (!a_scalar) check_view(a, "input a");
  if (!b_scalar) check_view(b, "input b");
  check_view(out, "output");
  EWISE_EXPECTS(a.memory == out.memory && b.memory == out.memory, "operands live in different "
                "memories: a on ", memory_name(a.memory), ", b on ", memory_name(b.memory),
                ", out on ", memory_name(out.memory));
  BroadcastPlan plan = make_plan(out.desc, a.desc, b.desc);
  EWISE_EXPECTS(out.desc.is_non_overlapping(), "output ", out.desc.str(),
                " overlaps itself (a stride of 0 or strides that revisit elements)");
  if (!a_scalar) check_no_partial_overlap(out, a, "a");
  if (!b_scalar) check_no_partial_overlap(out, b, "b");
  return plan;
}

BroadcastPlan plan_binary(const ConstTensorView& a, const ConstTensorView& b,
                          const TensorView& out) {
  return detail::plan_operands(a, b, out, false, false);
}

}  // namespace ewise
