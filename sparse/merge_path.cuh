// sparse/merge_path.cuh — the merge-path tiling shared by the intersection (merge.cu) and the
// union (union.cu) of two sorted key sequences Q and S: the partition of the merge into tiles
// (MergeTile: kTile entries in the two-pass kernels, whose splits a kernel finds; more in the
// single pass, where each block finds its own), the staging of a tile's keys in shared memory
// with the index checks of the entries it holds, and the split of a tile among its threads.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ewise/detail/launch.cuh"
#include "policy.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {

/// The first i in [lo, hi) at which pred fails, or hi (max(lo, hi) when pred holds throughout),
/// for a pred that holds on a prefix of [lo, hi): found by the 32 lanes of a warp together, all
/// of which call it with the same arguments. Each step the lanes test 32 evenly spaced points of
/// [lo, hi) at once and keep the interval after the last point of the prefix, so a step is one
/// round of loads and about log_32 (not log_2) of the range steps are taken. pred is called only
/// inside [lo, hi); whatever it answers, the result lies in [lo, max(lo, hi)] and is the same for
/// every call with the same arguments.
template <class Pred>
__device__ std::int64_t warp_partition_point(std::int64_t lo, std::int64_t hi, Pred pred) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  // pred holds below lo; at hi it fails (or hi is the end of the range).
  while (lo < hi) {
    const std::int64_t step = (hi - lo + 31) / 32;
    const std::int64_t i = lo + lane * step;
    const bool holds = i < hi && pred(i);
    const unsigned ballot = __ballot_sync(0xffffffffu, holds);
    // c: how many of the lanes' points, from lane 0 on, are in the prefix.
    const int c = ballot == 0xffffffffu ? 32 : __ffs(~ballot) - 1;
    if (c == 0) break;  // pred fails at lo
    hi = std::min(hi, lo + c * step);
    lo += (c - 1) * step + 1;
  }
  return lo;
}

/// How many Q entries lie among the first diag entries of the merge (diag <= nq + ns), found
/// by the 32 lanes of a warp together (warp_partition_point): for sorted Q and S the value of a
/// binary search, whose predicate Q[i] <= S[diag - 1 - i] holds for a prefix of the candidates.
/// Whatever the operands hold (a broken canonical promise), the result lies in
/// [max(0, diag - ns), min(diag, nq)] and is the same for every call with the same diag.
template <class QK, class SK>
__device__ std::int64_t warp_merge_split(QK q, std::int64_t nq, SK s, std::int64_t ns,
                                         std::int64_t diag) {
  return warp_partition_point(std::max<std::int64_t>(0, diag - ns), std::min(diag, nq),
                              [&](std::int64_t i) { return q[i] <= s[diag - 1 - i]; });
}

/// q_split[t] = how many Q entries lie among the first t * kTile entries of the merge of Q and
/// S (on equal keys Q's entries come first), for t in [0, tiles]: one warp a split
/// (warp_merge_split), about 5 dependent rounds of loads where a binary search by one thread
/// takes 25 (docs/benchmarks.md).
template <class QK, class SK>
__global__ void merge_partition_kernel(QK q, std::int64_t nq, SK s, std::int64_t ns,
                                       std::int64_t tiles, std::int64_t* q_split) {
  const std::int64_t t = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32;
  if (t > tiles) return;  // uniform across the warp
  const std::int64_t split = warp_merge_split(q, nq, s, ns, std::min(t * kTile, nq + ns));
  if ((threadIdx.x & 31) == 0) q_split[t] = split;
}

/// Launches merge_partition_kernel for `tiles` tiles on `stream`.
template <class QK, class SK>
void partition_merge(QK q, std::int64_t nq, SK s, std::int64_t ns, std::int64_t tiles,
                     std::int64_t* q_split, cudaStream_t stream) {
  constexpr std::int64_t kWarps = kBlock / 32;
  detail::launch("sparse merge_partition", merge_partition_kernel<QK, SK>,
                 dim3(static_cast<unsigned>((tiles + 1 + kWarps - 1) / kWarps)), dim3(kBlock), 0,
                 stream, q, nq, s, ns, tiles, q_split);
}

