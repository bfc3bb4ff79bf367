// dense/plan.cpp — the dense planner (ewise/detail/dense/plan.hpp): kernel names, the checks,
// what each kernel accepts, the automatic choice, and one plan_<kernel> rule per kernel family
// giving its launch. No CUDA call: the plan fuzz target links this file alone.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/error.hpp"

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

namespace {

std::string describe(const BroadcastPlan& p) {
  return concat("plan shape ", p.shape.str(), ", strides out ", p.strides[0].str(), " a ",
                p.strides[1].str(), " b ", p.strides[2].str());
}

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

bool aligned(const void* ptr, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<std::uintptr_t>(bytes) == 0;
}

/// x / y rounded up, for x >= 0 and y > 0 (no overflow near the int64 limit).
std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return x / y + (x % y != 0); }

std::int64_t element_bytes(const DenseCall& c) {
  return static_cast<std::int64_t>(dtype_size(c.dtype));
}

/// Whether x is a multiple of v, a power of two (the elements in 16 bytes): a mask, where `%`
/// by a value known only at run time is a division.
bool multiple_of(std::int64_t x, std::int64_t v) { return (x & (v - 1)) == 0; }

// ---- what each kernel accepts: from the sorted, coalesced plan alone --------------------

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

/// The vector of a rank-2 matrix-vector plan: the input with exactly one zero stride (b tried
/// first) and its direction, or why neither input qualifies. `contiguous` (continuous,
/// alternate, baseline) also requires out and the other input row-major contiguous.
struct VectorOperand {
  int operand = 0;  ///< 1 = a, 2 = b; 0: none (see why)
  bool row_vector = false;
  std::string why;
};

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

bool contiguous_schedule(Kernel k) {
  return k == Kernel::continuous || k == Kernel::alternate || k == Kernel::baseline;
}

/// Why `kernel` cannot run the sorted, coalesced plan p (numel > 0), or "" when it can.
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

/// Elements per access of row_vectorized on call c (inner strides 0 or 1): 16 bytes' worth
/// when rows are whole vectors and every stride-1 operand's rows start 16-byte aligned (a
/// broadcast, stride-0, operand is read as scalars), else 1.
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

/// How the vectorized kernel reads input k (1 = a, 2 = b) of call c: as 16-byte vectors when
/// it is laid out like the output at the same offset within 16 bytes, held when every stride is
/// 0, else gathered element by element.
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

// ---- the automatic choice -------------------------------------------------------------------

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

/// The kernel `automatic` runs for call c's sorted, coalesced plan (numel > 0).
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
  // A transposed input: shared-memory tiles, with or without a vector operand. H200, 16384^2
  // transposed + row vector: f32 tiled 0.569 ms, sliding 1.144 ms; with the matrix one element
  // off 16-byte alignment (element-wise tiles) 0.969 vs 1.146 ms.
  if (transposed_input(p)) return Kernel::tiled;
  // A contiguous output whose rows are not whole aligned vectors (odd widths, misaligned
  // starts, short rows, outer products): the output as one flat range of 16-byte vectors, the
  // other inputs gathered, unless row_vectorized's element-wise rows are as good: elements of 4
  // bytes or more (a warp's access already fills 128 bytes), long rows and an input read along
  // them in full. H100 (ml_shapes suite): bf16/f16 1.1-2.0x faster gathered in every case;
  // f32 rows of 49 (7x7 planes, a rank-5 mixed broadcast) 1.1-1.4x and an odd outer product
  // (4097) 1.15x faster gathered, but 999- to 50257-wide bias rows 6-7% slower, and so is a
  // same-shape input off the output's 16-byte offset (0.073 vs 0.068 ms).
  if (contiguous_out &&
      !(rows && element_bytes(c) >= 4 && p.shape[p.rank() - 1] >= kLongRow && full_rows(p)))
    return Kernel::vectorized;
  if (rows) return Kernel::row_vectorized;
  // Other matrix-vector plans whose matrix is not read along rows (e.g. a reversed inner dim):
  // the sliding kernel, whose strided reads the L2 absorbs.
  if (p.rank() == 2 && kernel_rejects(Kernel::sliding, p).empty()) return Kernel::sliding;
  return Kernel::general;
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

// ---- the rules: the launch of an accepted call, one per kernel family -------------------

/// Threads per block of every kernel but tiled.
int block_threads(const DenseCall& c, const DeviceProps& d) {
  return c.options.threads > 0 ? c.options.threads : dense_policy(d.cc).threads;
}

/// The plan's launch: `threads` per block and a grid of `need` blocks (capped).
void set_launch(DensePlan& plan, int threads, std::int64_t need, const DeviceProps& d) {
  plan.threads = threads;
  plan.grid = {need, plan.options.blocks, d.sm_count};
}

void plan_general(DensePlan& plan, const DeviceProps& d) {
  const int threads = block_threads(plan, d);
  set_launch(plan, threads, ceil_div(plan.numel, threads), d);
}

