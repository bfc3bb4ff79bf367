// dense/plan_accepts.cpp — what each dense kernel accepts, from the sorted, coalesced plan
// alone, how the vector kernels read their operands, and the automatic choice of kernel
// (plan_shared.hpp).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ewise/error.hpp"
#include "plan_shared.hpp"

namespace ewise::detail::planner {
namespace {

/// Whether the plan's inner strides are 1 (output) and 0 or 1 (inputs): row_vectorized's rows.
bool inner_strides_ok(const BroadcastPlan& p) {
  const int r = p.rank() - 1;
  const auto unit_or_zero = [&](int k) { return p.strides[k][r] == 0 || p.strides[k][r] == 1; };
  return p.strides[0][r] == 1 && unit_or_zero(1) && unit_or_zero(2);
}

/// Why inner_strides_ok fails, or "".
std::string inner_rejects(const BroadcastPlan& p) {
  if (inner_strides_ok(p)) return "";
  const int r = p.rank() - 1;
  if (p.strides[0][r] != 1)
    return concat("the output's inner stride is ", p.strides[0][r], ", not 1");
  const int k = p.strides[1][r] != 0 && p.strides[1][r] != 1 ? 1 : 2;
  return concat("input ", k == 1 ? "a" : "b", " has inner stride ", p.strides[k][r],
                ", not 0 or 1");
}

/// Whether the output is contiguous as a whole (row-major compact over the plan).
bool contiguous_output(const BroadcastPlan& p) {
  std::int64_t expect = 1;
  for (int d = p.rank() - 1; d >= 0; --d) {
    if (p.shape[d] != 1 && p.strides[0][d] != expect) return false;
    expect *= p.shape[d];
  }
  return true;
}

/// Why contiguous_output fails, or "".
std::string contiguous_output_rejects(const BroadcastPlan& p) {
  if (contiguous_output(p)) return "";
  return concat("needs an output contiguous as a whole; its strides are ", p.strides[0].str());
}

bool contiguous_schedule(Kernel k) {
  return k == Kernel::continuous || k == Kernel::alternate || k == Kernel::baseline;
}

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

/// Whether an input of p is read in full along the rows (laid out like the output).
bool full_rows(const BroadcastPlan& p) {
  return p.strides[1] == p.strides[0] || p.strides[2] == p.strides[0];
}

}  // namespace

VectorOperand find_vector(const BroadcastPlan& p, bool contiguous) {
  VectorOperand v;
  if (p.rank() != 2) {
    v.why = concat("needs a matrix-vector plan of rank 2, not ", p.rank());
    return v;
  }
  for (int vec : {2, 1}) {
    const Dims& s = p.strides[vec];
    std::string reason;
    if ((s[0] == 0) == (s[1] == 0)) {
      reason = concat(vec == 1 ? "a" : "b", " is not a vector (strides ", s.str(),
                      " need exactly one zero)");
    } else if (contiguous) {
      const Dims row_major{p.shape[1], 1};
      if (p.strides[0] != row_major || p.strides[3 - vec] != row_major)
        reason = concat("out and ", vec == 1 ? "b" : "a", " must be row-major contiguous (",
                        row_major.str(), ")");
    }
    if (reason.empty()) return {vec, s[0] == 0, ""};
    v.why += (v.why.empty() ? "" : "; ") + reason;
  }
  return v;
}

std::string kernel_rejects(Kernel kernel, const BroadcastPlan& p) {
  switch (kernel) {
    case Kernel::automatic:
    case Kernel::general:
      return "";
    case Kernel::vectorized:
      return contiguous_output_rejects(p);
    case Kernel::row_vectorized:
      return inner_rejects(p);
    case Kernel::tiled:
      if (p.rank() < 2) return concat("needs rank >= 2 after coalescing, not ", p.rank());
      return "";
    case Kernel::sliding:
    case Kernel::sliding_shared:
    case Kernel::continuous:
    case Kernel::alternate:
    case Kernel::baseline:
      return find_vector(p, contiguous_schedule(kernel)).why;
  }
  return concat("unknown kernel ", static_cast<int>(kernel));
}

int row_vector_width(const DenseCall& c) {
  const BroadcastPlan& p = c.plan;
  const std::int64_t V = kVectorBytes / element_bytes(c);
  const int r = p.rank() - 1;
  bool vector = multiple_of(p.shape[r], V);
  const void* ptrs[3] = {c.out, c.a, c.b};
  for (int k = 0; k < 3 && vector; ++k) {
    if (p.strides[k][r] != 1) continue;
    vector = aligned(ptrs[k], kVectorBytes);
    for (int dim = 0; dim < r && vector; ++dim) vector = multiple_of(p.strides[k][dim], V);
  }
  return vector ? static_cast<int>(V) : 1;
}

VectorAccess vector_access(const DenseCall& c, int k) {
  const BroadcastPlan& p = c.plan;
  bool zero = true;
  for (int dim = 0; dim < p.rank(); ++dim) zero = zero && p.strides[k][dim] == 0;
  if (zero) return VectorAccess::scalar;
  const auto mis = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % kVectorBytes;
  };
  return p.strides[k] == p.strides[0] && mis(k == 1 ? c.a : c.b) == mis(c.out)
             ? VectorAccess::vector
             : VectorAccess::gather;
}

Kernel select(const DenseCall& c) {
  const BroadcastPlan& p = c.plan;
  // Predicates, not the kernels' reasons: planning a call allocates nothing.
  const bool contiguous_out = contiguous_output(p);
  // Same layout or scalars (a rank-1 plan): every access 16 bytes.
  if (contiguous_out && vector_access(c, 1) != VectorAccess::gather &&
      vector_access(c, 2) != VectorAccess::gather)
    return Kernel::vectorized;
  const bool rows = inner_strides_ok(p);
  // Rows of whole, aligned 16-byte vectors: row offsets computed once per chunk.
  if (rows && row_vector_width(c) > 1) return Kernel::row_vectorized;
  // A transposed input: shared-memory tiles, with or without a vector operand, so that both
  // the reads and the writes run along contiguous dims (faster than the sliding kernel's
  // strided reads, aligned or not: docs/benchmarks.md).
  if (transposed_input(p)) return Kernel::tiled;
  // A contiguous output whose rows are not whole aligned vectors (odd widths, misaligned
  // starts, short rows, outer products): the output as one flat range of 16-byte vectors, the
  // other inputs gathered, unless row_vectorized's element-wise rows are as good: elements of 4
  // bytes or more (a warp's access already fills 128 bytes), long rows and an input read along
  // them in full (the cases where the gathered form measured slower on H100's ml_shapes
  // suite: docs/benchmarks.md).
  if (contiguous_out &&
      !(rows && element_bytes(c) >= 4 && p.shape[p.rank() - 1] >= kLongRow && full_rows(p)))
    return Kernel::vectorized;
  if (rows) return Kernel::row_vectorized;
  // Other matrix-vector plans whose matrix is not read along rows (e.g. a reversed inner dim):
  // the sliding kernel, whose strided reads the L2 absorbs.
  if (p.rank() == 2 && kernel_rejects(Kernel::sliding, p).empty()) return Kernel::sliding;
  return Kernel::general;
}

}  // namespace ewise::detail::planner
