// sparse/merge.cu — COO ⊙ COO by merge: both operands in sorted order (canonical ones as
// they are, others radix-sorted), intersected by merge-path tiles of equal size.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <type_traits>

#include "compaction.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "merge_path.cuh"
#include "multiply.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// A match of merge tile t: Q position q_split[t] + (m & 0xFFFF), S position
/// t * kTile - q_split[t] + (m >> 16) (both parts of a tile are at most kTile <= 0xFFFF long).
using TileMatch = std::uint32_t;

/// Tile t merges kTile entries, Q[q0, q1) and S[s0, s1), staged in shared memory as KT keys
/// with Q[q0 - 1] before and S[s1] after them (stage_merge_tile, which also runs the index
/// checks of the entries the tile holds). Each thread merges kItems consecutive positions of
/// the tile (merge-path search in shared memory, then a serial merge). When Q[i] is taken, the
/// S entry the merge stands at is its lower bound in S (on equal keys Q comes first), so Q[i]
/// matches when that entry has its key; of a run of equal Q keys only the first (the head)
/// matches. The tile's matches, in order, go to staging[q0 ...] (Q positions are distinct, so
/// at most q1 - q0 of them) and their number to counts[t]; the last tile also zeroes
/// counts[tiles], so the exclusive scan ends with the total. A split that cannot come from
/// sorted operands (a broken canonical promise) sets *bad_split and the tile does nothing.
template <class QK, class SK, class KT>
__global__ void __launch_bounds__(kBlock)
    merge_match_kernel(QK q, std::int64_t nq, bool q_unique, SK s, std::int64_t ns, std::int64_t tiles,
                       const std::int64_t* q_split, EntryCheck qcheck, EntryCheck scheck,
                       TileMatch* staging, std::int64_t* counts, std::int64_t* bad_split) {
  __shared__ KT sm[kTile + 2];
  const std::int64_t t = blockIdx.x;
  MergeTile m;
  if (!begin_counted_tile(t, tiles, nq, ns, q_split, counts, bad_split, m)) return;
  stage_merge_tile(q, s, ns, m, qcheck, scheck, sm, static_cast<KT*>(nullptr));
  const int len = m.len, nQ = m.nQ, nS = m.nS;
  const std::int64_t q0 = m.q0;
  const bool has_next = m.has_next;

  const KT* Q = sm + 1;
  const KT* S = sm + 1 + nQ;
  auto [d0, i, j] = thread_merge_split(Q, nQ, S, nS);
  TileMatch found[kItems];
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    found[k] = 0;
    if (d0 + k >= len) continue;
    if (i < nQ && (j >= nS || Q[i] <= S[j])) {
      const KT key = Q[i];
      const bool head = q_unique || q0 + i == 0 || Q[i - 1] != key;
      if (head && (j < nS || has_next) && S[j] == key) {
        found[k] = static_cast<TileMatch>(i) | static_cast<TileMatch>(j) << 16;
        mask |= 1u << k;
      }
      ++i;
    } else {
      ++j;
    }
  }
  // The matches before each thread's: a block-wide exclusive scan of the per-thread counts.
  using BlockScan = cub::BlockScan<unsigned, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename BlockScan::TempStorage scan_temp;
  unsigned before, total;
  BlockScan(scan_temp).ExclusiveSum(static_cast<unsigned>(__popc(mask)), before, total);
  // At most nQ matches from sorted operands; the bound keeps broken input inside the buffer.
  const unsigned cap = static_cast<unsigned>(nQ);
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((mask >> k) & 1u) {
      const unsigned slot = before + __popc(mask & ((1u << k) - 1u));
      if (slot < cap) staging[q0 + slot] = found[k];
    }
  if (threadIdx.x == 0) counts[t] = std::min(total, cap);
}

/// Writes tile t's matches to output slots offsets[t] ...: op.write(Q position, S position, slot).
template <class Op>
__global__ void __launch_bounds__(kBlock)
    merge_write_kernel(const std::int64_t* q_split, const TileMatch* staging, const std::int64_t* offsets, Op op) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t base = offsets[t], n = offsets[t + 1] - base;
  const std::int64_t q0 = q_split[t], s0 = t * kTile - q0;
  for (std::int64_t k = threadIdx.x; k < n; k += kBlock) {
    const TileMatch m = staging[q0 + k];
    op.write(q0 + (m & 0xFFFFu), s0 + (m >> 16), base + k);
  }
}