void plan_vectorized(DensePlan& plan, const DeviceProps& d) {
  const DenseCall& c = plan;
  const std::int64_t elem = element_bytes(c), V = kVectorBytes / elem;
  // Scalar head up to the output's first 16-byte boundary, then vectors.
  VectorizedPlan v;
  v.a = vector_access(c, 1);
  v.b = vector_access(c, 2);
  const auto mis = reinterpret_cast<std::uintptr_t>(c.out) % kVectorBytes;
  const auto head = static_cast<std::int64_t>((kVectorBytes - mis) % kVectorBytes) / elem;
  v.head = std::min(head, c.numel);
  v.vectors = (c.numel - v.head) / V;
  // Threads: one per vector_unroll vectors, at least V (for the head and the tail).
  const std::int64_t work = std::max(ceil_div(v.vectors, vector_unroll(elem)), V);
  const int threads = block_threads(c, d);
  set_launch(plan, threads, ceil_div(work, threads), d);
  plan.grid.covers_work = kVectorGridCoversWork;
  plan.vectorized = v;
}

void plan_row_vectorized(DensePlan& plan, const DeviceProps& d) {
  const DenseCall& c = plan;
  const BroadcastPlan& p = c.plan;
  const std::int64_t elem = element_bytes(c);
  const int r = p.rank() - 1;
  RowPlan row;
  row.vector = row_vector_width(c);
  row.per_row_vectors = p.shape[r] / row.vector;
  row.rows = c.numel / p.shape[r];
  const std::int64_t chunk = 32 * vector_unroll(elem), idle = dense_policy(d.cc).row_run_max_idle;
  row.per_row_chunks = ceil_div(row.per_row_vectors, chunk);
  row.runs = row.per_row_chunks * chunk * idle <= row.per_row_vectors * (idle + 1);
  row.chunks = row.runs ? row.rows * row.per_row_chunks
                        : ceil_div(row.rows * row.per_row_vectors, chunk);
  row.a_full = p.strides[1][r] == 1;
  row.b_full = p.strides[2][r] == 1;
  const int threads = block_threads(c, d);
  set_launch(plan, threads, ceil_div(row.chunks * 32, threads), d);
  plan.grid.covers_work = kVectorGridCoversWork;
  plan.row = row;
}

/// Whether the tiled kernel can use 16-byte units on call c with tiles `t` (tile dim and staged
/// inputs set), before the shared-memory check (TiledPlan::vector).
bool tile_units_ok(const DenseCall& c, const TiledPlan& t) {
  const BroadcastPlan& p = c.plan;
  const std::int64_t V = kVectorBytes / element_bytes(c);
  const int r = p.rank() - 1;
  if (!multiple_of(p.shape[r], V) || !multiple_of(p.shape[t.tile_dim], V) || p.strides[0][r] != 1)
    return false;
  if (t.staged_a && t.staged_b) return false;  // the vector path stages one input
  const void* ptrs[3] = {c.out, c.a, c.b};
  const bool staged[3] = {false, t.staged_a, t.staged_b};
  for (int k = 0; k < 3; ++k) {
    // The dim along which operand k's 16-byte units run (stride 1); none: read as scalars.
    int unit_dim = -1;
    if (staged[k]) {
      if (p.strides[k][t.tile_dim] != 1) return false;
      unit_dim = t.tile_dim;
    } else if (p.strides[k][r] == 1) {
      unit_dim = r;
    } else if (p.strides[k][r] != 0) {
      return false;
    }
    if (unit_dim < 0) continue;
    if (!aligned(ptrs[k], kVectorBytes)) return false;
    for (int dim = 0; dim <= r; ++dim)
      if (dim != unit_dim && !multiple_of(p.strides[k][dim], V)) return false;
  }
  return true;
}

void plan_tiled(DensePlan& plan, const DeviceProps& d) {
  const DenseCall& c = plan;
  const BroadcastPlan& p = c.plan;
  const int r = p.rank() - 1, elem = static_cast<int>(element_bytes(c));
  TiledPlan t;
  t.tile_dim = r - 1;  // the dim nearest the innermost where an input has stride +-1
  for (int dim = r - 1; dim >= 0; --dim)
    if (std::llabs(p.strides[1][dim]) == 1 || std::llabs(p.strides[2][dim]) == 1) {
      t.tile_dim = dim;
      break;
    }
  const auto staged = [&](int k) {
    return p.strides[k][t.tile_dim] != 0 &&
           std::llabs(p.strides[k][t.tile_dim]) < std::llabs(p.strides[k][r]);
  };
  t.staged_a = staged(1);
  t.staged_b = staged(2);
  const std::int64_t buffers = t.staged_a + t.staged_b;
  const TileShape units = tile_shape(elem, true);
  t.vector =
      tile_units_ok(c, t) && units.stages * buffers * units.tile_bytes(elem) <= d.max_shared;
  const TileShape shape = tile_shape(elem, t.vector);
  const std::int64_t rows = p.shape[t.tile_dim], cols = p.shape[r];
  t.row_tiles = ceil_div(rows, shape.rows());
  t.col_tiles = ceil_div(cols, shape.cols());
  t.tiles = c.numel / (rows * cols) * t.row_tiles * t.col_tiles;
  t.shared_bytes = shape.stages * buffers * shape.tile_bytes(elem);
  if (t.shared_bytes > d.max_shared) {
    // Even element-wise tiles do not fit this device's shared memory (two staged inputs of
    // 4-byte elements take 96 KiB): automatic runs the general kernel, a request throws.
    EWISE_EXPECTS(c.options.kernel == Kernel::automatic, "kernel tiled needs ", t.shared_bytes,
                  " bytes of shared memory per block for this plan; device ", d.ordinal,
                  " allows ", d.max_shared, " (", describe(p), ")");
    plan.kernel = Kernel::general;
    return plan_general(plan, d);
  }
  set_launch(plan, kTileThreads, t.tiles, d);
  plan.tiled = t;
}

