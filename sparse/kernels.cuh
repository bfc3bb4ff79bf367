// sparse/kernels.cuh — building blocks of the GPU pipelines: tiles, the count → scan → write
// compaction and the single-pass one (tile chain), the status block read back once per
// synchronization, sorted entry sequences and the finalize step that sums duplicates,
// multiplies and writes a result.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "internal.hpp"

namespace ewise::sparse_detail {

// ---- tiles ---------------------------------------------------------------------------------

inline constexpr int kBlock = 256;  ///< threads per block of every tiled kernel
inline constexpr int kItems = 8;    ///< entries per thread and tile
inline constexpr std::int64_t kTile = std::int64_t{kBlock} * kItems;
inline constexpr int kWarps = kBlock / 32;

inline std::int64_t tiles_for(std::int64_t n) { return (n + kTile - 1) / kTile; }

/// Blocks for a grid-stride loop over n elements with kBlock threads.
inline unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, 65536));
}

/// Adds `c` over the block; thread 0 stores the total to *out.
__device__ __forceinline__ void store_block_sum(unsigned c, std::int64_t* out) {
  __shared__ unsigned total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  c = __reduce_add_sync(0xffffffffu, c);
  if ((threadIdx.x & 31) == 0) atomicAdd(&total, c);
  __syncthreads();
  if (threadIdx.x == 0) *out = total;
}

// ---- typed key access for the hot kernels ---------------------------------------------------

// Besides operator[], each accessor splits a lookup into load(i) (the memory reads, so that a
// kernel can issue several before using any) and key(raw); in_range(raw) is false for an entry
// outside the shape (stored keys were range-checked when they were made).
template <class K>
struct StoredKeys {
  const K* k;
  using Raw = K;
  __device__ __forceinline__ std::uint64_t operator[](std::int64_t i) const { return k[i]; }
  __device__ __forceinline__ Raw load(std::int64_t i) const { return k[i]; }
  __device__ __forceinline__ std::uint64_t key(Raw x) const { return x; }
  __device__ __forceinline__ bool in_range(Raw, std::int64_t, std::int64_t) const { return true; }
};
template <class I>
struct ImplicitKeys {
  const I* r;
  const I* c;
  std::uint64_t ncols;
  struct Raw {
    I r = 0, c = 0;
  };
  __device__ __forceinline__ std::uint64_t operator[](std::int64_t i) const {
    return static_cast<std::uint64_t>(r[i]) * ncols + static_cast<std::uint64_t>(c[i]);
  }
  __device__ __forceinline__ Raw load(std::int64_t i) const { return {r[i], c[i]}; }
  __device__ __forceinline__ std::uint64_t key(Raw x) const {
    return static_cast<std::uint64_t>(x.r) * ncols + static_cast<std::uint64_t>(x.c);
  }
  __device__ __forceinline__ bool in_range(Raw x, std::int64_t nrows, std::int64_t nc) const {
    return x.r >= 0 && x.r < nrows && x.c >= 0 && x.c < nc;
  }
};

/// Calls f(typed accessor) for a KeySeq: stored 32/64-bit keys, or computed from 32/64-bit
/// indices.
template <class F>
void with_typed_keys(const KeySeq& s, F&& f) {
  if (s.keys.p) {
    if (s.keys.wide) f(StoredKeys<std::uint64_t>{static_cast<const std::uint64_t*>(s.keys.p)});
    else f(StoredKeys<std::uint32_t>{static_cast<const std::uint32_t*>(s.keys.p)});
  } else if (s.rows.wide) {
    f(ImplicitKeys<std::int64_t>{static_cast<const std::int64_t*>(s.rows.p),
                                 static_cast<const std::int64_t*>(s.cols.p), s.ncols});
  } else {
    f(ImplicitKeys<std::int32_t>{static_cast<const std::int32_t*>(s.rows.p),
                                 static_cast<const std::int32_t*>(s.cols.p), s.ncols});
  }
}

// ---- status: index checks and totals, read back with one synchronization -------------------

