// sparse/compaction.cuh — writing the selected entries of a sequence to consecutive slots, in
// order: count per tile → scan (CUB) → write, for outputs allocated to their exact size after
// the count; the single-pass form (CUB's decoupled look-back) for outputs allocated for every
// entry; run heads (CUB DeviceSelect). Summing runs of duplicates is run_sums.cuh, writing a
// result from them finalize.cuh, removing zero entries drop_zeros.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ewise/detail/launch.cuh"
#include "keys.cuh"
#include "policy.hpp"
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
/// blocks in. CUB's default delays (a sleep before the look-back and between polls) stay:
/// removing them, or the ticket, did not make the single pass faster (docs/benchmarks.md).
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

}  // namespace ewise::sparse_detail