/// Merge tile t of kEntries = kBlock * kPerThread merged entries (kPerThread a thread): entries
/// [diag0, diag0 + len) of the merge, Q[q0, q0 + nQ) and S[s0, s0 + nS).
template <int kPerThread>
struct MergeTile {
  static constexpr std::int64_t kEntries = std::int64_t{kBlock} * kPerThread;
  static_assert(kEntries < (1 << 15), "merge and union keep positions inside a tile in 15 bits");

  std::int64_t diag0 = 0, q0 = 0, s0 = 0, s1 = 0;
  int len = 0, nQ = 0, nS = 0;
  bool has_prev = false;  ///< Q[q0 - 1] exists
  bool has_next = false;  ///< S[s1] exists

  /// Tile t's bounds from the partition; false when the split cannot come from sorted
  /// operands (a broken canonical promise): uniform across the block.
  __device__ bool locate(std::int64_t t, std::int64_t nq, std::int64_t ns,
                         const std::int64_t* q_split) {
    return locate(t, nq, ns, q_split[t], q_split[t + 1]);
  }

  /// The same from the Q entries before the tile (q_begin) and before the next (q_end).
  __device__ bool locate(std::int64_t t, std::int64_t nq, std::int64_t ns, std::int64_t q_begin,
                         std::int64_t q_end) {
    diag0 = t * kEntries;
    const std::int64_t diag1 = std::min(diag0 + kEntries, nq + ns);
    len = static_cast<int>(diag1 - diag0);
    q0 = q_begin;
    const std::int64_t q1 = q_end;
    if (q1 < q0 || q1 - q0 > len) return false;
    nQ = static_cast<int>(q1 - q0);
    nS = len - nQ;
    s0 = diag0 - q0;
    s1 = diag1 - q1;
    has_prev = q0 > 0;
    has_next = s1 < ns;
    return true;
  }
};

/// The start of counted tile t of a two-pass merge (the intersection's and the union's match
/// kernels): the last tile zeroes counts[tiles], so the exclusive scan of the counts ends with
/// the total; m takes the tile's bounds. A split that cannot come from sorted operands (a broken
/// canonical promise) sets *bad_split and counts[t] = 0 and returns false: the tile does nothing.
/// Uniform across the block.
template <int kPerThread>
__device__ __forceinline__ bool begin_counted_tile(std::int64_t t, std::int64_t tiles,
                                                   std::int64_t nq, std::int64_t ns,
                                                   const std::int64_t* q_split,
                                                   std::int64_t* counts, std::int64_t* bad_split,
                                                   MergeTile<kPerThread>& m) {
  if (t == tiles - 1 && threadIdx.x == 0) counts[tiles] = 0;
  if (m.locate(t, nq, ns, q_split)) return true;
  if (threadIdx.x == 0) {
    counts[t] = 0;
    *bad_split = 1;
  }
  return false;
}