/// The index check of one matrix, callable per entry from any kernel that reads the entries
/// anyway: entry i out of range → words[0] = min(i); for a matrix marked canonical, entry i not
/// strictly after entry i - 1 → words[1] = min(i). A null `words` checks nothing.
struct EntryCheck {
  IndexArray rows, cols;
  std::int64_t nrows = 0, ncols = 0;
  bool canonical = false;
  unsigned long long* words = nullptr;

  __device__ void operator()(std::int64_t i) const {
    if (words == nullptr) return;
    const std::int64_t r = rows[i], c = cols[i];
    if (r < 0 || r >= nrows || c < 0 || c >= ncols) {
      atomicMin(words, static_cast<unsigned long long>(i));
    } else if (canonical && i > 0) {
      const std::int64_t pr = rows[i - 1], pc = cols[i - 1];
      if (pr > r || (pr == r && pc >= c)) atomicMin(words + 1, static_cast<unsigned long long>(i));
    }
  }
};

/// A small device block: the results of up to two index checks and a few totals, all read
/// back by one read(), which also throws when a check failed. Pipelines launch their checks
/// first and read the status at their first synchronization, before anything is written at an
/// index-derived address; so bad input throws with nothing written.
class Status {
 public:
  static constexpr int kChecks = 2, kTotals = 4;

  explicit Status(cudaStream_t stream);
  /// Returns m's check for a kernel to run on every entry and registers m for read(); when not
  /// enabled (or m is empty), a check that does nothing, and m is not registered.
  EntryCheck fused(const CooView& m, const char* what, bool enabled);
  /// Registers m and launches the check of every entry (unless !enabled).
  void check(const CooView& m, const char* what, bool enabled);
  /// Device slot i (< kTotals) for a total.
  std::int64_t* total_slot(int i) const;
  /// Reads every word back (synchronizes) and throws InvalidArgument for a failed check.
  void read();
  /// Runs the registered checks again over every entry, then read().
  void recheck();
  std::int64_t total(int i) const { return host_[2 * kChecks + i]; }

 private:
  EntryCheck check_of(int slot) const;  ///< the check of registered matrix `slot`

  cudaStream_t stream_;
  DeviceBuffer words_;
  std::int64_t host_[2 * kChecks + kTotals] = {};
  CooView checked_[kChecks];
  const char* what_[kChecks] = {};
  int nchecked_ = 0;
};

// ---- compaction: count per tile → CUB exclusive scan → write -------------------------------
//
// An Op has `bool flag(i)` and `void write(i, slot)`; every flagged i is written to its slot,
// slots in increasing order of i. Tile t covers [t * kTile, (t + 1) * kTile) of [0, n); within
// a tile, thread x handles entries begin + k * kBlock + x for k < kItems.

struct Tiles {
  std::int64_t n = 0;

  __device__ void range(std::int64_t t, std::int64_t* begin, std::int64_t* end) const {
    *begin = t * kTile;
    *end = *begin + kTile < n ? *begin + kTile : n;
  }
};

template <class Op>
__global__ void __launch_bounds__(kBlock) count_tiles_kernel(Tiles tiles, Op op, std::int64_t* counts) {
  std::int64_t begin, end;
  tiles.range(blockIdx.x, &begin, &end);
  unsigned c = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + k * kBlock + threadIdx.x;
    if (i < end && op.flag(i)) ++c;
  }
  store_block_sum(c, counts + blockIdx.x);
}

/// Ranks of a tile's flagged items: item k of thread x is tile entry k * kBlock + x, and
/// rank[k] counts the flagged entries before it. Returns the tile's total. Block-wide: every
/// thread of the block calls it once.
__device__ __forceinline__ unsigned tile_ranks(const bool (&flag)[kItems], unsigned (&rank)[kItems]) {
  __shared__ unsigned before[kItems * kWarps + 1];  // flagged entries before each (k, warp) group
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned ballots[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    ballots[k] = __ballot_sync(0xffffffffu, flag[k]);
    if (lane == 0) before[k * kWarps + warp] = __popc(ballots[k]);
  }
  __syncthreads();
  static_assert(kItems * kWarps == 64, "the scan below gives each lane of warp 0 two groups");
  if (warp == 0) {  // exclusive scan of the 64 group counts, in (k, warp) order
    const unsigned c0 = before[2 * lane], c1 = before[2 * lane + 1];
    unsigned sum = c0 + c1;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned v = __shfl_up_sync(0xffffffffu, sum, d);
      if (lane >= static_cast<unsigned>(d)) sum += v;
    }
    before[2 * lane] = sum - c0 - c1;
    before[2 * lane + 1] = sum - c1;
    if (lane == 31) before[kItems * kWarps] = sum;
  }
  __syncthreads();
  const unsigned lower = (1u << lane) - 1u;
