// sparse/compaction.cuh — writing the selected entries of a sequence to consecutive slots, in
// order: count per tile → scan (CUB) → write, for outputs allocated to their exact size after
// the count; the single-pass form (CUB's decoupled look-back) for outputs allocated for every
// entry; run heads (CUB DeviceSelect). Also finalize, which sums duplicates, multiplies and
// writes a result, and the removal of zero entries.
#pragma once

#include <cuda_runtime.h>

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "sort.cuh"
#include "status.cuh"
#include "workspace.hpp"

namespace ewise::sparse_detail {

// ---- tiles ---------------------------------------------------------------------------------
//
// Tile t covers entries [t * kTile, (t + 1) * kTile). Inside a tile the entries are
// warp-striped (CUB's WARP_STRIPED arrangement): warp w holds [w * kWarpTile, (w + 1) *
// kWarpTile) and its lane l's item k is entry w * kWarpTile + k * 32 + l, so each load of a
// warp reads 32 consecutive entries and a warp's entries are in (item, lane) order.

inline constexpr int kWarpTile = 32 * kItems;

/// Offset in its tile of the calling thread's item k.
__device__ __forceinline__ std::int64_t tile_offset(int k) {
  return static_cast<std::int64_t>(threadIdx.x >> 5) * kWarpTile + k * 32 + (threadIdx.x & 31);
}

/// The tile's count: the sum of the threads' counts `c` (cub::BlockReduce), stored by thread 0
/// to counts[tile]; the last tile also stores the 0 past the last tile that makes the exclusive
/// scan of tiles + 1 counts end with the total. Block-wide; one block per tile.
__device__ __forceinline__ void store_tile_count(unsigned c, std::int64_t* counts) {
  using BlockSum = cub::BlockReduce<unsigned, kBlock>;
  __shared__ typename BlockSum::TempStorage temp;
  const unsigned total = BlockSum(temp).Sum(c);
  if (threadIdx.x == 0) {
    counts[blockIdx.x] = total;
    if (blockIdx.x == gridDim.x - 1) counts[gridDim.x] = 0;
  }
}

/// Ranks of a tile's flagged items (block-wide): rank[k] counts the flagged entries of the tile
/// before the calling thread's item k; returns the tile's total. Within a warp the ballots of
/// its items give the ranks; a cub::BlockScan of the warps' totals adds the warps before.
__device__ __forceinline__ unsigned tile_ranks(const bool (&flag)[kItems], unsigned (&rank)[kItems]) {
  using WarpTotals = cub::BlockScan<unsigned, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename WarpTotals::TempStorage temp;
  const unsigned lane = threadIdx.x & 31, lower = (1u << lane) - 1u;
  unsigned in_warp = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned ballot = __ballot_sync(0xffffffffu, flag[k]);
    rank[k] = in_warp + __popc(ballot & lower);
    in_warp += __popc(ballot);
  }
  // Only the last lane of a warp brings its warp's total: a thread's exclusive sum is then the
  // total of the warps before its own.
  unsigned before, total;
  WarpTotals(temp).ExclusiveSum(lane == 31 ? in_warp : 0u, before, total);
#pragma unroll
  for (int k = 0; k < kItems; ++k) rank[k] += before;
  return total;
}

// ---- count → scan → write ------------------------------------------------------------------
//
// An Op has `bool flag(i)` and `void write(i, slot)`; every flagged i < n is written to its
// slot, slots in increasing order of i.

template <class Op>
__global__ void __launch_bounds__(kBlock) count_tiles_kernel(std::int64_t n, Op op, std::int64_t* counts) {
  const std::int64_t begin = blockIdx.x * kTile;
  unsigned c = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    if (i < n && op.flag(i)) ++c;
  }
  store_tile_count(c, counts);
}

template <class Op>
__global__ void __launch_bounds__(kBlock) write_tiles_kernel(std::int64_t n, Op op, const std::int64_t* offsets) {
  const std::int64_t begin = blockIdx.x * kTile;
  bool flag[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    flag[k] = i < n && op.flag(i);
  }
  unsigned rank[kItems];
  tile_ranks(flag, rank);
  const std::int64_t first = offsets[blockIdx.x];
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if (flag[k]) op.write(begin + tile_offset(k), first + rank[k]);
}

