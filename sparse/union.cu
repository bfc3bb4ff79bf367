// sparse/union.cu — COO ⊕ COO on the GPU, combine(op, a, b) (sparse.hpp): both operands in
// sorted order (canonical ones as they are, others radix-sorted), merged by the merge-path
// tiles of the intersection (merge_path.cuh); every first entry of a key in the merge becomes
// one output. Two canonical operands take one pass: each tile places its outputs by a
// decoupled look-back and writes them. Otherwise the outputs are counted per tile, placed by
// a scan and written with both operands' sums (duplicate runs summed) by a second pass.
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "compaction.cuh"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "merge_path.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// An output of union tile t: its Q position in the tile in bits 0-14, its S position in bits
/// 15-29, bit 30 set when Q stores the key and bit 31 when S does. Q position q_split[t] + ...,
/// S position t * kTile - q_split[t] + ....
using TileOutput = std::uint32_t;
constexpr int kPositionBits = 15;
constexpr TileOutput kPositionMask = (1u << kPositionBits) - 1, kHasQ = 1u << 30,
                     kHasS = 1u << 31;
static_assert(kTile < (1 << kPositionBits), "union positions inside a tile take 15 bits");

/// The union's outputs among the calling thread's kItems positions of a tile that
/// stage_merge_tile has staged in sm (*s_before = S[s0 - 1], read only when S is not unique):
/// found[k] for each set bit k of the mask returned, in merge order. Each thread merges its
/// positions serially from its split (thread_merge_split; on equal keys Q comes first). A key's
/// first position in the merge is an output: a Q entry that heads its run of equal Q keys
/// (then S stores the key when the S entry the merge stands at has it: its lower bound), or an
/// S entry that heads its run when the Q entry before it has another key (Q stores the key only
/// before it). At most one output per position.
template <class KT>
__device__ __forceinline__ unsigned mark_outputs(const KT* sm, const MergeTile& m, bool q_unique,
                                                 bool s_unique, const KT* s_before,
                                                 TileOutput (&found)[kItems]) {
  const int len = m.len, nQ = m.nQ, nS = m.nS;
  const KT* Q = sm + 1;  // Q[-1] is the Q entry before the tile
  const KT* S = sm + 1 + nQ;  // S[nS] is the S entry after the tile
  auto [d0, i, j] = thread_merge_split(Q, nQ, S, nS);
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    found[k] = 0;
    if (d0 + k >= len) continue;
    if (i < nQ && (j >= nS || Q[i] <= S[j])) {
      const KT key = Q[i];
      if (q_unique || m.q0 + i == 0 || Q[i - 1] != key) {
        const bool in_s = (j < nS || m.has_next) && S[j] == key;
        found[k] = static_cast<TileOutput>(i) | static_cast<TileOutput>(j) << kPositionBits |
                   kHasQ | (in_s ? kHasS : 0u);
        mask |= 1u << k;
      }
      ++i;
    } else {
      const KT key = S[j];
      const bool head = s_unique || m.s0 + j == 0 || (j > 0 ? S[j - 1] : *s_before) != key;
      const bool in_q = m.q0 + i > 0 && Q[i - 1] == key;
      if (head && !in_q) {
        found[k] = static_cast<TileOutput>(j) << kPositionBits | kHasS;
        mask |= 1u << k;
      }
      ++j;
    }
  }
  return mask;
}

