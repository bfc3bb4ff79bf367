// sparse/merge_set_op.cuh — the pieces of a set operation of two sorted key sequences Q and S on
// the merge-path tiles of merge_path.cuh, shared by the intersection (merge.cu, multiply) and
// the union (union.cu, combine): the operands in sorted order (MergeOperands), which merged
// positions are outputs (mark_outputs), the count pass of the two-pass form (MergeCount) and the
// answer to a split that sorted operands cannot give (read_merge_status). Two canonical
// operands take the single pass instead (single_pass.cuh).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "compaction.cuh"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "keys.cuh"
#include "merge_path.cuh"
#include "policy.hpp"
#include "sort.cuh"
#include "status.cuh"

namespace ewise::sparse_detail {

/// Which merged positions of Q and S are outputs. unite: the first position of every key (one
/// output per key either operand stores). intersect: the first position of every key both
/// store, which is a Q position (on equal keys Q comes first in the merge).
enum class SetOp : std::uint8_t { unite, intersect };

/// An output of tile t: its Q position in the tile in bits 0-14, its S position in bits 15-29,
/// bit 30 set when Q stores the key and bit 31 when S does. Q position q_split[t] + ..., S
/// position t * kEntries - q_split[t] + ... (kEntries: the tile's MergeTile). For a Q output the
/// S position is the S entry the merge stands at: its lower bound in S, which may be the entry
/// after the tile (position nS); for an S output the Q position is the Q entry the merge stands
/// at.
using TileOutput = std::uint32_t;
inline constexpr int kPositionBits = 15;
inline constexpr TileOutput kPositionMask = (1u << kPositionBits) - 1, kHasQ = 1u << 30,
                            kHasS = 1u << 31;

/// Status total slots of the merge pipelines: the number of outputs, and a split that sorted
/// operands cannot give (not -1).
inline constexpr int kOutputsSlot = 0, kBadSplitSlot = 2;

/// The outputs of set operation kSet among the calling thread's kPerThread positions of a tile
/// that stage_merge_tile has staged in sm (*s_before = S[s0 - 1], read only for the union when S is
/// not unique): found[k] for each set bit k of the mask returned, in merge order (found[k] of an
/// unset bit is unspecified). Each thread merges its positions serially from its split
/// (thread_merge_split; on equal keys Q comes first). A Q entry that heads its run of equal Q
/// keys is an output of the union, and of the intersection when the S entry the merge stands at
/// (its lower bound) has its key; an S entry that heads its run is an output of the union when
/// the Q entry before it has another key (Q stores the key only before it). At most one output
/// per position.
///
/// The merge holds Q[i], S[j] and the keys before them in registers: a step compares and
/// selects with predicates, advances i or j and reads the one key that comes next, so it has no
/// branch and one shared-memory read (reading them from shared memory behind branches at every
/// step compiles to 1.7-1.8 times the instructions, with a branch a step; docs/benchmarks.md).
/// A position past the tile's end (in the last tile) reads the entry after the tile again and
/// is not an output.
template <SetOp kSet, class KT, int kPerThread>
__device__ __forceinline__ unsigned mark_outputs(const KT* sm, const MergeTile<kPerThread>& m,
                                                 bool q_unique, bool s_unique, const KT* s_before,
                                                 TileOutput (&found)[kPerThread]) {
  constexpr bool kUnite = kSet == SetOp::unite;
  const int len = m.len, nQ = m.nQ, nS = m.nS;
  const KT* Q = sm + 1;  // Q[-1] is the Q entry before the tile, Q[nQ + j] is S[j]
  const auto [d0, i0, j0] = thread_merge_split<kPerThread>(Q, nQ, Q + nQ, nS);
  const int lowest = m.has_prev ? -1 : 0;  // Q[i - 1] exists for i > lowest
  int i = i0, js = nQ + j0;  // js: S[j]'s index in Q
  KT q = Q[i], s = Q[js], q_prev = Q[i - 1], s_prev{};
  if (kUnite && !s_unique) s_prev = j0 > 0 ? Q[js - 1] : *s_before;
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const bool take_q = i < nQ && (js >= len || q <= s);
    // A Q step: the head of its run, and whether S stores its key.
    const bool q_head = q_unique || i <= lowest || q_prev != q;
    const bool in_s = (js < len || m.has_next) && s == q;
    // An S step (the union's): the head of its run, and whether Q stored its key.
    const bool s_head = s_unique || (js == nQ && m.s0 == 0) || s_prev != s;
    const bool in_q = i > lowest && q_prev == s;
    const bool out = take_q ? q_head && (kUnite || in_s) : kUnite && s_head && !in_q;
    mask |= static_cast<unsigned>(out) << k;
    // The intersection's outputs are all Q steps with in_s: their flags need no select.
    const TileOutput flags =
        kUnite ? (take_q ? (in_s ? kHasQ | kHasS : kHasQ) : kHasS) : kHasQ | kHasS;
    found[k] = static_cast<TileOutput>(i) | static_cast<TileOutput>(js - nQ) << kPositionBits |
               flags;
    if (take_q) {
      q_prev = q;
      ++i;
    } else {
      s_prev = s;
      ++js;
    }
    if (k + 1 < kPerThread) {
      const KT next = Q[std::min(take_q ? i : js, len)];  // len: the entry after the tile
      if (take_q) q = next;
      else s = next;
    }
  }
  const int live = len - d0;  // the thread's positions in the tile
  return live < kPerThread ? mask & ((1u << live) - 1u) : mask;
}

