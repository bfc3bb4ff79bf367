// fuzz/entries_dense.cpp — the dense planner's invariants, checked by the plan fuzz entry on
// the operands it decoded (see entries.hpp). Host code only; links dense/plan.cpp.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense_plan.hpp"
#include "ewise/error.hpp"
#include "internal.hpp"

namespace ewise::fuzz {
namespace {

/// Smallest and largest offset of operand k over plan p (of dtype's elements).
std::pair<std::int64_t, std::int64_t> offset_range(const BroadcastPlan& p, int k, DType dtype) {
  const TensorDesc d = TensorDesc::strided(dtype, p.shape, p.strides[k]);
  return {d.min_offset(), d.max_offset()};
}

/// Every (out, a, b) offset triple of p, sorted.
std::vector<std::array<std::int64_t, 3>> offset_triples(const BroadcastPlan& p) {
  std::vector<std::array<std::int64_t, 3>> t(static_cast<std::size_t>(p.numel()));
  for (std::int64_t i = 0; i < p.numel(); ++i)
    for (int k = 0; k < 3; ++k) t[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)] = p.offset(k, i);
  std::sort(t.begin(), t.end());
  return t;
}

}  // namespace

/// The dense planner on operands plan_binary accepted (as `plan`): `automatic` must plan them;
/// a named kernel is accepted exactly when kernel_rejects says it can run automatic's plan. An
/// accepted launch reaches exactly the elements of `plan` (the same offset triples when all can
/// be listed, the same offset ranges always), keeps the operands' addresses, takes the 32-bit
/// path only when every index and offset fits in int32, and its kernel-specific fields describe
/// its plan.
void check_dense_plan(const BroadcastPlan& plan, const Operand& out, const Operand& a,
                      const Operand& b, Kernel named) {
  const TensorView ov{reinterpret_cast<void*>(out.address), out.desc, out.memory};
  const std::int64_t numel = plan.numel();
  const auto check_launch = [&](const detail::DenseLaunch& L, const char* what) {
    EWISE_FUZZ_REQUIRE(L.numel == numel, what, ": launch numel ", L.numel, " for ", numel);
    EWISE_FUZZ_REQUIRE(L.out == ov.data && L.a == a.view().data && L.b == b.view().data, what,
                       ": launch operand addresses differ from the views'");
    if (numel == 0) return;
    const BroadcastPlan& p = L.plan;
    EWISE_FUZZ_REQUIRE(L.kernel != Kernel::automatic, what, ": kernel left unresolved");
    EWISE_FUZZ_REQUIRE(p.rank() >= 1 && p.numel() == numel, what, ": launch plan ", p.shape.str(),
                       " for ", numel, " elements");
    for (int k = 0; k < 3; ++k)
      EWISE_FUZZ_REQUIRE(offset_range(p, k, out.desc.dtype) == offset_range(plan, k, out.desc.dtype),
                         what, ": operand ", k,
                         " reaches other offsets than in plan_binary's plan");
    if (numel <= 1024)
      EWISE_FUZZ_REQUIRE(offset_triples(p) == offset_triples(plan), what,
                         ": the launch visits other elements than plan_binary's plan");
    constexpr std::int64_t kNarrow = std::numeric_limits<std::int32_t>::max();
    if (!L.wide) {
      EWISE_FUZZ_REQUIRE(numel <= kNarrow, what, ": 32-bit path for ", numel, " elements");
      for (const Operand* o : {&out, &a, &b})
        EWISE_FUZZ_REQUIRE(-o->desc.min_offset() <= kNarrow && o->desc.max_offset() <= kNarrow,
                           what, ": 32-bit path for the offsets of ", o->desc.str());
    }
    detail::DenseLaunch scratch;
    EWISE_FUZZ_REQUIRE(detail::kernel_rejects(L.kernel, p, &scratch).empty(), what, ": ",
                       kernel_name(L.kernel), " runs a plan it rejects");
    const int r = p.rank() - 1;
    const std::int64_t v =
        detail::kVectorBytes / static_cast<std::int64_t>(dtype_size(out.desc.dtype));
    switch (L.kernel) {
      case Kernel::vectorized:
        EWISE_FUZZ_REQUIRE(r == 0 && L.head >= 0 && L.head <= numel, what, ": vectorized head ",
                           L.head, " of ", numel, " (rank ", r + 1, ")");
        break;
      case Kernel::row_vectorized:
        EWISE_FUZZ_REQUIRE(p.strides[0][r] == 1 && (!L.row_vector_ok || p.shape[r] % v == 0),
                           what, ": row_vectorized on ", p.shape.str(), " with output strides ",
                           p.strides[0].str());
        break;
      case Kernel::tiled:
        EWISE_FUZZ_REQUIRE(r >= 1 && L.tile_dim >= 0 && L.tile_dim < r, what, ": tile dim ",
                           L.tile_dim, " of a rank-", r + 1, " plan");
        EWISE_FUZZ_REQUIRE(!L.tile_vector_ok || (p.shape[r] % v == 0 && p.shape[L.tile_dim] % v == 0 &&
                                                 !(L.staged_a && L.staged_b)),
                           what, ": 16-byte tiles for ", p.shape.str());
        break;
      case Kernel::sliding:
      case Kernel::sliding_shared:
      case Kernel::continuous:
      case Kernel::alternate:
      case Kernel::baseline: {
        EWISE_FUZZ_REQUIRE(r == 1 && (L.vector_operand == 1 || L.vector_operand == 2), what,
                           ": matrix-vector launch with vector operand ", L.vector_operand);
        const Dims& s = p.strides[L.vector_operand];
        EWISE_FUZZ_REQUIRE((s[0] == 0) != (s[1] == 0) && L.row_vector == (s[0] == 0), what,
                           ": vector operand strides ", s.str());
        break;
      }
      default:
        break;
    }
  };

  detail::DenseLaunch automatic;
  try {
    automatic = detail::plan_dense(a.view(), b.view(), ov, DenseOptions{});
  } catch (const Error& e) {
    throw Violation(detail::concat("automatic rejected operands plan_binary accepted: ", e.what()));
  }
  check_launch(automatic, "automatic");
  if (numel == 0) return;
  detail::DenseLaunch scratch;
  const std::string why = detail::kernel_rejects(named, automatic.plan, &scratch);
  DenseOptions options;
  options.kernel = named;
  detail::DenseLaunch L;
  try {
    L = detail::plan_dense(a.view(), b.view(), ov, options);
  } catch (const Error& e) {
    EWISE_FUZZ_REQUIRE(!why.empty(), kernel_name(named), " refused a plan it can run: ", e.what());
    return;
  }
  EWISE_FUZZ_REQUIRE(why.empty(), kernel_name(named), " accepted a plan it cannot run: ", why);
  const Kernel expected = named == Kernel::automatic ? automatic.kernel : named;
  EWISE_FUZZ_REQUIRE(L.kernel == expected && L.plan.shape == automatic.plan.shape, kernel_name(named),
                     " planned ", kernel_name(L.kernel), " on ", L.plan.shape.str(), ", automatic ",
                     kernel_name(automatic.kernel), " on ", automatic.plan.shape.str());
  check_launch(L, kernel_name(named));
}

}  // namespace ewise::fuzz
