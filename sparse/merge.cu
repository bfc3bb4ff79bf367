// sparse/merge.cu — COO ⊙ COO by merge: both operands in sorted order (canonical ones as
// they are, others radix-sorted), intersected by merge-path tiles of equal size.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <type_traits>

#include "compaction.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "multiply.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// q_split[t] = how many Q entries lie among the first t * kTile entries of the merge of Q and
/// S, where on equal keys Q's entries come first.
template <class QK, class SK>
__global__ void merge_partition_kernel(QK q, std::int64_t nq, SK s, std::int64_t ns,
                                       std::int64_t tiles, std::int64_t* q_split) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t > tiles) return;
  const std::int64_t diag = std::min(t * kTile, nq + ns);
  std::int64_t lo = std::max<std::int64_t>(0, diag - ns), hi = std::min(diag, nq);
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (q[mid] <= s[diag - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  q_split[t] = lo;
}

/// A match of merge tile t: Q position q_split[t] + (m & 0xFFFF), S position
/// t * kTile - q_split[t] + (m >> 16) (both parts of a tile are at most kTile <= 0xFFFF long).
using TileMatch = std::uint32_t;

/// Tile t merges kTile entries, Q[q0, q1) and S[s0, s1), staged in shared memory as KT keys
/// with Q[q0 - 1] before and S[s1] after them: every load is issued before any is used. Each
/// thread merges kItems consecutive positions of the tile (merge-path search in shared memory,
/// then a serial merge). When Q[i] is taken, the S entry the merge stands at is its lower bound
/// in S (on equal keys Q comes first), so Q[i] matches when that entry has its key; of a run of
/// equal Q keys only the first (the head) matches. The tile's matches, in order, go to
/// staging[q0 ...] (Q positions are distinct, so at most q1 - q0 of them) and their number to
/// counts[t]; the last tile also zeroes counts[tiles], so the exclusive scan ends with the
/// total. Runs the index checks of the entries the tile holds (range; for a canonical operand
/// also the order, on neighbouring keys). A split that cannot come from sorted operands (a
/// broken canonical promise) sets *bad_split and the tile does nothing.
template <class QK, class SK, class KT>
__global__ void __launch_bounds__(kBlock)
    merge_match_kernel(QK q, std::int64_t nq, bool q_unique, SK s, std::int64_t ns, std::int64_t tiles,
                       const std::int64_t* q_split, EntryCheck qcheck, EntryCheck scheck,
                       TileMatch* staging, std::int64_t* counts, std::int64_t* bad_split) {
  __shared__ KT sm[kTile + 2];
  const std::int64_t t = blockIdx.x;
  if (t == tiles - 1 && threadIdx.x == 0) counts[tiles] = 0;
  const std::int64_t diag0 = t * kTile, diag1 = std::min(diag0 + kTile, nq + ns);
  const int len = static_cast<int>(diag1 - diag0);
  const std::int64_t q0 = q_split[t], q1 = q_split[t + 1];
  if (q1 < q0 || q1 - q0 > len) {  // uniform across the block
    if (threadIdx.x == 0) {
      counts[t] = 0;
      *bad_split = 1;
    }
    return;
  }
  const int nQ = static_cast<int>(q1 - q0), nS = len - nQ;
  const std::int64_t s0 = diag0 - q0, s1 = diag1 - q1;
  const bool has_prev = q0 > 0, has_next = s1 < ns;

  // Stage: sm[0] = Q[q0 - 1], sm[1 + e] = tile entry e (Q part, then S part), sm[1 + len] = S[s1].
  typename QK::Raw qr[kItems];
  typename SK::Raw sr[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) qr[k] = q.load(q0 + e);
    else if (e < len) sr[k] = s.load(s0 + (e - nQ));
  }
  typename QK::Raw qprev{};
  typename SK::Raw snext{};
  if (threadIdx.x == 0 && has_prev) qprev = q.load(q0 - 1);
  if (threadIdx.x == 0 && has_next) snext = s.load(s1);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) {
      if (qcheck.words && !q.in_range(qr[k], qcheck.nrows, qcheck.ncols))
        atomicMin(qcheck.words, static_cast<unsigned long long>(q0 + e));
      sm[1 + e] = static_cast<KT>(q.key(qr[k]));
    } else if (e < len) {
      if (scheck.words && !s.in_range(sr[k], scheck.nrows, scheck.ncols))
        atomicMin(scheck.words, static_cast<unsigned long long>(s0 + (e - nQ)));
      sm[1 + e] = static_cast<KT>(s.key(sr[k]));
    }
  }
  if (threadIdx.x == 0) {
    sm[0] = has_prev ? static_cast<KT>(q.key(qprev)) : KT{0};
    sm[1 + len] = has_next ? static_cast<KT>(s.key(snext)) : KT{0};
  }
  __syncthreads();
  // Canonical promises: Q entry j must come after Q entry j - 1; S entry i + 1 after S entry i.
  // Keys order entries as (row, col) does when both are in range, and an entry out of range
  // is reported before any order failure of its matrix.
  const bool q_order = qcheck.words && qcheck.canonical, s_order = scheck.words && scheck.canonical;
  if (q_order || s_order) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int e = k * kBlock + static_cast<int>(threadIdx.x);
      if (e < nQ) {
        if (q_order && q0 + e > 0 && sm[e] >= sm[1 + e])
          atomicMin(qcheck.words + 1, static_cast<unsigned long long>(q0 + e));
      } else if (e < len) {
        const std::int64_t next = s0 + (e - nQ) + 1;
        if (s_order && next < ns && sm[1 + e] >= sm[2 + e])
          atomicMin(scheck.words + 1, static_cast<unsigned long long>(next));
      }
    }
  }

  const KT* Q = sm + 1;
  const KT* S = sm + 1 + nQ;
  const int d0 = std::min(static_cast<int>(threadIdx.x) * kItems, len);
  int lo = std::max(0, d0 - nS), hi = std::min(d0, nQ);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (Q[mid] <= S[d0 - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  int i = lo, j = d0 - lo;
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

/// Calls f(q accessor, s accessor, KT{}) for two key sequences over matrices of one shape and
/// index type: stored keys are KT (32-bit unless wide), computed ones come from the indices.
template <class F>
void with_merge_keys(const KeySeq& q, const KeySeq& s, bool wide, F&& f) {
  const auto go = [&](auto itag, auto ktag) {
    using I = decltype(itag);
    using K = decltype(ktag);
    with_key_types<I, K>(q, [&](auto qk) { with_key_types<I, K>(s, [&](auto sk) { f(qk, sk, K{}); }); });
  };
  if (q.rows.wide) {
    if (wide) go(std::int64_t{}, std::uint64_t{});
    else go(std::int64_t{}, std::uint32_t{});
  } else {
    if (wide) go(std::int32_t{}, std::uint64_t{});
    else go(std::int32_t{}, std::uint32_t{});
  }
}

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
    detail::launch("sparse merge_partition", merge_partition_kernel<QK, SK>,
                   dim3(static_cast<unsigned>((tiles + 1 + kBlock - 1) / kBlock)), dim3(kBlock), 0,
                   stream, qk, q.n, sk, s.n, tiles, q_split);
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
