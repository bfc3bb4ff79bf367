// sparse/merge.cu — COO ⊙ COO by merge: both operands in sorted order (canonical ones as
// they are, others radix-sorted), intersected by merge-path tiles of equal size: a key both
// store is an output at its first Q position (merge_set_op.cuh). Two canonical operands take the
// single pass that the union shares (single_pass_merge). Otherwise the matches are found and
// counted per tile, placed by a scan and written with both operands' sums (duplicate runs
// summed) by a second pass.
#include <algorithm>
#include <cstdint>

#include "compaction.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "finalize.cuh"
#include "internal.hpp"
#include "merge_path.cuh"
#include "merge_set_op.cuh"
#include "multiply.cuh"
#include "single_pass.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// Tile t merges kTile entries, Q[q0, q1) and S[s0, s1), staged in shared memory by
/// stage_merge_tile (which also runs the index checks of the entries the tile holds), and marks
/// its matches (mark_outputs: of a run of equal Q keys only the head, when S has its key). The
/// tile's matches, in order, go to staging[q0 ...] (Q positions are distinct, so at most
/// q1 - q0 of them) and their number to counts[t]; the last tile also zeroes counts[tiles], so
/// the exclusive scan ends with the total. A split that cannot come from sorted operands (a
/// broken canonical promise) sets *bad_split and the tile does nothing.
template <class QK, class SK, class KT>
__global__ void __launch_bounds__(kBlock)
    merge_match_kernel(QK q, std::int64_t nq, bool q_unique, SK s, std::int64_t ns, std::int64_t tiles,
                       const std::int64_t* q_split, EntryCheck qcheck, EntryCheck scheck,
                       TileOutput* staging, std::int64_t* counts, std::int64_t* bad_split) {
  __shared__ KT sm[kTile + 2];
  const std::int64_t t = blockIdx.x;
  MergeTile<kItems> m;
  if (!begin_counted_tile(t, tiles, nq, ns, q_split, counts, bad_split, m)) return;
  stage_merge_tile(q, s, ns, m, qcheck, scheck, sm, static_cast<KT*>(nullptr));
  TileOutput found[kItems];
  const unsigned mask = mark_outputs<SetOp::intersect>(sm, m, q_unique, true,
                                                       static_cast<const KT*>(nullptr), found);
  // The matches before each thread's: a block-wide exclusive scan of the per-thread counts.
  __shared__ typename OutputScan::TempStorage scan_temp;
  unsigned before, total;
  OutputScan(scan_temp).ExclusiveSum(static_cast<unsigned>(__popc(mask)), before, total);
  // At most nQ matches from sorted operands; the bound keeps broken input inside the buffer.
  const unsigned cap = static_cast<unsigned>(m.nQ);
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((mask >> k) & 1u) {
      const unsigned slot = before + __popc(mask & ((1u << k) - 1u));
      if (slot < cap) staging[m.q0 + slot] = found[k];
    }
  if (threadIdx.x == 0) counts[t] = std::min(total, cap);
}

/// Writes tile t's matches to output slots offsets[t] ...: op.write(Q position, S position, slot).
template <class Op>
__global__ void __launch_bounds__(kBlock)
    merge_write_kernel(const std::int64_t* q_split, const TileOutput* staging, const std::int64_t* offsets, Op op) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t base = offsets[t], n = offsets[t + 1] - base;
  const std::int64_t q0 = q_split[t], s0 = t * kTile - q0;
  for (std::int64_t k = threadIdx.x; k < n; k += kBlock) {
    const TileOutput o = staging[q0 + k];
    op.write(q0 + (o & kPositionMask), s0 + ((o >> kPositionBits) & kPositionMask), base + k);
  }
}

/// The result from the matches: finalize sums the duplicates of both runs.
template <class T>
struct MergeFinalize {
  FinalizeArgs f;
  __device__ void write(std::int64_t j, std::int64_t p, std::int64_t slot) const {
    finalize_entry<T>(f, slot, j, p);
  }
};

}  // namespace

DeviceCoo merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                         cudaStream_t stream) {
  // Q has the fewer entries: the matches are Q positions, so nnz(Q) bounds their number.
  const bool q_is_a = a.desc.nnz <= b.desc.nnz;
  const CooView& Q = q_is_a ? a : b;
  const CooView& S = q_is_a ? b : a;
  const MergeOperands sorted(Q, q_is_a ? "a" : "b", S, q_is_a ? "b" : "a", validate, status,
                             stream);
  const EntrySeq& q = sorted.q();
  const EntrySeq& s = sorted.s();
  // Each match's value is q * s in the compute type, rounded once (Q's value first, as
  // finalize_entry multiplies).
  if (single_pass_operand(q) && single_pass_operand(s))
    return single_pass_merge<SetOp::intersect>(
        Q, S, [](auto f) { f(ops::Mul{}); }, 0.0, 0.0, sorted.qc, sorted.sc, validate, "merge",
        status, stream);
  MergeCount matches(q.n + s.n, q.n, stream);
  const std::int64_t m = matches.count(
      q, s, wide_keys(a.desc),
      [&](auto qk, auto sk, auto ktag) {
        detail::launch("sparse merge_match",
                       merge_match_kernel<decltype(qk), decltype(sk), decltype(ktag)>,
                       dim3(static_cast<unsigned>(matches.tiles())), dim3(kBlock), 0, stream, qk,
                       q.n, q.unique, sk, s.n, matches.tiles(), matches.q_split(),
                       MergeOperands::merge_check(Q, sorted.qc),
                       MergeOperands::merge_check(S, sorted.sc), matches.staging(),
                       matches.counts(), status.total_slot(kBadSplitSlot));
      },
      status, validate, "merge", stream);
  DeviceCoo out(result_desc(a.desc, m), stream);
  if (m == 0) return out;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using W = MergeFinalize<T>;
    FinalizeArgs f = FinalizeArgs::products(q, s, nullptr, 0, nullptr, MatchIndex::position);
    detail::launch("sparse merge_write", merge_write_kernel<W>,
                   dim3(static_cast<unsigned>(matches.tiles())), dim3(kBlock), 0, stream,
                   matches.q_split(), matches.staging(), matches.offsets(), W{f.to_coo(out)});
  });
  return out;
}

}  // namespace ewise::sparse_detail