/// Stages the tile's keys as KT: sm[0] = Q[q0 - 1], sm[1 + e] = tile entry e (Q part, then S
/// part), sm[1 + len] = S[s1] (every load is issued before any is used), and, when s_prev is
/// given, *s_prev = S[s0 - 1] (when s0 > 0). Runs the index checks of the entries the tile
/// holds: range, and for a canonical operand the order, on neighbouring keys. Block-wide; sm
/// holds m.kEntries + 2 keys; ends with the keys visible to the whole block.
template <class QK, class SK, class KT, int kPerThread>
__device__ __forceinline__ void stage_merge_tile(QK q, SK s, std::int64_t ns,
                                                 const MergeTile<kPerThread>& m,
                                                 const EntryCheck& qcheck,
                                                 const EntryCheck& scheck, KT* sm, KT* s_prev) {
  const int nQ = m.nQ, len = m.len;
  typename QK::Raw qr[kPerThread];
  typename SK::Raw sr[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) qr[k] = q.load(m.q0 + e);
    else if (e < len) sr[k] = s.load(m.s0 + (e - nQ));
  }
  typename QK::Raw qprev{};
  typename SK::Raw snext{}, sprev{};
  if (threadIdx.x == 0 && m.has_prev) qprev = q.load(m.q0 - 1);
  if (threadIdx.x == 0 && m.has_next) snext = s.load(m.s1);
  if (s_prev && threadIdx.x == 0 && m.s0 > 0) sprev = s.load(m.s0 - 1);
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) {
      if (qcheck.words && !q.in_range(qr[k], qcheck.nrows, qcheck.ncols))
        atomicMin(qcheck.words, static_cast<unsigned long long>(m.q0 + e));
      sm[1 + e] = static_cast<KT>(q.key(qr[k]));
    } else if (e < len) {
      if (scheck.words && !s.in_range(sr[k], scheck.nrows, scheck.ncols))
        atomicMin(scheck.words, static_cast<unsigned long long>(m.s0 + (e - nQ)));
      sm[1 + e] = static_cast<KT>(s.key(sr[k]));
    }
  }
  if (threadIdx.x == 0) {
    sm[0] = m.has_prev ? static_cast<KT>(q.key(qprev)) : KT{0};
    sm[1 + len] = m.has_next ? static_cast<KT>(s.key(snext)) : KT{0};
    if (s_prev) *s_prev = m.s0 > 0 ? static_cast<KT>(s.key(sprev)) : KT{0};
  }
  __syncthreads();
  // Canonical promises: Q entry j must come after Q entry j - 1; S entry i + 1 after S entry i.
  // Keys order entries as (row, col) does when both are in range, and an entry out of range
  // is reported before any order failure of its matrix.
  const bool q_order = qcheck.words && qcheck.canonical;
  const bool s_order = scheck.words && scheck.canonical;
  if (q_order || s_order) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int e = k * kBlock + static_cast<int>(threadIdx.x);
      if (e < nQ) {
        if (q_order && m.q0 + e > 0 && sm[e] >= sm[1 + e])
          atomicMin(qcheck.words + 1, static_cast<unsigned long long>(m.q0 + e));
      } else if (e < len) {
        const std::int64_t next = m.s0 + (e - nQ) + 1;
        if (s_order && next < ns && sm[1 + e] >= sm[2 + e])
          atomicMin(scheck.words + 1, static_cast<unsigned long long>(next));
      }
    }
  }
}

/// The calling thread's part of a staged tile of nQ + nS entries: the kPerThread positions of the
/// merge from d0 = min(threadIdx.x * kPerThread, nQ + nS) on, which start at Q[i] and S[j] with
/// i + j = d0 (the merge-path diagonal search, on the tile's Q[0, nQ) and S[0, nS) in
/// shared memory).
struct ThreadMerge {
  int d0, i, j;
};
template <int kPerThread, class KT>
__device__ __forceinline__ ThreadMerge thread_merge_split(const KT* Q, int nQ, const KT* S, int nS) {
  const int d0 = std::min(static_cast<int>(threadIdx.x) * kPerThread, nQ + nS);
  int lo = std::max(0, d0 - nS), hi = std::min(d0, nQ);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (Q[mid] <= S[d0 - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  return {d0, lo, d0 - lo};
}

/// Calls f(q accessor, s accessor, KT{}) for two key sequences over matrices of one shape and
/// index type: stored keys are KT (32-bit unless wide), computed ones come from the indices.
template <class F>
void with_merge_keys(const KeySeq& q, const KeySeq& s, bool wide, F&& f) {
  const auto go = [&](auto itag, auto ktag) {
    using I = decltype(itag);
    using K = decltype(ktag);
    with_key_types<I, K>(q, [&](auto qk) {
      with_key_types<I, K>(s, [&](auto sk) { f(qk, sk, K{}); });
    });
  };
  if (q.rows.wide) {
    if (wide) go(std::int64_t{}, std::uint64_t{});
    else go(std::int64_t{}, std::uint32_t{});
  } else {
    if (wide) go(std::int32_t{}, std::uint64_t{});
    else go(std::int32_t{}, std::uint32_t{});
  }
}

}  // namespace ewise::sparse_detail