using OutputScan = cub::BlockScan<unsigned, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;

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
  MergeTile m;
  if (!begin_counted_tile(t, tiles, nq, ns, q_split, counts, bad_split, m)) return;
  stage_merge_tile(q, s, ns, m, qcheck, scheck, sm, &s_before);
  TileOutput found[kItems];
  const unsigned mask = mark_outputs(sm, m, q_unique, s_unique, &s_before, found);
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
  /// (48) for 8-byte sums, the counts the compiler picked before finish_long_runs staged its
  /// values; left free, it takes 62-64 for that path, which few tiles take (ptxas, sm_90).
  static constexpr int kMinBlocks = sizeof(detail::compute_t<T>) == 8 ? 5 : 6;

  /// Called by every lane of the warp (warp_run_sum); `live` says whether o is an output, which
  /// goes to slot base + k (added after the sums: a 64-bit slot held through them spills).
  __device__ void write(bool live, TileOutput o, std::int64_t qpos, std::int64_t spos,
                        std::int64_t base, int k) const {
    const bool has_q = live && (o & kHasQ), has_s = live && (o & kHasS);
    std::int64_t row = 0, col = 0;
    if (live) {
      const EntrySeq& e = has_q ? q : s;
      const std::int64_t k = e.storage(has_q ? qpos : spos);
      row = e.rows[k];
      col = e.cols[k];
    }
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

// ---- one pass: two canonical operands ------------------------------------------------------

/// What union_single_pass_kernel reads and writes: Q and S in storage order with unique keys
/// (canonical operands), their keys computed from their indices I.
template <class I, class T, class Op>
struct SinglePassUnion {
  ImplicitKeys<I> q, s;
  std::int64_t nq, ns;
  const T* qv;
  const T* sv;
  detail::compute_t<T> fill_q, fill_s;
  Op op;
  EntryCheck qcheck, scheck;
  I* out_rows;  ///< room for nq + ns entries, as out_cols and out_vals
  I* out_cols;
  T* out_vals;
  SinglePassTiles tiles;
  std::int64_t* total;  ///< the number of outputs, from the last tile
  std::int64_t* bad_split;
};

/// The union of Q and S with unique keys in one pass over tiles of kTile merged entries, taken
/// in launch order (SinglePassTiles). Tile t finds its own split (one warp at each end of it,
/// warp_merge_split), stages its keys (stage_merge_tile, which runs the index checks), marks its
/// outputs (mark_outputs) and ranks them (block scan). The ranked outputs take the keys' place
/// in shared memory while the tile learns from the tiles before it where its outputs start
/// (decoupled look-back); then each thread writes every kBlock-th output of the tile: the
/// indices of the entry that stores the key (Q's when both do) and op(x, y), x Q's value or
/// fill_q, y S's value or fill_s, in the compute type, rounded once. No merged entry gives more
/// than one output, so the outputs fit the room for nq + ns; the last tile writes their number
/// to *total. A split that cannot come from sorted operands (a broken canonical promise) sets
/// *bad_split and the tile outputs nothing.
///
/// Five blocks an SM (at most 48 registers a thread, not the 56 the compiler picks alone): the
/// tile's barriers (split, staging, scan, look-back) stall its warps for 30% of their cycles,
/// and more resident blocks hide them. H100, canonical 8192 x 12288 10% masks (10M + 10M
/// entries, f32, i32): 0.417 -> 0.371 ms a call.
template <class KT, class I, class T, class Op>
__global__ void __launch_bounds__(kBlock, 5)
    union_single_pass_kernel(SinglePassUnion<I, T, Op> a) {
  __shared__ union {
    KT keys[kTile + 2];
    TileOutput outputs[kTile];
  } sm;
  __shared__ std::int64_t split[2];  // the Q entries before tile t and before tile t + 1
  __shared__ typename OutputScan::TempStorage scan_temp;
  const std::int64_t t = a.tiles.take();
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if (warp < 2) {
    const std::int64_t diag = std::min((t + warp) * kTile, a.nq + a.ns);
    const std::int64_t q_before = warp_merge_split(a.q, a.nq, a.s, a.ns, diag);
    if ((threadIdx.x & 31) == 0) split[warp] = q_before;
  }
  __syncthreads();
  MergeTile m;
  TileOutput found[kItems];
  unsigned mask = 0;
  if (m.locate(t, a.nq, a.ns, split[0], split[1])) {  // uniform across the block
    stage_merge_tile(a.q, a.s, a.ns, m, a.qcheck, a.scheck, sm.keys, static_cast<KT*>(nullptr));
    mask = mark_outputs(sm.keys, m, true, true, static_cast<const KT*>(nullptr), found);
  } else if (threadIdx.x == 0) {
    *a.bad_split = 1;
  }
  unsigned before, count;
  OutputScan(scan_temp).ExclusiveSum(static_cast<unsigned>(__popc(mask)), before, count);
  __syncthreads();  // every thread is done with the keys
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((mask >> k) & 1u) sm.outputs[before + __popc(mask & ((1u << k) - 1u))] = found[k];
  const std::int64_t first = a.tiles.exclusive(t, count);  // its barrier publishes the outputs
  if (t == a.tiles.tiles - 1 && threadIdx.x == 0) *a.total = first + count;
  // Every load before any store: the compiler cannot move a load past a store to the result,
  // which it cannot tell apart from the operands.
  I row[kItems], col[kItems];
  T val[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned u = k * kBlock + threadIdx.x;
    row[k] = col[k] = 0;
    val[k] = T{};
    if (u < count) {
      const TileOutput o = sm.outputs[u];
      const std::int64_t qp = m.q0 + (o & kPositionMask);
      const std::int64_t sp = m.s0 + ((o >> kPositionBits) & kPositionMask);
      detail::compute_t<T> x = a.fill_q, y = a.fill_s;
      if (o & kHasQ) {
        row[k] = a.q.r[qp];
        col[k] = a.q.c[qp];
        x = detail::to_compute(a.qv[qp]);
      } else {
        row[k] = a.s.r[sp];
        col[k] = a.s.c[sp];
      }
      if (o & kHasS) y = detail::to_compute(a.sv[sp]);
      val[k] = detail::from_compute<T>(a.op(x, y));
    }
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned u = k * kBlock + threadIdx.x;
    if (u < count) {
      a.out_rows[first + u] = row[k];
      a.out_cols[first + u] = col[k];
      a.out_vals[first + u] = val[k];
    }
  }
}

// ---- host ----------------------------------------------------------------------------------

constexpr int kTotal = 0, kBadSplit = 2;  // status total slots

/// status.read(), then the answer to a split that sorted operands cannot give.
void read_status(Status& status, bool validate) {
  status.read();
  if (status.total(kBadSplit) != -1) {
    // Only a canonical operand that is not sorted splits so: its check names the entry.
    status.recheck();
    EWISE_EXPECTS(!validate, "combine: an operand marked canonical is not sorted");
  }
}

/// Whether the single pass takes a sequence: the entries of a canonical matrix as stored (what
/// sort_entries returns for one), keys computed from the indices.
bool single_pass_operand(const EntrySeq& e) {
  return e.unique && e.perm.p == nullptr && e.keys.keys.p == nullptr;
}

/// The union of a and b in one pass (both single_pass_operand; qc and sc their checks), into a
/// result with room for nnz(a) + nnz(b) entries whose nnz is set to the number of outputs read
/// back at the one synchronization.
DeviceCoo union_single_pass(const CooView& a, const CooView& b, const UnionArgs& u,
                            const EntryCheck& qc, const EntryCheck& sc, bool validate,
                            Status& status, cudaStream_t stream) {
  const std::int64_t n = a.desc.nnz + b.desc.nnz, tiles = tiles_for(n);
  const Workspace ws({SinglePassTiles::bytes(tiles)}, stream);
  const SinglePassTiles single_pass(ws.get(0), tiles);
  single_pass.launch_reset(stream);
  DeviceCoo out(result_desc(a.desc, n), stream);
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    with_union_op(u.op, [&](auto op) {
      using Op = decltype(op);
      const auto run = [&](auto itag, auto ktag) {
        using I = decltype(itag);
        const auto keys = [](const CooView& m) {
          return ImplicitKeys<I>{static_cast<const I*>(m.rows), static_cast<const I*>(m.cols),
                                 static_cast<std::uint64_t>(m.desc.ncols)};
        };
        const SinglePassUnion<I, T, Op> args{keys(a),
                                             keys(b),
                                             a.desc.nnz,
                                             b.desc.nnz,
                                             static_cast<const T*>(a.vals),
                                             static_cast<const T*>(b.vals),
                                             static_cast<C>(u.fill_a),
                                             static_cast<C>(u.fill_b),
                                             op,
                                             qc,
                                             sc,
                                             static_cast<I*>(out.rows()),
                                             static_cast<I*>(out.cols()),
                                             static_cast<T*>(out.vals()),
                                             single_pass,
                                             status.total_slot(kTotal),
                                             status.total_slot(kBadSplit)};
        detail::launch("sparse union_single_pass",
                       union_single_pass_kernel<decltype(ktag), I, T, Op>,
                       dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, args);
      };
      const bool wide = wide_keys(a.desc);
      if (a.desc.index == IndexType::i64) {
        if (wide) run(std::int64_t{}, std::uint64_t{});
        else run(std::int64_t{}, std::uint32_t{});
      } else {
        if (wide) run(std::int32_t{}, std::uint64_t{});
        else run(std::int32_t{}, std::uint32_t{});
      }
    });
  });
  read_status(status, validate);
  out.set_nnz(status.total(kTotal));
  return out;
}

