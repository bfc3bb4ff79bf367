// sparse/single_pass.cuh — a set operation (merge_set_op.cuh) of two canonical operands in a
// single pass, for the intersection (merge.cu, multiply) and the union (union.cu, combine) of
// COO operands, and of two compressed operands of one format read as they are stored
// (compressed_merge.cu): the kernel (single_pass_kernel) and its host side (single_pass_merge).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "compaction.cuh"
#include "compressed_tile.cuh"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "internal.hpp"
#include "keys.cuh"
#include "merge_path.cuh"
#include "merge_set_op.cuh"
#include "policy.hpp"
#include "sort.cuh"
#include "status.cuh"
#include "workspace.hpp"

namespace ewise::sparse_detail {

/// p, hidden from the compiler. A tile's base pointer (an array + the tile's first position)
/// indexed by a 32-bit position in the tile is otherwise folded into every access as a 64-bit
/// sum of the two positions, shifted and added to the array's address reloaded from constant
/// memory; hidden, an access takes one IMAD.WIDE or two adds (sm_90: an output's loads in
/// single_pass_kernel take a quarter to a third fewer instructions; docs/benchmarks.md). The
/// assumption keeps the loads global (LDG, not generic LD), as the compiler knows them for the
/// kernel's pointer arguments.
template <class T>
__device__ __forceinline__ const T* opaque_global(const T* p) {
  asm("" : "+l"(p));
  __builtin_assume(__isGlobal(p));
  return p;
}

/// What single_pass_kernel reads and writes: Q and S in storage order with unique keys
/// (canonical operands), their keys computed from their indices I: COO rows and columns, or
/// for compressed operands (q.r and s.r null) the major indices found from their offsets
/// (`majors`) and the minor indices (q.c, s.c).
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
  CompressedMajors<I> majors;  ///< compressed operands' offsets (unused for COO)
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
/// kCompressed: Q and S are compressed operands of one format (compressed_tile.cuh). The two
/// warps find the split in the offsets and the indices (warp_compressed_split) with the major
/// indices of the tile's ends; the tile finds its entries' major indices in shared memory
/// (tile_majors) before staging the keys from them, and writes each output's major index from
/// there; each tile checks a part of the offsets (check_offsets).
///
/// Five blocks an SM (at most 48 registers a thread; with f32 values and i32 indices the
/// intersection takes 44 and the union 46, the 40 of six blocks spill 8-24 bytes; sm_90): the
/// tile's barriers (ticket, split, staging, scan, look-back) stall its warps, and more resident
/// blocks hide them (H100: 0.371 ms a union of two canonical 10M-entry f32 masks, i32 indices).
/// Each tile searches its own split rather than reading it from a partition kernel launched
/// before: while its two warps search, the SM's other blocks work on their tiles. The outputs
/// have shared memory of their own, for one barrier a tile fewer. The variants measured against
/// these choices are in docs/benchmarks.md.
template <SetOp kSet, bool kCompressed, class KT, class I, class T, class Op>
__global__ void __launch_bounds__(kBlock, 5) single_pass_kernel(SinglePassArgs<I, T, Op> a) {
  constexpr bool kUnite = kSet == SetOp::unite;
  constexpr int kPerThread = kSinglePassItems<I>;
  using Tile = MergeTile<kPerThread>;
  using U = std::conditional_t<sizeof(I) == 4, unsigned, unsigned long long>;  // atomicMax's
  using MajorScan = cub::BlockScan<U, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ TileOutput outputs[Tile::kEntries];  // first: the scatter's addresses take no offset
  __shared__ KT keys[Tile::kEntries + 2];
  __shared__ std::int64_t split[2];  // the Q entries before tile t and before tile t + 1
  __shared__ typename OutputScan::TempStorage scan_temp;
  // compressed operands: the tile's entries' major indices, and those of its ends
  __shared__ U majors[kCompressed ? Tile::kEntries : 1];
  __shared__ std::int64_t end_major[2];
  __shared__ std::conditional_t<kCompressed, typename MajorScan::TempStorage, char> major_scan;
  const std::int64_t t = a.tiles.take();
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if (warp < 2) {
    const std::int64_t diag = std::min((t + warp) * Tile::kEntries, a.nq + a.ns);
    if constexpr (kCompressed) {
      const CompressedSplit c = warp_compressed_split(a.majors, a.q.c, a.nq, a.s.c, a.ns, diag);
      if ((threadIdx.x & 31) == 0) {
        split[warp] = c.q_before;
        end_major[warp] = c.major;
      }
    } else {
      const std::int64_t q_before = warp_merge_split(a.q, a.nq, a.s, a.ns, diag);
      if ((threadIdx.x & 31) == 0) split[warp] = q_before;
    }
  }
  if constexpr (kCompressed) check_offsets(a.majors, a.nq, a.ns, t, a.tiles.tiles);
  __syncthreads();
  Tile m;
  TileOutput found[kPerThread];
  unsigned mask = 0;
  if (m.locate(t, a.nq, a.ns, split[0], split[1])) {  // uniform across the block
    if constexpr (kCompressed) {
      const std::int64_t nmajor = a.majors.nmajor;
      tile_majors<I, U, kPerThread, MajorScan>(a.majors, m, a.nq, a.ns, end_major[0],
                                               end_major[1], majors, major_scan);
      // Q[q0 - 1] lies at or before the tile's first major, S[s1] at or after its last
      const TileKeys<I, U> qk{a.q, a.majors.q_offsets, majors, nmajor, m.q0,
                              std::min(end_major[0], nmajor - 1), m.nQ};
      const TileKeys<I, U> sk{a.s, a.majors.s_offsets, majors + m.nQ, nmajor, m.s0,
                              std::min(end_major[1], nmajor - 1), m.nS};
      stage_merge_tile(qk, sk, a.ns, m, a.qcheck, a.scheck, keys, static_cast<KT*>(nullptr));
    } else {
      stage_merge_tile(a.q, a.s, a.ns, m, a.qcheck, a.scheck, keys, static_cast<KT*>(nullptr));
    }
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
  const I* const qr = kCompressed ? nullptr : opaque_global(a.q.r + m.q0);
  const I* const qc = opaque_global(a.q.c + m.q0);
  const T* const qv = opaque_global(a.qv + m.q0);
  const I* const sr = kCompressed ? nullptr : opaque_global(a.s.r + m.s0);
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
        row[k] = kCompressed ? static_cast<I>(majors[qp]) : qr[qp];
        col[k] = qc[qp];
        x = detail::to_compute(qv[qp]);
      } else {
        row[k] = kCompressed ? static_cast<I>(majors[m.nQ + sp]) : sr[sp];
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

/// Two compressed operands Q and S for single_pass_merge: their views (offsets, indices, values)
/// with the names their checks give them and, when they are checked, the device words of those
/// checks (kExpandCheckWords each, in Status: the offsets' and, from bad + 2, the indices').
struct CompressedPair {
  ExpandCheck q, s;
  unsigned long long* q_bad = nullptr;
  unsigned long long* s_bad = nullptr;
  int q_slot = 0;  ///< Q's Status slot (compressed_slot): a's is 0, b's 1
};

/// The kernel's view of a CompressedPair (none for COO operands).
template <class I>
CompressedMajors<I> compressed_majors(const CompressedPair* c) {
  if (c == nullptr) return {};
  return {static_cast<const I*>(c->q.view.offsets), static_cast<const I*>(c->s.view.offsets),
          c->q.view.major_extent(), c->q_bad, c->s_bad};
}

/// status.read() with the checks of a CompressedPair, which throw naming the first failure
/// (a's before b's); after a split that sorted operands cannot give, with validate, both
/// operands checked whole (and `what` named should that find nothing).
void read_compressed_status(const CompressedPair& c, Status& status, bool validate,
                            const char* what, cudaStream_t stream);  // compressed_merge.cu

/// Set operation kSet of q and s (both single_pass_operand; qc and sc their checks) in one
/// pass: op(x, y) for each output, op one of the functors with_op(f) passes to f, the fills as
/// the union's values of an operand without the key. The result is allocated before the kernel
/// with room for nnz(q) + nnz(s) entries (the union) or nnz(q) (the intersection: q must be the
/// operand with fewer entries), and its nnz is set to the number of outputs read back at the one
/// synchronization, which also runs the checks (read_merge_status; `what` names the operation).
///
/// kCompressed: q and s are compressed operands of one format seen as COO views in the call's
/// orientation, rows null and columns their minor indices; `compressed` gives their offsets and
/// the words of their checks, read back by read_compressed_status instead.
template <SetOp kSet, bool kCompressed = false, class WithOp>
DeviceCoo single_pass_merge(const CooView& q, const CooView& s, WithOp&& with_op, double fill_q,
                            double fill_s, const EntryCheck& qc, const EntryCheck& sc,
                            bool validate, const char* what, Status& status,
                            cudaStream_t stream, const CompressedPair* compressed = nullptr) {
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
                                            status.total_slot(kBadSplitSlot),
                                            compressed_majors<I>(compressed)};
        detail::launch(kSet == SetOp::unite ? "sparse union single_pass"
                                            : "sparse merge single_pass",
                       single_pass_kernel<kSet, kCompressed, decltype(ktag), I, T, Op>,
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
  if constexpr (kCompressed)
    read_compressed_status(*compressed, status, validate, what, stream);
  else
    read_merge_status(status, validate, what);
  // Only after a bad split can the count pass the room (unchecked input: the kernel wrote none
  // past it).
  out.set_nnz(std::min(status.total(kOutputsSlot), room));
  return out;
}

}  // namespace ewise::sparse_detail
