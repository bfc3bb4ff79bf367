// sparse/single_pass.cuh — the set operations of two sorted key sequences Q and S on the
// merge-path tiles of merge_path.cuh, shared by the intersection (merge.cu, multiply) and the
// union (union.cu, combine): which merged positions are outputs (mark_outputs), and for two
// canonical operands the one kernel that does either set operation in a single pass
// (single_pass_kernel) with its host side (single_pass_merge).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "compaction.cuh"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "merge_path.cuh"
#include "policy.hpp"
#include "sort.cuh"
#include "status.cuh"
#include "workspace.hpp"

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
/// branch and one shared-memory read. Reading Q[i], S[j] and the key before them from shared
/// memory at every step, behind branches, compiled to 358 static SASS instructions with 65
/// branches from the split search to the block scan (single_pass_kernel, f32 intersection,
/// sm_90), against 208 with 3 (the search loop's); the union 458 with 59, against 252 with 3. A
/// position past the tile's end (in the last tile) reads the entry after the tile again and is
/// not an output.
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

/// p, hidden from the compiler. A tile's base pointer (an array + the tile's first position)
/// indexed by a 32-bit position in the tile is otherwise folded into every access as a 64-bit
/// sum of the two positions, shifted and added to the array's address reloaded from constant
/// memory; hidden, an access takes one IMAD.WIDE or two adds. An output's loads in
/// single_pass_kernel took 29 and 44 static SASS instructions (f32 intersection and union,
/// sm_90) against 20 and 33. The assumption keeps the loads global (LDG, not generic LD), as the
/// compiler knows them for the kernel's pointer arguments.
template <class T>
__device__ __forceinline__ const T* opaque_global(const T* p) {
  asm("" : "+l"(p));
  __builtin_assume(__isGlobal(p));
  return p;
}

using OutputScan = cub::BlockScan<unsigned, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;

/// What single_pass_kernel reads and writes: Q and S in storage order with unique keys
/// (canonical operands), their keys computed from their indices I.
template <class I, class T, class Op>
struct SinglePassArgs {
  ImplicitKeys<I> q, s;
  std::int64_t nq, ns;
  const T* qv;
  const T* sv;
  detail::compute_t<T> fill_q, fill_s;  ///< the union's value of an operand without the key
  Op op;
  EntryCheck qcheck, scheck;
  I* out_rows;  ///< room for `room` entries, as out_cols and out_vals
  I* out_cols;
  T* out_vals;
  std::int64_t room;
  SinglePassTiles tiles;
  std::int64_t* total;  ///< the number of outputs, from the last tile
  std::int64_t* bad_split;
};