/// sliding and sliding_shared: 2-d grids of block tiles, no grid-stride cap.
void plan_sliding(DensePlan& plan, const DeviceProps& d) {
  const DenseCall& c = plan;
  const VectorOperand v = find_vector(c.plan, false);
  MatrixVectorPlan mv;
  mv.vector_operand = v.operand;
  mv.row_vector = v.row_vector;
  const int threads = block_threads(c, d);
  const std::int64_t rows = c.plan.shape[0], cols = c.plan.shape[1], by = threads / 32;
  mv.sliding_factor = c.options.sliding_factor;
  if (mv.sliding_factor == 0) {
    // The smallest factor that leaves sliding_waves waves of threads, at most the one at which a
    // block tile spans the whole broadcast dim (and an int).
    const std::int64_t target = std::int64_t{dense_policy(d.cc).sliding_waves} * d.sm_count *
                                d.max_threads_per_sm;
    const std::int64_t most = mv.row_vector ? ceil_div(rows, by) : ceil_div(cols, 32);
    mv.sliding_factor = static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(rows * cols, target), 1,
        std::clamp<std::int64_t>(most, 1, std::numeric_limits<int>::max())));
  }
  // Row vector: tiles of 32 columns x by*factor rows; column vector: by rows x 32*factor columns.
  const std::int64_t factor = mv.sliding_factor;
  mv.tiles_x = mv.row_vector ? ceil_div(cols, 32) : ceil_div(cols, 32 * factor);
  mv.tiles_y = mv.row_vector ? ceil_div(rows, by * factor) : ceil_div(rows, by);
  mv.grid_x = static_cast<unsigned>(
      std::min<std::int64_t>(mv.tiles_x, std::numeric_limits<int>::max()));
  mv.grid_y = static_cast<unsigned>(std::min<std::int64_t>(mv.tiles_y, 65535));
  set_launch(plan, threads, 1, d);
  plan.matrix_vector = mv;
}

/// continuous, alternate, baseline: grid-stride over the contiguous matrix.
void plan_schedule(DensePlan& plan, const DeviceProps& d) {
  const VectorOperand v = find_vector(plan.plan, true);
  const int threads = block_threads(plan, d);
  set_launch(plan, threads, ceil_div(plan.numel, threads), d);
  plan.matrix_vector.vector_operand = v.operand;
  plan.matrix_vector.row_vector = v.row_vector;
}

}  // namespace

DensePlan check_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                      const DenseOptions& options) {
  const BroadcastPlan raw = plan_binary(a, b, out);
  check_options(options);
  DensePlan c;
  c.dtype = out.desc.dtype;
  c.out = out.data;
  c.a = a.data;
  c.b = b.data;
  c.options = options;
  c.numel = raw.numel();
  if (out.memory == Memory::device && c.numel > 0) {
    const std::int64_t elem = element_bytes(c);
    const std::pair<const void*, const char*> views[] = {
        {a.data, "a"}, {b.data, "b"}, {out.data, "out"}};
    for (const auto& [ptr, what] : views)
      EWISE_EXPECTS(aligned(ptr, elem), what, " data ", ptr, " is not aligned to its ", elem,
                    "-byte ", dtype_name(c.dtype), " elements");
  }
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
  c.kernel = options.kernel == Kernel::automatic ? select(c) : options.kernel;
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

void plan_launch(DensePlan& plan, const DeviceProps& props) {
  if (plan.numel == 0) return;
  switch (plan.kernel) {
    case Kernel::general:
      return plan_general(plan, props);
    case Kernel::vectorized:
      return plan_vectorized(plan, props);
    case Kernel::row_vectorized:
      return plan_row_vectorized(plan, props);
    case Kernel::tiled:
      return plan_tiled(plan, props);
    case Kernel::sliding:
    case Kernel::sliding_shared:
      return plan_sliding(plan, props);
    case Kernel::continuous:
    case Kernel::alternate:
    case Kernel::baseline:
      return plan_schedule(plan, props);
    case Kernel::automatic:
      break;
  }
  EWISE_EXPECTS(false, "plan_launch: kernel ", kernel_name(plan.kernel), " was not resolved");
}

DensePlan plan_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                     const DenseOptions& options, const DeviceProps& props) {
  DensePlan plan = check_dense(a, b, out, options);
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
  return c.numel == 0 || detail::kernel_rejects(kernel, c.plan).empty();
}

}  // namespace ewise