#pragma unroll
  for (int k = 0; k < kItems; ++k) rank[k] = before[k * kWarps + warp] + __popc(ballots[k] & lower);
  return before[kItems * kWarps];
}

template <class Op>
__global__ void __launch_bounds__(kBlock) write_tiles_kernel(Tiles tiles, Op op, const std::int64_t* offsets) {
  std::int64_t begin, end;
  tiles.range(blockIdx.x, &begin, &end);
  const std::int64_t base = begin + threadIdx.x;
  bool flag[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = base + k * kBlock;
    flag[k] = i < end && op.flag(i);
  }
  unsigned rank[kItems];
  tile_ranks(flag, rank);
  const std::int64_t tile_offset = offsets[blockIdx.x];
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if (flag[k]) op.write(base + k * kBlock, tile_offset + rank[k]);
}

// ---- single-pass compaction: tiles in launch order, decoupled look-back ---------------------

/// Tiles that learn where their output starts from their predecessors in the same kernel (a
/// decoupled look-back, as in CUB's single-pass scan): each tile publishes its count, then
/// adds up its predecessors' counts (or stops at the first that published its inclusive
/// total). Tiles are taken in launch order from a ticket, so every tile a block waits for is
/// already running: no deadlock whatever order the hardware schedules blocks in.
struct TileChain {
  /// tiles + 1 words, zero before the launch: tile t's state (flag in the top two bits, count
  /// below), then the ticket.
  unsigned long long* states = nullptr;
  std::int64_t tiles = 0;

  static constexpr unsigned long long kAggregate = 1ull << 62, kInclusive = 2ull << 62,
                                      kCount = kAggregate - 1;

  /// Words of states for n entries in kTile tiles.
  static std::size_t bytes(std::int64_t n) {
    return static_cast<std::size_t>(tiles_for(n) + 1) * sizeof(unsigned long long);
  }

  /// The block's tile (block-wide).
  __device__ std::int64_t take() const {
    __shared__ std::int64_t tile;
    if (threadIdx.x == 0) tile = static_cast<std::int64_t>(atomicAdd(states + tiles, 1ull));
    __syncthreads();
    return tile;
  }

  /// The number of entries tiles 0 .. t - 1 output, given tile t's `count` (block-wide).
  __device__ std::int64_t exclusive(std::int64_t t, unsigned count) const {
    __shared__ std::int64_t prefix;
    if (threadIdx.x < 32) {
      const unsigned lane = threadIdx.x;
      auto* st = reinterpret_cast<volatile unsigned long long*>(states);
      if (lane == 0) st[t] = (t == 0 ? 2ull : 1ull) << 62 | count;  // inclusive or aggregate
      unsigned long long sum = 0;
      // Windows of 32 predecessors, nearest last; before tile 0 counts as an inclusive 0.
      for (std::int64_t end = t; end > 0; end -= 32) {
        const std::int64_t j = end - 32 + static_cast<std::int64_t>(lane);
        unsigned long long s = kInclusive;
        if (j >= 0) s = st[j];
        while (__any_sync(0xffffffffu, (s >> 62) == 0))
          if ((s >> 62) == 0) s = st[j];
        const unsigned inclusive = __ballot_sync(0xffffffffu, (s >> 62) == 2);
        const unsigned from = inclusive ? 31u - static_cast<unsigned>(__clz(inclusive)) : 0u;
        unsigned long long v = lane >= from ? (s & kCount) : 0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        sum += v;
        if (inclusive) break;
      }
      if (lane == 0) {
        if (t > 0) st[t] = kInclusive | (sum + count);
        prefix = static_cast<std::int64_t>(sum);
      }
    }
    __syncthreads();
    return prefix;
  }
};

