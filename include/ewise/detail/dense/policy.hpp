// ewise/detail/dense/policy.hpp — the dense kernels' tuning constants, in one place.
//
// Two kinds, told apart by who reads them:
//   * DensePolicy, dense_policy(cc): what only the host planner uses (default block size,
//     automatic sliding factor, row_vectorized's chunk mode), chosen at plan time from the
//     device's compute capability. One policy exists, kHopperDensePolicy, tuned on sm_90.
//   * The kernel shapes below (vector width, unroll factors, tile shapes, stages, band): compiled
//     into the kernels and also read by the planner (grids, shared memory, kernel choice). They
//     are one set for every architecture: a per-architecture set would have to be chosen by the
//     architecture a kernel was compiled for (its PTX version when JIT-compiled), which is not
//     the device's compute capability the planner sees.
// Every value was tuned on sm_90 (H200 or H100, 132 SMs, named with the one figure that
// justifies it); no other architecture has been measured, so sm_80 and newer run sm_90's
// values. Percentages "of cub" are the same run's cub::DeviceTransform same-shape add
// bandwidth. The measurements behind the values are in docs/benchmarks.md ("The measurements
// behind the tuning constants").
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

// ---- the planner's policy -------------------------------------------------------------------

struct DensePolicy {
  /// Threads per block when DenseOptions::threads is 0 (every kernel but tiled, which has its
  /// own, kTileThreads). Not tuned per kernel.
  int threads;
  /// The automatic sliding factor is the smallest that still leaves this many waves of threads
  /// (sm_count * max threads per SM each): reuse of the vector element without idle SMs (H200,
  /// f32, vector 1024, M = 65536: within 9% of the best explicit factor).
  int sliding_waves;
  /// row_vectorized cuts each row into chunks ("runs": one row-offset computation per chunk)
  /// unless the partial last chunks of a row would leave idle more than 1/row_run_max_idle as
  /// many lanes as they use; then the chunks cut the flat sequence of vectors regardless of rows.
  /// Not measured against other fractions.
  int row_run_max_idle;
};

/// The planner's policy, tuned on sm_90 (H200; the H100 records run it unchanged). It serves
/// every architecture until another is measured.
inline constexpr DensePolicy kHopperDensePolicy{256, 2, 8};

/// The policy for compute capability `cc` (major * 10 + minor, e.g. 90): kHopperDensePolicy for
/// every architecture, the only one measured.
constexpr DensePolicy dense_policy(int /*cc*/) { return kHopperDensePolicy; }

// ---- kernel shapes (compiled into the kernels; every architecture) -----------------------

/// Threads any dense kernel may be launched with (DenseOptions::threads; launch bounds).
inline constexpr int kMaxThreads = 1024;
/// Bytes per vector access of the 16-byte paths (vectorized, row_vectorized, tiled): the widest
/// load and store a thread can issue.
inline constexpr int kVectorBytes = 16;

/// Independent 16-byte accesses per operand that each thread of the vectorized kernels
/// (vectorized, row_vectorized) issues before it stores any (a store may alias a later load, so
/// the compiler cannot batch them itself). 4 for types of 4 bytes and more; 2 for 2-byte types
/// (H200, bf16 same shape: 98% of cub with 2, 58% with 4).
EWISE_POLICY_HD constexpr int vector_unroll(int element_bytes) {
  return element_bytes >= 4 ? 4 : 2;
}