/// Set operation kSet of Q and S with unique keys in one pass over tiles of
/// kBlock * kSinglePassItems<I> merged entries, taken in launch order (SinglePassTiles). Tile t
/// finds its own split (one warp at each end of it, warp_merge_split), stages its keys
/// (stage_merge_tile, which runs the index checks), marks its outputs (mark_outputs) and ranks
/// them (block scan). The ranked outputs go to shared memory of their own (over the keys they
/// would wait at a barrier for every thread's last key read) while the tile learns from the
/// tiles before it where its outputs start (decoupled look-back); then each thread writes every
/// kBlock-th output of the tile: the indices of the entry that stores the key (Q's when both
/// do) and op(x, y), x Q's value or fill_q, y S's value or fill_s, in the compute type, rounded
/// once. The last tile writes the number of outputs to *total. A split that cannot come from
/// sorted operands (a broken canonical promise) sets *bad_split and the tile outputs nothing.
///
/// Room: no merged entry gives more than one output, so the union's fit nq + ns. The
/// intersection's outputs are Q positions, at most nq (Q the operand with fewer entries) when
/// the splits are consistent; after a bad split tiles may cover overlapping Q ranges, so outputs
/// past `room` are not written (the host clamps the count; that result is thrown away when
/// validating).
///
/// Five blocks an SM (at most 48 registers a thread; with f32 values and i32 indices the
/// intersection takes 44 and the union 46, the 40 of six blocks spill 8-24 bytes; sm_90): the
/// tile's barriers (ticket, split, staging, scan, look-back) stall its warps, 30% of their
/// cycles at four blocks, and more resident blocks hide them. H100, union of canonical
/// 8192 x 12288 10% masks (10M + 10M entries, f32, i32): 0.417 -> 0.371 ms a call.
///
/// The outputs' own shared array (one barrier a tile fewer) with the branch-free merge of
/// mark_outputs and 32-bit positions in the write phase, against the outputs over the keys and a
/// merge with a branch a step (H100, same run, bench/results/h100/structures/ab_branch_free):
/// the canonical intersections of the structures kinds took 0.87-0.94 of the time (mask 0.261
/// -> 0.228 ms, graph 0.469 -> 0.443), the canonical unions of the union kinds 0.91-0.94.
///
/// Each tile searches its own split rather than reading it from a partition kernel launched
/// before: while its two warps search, the SM's other blocks work on their tiles. Splits found
/// by merge_partition_kernel ahead (one barrier a tile fewer) took the canonical intersections
/// of the structures kinds from 0.26-0.48 to 0.28-0.51 ms, 4-17% slower (H100, same run). All
/// eight warps searching the two splits (256 points a round, three rounds for 10M-entry
/// operands against five) took twice the time (two 10% masks: 0.22 -> 0.43 ms); issuing the
/// write phase's loads before the look-back (one barrier more) took 0.214-0.223 against
/// 0.209-0.217 ms; one warp searching the tile's end split, its first split polled from the
/// predecessor's, 0.227-0.231 against 0.211-0.221 ms (bench/results/h100/structures/
/// single_pass_tiles).
template <SetOp kSet, class KT, class I, class T, class Op>
__global__ void __launch_bounds__(kBlock, 5) single_pass_kernel(SinglePassArgs<I, T, Op> a) {
  constexpr bool kUnite = kSet == SetOp::unite;
  constexpr int kPerThread = kSinglePassItems<I>;
  using Tile = MergeTile<kPerThread>;
  __shared__ TileOutput outputs[Tile::kEntries];  // first: the scatter's addresses take no offset
  __shared__ KT keys[Tile::kEntries + 2];
  __shared__ std::int64_t split[2];  // the Q entries before tile t and before tile t + 1
  __shared__ typename OutputScan::TempStorage scan_temp;
  const std::int64_t t = a.tiles.take();
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if (warp < 2) {
    const std::int64_t diag = std::min((t + warp) * Tile::kEntries, a.nq + a.ns);
    const std::int64_t q_before = warp_merge_split(a.q, a.nq, a.s, a.ns, diag);
    if ((threadIdx.x & 31) == 0) split[warp] = q_before;
  }
  __syncthreads();
  Tile m;
  TileOutput found[kPerThread];
  unsigned mask = 0;
  if (m.locate(t, a.nq, a.ns, split[0], split[1])) {  // uniform across the block
    stage_merge_tile(a.q, a.s, a.ns, m, a.qcheck, a.scheck, keys, static_cast<KT*>(nullptr));
    mask = mark_outputs<kSet>(keys, m, true, true, static_cast<const KT*>(nullptr), found);
  } else if (threadIdx.x == 0) {
    *a.bad_split = 1;
  }
  unsigned before, count;
  OutputScan(scan_temp).ExclusiveSum(static_cast<unsigned>(__popc(mask)), before, count);
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
    if ((mask >> k) & 1u) outputs[before + __popc(mask & ((1u << k) - 1u))] = found[k];
  const std::int64_t first = a.tiles.exclusive(t, count);  // its barrier publishes the outputs
  if (t == a.tiles.tiles - 1 && threadIdx.x == 0) *a.total = first + count;
  // The union's room holds every output: only the intersection's writes need the bound.
  const unsigned n =
      kUnite ? count
             : static_cast<unsigned>(std::min<std::int64_t>(
                   count, std::max<std::int64_t>(a.room - first, 0)));
  // Every load before any store: the compiler cannot move a load past a store to the result,
  // which it cannot tell apart from the operands. The entries are read by their 32-bit
  // positions in the tile, from pointers to its first Q and S entries; a register is written
  // only for an output, and read only for one.
  const I* const qr = opaque_global(a.q.r + m.q0);
  const I* const qc = opaque_global(a.q.c + m.q0);
  const T* const qv = opaque_global(a.qv + m.q0);
  const I* const sr = opaque_global(a.s.r + m.s0);
  const I* const sc = opaque_global(a.s.c + m.s0);
  const T* const sv = opaque_global(a.sv + m.s0);
  I row[kPerThread], col[kPerThread];
  T val[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned u = k * kBlock + threadIdx.x;
    if (u < n) {
      const TileOutput o = outputs[u];
      const unsigned qp = o & kPositionMask, sp = (o >> kPositionBits) & kPositionMask;
      detail::compute_t<T> x = a.fill_q, y = a.fill_s;
      if (!kUnite || (o & kHasQ)) {
        row[k] = qr[qp];
        col[k] = qc[qp];
        x = detail::to_compute(qv[qp]);
      } else {
        row[k] = sr[sp];
        col[k] = sc[sp];
      }
      if (!kUnite || (o & kHasS)) y = detail::to_compute(sv[sp]);
      val[k] = detail::from_compute<T>(a.op(x, y));
    }
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned u = k * kBlock + threadIdx.x;
    if (u < n) {
      a.out_rows[first + u] = row[k];
      a.out_cols[first + u] = col[k];
      a.out_vals[first + u] = val[k];
    }
  }
}

