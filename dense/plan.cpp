// dense/plan.cpp — the dense planner (ewise/detail/dense/plan.hpp): kernel names, the checks,
// and check_dense, which sorts and coalesces a call's plan and picks its kernel (what each
// kernel accepts and the automatic choice: plan_accepts.cpp; the launch of each kernel family:
// plan_launch.cpp). No CUDA call: the plan fuzz target links these files alone.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "ewise/broadcast.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/error.hpp"
#include "plan_shared.hpp"

namespace ewise {

namespace {

constexpr bool names_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kKernelNames); ++i)
    if (static_cast<std::size_t>(kKernelNames[i].kernel) != i) return false;
  return true;
}
static_assert(names_in_enum_order(), "kKernelNames lists every kernel in enum order");

bool valid_kernel(Kernel k) { return static_cast<std::size_t>(k) < std::size(kKernelNames); }

}  // namespace

const char* kernel_name(Kernel k) {
  return valid_kernel(k) ? kKernelNames[static_cast<std::size_t>(k)].name : "unknown";
}

Kernel parse_kernel(std::string_view name) {
  std::string known;
  for (const KernelName& k : kKernelNames) {
    if (name == k.name) return k.kernel;
    known += std::string(known.empty() ? "" : ", ") + k.name;
  }
  EWISE_EXPECTS(false, "unknown kernel '", name, "' (known: ", known, ")");
  return Kernel::automatic;
}

namespace detail {

using namespace planner;

namespace {

/// The order of p's dims by the output's |stride|, largest first (stable), into order[0..rank):
/// a permutation of the dims changes no offset, and it makes the output's innermost dim the
/// plan's innermost.
void sort_by_output(const BroadcastPlan& p, int* order) {
  // A stable insertion sort of at most kMaxRank dims: std::stable_sort would take a heap buffer
  // on every call.
  for (int d = 0; d < p.rank(); ++d) {
    int j = d;
    for (; j > 0 && std::llabs(p.strides[0][order[j - 1]]) < std::llabs(p.strides[0][d]); --j)
      order[j] = order[j - 1];
    order[j] = d;
  }
}

/// Largest |offset| operand k reaches over the plan.
std::int64_t span(const BroadcastPlan& p, int k) {
  std::int64_t s = 0;
  for (int d = 0; d < p.rank(); ++d) s += (p.shape[d] - 1) * std::llabs(p.strides[k][d]);
  return s;
}

void check_options(const DenseOptions& o) {
  EWISE_EXPECTS(valid_kernel(o.kernel), "unknown kernel ", static_cast<int>(o.kernel));
  EWISE_EXPECTS(
      o.threads == 0 || (o.threads >= 32 && o.threads <= kMaxThreads && o.threads % 32 == 0),
      "threads per block must be 0 (default) or a multiple of 32 in 32..", kMaxThreads, ", not ",
      o.threads);
  EWISE_EXPECTS(o.blocks >= 0, "blocks must be 0 (default) or positive, not ", o.blocks);
  EWISE_EXPECTS(o.sliding_factor >= 0, "sliding_factor must be 0 (automatic) or positive, not ",
                o.sliding_factor);
}

}  // namespace

std::string planner::describe(const BroadcastPlan& p) {
  return concat("plan shape ", p.shape.str(), ", strides out ", p.strides[0].str(), " a ",
                p.strides[1].str(), " b ", p.strides[2].str());
}

DensePlan check_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                      const DenseOptions& options, const CallTypes* types) {
  const bool a_scalar = types && types->a_scalar, b_scalar = types && types->b_scalar;
  const BroadcastPlan raw = plan_operands(a, b, out, a_scalar, b_scalar);
  check_options(options);
  DensePlan c;
  c.dtype = out.desc.dtype;
  c.converting = types ? !runs_typed(*types)
                       : !(a.desc.dtype == out.desc.dtype && b.desc.dtype == out.desc.dtype &&
                           static_cast<int>(out.desc.dtype) <= static_cast<int>(DType::i64));
  c.out = out.data;
  c.a = a_scalar ? nullptr : a.data;
  c.b = b_scalar ? nullptr : b.data;
  c.options = options;
  c.numel = raw.numel();
  if (out.memory == Memory::device && c.numel > 0) {
    const std::tuple<const void*, DType, const char*, bool> views[] = {
        {a.data, a.desc.dtype, "a", a_scalar},
        {b.data, b.desc.dtype, "b", b_scalar},
        {out.data, out.desc.dtype, "out", false}};
    for (const auto& [ptr, dtype, what, scalar] : views) {
      const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
      EWISE_EXPECTS(scalar || aligned(ptr, elem), what, " data ", ptr, " is not aligned to its ",
                    elem, "-byte ", dtype_name(dtype), " elements");
    }
  }
  EWISE_EXPECTS(!c.converting || options.kernel == Kernel::automatic ||
                    options.kernel == Kernel::general,
                "kernel ", kernel_name(options.kernel),
                " runs operands of one of the dtypes f16, bf16, f32, f64, i32, i64 with that "
                "dtype's result; this call (a ", dtype_name(a.desc.dtype), ", b ",
                dtype_name(b.desc.dtype), ", out ", dtype_name(out.desc.dtype),
                a_scalar || b_scalar ? ", a scalar" : "",
                ") runs the converting kernel: ask for automatic or general");
  if (c.numel == 0) {
    c.kernel = options.kernel == Kernel::automatic ? Kernel::general : options.kernel;
    c.plan = raw;
    return c;
  }
  int order[kMaxRank];
  sort_by_output(raw, order);
  BroadcastPlan& p = c.plan;
  coalesce(raw, order, p);
  if (p.rank() == 0) {  // one element: a rank-1 plan of extent 1
    p.shape.push_back(1);
    p.strides[0].push_back(1);
    p.strides[1].push_back(0);
    p.strides[2].push_back(0);
  }
  c.kernel = c.converting                          ? Kernel::general
             : options.kernel == Kernel::automatic ? select(c)
                                                   : options.kernel;
  const std::string why = kernel_rejects(c.kernel, p);
  EWISE_EXPECTS(why.empty(), "kernel ", kernel_name(c.kernel), " cannot run out ",
                out.desc.shape.str(), " = a ", a.desc.shape.str(), " (strides ",
                a.desc.strides.str(), ") op b ", b.desc.shape.str(), " (strides ",
                b.desc.strides.str(), "), out strides ", out.desc.strides.str(), ": ", why, " (",
                describe(p), ")");
  constexpr std::int64_t kNarrow = std::numeric_limits<std::int32_t>::max();
  c.wide =
      c.numel > kNarrow || span(p, 0) > kNarrow || span(p, 1) > kNarrow || span(p, 2) > kNarrow;
  return c;
}
DensePlan plan_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                     const DenseOptions& options, const DeviceProps& props,
                     const CallTypes* types) {
  DensePlan plan = check_dense(a, b, out, options, types);
  plan_launch(plan, props);
  return plan;
}

}  // namespace detail

Kernel select_kernel(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out) {
  return detail::check_dense(a, b, out, DenseOptions{}).kernel;
}

bool kernel_supports(Kernel kernel, const ConstTensorView& a, const ConstTensorView& b,
                     const TensorView& out) {
  EWISE_EXPECTS(valid_kernel(kernel), "unknown kernel ", static_cast<int>(kernel));
  const detail::DensePlan c = detail::check_dense(a, b, out, DenseOptions{});
  if (c.converting) return kernel == Kernel::automatic || kernel == Kernel::general;
  return c.numel == 0 || detail::kernel_rejects(kernel, c.plan).empty();
}

}  // namespace ewise