using OutputScan = cub::BlockScan<unsigned, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;

// ---- host ----------------------------------------------------------------------------------

/// status.read(), then the answer to a split that sorted operands cannot give: `what` (the
/// operation) names the error when no index check has named the entry.
inline void read_merge_status(Status& status, bool validate, const char* what) {
  status.read();
  if (status.total(kBadSplitSlot) != -1) {
    // Only a canonical operand that is not sorted splits so: its check names the entry.
    status.recheck();
    EWISE_EXPECTS(!validate, what, ": an operand marked canonical is not sorted");
  }
}

/// The operands Q and S of a set operation in sorted order: canonical ones as they are, others
/// radix-sorted (sort_entries). An operand's index check (`validate`) runs in the sort's first
/// pass when it is sorted, else in the merge's staging: merge_check gives the check to pass the
/// merge kernels for an operand (null for a sorted one, already checked).
struct MergeOperands {
  EntryCheck qc, sc;  ///< Q's and S's checks, registered with the status
  SortedSeq sorted_q, sorted_s;

  MergeOperands(const CooView& q, const char* q_name, const CooView& s, const char* s_name,
                bool validate, Status& status, cudaStream_t stream)
      : qc(status.fused(q, q_name, validate)),
        sc(status.fused(s, s_name, validate)),
        sorted_q(sort_entries(q, q.desc.canonical ? EntryCheck{} : qc, stream)),
        sorted_s(sort_entries(s, s.desc.canonical ? EntryCheck{} : sc, stream)) {}

  const EntrySeq& q() const { return sorted_q.seq; }
  const EntrySeq& s() const { return sorted_s.seq; }
  /// m's check for the merge: its own when m is canonical (not sorted, so not yet checked).
  static EntryCheck merge_check(const CooView& m, const EntryCheck& check) {
    return m.desc.canonical ? check : EntryCheck{};
  }
};

/// The count pass of the two-pass form over n = nnz(Q) + nnz(S) merged entries: tile counts,
/// offsets and scan storage (Compaction) in one allocation with q_split (the tiles' splits) and
/// staging (`staged` TileOutputs, where the match kernel puts each tile's outputs).
class MergeCount {
 public:
  MergeCount(std::int64_t n, std::int64_t staged, cudaStream_t stream)
      : tiles_(tiles_for(n)),
        outputs_(n, stream,
                 {static_cast<std::size_t>(tiles_ + 1) * sizeof(std::int64_t),
                  static_cast<std::size_t>(staged) * sizeof(TileOutput)}) {}

  std::int64_t tiles() const { return tiles_; }
  std::int64_t* q_split() const { return outputs_.extra<std::int64_t>(0); }
  TileOutput* staging() const { return outputs_.extra<TileOutput>(1); }
  std::int64_t* counts() const { return outputs_.counts(); }
  /// offsets()[t]: the slot of tile t's first output (after count()).
  const std::int64_t* offsets() const { return outputs_.offsets(); }

  /// Splits the merge of q and s into tiles (partition_merge), then match(qk, sk, ktag) launches
  /// the kernel that stages each tile's outputs and counts them (typed keys as with_merge_keys
  /// gives them); scans the counts and reads the status (read_merge_status; `what` names the
  /// operation). Returns the number of outputs. Synchronizes.
  template <class Match>
  std::int64_t count(const EntrySeq& q, const EntrySeq& s, bool wide, Match&& match,
                     Status& status, bool validate, const char* what, cudaStream_t stream) {
    with_merge_keys(q.keys, s.keys, wide, [&](auto qk, auto sk, auto ktag) {
      partition_merge(qk, q.n, sk, s.n, tiles_, q_split(), stream);
      match(qk, sk, ktag);
    });
    outputs_.scan(status, kOutputsSlot);
    read_merge_status(status, validate, what);
    return status.total(kOutputsSlot);
  }

 private:
  std::int64_t tiles_;
  Compaction outputs_;
};

}  // namespace ewise::sparse_detail