// ---- host ----------------------------------------------------------------------------------

/// Whether the single pass takes a sequence: the entries of a canonical matrix as stored (what
/// sort_entries returns for one), keys computed from the indices.
inline bool single_pass_operand(const EntrySeq& e) {
  return e.unique && e.perm.p == nullptr && e.keys.keys.p == nullptr;
}

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

/// Set operation kSet of q and s (both single_pass_operand; qc and sc their checks) in one
/// pass: op(x, y) for each output, op one of the functors with_op(f) passes to f, the fills as
/// the union's values of an operand without the key. The result is allocated before the kernel
/// with room for nnz(q) + nnz(s) entries (the union) or nnz(q) (the intersection: q must be the
/// operand with fewer entries), and its nnz is set to the number of outputs read back at the one
/// synchronization, which also runs the checks (read_merge_status; `what` names the operation).
template <SetOp kSet, class WithOp>
DeviceCoo single_pass_merge(const CooView& q, const CooView& s, WithOp&& with_op, double fill_q,
                            double fill_s, const EntryCheck& qc, const EntryCheck& sc,
                            bool validate, const char* what, Status& status,
                            cudaStream_t stream) {
  const int per_thread = q.desc.index == IndexType::i64 ? kSinglePassItems<std::int64_t>
                                                        : kSinglePassItems<std::int32_t>;
  const std::int64_t n = q.desc.nnz + s.desc.nnz,
                     tiles = tiles_for(n, std::int64_t{kBlock} * per_thread);
  const std::int64_t room = kSet == SetOp::unite ? n : q.desc.nnz;
  const Workspace ws({SinglePassTiles::bytes(tiles)}, stream);
  const SinglePassTiles single_pass(ws.get(0), tiles);
  single_pass.launch_reset(stream);
  DeviceCoo out(result_desc(q.desc, room), stream);
  detail::dispatch_dtype(q.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    with_op([&](auto op) {
      using Op = decltype(op);
      const auto run = [&](auto itag, auto ktag) {
        using I = decltype(itag);
        const auto keys = [](const CooView& m) {
          return ImplicitKeys<I>{static_cast<const I*>(m.rows), static_cast<const I*>(m.cols),
                                 static_cast<std::uint64_t>(m.desc.ncols)};
        };
        const SinglePassArgs<I, T, Op> args{keys(q),
                                            keys(s),
                                            q.desc.nnz,
                                            s.desc.nnz,
                                            static_cast<const T*>(q.vals),
                                            static_cast<const T*>(s.vals),
                                            static_cast<C>(fill_q),
                                            static_cast<C>(fill_s),
                                            op,
                                            qc,
                                            sc,
                                            static_cast<I*>(out.rows()),
                                            static_cast<I*>(out.cols()),
                                            static_cast<T*>(out.vals()),
                                            room,
                                            single_pass,
                                            status.total_slot(kOutputsSlot),
                                            status.total_slot(kBadSplitSlot)};
        detail::launch(kSet == SetOp::unite ? "sparse union single_pass"
                                            : "sparse merge single_pass",
                       single_pass_kernel<kSet, decltype(ktag), I, T, Op>,
                       dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, args);
      };
      const bool wide = wide_keys(q.desc);
      if (q.desc.index == IndexType::i64) {
        if (wide) run(std::int64_t{}, std::uint64_t{});
        else run(std::int64_t{}, std::uint32_t{});
      } else {
        if (wide) run(std::int32_t{}, std::uint64_t{});
        else run(std::int32_t{}, std::uint32_t{});
      }
    });
  });
  read_merge_status(status, validate, what);
  // Only after a bad split can the count pass the room (unchecked input: the kernel wrote none
  // past it).
  out.set_nnz(std::min(status.total(kOutputsSlot), room));
  return out;
}

}  // namespace ewise::sparse_detail
