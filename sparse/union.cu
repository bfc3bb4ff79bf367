// sparse/union.cu — COO ⊕ COO on the GPU, combine(op, a, b) (sparse.hpp): both operands in
// sorted order (canonical ones as they are, others radix-sorted), merged by merge-path tiles
// (merge_path.cuh); every first entry of a key in the merge becomes one output
// (merge_set_op.cuh). Two canonical operands take the single pass that the intersection shares
// (single_pass_merge). Otherwise the outputs are counted per tile, placed by a scan and written
// with both operands' sums (duplicate runs summed) by a second pass.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "compaction.cuh"
#include "drop_zeros.cuh"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "merge_path.cuh"
#include "merge_set_op.cuh"
#include "run_sums.cuh"
#include "single_pass.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

// ---- two passes: match, scan, write (operands not both canonical) --------------------------

/// Tile t merges kTile entries of Q and S, staged by stage_merge_tile (which also runs the
/// index checks), and marks its outputs (mark_outputs); they go, in order, to
/// staging[t * kTile ...] and their number to counts[t]; the last tile also zeroes
/// counts[tiles], so the exclusive scan ends with the total. A split that cannot come from
/// sorted operands (a broken canonical promise) sets *bad_split and the tile does nothing.
template <class QK, class SK, class KT>
__global__ void __launch_bounds__(kBlock)
    union_match_kernel(QK q, std::int64_t nq, bool q_unique, SK s, std::int64_t ns,
                       bool s_unique, std::int64_t tiles, const std::int64_t* q_split,
                       EntryCheck qcheck, EntryCheck scheck, TileOutput* staging,
                       std::int64_t* counts, std::int64_t* bad_split) {
  __shared__ KT sm[kTile + 2];
  __shared__ KT s_before;
  const std::int64_t t = blockIdx.x;
  MergeTile<kItems> m;
  if (!begin_counted_tile(t, tiles, nq, ns, q_split, counts, bad_split, m)) return;
  stage_merge_tile(q, s, ns, m, qcheck, scheck, sm, &s_before);
  TileOutput found[kItems];
  const unsigned mask =
      mark_outputs<SetOp::unite>(sm, m, q_unique, s_unique, &s_before, found);
  // The outputs before each thread's: a block-wide exclusive scan of the per-thread counts.
  __shared__ typename OutputScan::TempStorage scan_temp;
  unsigned before, total;
  OutputScan(scan_temp).ExclusiveSum(static_cast<unsigned>(__popc(mask)), before, total);
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((mask >> k) & 1u) staging[m.diag0 + before + __popc(mask & ((1u << k) - 1u))] = found[k];
  if (threadIdx.x == 0) counts[t] = total;
}

/// An output's value: op(x, y) with x the sum of Q's run (or fill_q when Q does not store the
/// key) and y that of S's run (or fill_s), rounded once; its indices from the entry it heads.
template <class T, class Op>
struct UnionWrite {
  EntrySeq q, s;
  detail::compute_t<T> fill_q, fill_s;
  Op op;
  IndexArray out_rows, out_cols;
  T* out_vals;
  /// Blocks an SM that union_write_kernel's register count is held to: six (40 registers), five
  /// (48) for 8-byte sums. Left free, the compiler sizes the whole kernel for finish_long_runs'
  /// path (62-64 registers; ptxas, sm_90), which few tiles take.
  static constexpr int kMinBlocks = sizeof(detail::compute_t<T>) == 8 ? 5 : 6;

  /// Called by every lane of the warp (warp_run_sum); `live` says whether o is an output, which
  /// goes to slot base + k (added after the sums: a 64-bit slot held through them spills).
  __device__ void write(bool live, TileOutput o, std::int64_t qpos, std::int64_t spos,
                        std::int64_t base, int k) const {
    const bool has_q = live && (o & kHasQ), has_s = live && (o & kHasS);
    std::int64_t row = 0, col = 0;
    if (live) (has_q ? q : s).coords(has_q ? qpos : spos, row, col);
    const std::uint64_t key = static_cast<std::uint64_t>(row) * q.keys.ncols +
                              static_cast<std::uint64_t>(col);
    const auto x = warp_run_sum<T>(q, has_q, qpos, key, fill_q);
    const auto y = warp_run_sum<T>(s, has_s, spos, key, fill_s);
    if (!live) return;
    const std::int64_t slot = base + k;
    out_rows.set(slot, row);
    out_cols.set(slot, col);
    out_vals[slot] = detail::from_compute<T>(op(x, y));
  }
};