/// Per-tile counts over [0, n) (n > 0), their exclusive scan (CUB) and the write, with
/// `extra` pieces of memory for the caller in the same allocation. A kernel that counts on its
/// own writes counts()[t] for every tile t and 0 at counts()[tiles()] (store_tile_count).
class Compaction {
 public:
  Compaction(std::int64_t n, cudaStream_t stream, const std::vector<std::size_t>& extra = {});

  std::int64_t tiles() const { return tiles_; }
  std::int64_t* counts() const { return ws_.get<std::int64_t>(0); }
  /// offsets()[t]: the slot of tile t's first output (after scan()).
  const std::int64_t* offsets() const { return ws_.get<const std::int64_t>(1); }
  template <class T>
  T* extra(std::size_t i) const { return ws_.get<T>(3 + i); }

  template <class Op>
  void count(const Op& op) {
    detail::launch("sparse count_tiles", count_tiles_kernel<Op>, dim3(static_cast<unsigned>(tiles_)),
                   dim3(kBlock), 0, stream_, n_, op, counts());
  }
  /// Exclusive scan of the counts (CUB); the total goes to status slot `slot`, read back by the
  /// next status.read().
  void scan(Status& status, int slot);
  /// scan, then status.read(); returns the total.
  std::int64_t scan_total(Status& status, int slot);
  template <class Op>
  void write(const Op& op) {
    detail::launch("sparse write_tiles", write_tiles_kernel<Op>, dim3(static_cast<unsigned>(tiles_)),
                   dim3(kBlock), 0, stream_, n_, op, offsets());
  }

 private:
  std::int64_t n_, tiles_;
  cudaStream_t stream_;
  Workspace ws_;  // counts (tiles + 1), offsets (tiles + 1), CUB scan storage, extra pieces
};

// ---- single pass ---------------------------------------------------------------------------

/// Tiles that learn where their output starts from their predecessors in the same kernel:
/// CUB's decoupled look-back (cub::ScanTileState and cub::TilePrefixCallbackOp, as in CUB's
/// single-pass scan and select). Tiles are taken in launch order from a ticket, so every tile
/// a block waits for is already running: no deadlock whatever order the hardware starts
/// blocks in. CUB's default delays stay: without them (no sleep before the look-back or between
/// polls) and without the ticket (tiles by blockIdx) the single pass was no faster (H100,
/// bench/results/h100/structures/single_pass_tiles).
struct SinglePassTiles {
  using State = cub::ScanTileState<std::int64_t>;
  using LookBack = cub::TilePrefixCallbackOp<std::int64_t, ::cuda::std::plus<>, State>;

  State state;
  unsigned long long* ticket = nullptr;
  std::int64_t tiles = 0;

  /// Device bytes for `tiles` tiles.
  static std::size_t bytes(std::int64_t tiles);
  /// Over `bytes(tiles)` bytes at `memory`; reset() them before the kernel that uses them.
  SinglePassTiles(void* memory, std::int64_t tiles);

  /// Marks every tile not yet done and zeroes the ticket. Every thread of a grid of at least
  /// `tiles` threads calls it once, in a kernel before the one that takes the tiles.
  __device__ void reset() {
    state.InitializeStatus(static_cast<int>(tiles));
    if (blockIdx.x == 0 && threadIdx.x == 0) *ticket = 0;
  }
  /// reset() in a kernel of its own on `stream`, where no kernel before the one that takes the
  /// tiles has the threads to do it.
  void launch_reset(cudaStream_t stream) const;

  /// The block's tile (block-wide).
  __device__ std::int64_t take() const {
    __shared__ std::int64_t tile;
    if (threadIdx.x == 0) tile = static_cast<std::int64_t>(atomicAdd(ticket, 1ull));
    __syncthreads();
    return tile;
  }

  /// The number of entries tiles 0 .. tile - 1 output, given this tile's `count` (block-wide;
  /// ends with a block barrier).
  __device__ std::int64_t exclusive(std::int64_t tile, unsigned count) {
    __shared__ typename LookBack::TempStorage look_back;
    __shared__ std::int64_t prefix;
    if (tile == 0) {
      if (threadIdx.x == 0) {
        state.SetInclusive(0, count);
        prefix = 0;
      }
    } else if (threadIdx.x < 32) {  // the look-back runs in the first warp
      LookBack op(state, look_back, ::cuda::std::plus<>{}, static_cast<int>(tile));
      const std::int64_t p = op(count);
      if (threadIdx.x == 0) prefix = p;
    }
    __syncthreads();
    return prefix;
  }
};

