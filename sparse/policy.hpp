// sparse/policy.hpp — every tuning constant of the sparse GPU backend: the tile shape of the
// kernels and the thresholds of the automatic algorithm choice, with the figures they rest on.
// One policy for every architecture: each was measured on one device (named with its figure)
// and nothing here has been measured to differ by architecture. Host-compilable.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ewise::sparse_detail {

/// The launch shape of the sparse kernels.
struct TilePolicy {
  /// Threads per block of every sparse kernel.
  int block_threads;
  /// Entries per thread of a tiled kernel: a tile holds block_threads * items_per_thread
  /// entries (the single pass of the merge paths has its own count, kSinglePassItems).
  int items_per_thread;
  /// The most blocks a grid-stride kernel launches.
  int max_grid_blocks;
};

/// 256 x 8 (2048-entry tiles) is the only shape measured for the kernels other than the single
/// pass (whose items a thread are kSinglePassItems, below); no sweep of it is recorded. At this
/// shape, H200, 16384², f32, i32 indices (bench/results/h200-542e119): bitmap_merge of two
/// unsorted operands 0.376 ms at density 1e-2, 2.19 ms at 1e-1. The grid cap was not measured.
inline constexpr TilePolicy kTilePolicy{256, 8, 65536};

inline constexpr int kBlock = kTilePolicy.block_threads;
inline constexpr int kItems = kTilePolicy.items_per_thread;
inline constexpr std::int64_t kTile = std::int64_t{kBlock} * kItems;  ///< entries per tile
inline constexpr int kWarps = kBlock / 32;
static_assert(kBlock % 32 == 0, "blocks are whole warps");

/// Tiles of `tile` entries covering n entries.
constexpr std::int64_t tiles_for(std::int64_t n, std::int64_t tile = kTile) {
  return (n + tile - 1) / tile;
}

/// Merged positions a thread of single_pass_kernel (single_pass.cuh), the intersection and
/// union of two canonical operands, by their index type I; its tile holds kBlock times as many
/// (MergeTile, which keeps positions inside a tile in 15 bits). A tile's fixed work is its
/// ticket, the search for its split (two warps, about five rounds of dependent loads for
/// 10M-entry operands, while the other six wait) and the look-back for its output offset: under
/// Nsight Compute (H100, 8 a thread, the intersection of two canonical 10% masks) 26% of the
/// warps' stall samples sat at the barrier after the split search and 17% at the look-back's.
/// Larger tiles spread it over more entries. H100, same run, medians of two rounds, i32
/// indices, f32: 8 -> 10 took the intersection of two 10% masks (8192 x 12288, 10.1M entries
/// each) from 0.235-0.237 to 0.209-0.217 ms and of two 2^20 x 2^20 matrices (16.8M entries each,
/// 80% shared) from 0.443-0.448 to 0.407-0.413 ms, their unions from 0.351-0.355 to 0.340-0.343
/// and from 0.489-0.495 to 0.468-0.475 ms. Against 10 (same run, bench/results/h100/
/// structures/single_pass_tiles): 9 took the masks' intersection 0.230 ms against 0.220; 11,
/// and 12 at four blocks an SM, were no faster (0.217-0.226, 0.425-0.432 ms) with slower unions;
/// 10 at six blocks an SM (40 registers) slowed the unions (mask 0.369-0.393 against 0.345 ms).
/// With i64 indices 10 spills 184-392 bytes a thread against 40-140 at 8 (ptxas, sm_90; not
/// timed), so 8.
template <class I>
inline constexpr int kSinglePassItems = sizeof(I) == 4 ? 10 : 8;

/// The tiles of combine(op, COO, dense) (coo_dense_union.cu): a block writes kCellTile
/// consecutive cells of the row-major table, kCellItems a thread, with the tile's entries staged
/// in shared memory first (a value in the compute type and a bit per cell: 16.5 KiB at f32,
/// 32.5 KiB at f64 and i64), found from a table of tile starts (8 bytes a tile, 0.2% of an f32
/// table). Not measured. Chosen so that a tile's fixed work (two barriers, two tile starts read,
/// a divmod per thread on the strided path) is spread over 16 cells a thread, a 10% mask puts
/// ~410 entries (two block-wide steps) in a tile, and the shared memory allows as many blocks an
/// SM as the registers do (48 to 80 a thread on sm_90: three to five blocks).
inline constexpr int kCellItems = 16;
inline constexpr std::int64_t kCellTile = std::int64_t{kBlock} * kCellItems;
static_assert(kCellItems <= 32, "a warp's lanes clear the presence words its cells read");