/// The union of a and b, nnz(a) + nnz(b) > 0, explicit zeros kept: in one pass when both
/// operands are canonical, else in two (match, then write, which sums duplicate runs).
DeviceCoo union_pipeline(const CooView& a, const CooView& b, const UnionArgs& u, bool validate,
                         Status& status, cudaStream_t stream) {
  // Sorted operands are checked by the sort's first pass, canonical ones by the merge.
  const EntryCheck qc = status.fused(a, "a", validate);
  const EntryCheck sc = status.fused(b, "b", validate);
  const SortedSeq sorted_q = sort_entries(a, a.desc.canonical ? EntryCheck{} : qc, stream);
  const SortedSeq sorted_s = sort_entries(b, b.desc.canonical ? EntryCheck{} : sc, stream);
  const EntrySeq& q = sorted_q.seq;
  const EntrySeq& s = sorted_s.seq;
  if (single_pass_operand(q) && single_pass_operand(s))
    return union_single_pass(a, b, u, qc, sc, validate, status, stream);
  const std::int64_t n = q.n + s.n, tiles = tiles_for(n);
  // Tile counts, offsets and scan storage, then q_split and staging: one allocation.
  Compaction outputs(n, stream,
                     {static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t),
                      static_cast<std::size_t>(n) * sizeof(TileOutput)});
  auto* q_split = outputs.extra<std::int64_t>(0);
  auto* staging = outputs.extra<TileOutput>(1);
  with_merge_keys(q.keys, s.keys, wide_keys(a.desc), [&](auto qk, auto sk, auto ktag) {
    using QK = decltype(qk);
    using SK = decltype(sk);
    partition_merge(qk, q.n, sk, s.n, tiles, q_split, stream);
    detail::launch("sparse union_match", union_match_kernel<QK, SK, decltype(ktag)>,
                   dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, qk, q.n,
                   q.unique, sk, s.n, s.unique, tiles, q_split,
                   a.desc.canonical ? qc : EntryCheck{}, b.desc.canonical ? sc : EntryCheck{},
                   staging, outputs.counts(), status.total_slot(kBadSplit));
  });
  outputs.scan(status, kTotal);
  read_status(status, validate);
  const std::int64_t m = status.total(kTotal);
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
                     dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, q_split,
                     staging, outputs.offsets(), w);
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