// ---- run heads -----------------------------------------------------------------------------

/// The positions of the run heads of n sorted keys (the first position of each run of equal
/// keys), in increasing order, and their number at *count (device): one CUB
/// DeviceSelect::If, into room for n.
class RunHeads {
 public:
  RunHeads(const KeySeq& keys, std::int64_t n, std::int64_t* count, cudaStream_t stream);
  const std::int64_t* positions() const { return ws_.get<const std::int64_t>(0); }

 private:
  Workspace ws_;  // positions (n), CUB storage
};

// ---- finalize: sum duplicates, multiply, write ---------------------------------------------

enum class Factor : std::uint8_t { none, sparse };
enum class MatchIndex : std::uint8_t { position, storage };

/// Output u comes from the run of equal keys starting at position heads[u] (u when heads is
/// null) of the sequence q: its values summed in sequence order, times the factor (the sum of
/// the matching run of s), rounded once, written at (row, col) to slot u of the COO arrays or
/// to out_dense. Made by sums() or products(), then to_coo() or to_dense().
struct FinalizeArgs {
  std::int64_t nout = 0;
  const std::int64_t* heads = nullptr;
  EntrySeq q;  ///< the sequence whose runs become outputs
  Factor factor = Factor::none;
  const std::int64_t* matchpos = nullptr;  ///< s position of each q run's match, indexed by
  MatchIndex match_index = MatchIndex::position;  ///< the run's position or storage index
  EntrySeq s;  ///< unsorted: every later equal key belongs to the run
  IndexArray out_rows, out_cols;
  void* out_vals = nullptr;
  void* out_dense = nullptr;  ///< when set: row-major nrows x ncols, instead of the COO arrays

  /// Each run of q summed.
  static FinalizeArgs sums(const EntrySeq& q, const std::int64_t* heads, std::int64_t nout);
  /// Each run of q summed, times the sum of its matching run of s, which starts at s position
  /// matchpos[the q run's position or storage index, as `index` says] (kernels that know the
  /// match themselves pass no matchpos).
  static FinalizeArgs products(const EntrySeq& q, const EntrySeq& s, const std::int64_t* heads,
                               std::int64_t nout, const std::int64_t* matchpos, MatchIndex index);
  FinalizeArgs& to_coo(DeviceCoo& out);
  FinalizeArgs& to_dense(void* dense);
};
void finalize(const FinalizeArgs& args, DType dtype, cudaStream_t stream);

/// How many entries past its head a thread sums alone before a run counts as long and is handed
/// to finish_long_runs: each of these adds waits on a dependent global load. A 16.8M-entry
/// embedding gradient (runs of up to ~18k duplicates) took 11.6 ms to coalesce on an H100 when
/// one thread walked every run.
inline constexpr int kShortRun = 8;

/// finish_long_runs' step: the positions its warp loads at once, kRunLoads a lane.
inline constexpr int kRunLoads = 4;
inline constexpr int kRunStep = 32 * kRunLoads;

/// 16 bytes of staged values: the unit of finish_long_runs' shared-memory reads.
template <class C>
struct alignas(16) StagedWord {
  static_assert(sizeof(C) == 4 || sizeof(C) == 8, "compute types are 4 or 8 bytes");
  static constexpr int kValues = 16 / static_cast<int>(sizeof(C));
  C v[kValues];
};

