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
  /// entries. merge and union store positions inside a tile in 15 bits (single_pass.cuh), so a
  /// tile holds at most 32767.
  int items_per_thread;
  /// The most blocks a grid-stride kernel launches.
  int max_grid_blocks;
};

/// 256 x 8 (2048-entry tiles) is the only shape measured; no sweep is recorded. The pipelines
/// at this shape, H200, 16384², f32, i32 indices (bench/results/h200-542e119): merge of two
/// canonical operands 0.0419 ms at density 1e-4, 0.0776 ms at 1e-2, 0.502 ms at 1e-1;
/// bitmap_merge of two unsorted ones 0.376 ms at 1e-2, 2.19 ms at 1e-1. The grid cap was not
/// measured.
inline constexpr TilePolicy kTilePolicy{256, 8, 65536};

inline constexpr int kBlock = kTilePolicy.block_threads;
inline constexpr int kItems = kTilePolicy.items_per_thread;
inline constexpr std::int64_t kTile = std::int64_t{kBlock} * kItems;  ///< entries per tile
inline constexpr int kWarps = kBlock / 32;
static_assert(kBlock % 32 == 0, "blocks are whole warps");
static_assert(kTile < (1 << 15), "merge and union keep positions inside a tile in 15 bits");

/// Tiles covering n entries.
constexpr std::int64_t tiles_for(std::int64_t n) { return (n + kTile - 1) / kTile; }

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
