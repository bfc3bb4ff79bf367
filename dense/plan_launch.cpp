// dense/plan_launch.cpp — the launch of an accepted dense call: one rule per kernel family
// (threads, grid and the family's plan fields), and plan_launch, which picks the rule.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "ewise/error.hpp"
#include "plan_shared.hpp"

namespace ewise::detail {
namespace {

using namespace planner;

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
  const BroadcastPlan& p = c.plan;
  const int r = p.rank() - 1;
  const auto by_rows = [&](VectorAccess access, int k) {
    return access != VectorAccess::gather || p.strides[k][r] == 0 || p.strides[k][r] == 1;
  };
  v.rows = v.gathers() && p.shape[r] >= V && by_rows(v.a, 1) && by_rows(v.b, 2);
  // A chunk of `chunk` elements that starts at a row's last element touches the most rows:
  // 1 + ceil((chunk - 1) / row), at most 32 where row > (chunk - 2) / 31.
  const std::int64_t chunk = 32 * vector_unroll(elem) * V;
  const int along = (v.a == VectorAccess::gather && p.strides[1][r] == 1) +
                    (v.b == VectorAccess::gather && p.strides[2][r] == 1);
  const int bytes = static_cast<int>(elem);
  v.segments = v.rows && !c.wide && along <= 1 && p.shape[r] >= segment_min_vectors(bytes) * V;
  if (v.segments) v.row_segments = ceil_div(p.shape[r] / V - 2, segment_vectors(bytes));
  v.evict_first = v.segments && v.a != VectorAccess::vector && v.b != VectorAccess::vector;
  v.row_table = v.gathers() && !v.segments && p.rank() >= kRowTableRank &&
                p.shape[r] > (chunk - 2) / 31;
  const auto mis = reinterpret_cast<std::uintptr_t>(c.out) % kVectorBytes;
  const auto head = static_cast<std::int64_t>((kVectorBytes - mis) % kVectorBytes) / elem;
  v.head = std::min(head, c.numel);
  v.vectors = (c.numel - v.head) / V;
  // Threads: one per vector_unroll vectors (segments: 32 a segment), at least V (for the head
  // and the tail).
  const std::int64_t segments = c.numel / p.shape[r] * v.row_segments * 32;
  const std::int64_t work =
      std::max(v.segments ? segments : ceil_div(v.vectors, vector_unroll(elem)), V);
  const int threads = block_threads(c, d);
  set_launch(plan, threads, ceil_div(work, threads), d);
  plan.grid.covers_work = kVectorGridCoversWork && (!v.gathers() || v.segments);
  plan.grid.waves = v.gathers() ? kGatherWaves : 1;
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

}  // namespace ewise::detail