/// Per-tile counts, their exclusive scan and the write.
class Compaction {
 public:
  /// Tiles over [0, n).
  Compaction(std::int64_t n, cudaStream_t stream);

  std::int64_t tiles() const { return tiles_; }
  /// Per-tile counts, for a kernel that counts on its own (tile layout as above).
  std::int64_t* counts() const { return ws_.get<std::int64_t>(0); }

  template <class Op>
  void count(const Op& op) {
    if (tiles_ > 0)
      detail::launch("sparse count_tiles", count_tiles_kernel<Op>, dim3(static_cast<unsigned>(tiles_)),
                     dim3(kBlock), 0, stream_, tiling_, op, counts());
  }
  /// Exclusive scan of the counts (CUB); the total goes to status slot `slot`, read back by the
  /// next status.read().
  void scan(Status& status, int slot);
  /// scan, then status.read(); returns the total.
  std::int64_t scan_total(Status& status, int slot);
  template <class Op>
  void write(const Op& op) {
    if (tiles_ > 0)
      detail::launch("sparse write_tiles", write_tiles_kernel<Op>, dim3(static_cast<unsigned>(tiles_)),
                     dim3(kBlock), 0, stream_, tiling_, op, ws_.get<const std::int64_t>(1));
  }

 private:
  std::int64_t tiles_;
  Tiles tiling_;
  cudaStream_t stream_;
  Workspace ws_;  // counts (tiles + 1), offsets (tiles + 1), CUB scan storage
};

/// Compaction ops shared by several pipelines.
struct MatchFlag {
  const std::int64_t* matchpos;  ///< >= 0: entry i matched
  __device__ bool flag(std::int64_t i) const { return matchpos[i] >= 0; }
};
/// Writes the positions of matched entries.
struct WriteMatchPositions : MatchFlag {
  std::int64_t* out;
  __device__ void write(std::int64_t i, std::int64_t slot) const { out[slot] = i; }
};
/// Flags the first entry of each run of equal keys; writes its position.
struct RunHeads {
  KeySeq keys;
  std::int64_t* out;
  __device__ bool flag(std::int64_t j) const { return j == 0 || keys[j] != keys[j - 1]; }
  __device__ void write(std::int64_t j, std::int64_t slot) const { out[slot] = j; }
};

// ---- sorted entry sequences ----------------------------------------------------------------

/// A matrix's entries as a sequence sorted by key: position j holds the entry of storage index
/// perm[j] (identity when perm.p is null) with key keys[j]. Owns its buffers.
struct SortedSeq {
  Workspace ws;
  KeySeq keys;
  WordArray perm;
  std::int64_t n = 0;
  bool unique = false;  ///< no two positions share a key
  bool sorted = true;   ///< false only for storage_keys of a non-canonical matrix
};

/// Canonical m: its storage order, keys computed from its indices (`check` is not run).
/// Otherwise the keys and storage indices radix-sorted (stable, so duplicates keep their
/// storage order) over key_bits(m.desc) bits; the pass that computes the keys runs `check`.
SortedSeq sort_entries(const CooView& m, const EntryCheck& check, cudaStream_t stream);
/// m's keys stored in storage order (unsorted unless canonical); for linear_search.
SortedSeq storage_keys(const CooView& m, cudaStream_t stream);

// ---- finalize: sum duplicates, multiply, write ---------------------------------------------

enum class Factor : std::uint8_t { none, sparse };
enum class MatchIndex : std::uint8_t { position, storage };