/// `sum` plus the first `count` of the kRunStep values staged at `staged`, in order: the serial
/// chain of dependent adds, a chunk of kChunkWords StagedWords at a time. Each chunk's
/// shared-memory reads are issued before the previous chunk's adds, in the block ahead of the
/// branch between a whole chunk (plain adds) and the last, partial one (adds up to `count`):
/// within one block the compiler moves such reads down to their first use, where every chunk
/// would wait out their latency (about 30 cycles, some 8 dependent float adds).
template <int kChunkWords, class C>
__device__ __forceinline__ C add_staged(C sum, const StagedWord<C>* staged, int count) {
  constexpr int kPer = StagedWord<C>::kValues, kChunk = kChunkWords * kPer;
  constexpr int kWords = kRunStep / kPer;
  static_assert(kWords % kChunkWords == 0, "a step is whole chunks");
  StagedWord<C> cur[kChunkWords], nxt[kChunkWords];
#pragma unroll
  for (int w = 0; w < kChunkWords; ++w) cur[w] = staged[w];
  for (int c = 0; c < count; c += kChunk) {
    const int next = (c + kChunk) / kPer % kWords;  // after the last chunk the first: not added
#pragma unroll
    for (int w = 0; w < kChunkWords; ++w) nxt[w] = staged[next + w];
    if (c + kChunk <= count) {
#pragma unroll
      for (int w = 0; w < kChunkWords; ++w)
#pragma unroll
        for (int e = 0; e < kPer; ++e) sum = ops::Add{}(sum, cur[w].v[e]);
    } else {
#pragma unroll
      for (int w = 0; w < kChunkWords; ++w)
#pragma unroll
        for (int e = 0; e < kPer; ++e)
          if (c + w * kPer + e < count) sum = ops::Add{}(sum, cur[w].v[e]);
    }
#pragma unroll
    for (int w = 0; w < kChunkWords; ++w) cur[w] = nxt[w];
  }
  return sum;
}

/// Returns `acc` plus the values at sequence positions [next, end of the run of `key`) in
/// position order, for every lane of the warp whose `pending` is set (one lane's run after
/// another; other lanes get `acc` back): bit for bit the one-thread serial sum. The sequence is
/// sorted (key_at), val_at gives a position's value in the compute type C. All 32 lanes call
/// it, in blocks of kBlock threads (the shared staging holds one step per warp).
///
/// The warp takes a run kRunStep positions a step. A step's loads are issued together and
/// unconditionally (positions past the sequence read its last entry and are left out): the
/// values, and the keys of every position, or once a step is known to be wholly in the run only
/// the key at its last position (the sorted order makes the rest equal). The ballot of the keys
/// counts the step's positions in the run, a prefix of it. The warp stages the values in its
/// shared memory, issues the next step's loads when the run goes on, and every lane then adds
/// the staged values in order to the same running sum (add_staged, kChunkWords StagedWords read
/// ahead, 16 bytes of registers each). So the chain of dependent adds waits on neither the
/// global loads, which overlap the previous step's adds, nor a shuffle or read per add.
template <int kChunkWords, class C, class K, class KeyAt, class ValAt>
__device__ __forceinline__ C finish_long_runs(bool pending, K key, std::int64_t next,
                                              std::int64_t n, C acc, KeyAt key_at,
                                              ValAt val_at) {
  using Stored = decltype(key_at(next));
  __shared__ StagedWord<C> staging[kWarps][kRunStep / StagedWord<C>::kValues];
  StagedWord<C>* const words = staging[threadIdx.x >> 5];
  C* const slots = reinterpret_cast<C*>(words);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const auto clamp = [n](std::int64_t p) { return p < n ? p : n - 1; };
  unsigned want = __ballot_sync(0xffffffffu, pending);
  while (want != 0) {
    const int src = __ffs(want) - 1;
    want &= want - 1;
    const K k = __shfl_sync(0xffffffffu, key, src);
    std::int64_t j = __shfl_sync(0xffffffffu, next, src);
    C sum = __shfl_sync(0xffffffffu, acc, src);
    Stored kx[kRunLoads];
    C x[kRunLoads];
    const auto load_keys = [&](std::int64_t from) {
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) kx[u] = key_at(clamp(from + 32 * u + lane));
    };
    const auto load_values = [&](std::int64_t from) {
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) x[u] = val_at(clamp(from + 32 * u + lane));
    };
    load_keys(j);
    load_values(j);
    bool whole = false;  // the step at j is wholly in the run
    for (;;) {
      int count = kRunStep;
      if (!whole) {
        count = 0;
#pragma unroll
        for (int u = 0; u < kRunLoads; ++u)
          count += __popc(__ballot_sync(0xffffffffu, j + 32 * u + lane < n && kx[u] == k));
      }
      __syncwarp();  // every lane is done reading the last staging
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) slots[32 * u + lane] = x[u];
      const bool more = count == kRunStep && j + kRunStep < n;
      Stored last{};
      if (more) {  // the next step's loads, in flight during this step's adds
        last = key_at(clamp(j + 2 * kRunStep - 1));
        load_values(j + kRunStep);
      }
      __syncwarp();
      sum = add_staged<kChunkWords>(sum, words, count);
      if (!more) break;
      j += kRunStep;
      whole = j + kRunStep <= n && last == k;
      if (!whole) load_keys(j);  // the step where the run ends: one more round trip a run
    }
    if (lane == src) acc = sum;
  }
  return acc;
}

