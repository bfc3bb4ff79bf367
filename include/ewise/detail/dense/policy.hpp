// ewise/detail/dense/policy.hpp — the dense kernels' tuning constants, in one place.
//
// Two kinds, told apart by who reads them:
//   * DensePolicy, dense_policy(cc): what only the host planner uses (default block size,
//     automatic sliding factor, row_vectorized's chunk mode). A constexpr struct per
//     architecture, chosen at plan time from the device's compute capability.
//   * The kernel shapes below (vector width, unroll factors, tile shapes, stages, band): compiled
//     into the kernels and also read by the planner (grids, shared memory, kernel choice). They
//     are one set for every architecture: a per-architecture set would have to be chosen by the
//     architecture a kernel was compiled for (its PTX version when JIT-compiled), which is not
//     the device's compute capability the planner sees.
// Every figure was measured on an H200 (sm_90, 132 SMs, HBM3e); no other architecture has been
// measured yet, so sm_80 and newer run sm_90's values. Percentages "of cub" are the same run's
// cub::DeviceTransform same-shape add bandwidth.
// Plain C++: the planner (dense/plan.cpp) compiles without nvcc. Under nvcc the kernel-shape
// functions are also __host__ __device__, for the kernels (a consumer's nvcc may not have
// --expt-relaxed-constexpr).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define EWISE_POLICY_HD __host__ __device__
#else
#define EWISE_POLICY_HD
#endif

namespace ewise::detail {

// ---- the planner's policy, per architecture ----------------------------------------------

struct DensePolicy {
  /// Threads per block when DenseOptions::threads is 0 (every kernel but tiled, which has its
  /// own, kTileThreads). Not tuned per kernel; every recorded H200 run uses it.
  int threads;
  /// The automatic sliding factor is the smallest that still leaves this many waves of threads
  /// (sm_count * max threads per SM each): reuse of the vector element without idle SMs. H200,
  /// f32, vector 1024, M = 65536: the best explicit factor is 4% faster in the row layout
  /// (factor 32: 3789 GB/s) and 9% in the column layout (factor 16: 4042 GB/s).
  int sliding_waves;
  /// row_vectorized cuts each row into chunks ("runs": one row-offset computation per chunk)
  /// unless the partial last chunks of a row would leave idle more than 1/row_run_max_idle as
  /// many lanes as they use; then the chunks cut the flat sequence of vectors regardless of rows.
  /// Not measured against other fractions.
  int row_run_max_idle;
};

/// The policy for compute capability `cc` (major * 10 + minor, e.g. 90). One measured policy
/// today (H200, sm_90), used for every architecture.
constexpr DensePolicy dense_policy(int cc) {
  constexpr DensePolicy sm90{256, 2, 8};
  return (void)cc, sm90;
}

// ---- kernel shapes (compiled into the kernels; every architecture) -----------------------

/// Threads any dense kernel may be launched with (DenseOptions::threads; launch bounds).
inline constexpr int kMaxThreads = 1024;
/// Bytes per vector access of the 16-byte paths (vectorized, row_vectorized, tiled): the widest
/// load and store a thread can issue.
inline constexpr int kVectorBytes = 16;

/// Independent 16-byte accesses per operand that each thread of the vectorized kernels
/// (vectorized, row_vectorized) issues before it stores any (a store may alias a later load, so
/// the compiler cannot batch them itself). H200: 4 for types of 4 bytes and more (f32 4 beats 2
/// on the same-shape and scalar patterns); 2 for 2-byte types (bf16 same shape: 98% of cub with
/// 2, 58% with 4; 4 also costs 4-8% on bf16 row, column, NCHW and mixed, with f32 compute and
/// with packed math).
EWISE_POLICY_HD constexpr int vector_unroll(int element_bytes) {
  return element_bytes >= 4 ? 4 : 2;
}

/// Whether the 16-byte kernels (vectorized, row_vectorized) launch every block their work
/// needs (each warp one chunk of 32 * vector_unroll vectors, then done) rather than one full
/// wave of resident blocks that loops over the chunks. H100, 2^28 f32, same run: one wave 2829
/// GB/s (94.7% of a device-to-device copy), covering the work 2986 GB/s (99.9%); ewise_bench
/// `patterns`, median over the vectorized and row_vectorized cases 0.948x the time (f32 scalar
/// 91.3% -> 98.3% of cub, f16 mixed 93.0% -> 104.4%). The element-wise kernels stay at one wave:
/// covering the work made general 1.17x and baseline 1.13x slower (median), tiled mixed.
inline constexpr bool kVectorGridCoversWork = true;
/// Rows at least this long count as long: of elements of 4 bytes or more, with an input read
/// along them in full, they run element-wise in row_vectorized rather than vectorized across
/// rows (select in dense/plan.cpp; H100 f32: rows of 49 run 1.1-1.4x faster across rows, rows of
/// 999 and more 6-7% slower); across rows, their gathered vectors step along the row unless
/// they cross its end (gather in vectorized.cuh). Lengths between 49 and 999 not measured.
inline constexpr std::int64_t kLongRow = 256;
/// Matrix elements each thread of the sliding kernels loads before it stores (H200, f32, the
/// paper's workload: 8 beats 4 and 2).
inline constexpr int kSlideUnroll = 8;

/// Smallest extent of both tiled dims for which `automatic` picks the tiled kernel (not
/// measured against other values; shorter transposed plans run as general).
inline constexpr int kMinTiledExtent = 16;

/// Threads per block of the tiled kernel (whatever DenseOptions::threads says).
inline constexpr int kTileThreads = 256;
/// Row tiles per band: consecutive tile indices run down a band of kTileBand row tiles before
/// moving to the next column, so the blocks resident at one time cover a roughly square patch of
/// the matrix and both a transposed input and the output are touched in long contiguous runs.
inline constexpr int kTileBand = 16;

/// The tiled kernel's tiles, in units of `vector` elements. A tile is unit_rows * vector rows
/// (along the tiled dim) by unit_cols * vector columns (the innermost dim).
struct TileShape {
  int vector;      ///< elements per unit: 16 bytes' worth on the vector path, else 1
  int unit_rows;   ///< tile rows in units
  int unit_cols;   ///< tile columns in units
  int stages;      ///< shared-memory buffers per staged input (copies of the next stages - 1
                   ///< tiles in flight while one is computed)
  int min_blocks;  ///< resident blocks per SM the registers must allow (launch bounds)