/// Output u comes from the run of equal keys starting at position heads[u] (u when heads is
/// null) of the Q sequence: its values summed in sequence order, times the factor (the
/// matching S run's sum), rounded once, written at (row, col) to slot u of the COO arrays or
/// to out_dense.
struct FinalizeArgs {
  std::int64_t nout = 0;
  const std::int64_t* heads = nullptr;
  // Q: the sequence whose runs become outputs, over a matrix's arrays
  KeySeq qkeys;
  WordArray qperm;  ///< sequence position → storage index (identity when null)
  std::int64_t nq = 0;
  bool q_unique = true;
  IndexArray qrows, qcols;
  const void* qvals = nullptr;
  std::uint64_t ncols = 0;
  // factor
  Factor factor = Factor::none;
  const std::int64_t* matchpos = nullptr;  ///< S position of each Q run's match, indexed by
  MatchIndex match_index = MatchIndex::position;  ///< the run's position or storage index
  KeySeq skeys;
  WordArray sperm;
  std::int64_t ns = 0;
  bool s_unique = true, s_sorted = true;  ///< unsorted: every later equal key belongs to the run
  const void* svals = nullptr;
  // output
  IndexArray out_rows, out_cols;
  void* out_vals = nullptr;
  void* out_dense = nullptr;  ///< when set: row-major nrows x ncols, instead of the COO arrays
};
void finalize(const FinalizeArgs& args, DType dtype, cudaStream_t stream);

/// Output u of finalize: the Q run starting at sequence position j, matched (Factor::sparse)
/// at S position p. For kernels that know j and p themselves (heads and matchpos unused).
template <class T>
__device__ void finalize_entry(const FinalizeArgs& a, std::int64_t u, std::int64_t j, std::int64_t p) {
  using C = detail::compute_t<T>;
  const auto* qv = static_cast<const T*>(a.qvals);
  const auto* sv = static_cast<const T*>(a.svals);
  const std::int64_t q = a.qperm.p ? static_cast<std::int64_t>(a.qperm[j]) : j;
  const std::int64_t row = a.qrows[q], col = a.qcols[q];
  const std::uint64_t key = static_cast<std::uint64_t>(row) * a.ncols + static_cast<std::uint64_t>(col);
  C acc = detail::to_compute(qv[q]);
  if (!a.q_unique)
    for (std::int64_t jj = j + 1; jj < a.nq && a.qkeys[jj] == key; ++jj)
      acc = ops::Add{}(acc, detail::to_compute(qv[a.qperm.p ? static_cast<std::int64_t>(a.qperm[jj]) : jj]));
  if (a.factor == Factor::sparse) {
    C s = detail::to_compute(sv[a.sperm.p ? static_cast<std::int64_t>(a.sperm[p]) : p]);
    if (!a.s_unique)
      for (std::int64_t pp = p + 1; pp < a.ns; ++pp) {
        if (a.skeys[pp] == key)
          s = ops::Add{}(s, detail::to_compute(sv[a.sperm.p ? static_cast<std::int64_t>(a.sperm[pp]) : pp]));
        else if (a.s_sorted)
          break;
      }
    acc = ops::Mul{}(acc, s);
  }
  if (a.out_dense) {
    static_cast<T*>(a.out_dense)[row * static_cast<std::int64_t>(a.ncols) + col] = detail::from_compute<T>(acc);
  } else {
    a.out_rows.set(u, row);
    a.out_cols.set(u, col);
    static_cast<T*>(a.out_vals)[u] = detail::from_compute<T>(acc);
  }
}

/// A matrix's runs of equal coordinates: canonical input needs none (heads null, one output per
/// entry); otherwise its sorted sequence and the start of each run. Checks m's indices (unless
/// !validate) and reads the status (so throws for bad indices) before returning.
struct Runs {
  SortedSeq seq;
  Workspace heads_ws;
  const std::int64_t* heads = nullptr;
  std::int64_t nout = 0;
};
Runs find_runs(const CooView& m, bool validate, Status& status, cudaStream_t stream);
/// FinalizeArgs reading Q = m through `runs`.
FinalizeArgs finalize_args(const CooView& m, const Runs& runs);

/// Sets the COO output arrays of args to `out`.
inline void set_output(FinalizeArgs& args, DeviceCoo& out) {
  args.out_rows = index_array(out.rows(), out.desc().index);
  args.out_cols = index_array(out.cols(), out.desc().index);
  args.out_vals = out.vals();
}

/// `in` without its entries whose value compares equal to zero.
DeviceCoo drop_zero_entries(DeviceCoo in, Status& status, cudaStream_t stream);

}  // namespace ewise::sparse_detail