/// The values of the run of s's entries with key `key` that starts at position p, summed in
/// sequence order in the compute type (s not sorted: every later position with that key).
template <class T>
__device__ detail::compute_t<T> run_sum(const EntrySeq& s, std::int64_t p, std::uint64_t key) {
  const auto* v = static_cast<const T*>(s.vals);
  detail::compute_t<T> acc = detail::to_compute(v[s.storage(p)]);
  if (!s.unique)
    for (std::int64_t pp = p + 1; pp < s.n; ++pp) {
      if (s.keys[pp] == key) acc = ops::Add{}(acc, detail::to_compute(v[s.storage(pp)]));
      else if (s.sorted) break;
    }
  return acc;
}

/// run_sum of sorted s's run at position p when `has`, else `fill`, for kernels whose whole
/// warp calls it: long runs are finished by the warp (finish_long_runs).
template <class T>
__device__ detail::compute_t<T> warp_run_sum(const EntrySeq& s, bool has, std::int64_t p,
                                             std::uint64_t key, detail::compute_t<T> fill) {
  using C = detail::compute_t<T>;
  const auto* v = static_cast<const T*>(s.vals);
  C acc = fill;
  bool pending = false;
  std::int64_t j = p + 1;
  if (has) {
    acc = detail::to_compute(v[s.storage(p)]);
    if (!s.unique) {
      const std::int64_t stop = j + kShortRun;
      for (; j < s.n && j < stop && s.keys[j] == key; ++j)
        acc = ops::Add{}(acc, detail::to_compute(v[s.storage(j)]));
      pending = j == stop && j < s.n && s.keys[j] == key;
    }
  }
  // One StagedWord read ahead: the union's write pass has no registers for more (40 a thread).
  return finish_long_runs<1>(
      pending, key, j, s.n, acc, [keys = s.keys](std::int64_t i) { return keys[i]; },
      [perm = s.perm, v](std::int64_t i) {
        return detail::to_compute(v[perm.p ? static_cast<std::int64_t>(perm[i]) : i]);
      });
}

/// Output u of finalize: the q run starting at sequence position j, matched (Factor::sparse)
/// at s position p. For kernels that know j and p themselves (heads and matchpos unused).
template <class T>
__device__ void finalize_entry(const FinalizeArgs& a, std::int64_t u, std::int64_t j, std::int64_t p) {
  using C = detail::compute_t<T>;
  const auto* qv = static_cast<const T*>(a.q.vals);
  std::int64_t row, col;
  a.q.coords(j, row, col);
  const std::uint64_t ncols = a.q.keys.ncols;
  const std::uint64_t key = static_cast<std::uint64_t>(row) * ncols + static_cast<std::uint64_t>(col);
  C acc = detail::to_compute(qv[a.q.storage(j)]);
  if (!a.q.unique)
    for (std::int64_t jj = j + 1; jj < a.q.n && a.q.keys[jj] == key; ++jj)
      acc = ops::Add{}(acc, detail::to_compute(qv[a.q.storage(jj)]));
  if (a.factor == Factor::sparse) acc = ops::Mul{}(acc, run_sum<T>(a.s, p, key));
  if (a.out_dense) {
    static_cast<T*>(a.out_dense)[row * static_cast<std::int64_t>(ncols) + col] = detail::from_compute<T>(acc);
  } else {
    a.out_rows.set(u, row);
    a.out_cols.set(u, col);
    static_cast<T*>(a.out_vals)[u] = detail::from_compute<T>(acc);
  }
}

/// `in` without its entries whose value compares equal to zero.
DeviceCoo drop_zero_entries(DeviceCoo in, Status& status, cudaStream_t stream);

}  // namespace ewise::sparse_detail