  constexpr int rows() const { return unit_rows * vector; }
  constexpr int cols() const { return unit_cols * vector; }
  /// Shared memory of one staged tile of `element_bytes`-byte elements.
  constexpr std::int64_t tile_bytes(int element_bytes) const {
    return std::int64_t{rows()} * cols() * element_bytes;
  }
};

/// Tiles of `element_bytes`-byte elements: 16-byte units (`vector`) or element-wise. H200,
/// 16384^2 transposed view + row vector, % of cub:
///   * vector path: a staged input's tile column is 256 bytes (16 units); tiles 256 bytes a side
///     (f32 64x64, 16-bit 128x128) except 8-byte types, 32x64 (32 units of 2 across).
///     f32 85.2, bf16 94.8, f16 94.5, f64 83.1. Variants not adopted: 4 stages f32 86.4,
///     128x64 f32 87.6, 64x128 with 2 blocks/SM f32 88.6 / f64 87.2 (not tested for
///     correctness).
///   * 3 stages; 3 resident blocks per SM (f32 84.8 vs 80.4 with 2; f64 83.5 vs 78.7) except
///     16-byte units of 2-byte types, 2 (their register transposes need more registers; their
///     96 KiB of buffers allow no more anyway).
///   * element-wise (misaligned or odd extents): 64x64 (32x32 for 8-byte types); f32 50.5,
///     bf16 26.9, still ahead of sliding (f32 0.969 vs 1.146 ms).
EWISE_POLICY_HD constexpr TileShape tile_shape(int element_bytes, bool vector) {
  if (vector) {
    const int v = kVectorBytes / element_bytes;
    return {v, 16, v >= 4 ? 16 : 32, 3, element_bytes == 2 ? 2 : 3};
  }
  const int units = element_bytes <= 4 ? 64 : 32;
  return {1, units, units, 3, 3};
}

}  // namespace ewise::detail
