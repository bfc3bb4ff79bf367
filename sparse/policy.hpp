// sparse/policy.hpp — every tuning constant of the sparse GPU backend: the tile shape of the
// kernels and the thresholds of the automatic algorithm choice. One policy for every
// architecture: each constant was tuned on sm_90 (H100 or H200, named with the one figure that
// justifies it) and none has been measured to differ by architecture. The measurements behind
// them are in docs/benchmarks.md ("The measurements behind the tuning constants").
// Host-compilable.
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

/// 256 x 8 (2048-entry tiles): the only shape measured for the kernels other than the single
/// pass (whose items a thread are kSinglePassItems, below); not swept. The grid cap was not
/// measured.
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
/// 10M-entry operands, while the other six wait) and the look-back for its output offset;
/// larger tiles spread it over more entries. i32 indices: 10 (H100: the intersection of two
/// canonical 10% masks, 10.1M entries each, 0.236 -> 0.209 ms from 8); 9, 11 and 12 were no
/// faster. i64 indices: 8, since at 10 a thread spills 184-392 bytes (ptxas, sm_90).
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
/// H100 (50 MiB L2, bands of 16 MiB at f32), 12.0M canonical entries times a 2^24-column f32
/// vector (64 MiB), four bands: 372 -> 253 µs. 44% lies between the vector sizes where two
/// bands lost (40% of the L2) and won (48%); the probe's sizes from 18 MB to 256 MB are in
/// docs/benchmarks.md.
struct ColumnBandPolicy {
  int min_l2_percent;
  int l2_divisor;
  int max_bands;
  int max_bands_widened;
};
inline constexpr ColumnBandPolicy kColumnBands{44, 3, 4, 8};

/// Entries a thread of banded_entries_kernel visits a step: their columns are loaded
/// first, so that a thread has that many loads in flight before it knows which entries are its
/// band's. H100, the 64 MiB case above: 253 µs at 4 (fewer or more were slower).
inline constexpr int kEntryItems = 4;

/// Blocks of a grid-stride loop over n elements with kBlock threads.
constexpr unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, kTilePolicy.max_grid_blocks));
}

/// The thresholds of the automatic choice of a COO ⊙ COO algorithm (the rule is in select.cpp).
struct AutoSelectPolicy {
  /// sort_search when an operand must be sorted and the one it sorts has at most this many
  /// entries (H200, 16384², f32, two unsorted operands of 26.8k entries: sort_search 3% ahead
  /// of merge). When both are canonical merge's fewer steps win even for small inputs.
  std::int64_t sort_search_max_sorted;
  /// sort_search also when the searching operand has at most 1/sort_search_ratio of the sorted
  /// one's entries (not measured separately).
  std::int64_t sort_search_ratio;
  /// bitmap_merge (for operands not both canonical) only when its bitmap takes at most this
  /// many bytes per input entry (not measured separately) ...
  std::int64_t bitmap_bytes_per_entry;
  /// ... and at most this many bytes, so that it fits in the L2 of an H100 (50 MB) or H200
  /// (60 MB). H200, unsorted f32, 1e-1: a 32 MiB bitmap (16384²) beats merge, 2.10 against
  /// 2.77 ms; a 128 MiB one (32768²) loses.
  std::int64_t bitmap_max_bytes;
};

inline constexpr AutoSelectPolicy kAutoSelect{std::int64_t{1} << 16, 32, 32, std::int64_t{48} << 20};

}  // namespace ewise::sparse_detail