/// Writes tile t's outputs to slots offsets[t] ....
template <class W>
__global__ void __launch_bounds__(kBlock, W::kMinBlocks)
    union_write_kernel(const std::int64_t* q_split, const TileOutput* staging,
                       const std::int64_t* offsets, W w) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t base = offsets[t];
  const int n = static_cast<int>(offsets[t + 1] - base);  // at most kTile
  const std::int64_t q0 = q_split[t], s0 = t * kTile - q0;
  // A block-uniform trip count: whole warps sum long runs together (warp_run_sum).
  for (int k0 = 0; k0 < n; k0 += kBlock) {
    const int k = k0 + static_cast<int>(threadIdx.x);
    const bool live = k < n;
    const TileOutput o = live ? staging[t * kTile + k] : TileOutput{};
    w.write(live, o, q0 + (o & kPositionMask), s0 + ((o >> kPositionBits) & kPositionMask),
            base, k);
  }
}

// ---- host ----------------------------------------------------------------------------------

/// The union of a and b, nnz(a) + nnz(b) > 0, explicit zeros kept: in one pass when both
/// operands are canonical, else in two (match, then write, which sums duplicate runs).
DeviceCoo union_pipeline(const CooView& a, const CooView& b, const UnionArgs& u, bool validate,
                         Status& status, cudaStream_t stream) {
  const MergeOperands sorted(a, "a", b, "b", validate, status, stream);
  const EntrySeq& q = sorted.q();
  const EntrySeq& s = sorted.s();
  if (single_pass_operand(q) && single_pass_operand(s))
    return single_pass_merge<SetOp::unite>(
        a, b, [&](auto f) { with_union_op(u.op, f); }, u.fill_a, u.fill_b, sorted.qc, sorted.sc,
        validate, "combine", status, stream);
  MergeCount outputs(q.n + s.n, q.n + s.n, stream);
  const std::int64_t m = outputs.count(
      q, s, wide_keys(a.desc),
      [&](auto qk, auto sk, auto ktag) {
        detail::launch("sparse union_match",
                       union_match_kernel<decltype(qk), decltype(sk), decltype(ktag)>,
                       dim3(static_cast<unsigned>(outputs.tiles())), dim3(kBlock), 0, stream, qk,
                       q.n, q.unique, sk, s.n, s.unique, outputs.tiles(), outputs.q_split(),
                       MergeOperands::merge_check(a, sorted.qc),
                       MergeOperands::merge_check(b, sorted.sc), outputs.staging(),
                       outputs.counts(), status.total_slot(kBadSplitSlot));
      },
      status, validate, "combine", stream);
  DeviceCoo out(result_desc(a.desc, m), stream);
  if (m == 0) return out;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    with_union_op(u.op, [&](auto op) {
      using W = UnionWrite<T, decltype(op)>;
      const W w{q,
                s,
                static_cast<C>(u.fill_a),
                static_cast<C>(u.fill_b),
                op,
                index_array(out.rows(), out.desc().index),
                index_array(out.cols(), out.desc().index),
                static_cast<T*>(out.vals())};
      detail::launch("sparse union_write", union_write_kernel<W>,
                     dim3(static_cast<unsigned>(outputs.tiles())), dim3(kBlock), 0, stream,
                     outputs.q_split(), outputs.staging(), outputs.offsets(), w);
    });
  });
  return out;
}

}  // namespace

DeviceCoo device_combine(const CooView& a, const CooView& b, const UnionArgs& u,
                         const SparseOptions& options, cudaStream_t stream) {
  Status status(stream);
  DeviceCoo out = a.desc.nnz + b.desc.nnz == 0
                      ? DeviceCoo(result_desc(a.desc, 0), stream)
                      : union_pipeline(a, b, u, options.validate_indices, status, stream);
  return options.drop_zeros ? drop_zero_entries(std::move(out), status, stream) : std::move(out);
}

}  // namespace ewise::sparse_detail