/// Whether the 16-byte kernels (vectorized, row_vectorized) launch every block their work
/// needs (each warp one chunk of 32 * vector_unroll vectors, then done) rather than one full
/// wave of resident blocks that loops over the chunks (H100, 2^28 f32: 99.9% of a
/// device-to-device copy covering the work, 94.7% in one wave). The element-wise kernels stay
/// at one wave, where covering the work was slower.
inline constexpr bool kVectorGridCoversWork = true;
/// Full waves the vectorized kernel's grid is capped at when it gathers an input (not covering
/// the work): each thread then loops over several chunks and pays its fixed cost (the kernel's
/// parameters, the head and tail loops: ~130 instructions, against ~90 a gathered 16-byte
/// vector) once for them (H100 bf16 outer product 8191 x 4097: 0.040 ms covering the work,
/// 0.031 at two waves, one wave 2% faster; at 16383 x 16385 0.254, 0.213, one wave 1% slower).
inline constexpr int kGatherWaves = 2;
/// Rows at least this long count as long: of elements of 4 bytes or more, with an input read
/// along them in full, they run element-wise in row_vectorized rather than vectorized across
/// rows (select in dense/plan.cpp; H100 f32: rows of 999 and more run 6-7% slower across rows,
/// rows of 49 faster); across rows, their gathered vectors step along the row unless they cross
/// its end (gather in vectorized.cuh). Lengths between 49 and 999 not measured.
inline constexpr std::int64_t kLongRow = 256;
/// Rows of at least this many 16-byte vectors run by segments in the vectorized kernel when it
/// gathers by rows (VectorizedPlan::segments). The crossing point grows with the elements a
/// vector holds, which rows mode loads one by one (H200, segments' time over rows', 32M
/// elements: 16-bit bias 1.00 at 109 vectors, 0.995 at 113, outer product 0.80 at 113; f32 outer
/// 1.14 at 128, 1.035 at 257 (0.89 over 8M elements), 0.985 at 385; f64 outer 0.87 at 127, 1.03
/// at 150, 0.93 at 257; 1-byte elements not measured).
EWISE_POLICY_HD constexpr std::int64_t segment_min_vectors(int element_bytes) {
  return element_bytes <= 2 ? 112 : element_bytes == 4 ? 256 : 128;
}
/// 16-byte vectors each lane of the segments' loop loads before it stores (two loads a vector
/// for a shifted input): 2 for every type (H200, outer product 8191 x 4097, segments of 4
/// loops in a grid of two waves: bf16 0.0223 ms with 2, 0.0238 with 4; f32 0.0409 with 2,
/// 0.0485 with 4, whose 64 registers spill).
EWISE_POLICY_HD constexpr int segment_unroll(int /*element_bytes*/) { return 2; }
/// Vectors of a segment: a warp's run inside one row between its fixed costs (a divmod chain,
/// the row's values, the shift's dispatch), kSegmentLoops loops of 32 * segment_unroll. The
/// grid covers the segments, a warp each (H200 outer products, bf16 8191 x 4097 / 16383 x 16385,
/// f32 8191 x 8193: 0.0215 / 0.140 / 0.0716 ms with 4 loops; 2 loops 0.0220 / 0.147 / 0.0737,
/// 8 loops 0.0220 / 0.148 / 0.0761; two waves of warps looping over segments 0.0216 / 0.158 /
/// 0.0778).
inline constexpr int kSegmentLoops = 4;
EWISE_POLICY_HD constexpr std::int64_t segment_vectors(int element_bytes) {
  return std::int64_t{kSegmentLoops} * 32 * segment_unroll(element_bytes);
}
/// Plan ranks from which the vectorized kernel's gathered offsets come from a warp's row table
/// (VectorizedPlan::row_table) rather than divmod chains of rank - 1 divisions (H200: bf16
/// rank-5 mix 12% faster, f32 16%, rank 7 12%, rank 4 3-4%; at ranks 2 and 3 the table's
/// shuffles cost up to 22%: f32 outer product 0.039 -> 0.048 ms).
inline constexpr int kRowTableRank = 4;
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
///     (f32 64x64, 16-bit 128x128) except 8-byte types, 32x64 (32 units of 2 across). f32 85.2.
///   * 3 stages; 3 resident blocks per SM (f32 84.8, 80.4 with 2) except 16-byte units of
///     2-byte types, 2 (their register transposes need more registers; their 96 KiB of buffers
///     allow no more anyway).
///   * element-wise (misaligned or odd extents): 64x64 (32x32 for 8-byte types); f32 50.5, still
///     ahead of sliding.
EWISE_POLICY_HD constexpr TileShape tile_shape(int element_bytes, bool vector) {
  if (vector) {
    const int v = kVectorBytes / element_bytes;
    return {v, 16, v >= 4 ? 16 : 32, 3, element_bytes == 2 ? 2 : 3};
  }
  const int units = element_bytes <= 4 ? 64 : 32;
  return {1, units, units, 3, 3};
}

}  // namespace ewise::detail