/// Both operands canonical: the result straight from the match, (row, col, q * s).
template <class T>
struct MergeDirect {
  IndexArray qrows, qcols;
  const T* qv;
  const T* sv;
  IndexArray out_rows, out_cols;
  T* out_vals;
  __device__ void write(std::int64_t j, std::int64_t p, std::int64_t slot) const {
    out_rows.set(slot, qrows[j]);
    out_cols.set(slot, qcols[j]);
    out_vals[slot] = detail::from_compute<T>(ops::Mul{}(detail::to_compute(qv[j]), detail::to_compute(sv[p])));
  }
};

/// Otherwise: finalize sums the duplicates of both runs.
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
  const bool q_is_a = a.desc.nnz <= b.desc.nnz;  // fewer entries to look up
  const CooView& Q = q_is_a ? a : b;
  const CooView& S = q_is_a ? b : a;
  // Sorted operands are checked by the sort's first pass, canonical ones by the merge.
  const EntryCheck qc = status.fused(Q, q_is_a ? "a" : "b", validate);
  const EntryCheck sc = status.fused(S, q_is_a ? "b" : "a", validate);
  const SortedSeq sorted_q = sort_entries(Q, Q.desc.canonical ? EntryCheck{} : qc, stream);
  const SortedSeq sorted_s = sort_entries(S, S.desc.canonical ? EntryCheck{} : sc, stream);
  const EntrySeq& q = sorted_q.seq;
  const EntrySeq& s = sorted_s.seq;
  const std::int64_t tiles = tiles_for(q.n + s.n);
  // Tile counts, offsets and scan storage, then q_split and staging: one allocation.
  Compaction matches(q.n + s.n, stream,
                     {static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t),
                      static_cast<std::size_t>(q.n) * sizeof(TileMatch)});
  auto* q_split = matches.extra<std::int64_t>(0);
  auto* staging = matches.extra<TileMatch>(1);
  constexpr int kBadSplit = 2, kTotal = 0;  // status total slots
  with_merge_keys(q.keys, s.keys, wide_keys(a.desc), [&](auto qk, auto sk, auto ktag) {
    using QK = decltype(qk);
    using SK = decltype(sk);
    partition_merge(qk, q.n, sk, s.n, tiles, q_split, stream);
    detail::launch("sparse merge_match", merge_match_kernel<QK, SK, decltype(ktag)>,
                   dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, qk, q.n, q.unique, sk,
                   s.n, tiles, q_split, Q.desc.canonical ? qc : EntryCheck{},
                   S.desc.canonical ? sc : EntryCheck{}, staging, matches.counts(),
                   status.total_slot(kBadSplit));
  });
  matches.scan(status, kTotal);
  status.read();
  if (status.total(kBadSplit) != -1) {
    // Only a canonical operand that is not sorted splits so: its check names the entry.
    status.recheck();
    EWISE_EXPECTS(!validate, "merge: an operand marked canonical is not sorted");
  }
  const std::int64_t m = status.total(kTotal);
  DeviceCoo out(result_desc(a.desc, m), stream);
  if (m == 0) return out;
  const auto write = [&](const auto& op) {
    detail::launch("sparse merge_write", merge_write_kernel<std::decay_t<decltype(op)>>,
                   dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, q_split, staging,
                   matches.offsets(), op);
  };
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (Q.desc.canonical && S.desc.canonical) {
      write(MergeDirect<T>{index_array(Q.rows, Q.desc.index), index_array(Q.cols, Q.desc.index),
                           static_cast<const T*>(Q.vals), static_cast<const T*>(S.vals),
                           index_array(out.rows(), out.desc().index),
                           index_array(out.cols(), out.desc().index), static_cast<T*>(out.vals())});
      return;
    }
    FinalizeArgs f = FinalizeArgs::products(q, s, nullptr, 0, nullptr, MatchIndex::position);
    write(MergeFinalize<T>{f.to_coo(out)});
  });
  return out;
}

}  // namespace ewise::sparse_detail
