// fuzz/entries_dense.cpp — the dense planner's invariants, checked by the plan fuzz entry on
// the operands it decoded (see entries.hpp). Host code only; links dense/plan*.cpp.
#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"
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
    for (int k = 0; k < 3; ++k)
      t[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)] = p.offset(k, i);
  std::sort(t.begin(), t.end());
  return t;
}

}  // namespace

/// Devices to plan for, one picked per input: the host backend's fixed properties, an H200,
/// and a small device whose 64 KiB of shared memory hold no 16-byte tiles of 2-byte types.
constexpr detail::DeviceProps kDevices[] = {
    detail::host_device_props(),
    {0, 90, 132, 2048, 227 << 10, 60 << 20},
    {1, 80, 4, 1024, 64 << 10, 4 << 20}};

/// The dense planner on operands plan_binary accepted (as `plan`), for a device picked by
/// `seed`: `automatic` must plan them; a named kernel is accepted exactly when kernel_supports
/// says it can run them. An accepted plan reaches exactly the elements of `plan` (the same
/// offset triples when all can be listed, the same offset ranges always), keeps the operands'
/// addresses, takes the 32-bit path only when every index and offset fits in int32, its
/// kernel-specific fields describe its plan, and its threads and grid are within the limits.
void check_dense_plan(const BroadcastPlan& plan, const Operand& out, const Operand& a,
                      const Operand& b, Kernel named, std::uint64_t seed) {
  const detail::DeviceProps& device = kDevices[seed % std::size(kDevices)];
  const TensorView ov{reinterpret_cast<void*>(out.address), out.desc, out.memory};
  const std::int64_t numel = plan.numel();
  const auto check_launch = [&](const detail::DensePlan& L, const char* what) {
    EWISE_FUZZ_REQUIRE(L.numel == numel, what, ": launch numel ", L.numel, " for ", numel);
    EWISE_FUZZ_REQUIRE(L.out == ov.data && L.a == a.view().data && L.b == b.view().data, what,
                       ": launch operand addresses differ from the views'");
    if (numel == 0) return;
    const BroadcastPlan& p = L.plan;
    EWISE_FUZZ_REQUIRE(L.kernel != Kernel::automatic, what, ": kernel left unresolved");
    EWISE_FUZZ_REQUIRE(p.rank() >= 1 && p.numel() == numel, what, ": launch plan ", p.shape.str(),
                       " for ", numel, " elements");
    const DType dtypes[3] = {out.desc.dtype, a.desc.dtype, b.desc.dtype};
    for (int k = 0; k < 3; ++k)
      EWISE_FUZZ_REQUIRE(offset_range(p, k, dtypes[k]) == offset_range(plan, k, dtypes[k]), what,
                         ": operand ", k, " reaches other offsets than in plan_binary's plan");
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
    EWISE_FUZZ_REQUIRE(kernel_supports(L.kernel, a.view(), b.view(), ov), what, ": ",
                       kernel_name(L.kernel), " runs a plan it rejects");
    EWISE_FUZZ_REQUIRE(L.threads >= 32 && L.threads <= detail::kMaxThreads && L.threads % 32 == 0,
                       what, ": ", L.threads, " threads per block");
    const int r = p.rank() - 1;
    const std::int64_t v =
        detail::kVectorBytes / static_cast<std::int64_t>(dtype_size(out.desc.dtype));
    switch (L.kernel) {
      case Kernel::vectorized: {
        const detail::VectorizedPlan& f = L.vectorized;
        std::int64_t compact = 1;  // the output is contiguous as a whole
        for (int d = r; d >= 0; --d) {
          EWISE_FUZZ_REQUIRE(p.shape[d] == 1 || p.strides[0][d] == compact, what,
                             ": vectorized with output strides ", p.strides[0].str());
          compact *= p.shape[d];
        }
        EWISE_FUZZ_REQUIRE(f.head >= 0 && f.head <= numel && f.head + f.vectors * v <= numel &&
                               numel - f.head - f.vectors * v < v,
                           what, ": vectorized head ", f.head, " and ", f.vectors,
                           " vectors of ", numel, " (rank ", r + 1, ")");
        // A row table holds 32 rows: a warp's chunk starting at a row's last element fits.
        const std::int64_t chunk =
            32 * detail::vector_unroll(static_cast<int>(dtype_size(out.desc.dtype))) * v;
        const std::int64_t n0 = std::max<std::int64_t>(p.shape[r], 1);
        EWISE_FUZZ_REQUIRE(!f.row_table || (f.gathers() && 1 + (chunk + n0 - 2) / n0 <= 32),
                           what, ": row table over rows of ", p.shape[r], " for chunks of ",
                           chunk);
        // Segments: long rows, by rows, 32-bit indices, a row's inner vectors in its segments.
        const int bytes = static_cast<int>(dtype_size(out.desc.dtype));
        const std::int64_t segment = detail::segment_vectors(bytes);
        EWISE_FUZZ_REQUIRE(!f.segments || (f.rows && !f.row_table && !L.wide &&
                                           n0 >= detail::segment_min_vectors(bytes) * v &&
                                           f.row_segments * segment >= n0 / v - 2),
                           what, ": segments over rows of ", p.shape[r], ", ", f.row_segments,
                           " a row");
        EWISE_FUZZ_REQUIRE(f.evict_first == (f.segments && f.a != detail::VectorAccess::vector &&
                                             f.b != detail::VectorAccess::vector),
                           what, ": evict-first stores ", f.evict_first);
        break;
      }
      case Kernel::row_vectorized:
        EWISE_FUZZ_REQUIRE(p.strides[0][r] == 1 && (L.row.vector == 1 || p.shape[r] % v == 0),
                           what, ": row_vectorized on ", p.shape.str(), " with output strides ",
                           p.strides[0].str());
        break;
      case Kernel::tiled: {
        const detail::TiledPlan& t = L.tiled;
        EWISE_FUZZ_REQUIRE(r >= 1 && t.tile_dim >= 0 && t.tile_dim < r, what, ": tile dim ",
                           t.tile_dim, " of a rank-", r + 1, " plan");
        EWISE_FUZZ_REQUIRE(!t.vector || (p.shape[r] % v == 0 && p.shape[t.tile_dim] % v == 0 &&
                                         !(t.staged_a && t.staged_b)),
                           what, ": 16-byte tiles for ", p.shape.str());
        EWISE_FUZZ_REQUIRE(t.tiles >= 1 && (!t.vector || t.shared_bytes <= device.max_shared),
                           what, ": ", t.tiles, " tiles, ", t.shared_bytes,
                           " bytes of shared memory");
        break;
      }
      case Kernel::sliding:
      case Kernel::sliding_shared:
      case Kernel::continuous:
      case Kernel::alternate:
      case Kernel::baseline: {
        const detail::MatrixVectorPlan& mv = L.matrix_vector;
        EWISE_FUZZ_REQUIRE(r == 1 && (mv.vector_operand == 1 || mv.vector_operand == 2), what,
                           ": matrix-vector launch with vector operand ", mv.vector_operand);
        const Dims& s = p.strides[mv.vector_operand];
        EWISE_FUZZ_REQUIRE((s[0] == 0) != (s[1] == 0) && mv.row_vector == (s[0] == 0), what,
                           ": vector operand strides ", s.str());
        if (L.kernel == Kernel::sliding || L.kernel == Kernel::sliding_shared)
          EWISE_FUZZ_REQUIRE(mv.sliding_factor >= 1 && mv.grid_x >= 1 && mv.grid_y >= 1, what,
                             ": sliding factor ", mv.sliding_factor, ", grid ", mv.grid_x, " x ",
                             mv.grid_y);
        break;
      }
      default:
        break;
    }
    for (const int resident : {1, 3}) {  // what the launcher may learn from CUDA
      const unsigned blocks = L.grid.blocks(resident);
      const std::int64_t cap = L.grid.cap > 0      ? L.grid.cap
                               : L.grid.covers_work ? detail::kMaxGridX
                                                    : std::int64_t{resident} * device.sm_count *
                                                          L.grid.waves;
      EWISE_FUZZ_REQUIRE(L.grid.waves >= 1 && blocks >= 1 && blocks <= std::max<std::int64_t>(L.grid.need, 1) &&
                             blocks <= cap &&
                             (L.grid.cap > 0 || !L.grid.covers_work ||
                              blocks == std::min<std::int64_t>(L.grid.need, cap)),
                         what, ": ", blocks, " blocks for ", L.grid.need, " needed, cap ", cap);
    }
  };

  detail::DensePlan automatic;
  try {
    automatic = detail::plan_dense(a.view(), b.view(), ov, DenseOptions{}, device);
  } catch (const Error& e) {
    throw Violation(detail::concat("automatic rejected operands plan_binary accepted: ", e.what()));
  }
  check_launch(automatic, "automatic");
  if (numel == 0) return;
  const bool supported = kernel_supports(named, a.view(), b.view(), ov);
  DenseOptions options;
  options.kernel = named;
  detail::DensePlan L;
  try {
    L = detail::plan_dense(a.view(), b.view(), ov, options, device);
  } catch (const Error& e) {
    if (supported && named == Kernel::tiled) {
      // The documented device difference (dense.hpp, kernel_supports): a named tiled kernel is
      // refused where the device's shared memory cannot hold its tiles. Planned without that
      // limit, the tiles must need more than this device allows.
      const detail::DensePlan unlimited =
          detail::plan_dense(a.view(), b.view(), ov, options, detail::host_device_props());
      EWISE_FUZZ_REQUIRE(unlimited.tiled.shared_bytes > device.max_shared,
                         "tiled refused tiles of ", unlimited.tiled.shared_bytes,
                         " bytes on a device that allows ", device.max_shared, ": ", e.what());
      return;
    }
    EWISE_FUZZ_REQUIRE(!supported, kernel_name(named), " refused a plan it can run: ", e.what());
    return;
  }
  EWISE_FUZZ_REQUIRE(supported, kernel_name(named), " accepted a plan kernel_supports rejects");
  const Kernel expected = named == Kernel::automatic ? automatic.kernel : named;
  EWISE_FUZZ_REQUIRE(L.kernel == expected && L.plan.shape == automatic.plan.shape,
                     kernel_name(named), " planned ", kernel_name(L.kernel), " on ",
                     L.plan.shape.str(), ", automatic ", kernel_name(automatic.kernel), " on ",
                     automatic.plan.shape.str());
  check_launch(L, kernel_name(named));
}

}  // namespace ewise::fuzz
