// dense/plan.cpp — the host half of a dense call: kernel names, validation, planning and
// kernel choice (detail/dense_plan.hpp). No CUDA call: the planner fuzz target links it alone.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense_plan.hpp"
#include "ewise/error.hpp"

namespace ewise {

namespace {

constexpr const char* kKernelNames[] = {"automatic",      "general",    "vectorized", "sliding",
                                        "sliding_shared", "continuous", "alternate",  "baseline",
                                        "row_vectorized", "tiled"};
constexpr int kKernelCount = static_cast<int>(sizeof kKernelNames / sizeof kKernelNames[0]);

bool valid_kernel(Kernel k) { return static_cast<int>(k) < kKernelCount; }

std::string describe(const BroadcastPlan& p) {
  return detail::concat("plan shape ", p.shape.str(), ", strides out ", p.strides[0].str(), " a ",
                        p.strides[1].str(), " b ", p.strides[2].str());
}

/// The plan with dims ordered by the output's |stride|, largest first (stable): a permutation of
/// the dims changes no offset, and it makes the output's innermost dim the plan's innermost.
BroadcastPlan sort_by_output(const BroadcastPlan& p) {
  int order[kMaxRank];
  for (int d = 0; d < p.rank(); ++d) order[d] = d;
  std::stable_sort(order, order + p.rank(), [&](int x, int y) {
    return std::llabs(p.strides[0][x]) > std::llabs(p.strides[0][y]);
  });
  BroadcastPlan s;
  for (int d = 0; d < p.rank(); ++d) {
    s.shape.push_back(p.shape[order[d]]);
    for (int k = 0; k < BroadcastPlan::kOperands; ++k)
      s.strides[k].push_back(p.strides[k][order[d]]);
  }
  return s;
}

/// Largest |offset| operand k reaches over the plan.
std::int64_t span(const BroadcastPlan& p, int k) {
  std::int64_t s = 0;
  for (int d = 0; d < p.rank(); ++d) s += (p.shape[d] - 1) * std::llabs(p.strides[k][d]);
  return s;
}

bool aligned(const void* ptr, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<std::uintptr_t>(bytes) == 0;
}

/// Whether the matrix-vector kernels can use operand `vec` (1 = a, 2 = b) as the vector of the
/// rank-2 plan p; `contiguous` also requires out and the other input row-major contiguous.
std::string vector_rejects(const BroadcastPlan& p, int vec, bool contiguous) {
  const Dims& s = p.strides[vec];
  if ((s[0] == 0) == (s[1] == 0))
    return detail::concat(vec == 1 ? "a" : "b", " is not a vector (strides ", s.str(),
                          " need exactly one zero)");
  if (contiguous) {
    const Dims row_major{p.shape[1], 1};
    if (p.strides[0] != row_major || p.strides[3 - vec] != row_major)
      return detail::concat("out and ", vec == 1 ? "b" : "a", " must be row-major contiguous (",
                            row_major.str(), ")");
  }
  return "";
}

}  // namespace

const char* kernel_name(Kernel k) {
  return valid_kernel(k) ? kKernelNames[static_cast<int>(k)] : "unknown";
}

Kernel parse_kernel(std::string_view name) {
  for (int i = 0; i < kKernelCount; ++i)
    if (name == kKernelNames[i]) return static_cast<Kernel>(i);
  std::string known;
  for (const char* n : kKernelNames) known += std::string(known.empty() ? "" : ", ") + n;
  EWISE_EXPECTS(false, "unknown kernel '", name, "' (known: ", known, ")");
  return Kernel::automatic;
}

namespace detail {

std::string kernel_rejects(Kernel kernel, const BroadcastPlan& p, DenseLaunch* launch) {
  const int rank = p.rank(), r = rank - 1;
  const auto inner_ok = [&] {  // output inner stride 1, inputs 0 or 1
    if (p.strides[0][r] != 1)
      return detail::concat("the output's inner stride is ", p.strides[0][r], ", not 1");
    for (int k = 1; k <= 2; ++k)
      if (p.strides[k][r] != 0 && p.strides[k][r] != 1)
        return detail::concat("input ", k == 1 ? "a" : "b", " has inner stride ", p.strides[k][r],
                              ", not 0 or 1");
    return std::string();
  };
  switch (kernel) {
    case Kernel::automatic:
    case Kernel::general:
      return "";
    case Kernel::vectorized:
      if (rank != 1) return detail::concat("needs rank 1 after coalescing, not ", rank);
      return inner_ok();
    case Kernel::row_vectorized:
      return inner_ok();
    case Kernel::tiled: {
      if (rank < 2) return detail::concat("needs rank >= 2 after coalescing, not ", rank);
      int t = r - 1;  // the dim nearest the innermost where an input has stride +-1
      for (int d = r - 1; d >= 0; --d)
        if (std::llabs(p.strides[1][d]) == 1 || std::llabs(p.strides[2][d]) == 1) {
          t = d;
          break;
        }
      launch->tile_dim = t;
      const auto staged = [&](int k) {
        return p.strides[k][t] != 0 && std::llabs(p.strides[k][t]) < std::llabs(p.strides[k][r]);
      };
      launch->staged_a = staged(1);
      launch->staged_b = staged(2);
      return "";
    }
    case Kernel::sliding:
    case Kernel::sliding_shared:
    case Kernel::continuous:
    case Kernel::alternate:
    case Kernel::baseline: {
      if (rank != 2) return detail::concat("needs a matrix-vector plan of rank 2, not ", rank);
      const bool contiguous = kernel != Kernel::sliding && kernel != Kernel::sliding_shared;
      std::string why;
      for (int vec : {2, 1}) {
        const std::string reason = vector_rejects(p, vec, contiguous);
        if (reason.empty()) {
          launch->vector_operand = vec;
          launch->row_vector = p.strides[vec][0] == 0;
          return "";
        }
        why += (why.empty() ? "" : "; ") + reason;
      }
      return why;
    }
  }
  return detail::concat("unknown kernel ", static_cast<int>(kernel));
}

namespace {

/// Whether an input of p reads across its contiguous dim (inner stride neither 0 nor 1, stride
/// +-1 along another dim: a transposed view) and the tiles fit: output inner stride 1, both
/// tiled extents at least kMinTiledExtent.
bool transposed_input(const BroadcastPlan& p) {
  const int r = p.rank() - 1;
  if (r < 1 || p.strides[0][r] != 1 || p.shape[r] < kMinTiledExtent) return false;
  for (int k = 1; k <= 2; ++k) {
    if (p.strides[k][r] == 0 || p.strides[k][r] == 1) continue;
    for (int d = 0; d < r; ++d)
      if (std::llabs(p.strides[k][d]) == 1 && p.shape[d] >= kMinTiledExtent) return true;
  }
  return false;
}

/// Whether the tiled kernel can run launch L (kernel fields set) in 16-byte units of `elem`-byte
/// elements (DenseLaunch::tile_vector_ok).
bool tile_vector_ok(const DenseLaunch& L, std::int64_t elem) {
  const BroadcastPlan& p = L.plan;
  const std::int64_t V = kVectorBytes / elem;
  const int r = p.rank() - 1, t = L.tile_dim;
  if (p.shape[r] % V != 0 || p.shape[t] % V != 0 || p.strides[0][r] != 1) return false;
  if (L.staged_a && L.staged_b) return false;  // the vector path stages one input
  const void* ptrs[3] = {L.out, L.a, L.b};
  const bool staged[3] = {false, L.staged_a, L.staged_b};
  for (int k = 0; k < 3; ++k) {
    // The dim along which operand k's 16-byte units run (stride 1); none: read as scalars.
    int unit_dim = -1;
    if (staged[k]) {
      if (p.strides[k][t] != 1) return false;
      unit_dim = t;
    } else if (p.strides[k][r] == 1) {
      unit_dim = r;
    } else if (p.strides[k][r] != 0) {
      return false;
    }
    if (unit_dim < 0) continue;
    if (!aligned(ptrs[k], kVectorBytes)) return false;
    for (int d = 0; d <= r; ++d)
      if (d != unit_dim && p.strides[k][d] % V != 0) return false;
  }
  return true;
}

/// The kernel `automatic` runs for the sorted, coalesced plan p (numel > 0).
Kernel select(const BroadcastPlan& p) {
  DenseLaunch scratch;
  if (p.rank() == 1 && kernel_rejects(Kernel::vectorized, p, &scratch).empty())
    return Kernel::vectorized;
  if (kernel_rejects(Kernel::row_vectorized, p, &scratch).empty()) return Kernel::row_vectorized;
  // A transposed input: shared-memory tiles, with or without a vector operand. H200, 16384^2
  // transposed + row vector: f32 tiled 0.569 ms, sliding 1.144 ms; with the matrix one element
  // off 16-byte alignment (element-wise tiles) 0.969 vs 1.146 ms (notes/dense3.md).
  if (transposed_input(p)) return Kernel::tiled;
  // Other matrix-vector plans whose matrix is not read along rows (e.g. a reversed inner dim):
  // the sliding kernel, whose strided reads the L2 absorbs.
  if (p.rank() == 2 && kernel_rejects(Kernel::sliding, p, &scratch).empty()) return Kernel::sliding;
  return Kernel::general;
}

void check_options(const DenseOptions& o) {
  EWISE_EXPECTS(valid_kernel(o.kernel), "unknown kernel ", static_cast<int>(o.kernel));
  EWISE_EXPECTS(o.threads == 0 || (o.threads >= 32 && o.threads <= 1024 && o.threads % 32 == 0),
                "threads per block must be 0 (default) or a multiple of 32 in 32..1024, not ",
                o.threads);
  EWISE_EXPECTS(o.blocks >= 0, "blocks must be 0 (default) or positive, not ", o.blocks);
  EWISE_EXPECTS(o.sliding_factor >= 0, "sliding_factor must be 0 (automatic) or positive, not ",
                o.sliding_factor);
}

}  // namespace

DenseLaunch plan_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                       const DenseOptions& options) {
  const BroadcastPlan raw = plan_binary(a, b, out);
  check_options(options);
  DenseLaunch L;
  L.dtype = out.desc.dtype;
  L.out = out.data;
  L.a = a.data;
  L.b = b.data;
  L.threads = options.threads;
  L.blocks = options.blocks;
  L.sliding_factor = options.sliding_factor;
  L.numel = raw.numel();
  const auto elem = static_cast<std::int64_t>(dtype_size(L.dtype));
  if (out.memory == Memory::device && L.numel > 0) {
    const std::pair<const void*, const char*> views[] = {
        {a.data, "a"}, {b.data, "b"}, {out.data, "out"}};
    for (const auto& [ptr, what] : views)
      EWISE_EXPECTS(aligned(ptr, elem), what, " data ", ptr, " is not aligned to its ", elem,
                    "-byte ", dtype_name(L.dtype), " elements");
  }
  if (L.numel == 0) {
    L.kernel = options.kernel == Kernel::automatic ? Kernel::general : options.kernel;
    L.plan = raw;
    return L;
  }
  BroadcastPlan p = coalesce(sort_by_output(raw));
  if (p.rank() == 0) {  // one element: a rank-1 plan of extent 1
    p.shape = Dims{1};
    p.strides = {Dims{1}, Dims{0}, Dims{0}};
  }
  L.plan = p;
  if (options.kernel == Kernel::automatic) {
    L.kernel = select(p);
  } else {
    L.kernel = options.kernel;
  }
  const std::string why = kernel_rejects(L.kernel, p, &L);
  EWISE_EXPECTS(why.empty(), "kernel ", kernel_name(L.kernel), " cannot run out ",
                out.desc.shape.str(), " = a ", a.desc.shape.str(), " (strides ",
                a.desc.strides.str(), ") op b ", b.desc.shape.str(), " (strides ",
                b.desc.strides.str(), "), out strides ", out.desc.strides.str(), ": ", why, " (",
                describe(p), ")");
  constexpr std::int64_t kNarrow = std::numeric_limits<std::int32_t>::max();
  L.wide =
      L.numel > kNarrow || span(p, 0) > kNarrow || span(p, 1) > kNarrow || span(p, 2) > kNarrow;

  const std::int64_t V = kVectorBytes / elem;
  const int r = p.rank() - 1;
  if (L.kernel == Kernel::vectorized) {
    // Scalar head up to the output's first 16-byte boundary; vectors only if every stride-1
    // input sits at the same offset within 16 bytes as the output.
    const auto mis = [](const void* ptr) {
      return reinterpret_cast<std::uintptr_t>(ptr) % kVectorBytes;
    };
    bool same = true;
    if (p.strides[1][r] == 1) same = same && mis(L.a) == mis(L.out);
    if (p.strides[2][r] == 1) same = same && mis(L.b) == mis(L.out);
    const std::int64_t head =
        static_cast<std::int64_t>((kVectorBytes - mis(L.out)) % kVectorBytes) / elem;
    L.head = same ? std::min(head, L.numel) : L.numel;
  }
  if (L.kernel == Kernel::row_vectorized) {
    bool ok = p.shape[r] % V == 0;
    const void* ptrs[3] = {L.out, L.a, L.b};
    for (int k = 0; k < 3 && ok; ++k) {
      if (p.strides[k][r] != 1) continue;  // a broadcast (stride 0) operand is read as scalars
      ok = aligned(ptrs[k], kVectorBytes);
      for (int d = 0; d < r && ok; ++d) ok = p.strides[k][d] % V == 0;
    }
    L.row_vector_ok = ok;
  }
  if (L.kernel == Kernel::tiled) L.tile_vector_ok = tile_vector_ok(L, elem);
  return L;
}

}  // namespace detail

Kernel select_kernel(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out) {
  return detail::plan_dense(a, b, out, DenseOptions{}).kernel;
}

bool kernel_supports(Kernel kernel, const ConstTensorView& a, const ConstTensorView& b,
                     const TensorView& out) {
  EWISE_EXPECTS(valid_kernel(kernel), "unknown kernel ", static_cast<int>(kernel));
  const detail::DenseLaunch L = detail::plan_dense(a, b, out, DenseOptions{});
  if (L.numel == 0) return true;
  detail::DenseLaunch scratch;
  return detail::kernel_rejects(kernel, L.plan, &scratch).empty();
}

}  // namespace ewise