/// COO ⊙ row vector when the vector is too large to stay in L2 beside the entries streaming
/// past it (banded_entries_kernel, coo_dense.cu): the grid visits the entries once per band of
/// columns, band after band, each block taking the entries of its band, so that a band of the
/// vector is fetched from DRAM about once instead of a sector for every gathered element. Every
/// visit reads the columns again (4 or 8 bytes an entry a band), so bands are used only for a
/// vector over min_l2_percent of the L2, and the fewest bands that keep a band within
/// l2_bytes / l2_divisor are taken, up to max_bands; past that the bands are widened to twice
/// that size, up to max_bands_widened of them; a vector larger still is gathered in one visit.
/// H100 (50 MiB L2, so bands of 16 MiB at f32), a probe of 12.0M uniform canonical entries in
/// 4096 rows (2048 for 2^26 columns), f32, kernel µs, one visit -> banded, multiply / values
/// only unchecked (bench/results/h100/structures/column_bands/):
///   4.5M columns (18 MB, 36% of the L2), two bands: 169 -> 185 / 130 -> 144
///   5M (20 MB, 40%), two bands: 180 -> 185 / 135 -> 141
///   6M (24 MB, 48%), two bands: 210 -> 182 / 152 -> 140 (so 44%: between the two)
///   2^23 (32 MiB), two bands: 268 -> 186 / 187 -> 140
///   2^24 (64 MiB), four bands: 372 -> 253 / 317 -> 204; two of 32 MiB: 290 / 214-221
///   2^25 (128 MiB): eight bands of 16 MiB 434 -> 397 / 397 -> 335; four of 32 MiB 324 / 269
///   2^26 (256 MiB): sixteen of 16 MiB 470 -> 667 / 436 -> 571; eight of 32 MiB 444 / 388
/// (the last two rows' 32 MiB bands at eight entries a thread). Without bands, evict-first
/// loads and stores of the entries alone took 2^24 from 372 to 342 µs and an evict-last policy
/// on the gathers changed nothing.
struct ColumnBandPolicy {
  int min_l2_percent;
  int l2_divisor;
  int max_bands;
  int max_bands_widened;
};
inline constexpr ColumnBandPolicy kColumnBands{44, 3, 4, 8};

/// Entries a thread of banded_entries_kernel visits a step: their columns are loaded
/// first, so that a thread has that many loads in flight before it knows which entries are its
/// band's. H100, the 64 MiB case above: 253 µs at 4, 259 at 8, 261 at 2, 291 at 1.
inline constexpr int kEntryItems = 4;

/// Blocks of a grid-stride loop over n elements with kBlock threads.
constexpr unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, kTilePolicy.max_grid_blocks));
}

/// The thresholds of the automatic choice of a COO ⊙ COO algorithm (the rule is in select.cpp).
struct AutoSelectPolicy {
  /// sort_search when an operand must be sorted and the one it sorts has at most this many
  /// entries. H200, 16384², f32 (bench/results/h200-542e119): two unsorted operands of 26.8k
  /// entries (1e-4): sort_search 0.148 ms, merge 0.152 ms; of 268k entries (1e-3, over the
  /// limit, so merge runs): sort_search 0.168 ms, merge 0.178 ms — the limit may be low.
  /// When both are canonical merge's fewer steps win even for small inputs: 26.6k entries
  /// each, merge 0.040 ms, sort_search 0.057 ms (542e119).
  std::int64_t sort_search_max_sorted;
  /// sort_search also when the searching operand has at most 1/sort_search_ratio of the sorted
  /// one's entries (not measured separately).
  std::int64_t sort_search_ratio;
  /// bitmap_merge (for operands not both canonical) only when its bitmap takes at most this
  /// many bytes per input entry (not measured separately) ...
  std::int64_t bitmap_bytes_per_entry;
  /// ... and at most this many bytes, so that it fits in the L2 of an H100 (50 MB) or H200
  /// (60 MB). H200, unsorted f32 (bench e51fcc1): 16384² (32 MiB bitmap) bitmap_merge 2.10 ms
  /// vs merge 2.77 ms at 1e-1; 32768² (128 MiB) bitmap_merge 15.1 ms vs merge 10.4 ms at 1e-1,
  /// 1.38 vs 1.11 ms at 1e-2.
  std::int64_t bitmap_max_bytes;
};

inline constexpr AutoSelectPolicy kAutoSelect{std::int64_t{1} << 16, 32, 32, std::int64_t{48} << 20};

}  // namespace ewise::sparse_detail
