// ewise/detail/dense_kernels.cuh — the dense kernels, templated on the storage type T, the
// functor F (called with compute types, see types.cuh) and, where index arithmetic dominates,
// the index type (uint32_t when every index and offset fits in int32, else uint64_t).
//
// Each kernel is a thin __global__ function over argument structs built on the host by
// dense_dispatch.cuh. Dims in device structs are stored innermost first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

#define EWISE_DEVICE __device__ __forceinline__

template <class T, class F>
EWISE_DEVICE T apply(const F& f, T x, T y) {
  return from_compute<T>(static_cast<compute_t<T>>(f(to_compute(x), to_compute(y))));
}

/// V elements of T as one aligned access (16 bytes for the vectorized paths).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

/// The packed two-element type of a 16-bit float storage type (void for the others).
template <class T>
using Packed2 = std::conditional_t<std::is_same_v<T, __half>, __half2,
                                   std::conditional_t<std::is_same_v<T, __nv_bfloat16>,
                                                      __nv_bfloat162, void>>;

/// The packed two-element instruction that computes a functor F on 16-bit floats.
enum class PackedOp { none, add, sub, mul };
/// none unless specialised: only for functors whose result the packed instruction reproduces bit
/// for bit (the built-in add, sub, mul; a program may specialise it for an equivalent functor).
template <class F>
struct PackedOpOf : std::integral_constant<PackedOp, PackedOp::none> {};
template <>
struct PackedOpOf<ops::Add> : std::integral_constant<PackedOp, PackedOp::add> {};
template <>
struct PackedOpOf<ops::Sub> : std::integral_constant<PackedOp, PackedOp::sub> {};
template <>
struct PackedOpOf<ops::Mul> : std::integral_constant<PackedOp, PackedOp::mul> {};

/// Whether F on 16-bit floats T runs as packed two-element instructions (add/sub/mul.rn.f16x2,
/// .bf16x2). Those round the exact result once, as ops.hpp specifies; the f32 compute path
/// rounds twice (to f32, then to T) and gives the same bits because f32 has at least 2p+2
/// significand bits for p = 11 (f16) and 8 (bf16) (double rounding is then innocuous; products
/// of two 16-bit values are even exact in f32). Both keep subnormals (no ftz). div stays in f32,
/// and min/max too (ops.hpp's "equal operands give a" rule for -0/+0 is not the hardware's).
template <class T, class F>
inline constexpr bool kPackedOp =
    !std::is_void_v<Packed2<T>> && PackedOpOf<F>::value != PackedOp::none;

/// r = f(x, y) element by element: pairs of packed instructions where kPackedOp, else one
/// f(to_compute, to_compute) per element.
template <class T, class F, int V>
EWISE_DEVICE Pack<T, V> apply_pack(const F& f, const Pack<T, V>& x, const Pack<T, V>& y) {
  Pack<T, V> r;
  if constexpr (kPackedOp<T, F> && V % 2 == 0) {
    using T2 = Packed2<T>;
    const T2* x2 = reinterpret_cast<const T2*>(x.v);
    const T2* y2 = reinterpret_cast<const T2*>(y.v);
    T2* r2 = reinterpret_cast<T2*>(r.v);
#pragma unroll
    for (int e = 0; e < V / 2; ++e) {
      constexpr PackedOp op = PackedOpOf<F>::value;
      if constexpr (op == PackedOp::add) r2[e] = __hadd2_rn(x2[e], y2[e]);
      else if constexpr (op == PackedOp::sub) r2[e] = __hsub2_rn(x2[e], y2[e]);
      else r2[e] = __hmul2_rn(x2[e], y2[e]);
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = apply(f, x.v[e], y.v[e]);
  }
  return r;
}

/// Threads per block any dense kernel may be launched with (DenseOptions::threads).
inline constexpr int kMaxThreads = 1024;

/// Independent 16-byte accesses per operand each thread of the vectorized kernels issues before
/// it stores any (a store may alias a later load, so the compiler cannot batch them itself).
/// H200, f32: 4 beats 2 on same-shape and scalar patterns; for 2-byte types 2 beats 4 (with f32
/// compute and still with packed math: 4 costs 4-8% on bf16 row, column, NCHW and mixed).
/// Measured in notes/dense.md and notes/dense2.md.
template <class T>
inline constexpr int kVectorUnroll = sizeof(T) >= 4 ? 4 : 2;
/// Matrix elements each thread of the sliding kernels loads before it stores (H200, f32, the
/// paper's workload: 8 beats 4 and 2).
inline constexpr int kSlideUnroll = 8;

/// Maps a linear row-major index over up to kMaxRank dims to the offsets of the three operands
/// (0 = out, 1 = a, 2 = b). rank >= 1; extent[0] is the innermost dim.
template <class Index>
struct Strided {
  using Offset = std::make_signed_t<Index>;
  int rank = 1;
  FastDivmod<Index> extent[kMaxRank];
  Offset stride[3][kMaxRank] = {};

  EWISE_DEVICE void offsets(Index i, Offset (&off)[3]) const {
    off[0] = off[1] = off[2] = 0;
#pragma unroll
    for (int d = 0; d < kMaxRank; ++d) {
      if (d == rank - 1) {  // outermost dim: the remaining quotient is its coordinate
        const auto c = static_cast<Offset>(i);
#pragma unroll
        for (int k = 0; k < 3; ++k) off[k] += c * stride[k][d];
        break;
      }
      Index q, r;
      extent[d].divmod(i, q, r);
      const auto c = static_cast<Offset>(r);
#pragma unroll
      for (int k = 0; k < 3; ++k) off[k] += c * stride[k][d];
      i = q;
    }
  }
};

EWISE_DEVICE std::int64_t min_of(std::int64_t x, std::int64_t y) { return x < y ? x : y; }

template <class Index>
EWISE_DEVICE Index global_thread() {
  return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
}
template <class Index>
EWISE_DEVICE Index grid_threads() {
  return static_cast<Index>(gridDim.x) * blockDim.x;
}

// ---- general: the paper's N-d algorithm ---------------------------------------------------

template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    general_kernel(F f, Strided<Index> p, Index n, T* out, const T* a, const T* b) {
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>()) {
    typename Strided<Index>::Offset off[3];
    p.offsets(i, off);
    out[off[0]] = apply(f, a[off[1]], b[off[2]]);
  }
}

// ---- vectorized: rank <= 1, same shape or scalar ------------------------------------------

struct VectorizedArgs {
  std::int64_t n = 0;        ///< elements
  std::int64_t head = 0;     ///< leading scalar elements (out + head is 16-byte aligned)
  std::int64_t vectors = 0;  ///< 16-byte vectors after the head; the rest is a scalar tail
  bool a_full = true;        ///< a has stride 1 (else 0: one scalar)
  bool b_full = true;
};

template <class T, class F>
__global__ void __launch_bounds__(kMaxThreads)
    vectorized_kernel(F f, VectorizedArgs p, T* out, const T* a, const T* b) {
  constexpr int V = 16 / sizeof(T);
  using P = Pack<T, V>;
  const std::int64_t tid = global_thread<std::int64_t>(), nthreads = grid_threads<std::int64_t>();
  const T a0 = a[0], b0 = b[0];  // the values of scalar operands
  const auto scalar = [&](std::int64_t i) {
    out[i] = apply(f, p.a_full ? a[i] : a0, p.b_full ? b[i] : b0);
  };
  P a0v, b0v;  // scalar operands as vectors
#pragma unroll
  for (int e = 0; e < V; ++e) {
    a0v.v[e] = a0;
    b0v.v[e] = b0;
  }
  for (std::int64_t i = tid; i < p.head; i += nthreads) scalar(i);
  P* vout = reinterpret_cast<P*>(out + p.head);
  const P* va = reinterpret_cast<const P*>(a + p.head);
  const P* vb = reinterpret_cast<const P*>(b + p.head);
  // Each warp takes chunks of 32*U consecutive vectors (U per lane, 32 apart: every access
  // coalesced, a warp's accesses within 512*U contiguous bytes), all loaded before any store.
  constexpr int U = kVectorUnroll<T>;
  const std::int64_t lane = threadIdx.x % 32;
  const std::int64_t chunk_step = nthreads * U;  // nthreads is a multiple of 32
  for (std::int64_t v0 = (tid - lane) * U + lane; v0 < p.vectors; v0 += chunk_step) {
    P x[U], y[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t w = v0 + u * 32;
      if (w < p.vectors) {
        x[u] = p.a_full ? va[w] : a0v;
        y[u] = p.b_full ? vb[w] : b0v;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t w = v0 + u * 32;
      if (w < p.vectors) vout[w] = apply_pack(f, x[u], y[u]);
    }
  }
  for (std::int64_t i = p.head + p.vectors * V + tid; i < p.n; i += nthreads) scalar(i);
}

// ---- row_vectorized: inner stride 0 or 1 for every operand --------------------------------

template <class Index>
struct RowArgs {
  /// Chunks of 32*U vectors (of V elements), one per warp and iteration. Runs: each row is cut
  /// into per_row_chunks chunks (the last one possibly partial), so a chunk lies in one row and
  /// its row offsets are computed once per thread. Else the chunks cut the row-major sequence of
  /// slots (rows * vectors per row) regardless of rows: each vector finds its own row (for rows
  /// much shorter than a chunk, where runs would leave most lanes idle).
  Index chunks = 0;
  bool runs = false;
  Index slots = 0;                    ///< rows * vectors per row
  Index per_row_vectors = 0;          ///< vectors per row
  FastDivmod<Index> per_row;          ///< vectors per row (slot -> row, vector)
  FastDivmod<Index> per_row_chunks;   ///< runs: chunks per row (chunk -> row, chunk in row)
  Strided<Index> rows;                ///< the outer dims (a single extent-1 dim for rank-1 plans)
  bool a_full = true, b_full = true;  ///< inner stride 1 (else 0: one value per row)
};

template <class T, class F, class Index, int V>
__global__ void __launch_bounds__(kMaxThreads)
    row_vectorized_kernel(F f, RowArgs<Index> p, T* out, const T* a, const T* b) {
  using P = Pack<T, V>;
  using Offset = typename Strided<Index>::Offset;
  constexpr int U = kVectorUnroll<T>;
  const Index lane = threadIdx.x % 32;
  const Index warps = grid_threads<Index>() / 32;
  // Lane l of a chunk takes its vectors l, l+32, ..., l+32*(U-1): every access coalesced, all
  // loaded before any store.
  for (Index chunk = global_thread<Index>() / 32; chunk < p.chunks; chunk += warps) {
    T* po[U];
    P x[U], y[U];
    bool valid[U];
    // Vector u at row offsets `off`, column (element) `col`.
    const auto load = [&](int u, const Offset (&off)[3], Offset col) {
      po[u] = out + off[0] + col;
      if (p.a_full) {
        x[u] = *reinterpret_cast<const P*>(a + off[1] + col);
      } else {
        const T v = a[off[1]];
#pragma unroll
        for (int e = 0; e < V; ++e) x[u].v[e] = v;
      }
      if (p.b_full) {
        y[u] = *reinterpret_cast<const P*>(b + off[2] + col);
      } else {
        const T v = b[off[2]];
#pragma unroll
        for (int e = 0; e < V; ++e) y[u].v[e] = v;
      }
    };
    if (p.runs) {
      Index row, k;
      p.per_row_chunks.divmod(chunk, row, k);
      Offset off[3];
      p.rows.offsets(row, off);
      const Index first = k * (32 * U) + lane;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Index vec = first + u * 32;
        valid[u] = vec < p.per_row_vectors;
        if (valid[u]) load(u, off, static_cast<Offset>(vec) * V);
      }
    } else {
      const Index first = chunk * (32 * U) + lane;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Index slot = first + u * 32;
        valid[u] = slot < p.slots;
        if (!valid[u]) continue;
        Index row, vec;
        p.per_row.divmod(slot, row, vec);
        Offset off[3];
        p.rows.offsets(row, off);
        load(u, off, static_cast<Offset>(vec) * V);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (valid[u]) *reinterpret_cast<P*>(po[u]) = apply_pack(f, x[u], y[u]);
  }
}

// ---- tiled: an input transposed relative to the output ------------------------------------

/// Row tiles per band: consecutive tile indices run down a band of kBand row tiles before moving
/// to the next column, so the blocks resident at one time cover a roughly square patch of the
/// matrix and both a transposed input and the output are touched in long contiguous runs.
inline constexpr int kBand = 16;
/// Threads per block of the tiled kernel (whatever DenseOptions::threads says).
inline constexpr int kTileThreads = 256;

/// The tiled kernel works on `rows` (the plan dim tiled with the innermost one) x `cols` (the
/// innermost dim) matrices, one per combination of the other (batch) dims.
struct TiledArgs {
  std::int64_t rows = 0, cols = 0;  ///< extents of the tile dim (rows) and innermost (cols)
  std::int64_t row_stride[3] = {}, col_stride[3] = {};
  std::int64_t tiles = 0;               ///< tiles over all batches
  FastDivmod<std::uint64_t> per_batch;  ///< row tiles * col tiles
  FastDivmod<std::uint64_t> per_band;   ///< kBand * col tiles
  FastDivmod<std::uint64_t> last_band;  ///< row tiles in the last band (1..kBand)
  std::uint64_t full_bands = 0;         ///< bands of kBand row tiles
  Strided<std::uint64_t> batch;         ///< the other dims (a single extent-1 dim if none)
  bool staged_a = false, staged_b = false;
};

/// Shape of the tiled kernel's tiles, in units of V elements: V = 16 bytes / sizeof(T) on the
/// vector path (every global access 16 bytes; DenseLaunch::tile_vector_ok), 1 otherwise. A tile
/// is kUnitRows * V rows by kUnitCols * V columns; a staged input's tile column (kUnitRows * V
/// elements, contiguous in it) is 256 bytes on the vector path. kStages shared-memory buffers per
/// staged input: the copies of a block's next kStages - 1 tiles are in flight while it computes
/// one. kMinBlocks: resident blocks per multiprocessor the registers must allow (launch bounds).
/// Measured on the H200 in notes/dense3.md.
template <class T, int V>
struct TileShape {
  static constexpr int kVector = V;
  static constexpr int kUnitRows = V > 1 ? 16 : (sizeof(T) <= 4 ? 64 : 32);
  static constexpr int kUnitCols = V > 1 ? (V >= 4 ? 16 : 32) : (sizeof(T) <= 4 ? 64 : 32);
  static constexpr int kStages = 3;
  // 3 blocks fit the registers without spills except for 16-byte units of 2-byte types (their
  // register transposes need more; 2 blocks, as their 96 KiB of buffers allow anyway). H200,
  // 16384^2 transposed + row, % of cub: f32 3 blocks 84.8, 2 blocks 80.4; f64 83.5 vs 78.7.
  static constexpr int kMinBlocks = V > 1 && sizeof(T) == 2 ? 2 : 3;
};

/// Shared memory of one staged tile, in bytes.
template <class T, class Shape>
inline constexpr int kTileBytes =
    Shape::kUnitRows * Shape::kUnitCols * Shape::kVector * Shape::kVector * sizeof(T);

/// Copies one unit (V elements) from global to shared memory: asynchronously (cp.async, sm_80
/// and later) for 4-, 8- and 16-byte units, else through a register. Completed by
/// tile_copy_wait and a barrier.
template <class U>
EWISE_DEVICE void tile_copy(U* shared, const U* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(U) == 4 || sizeof(U) == 8 || sizeof(U) == 16) {
    const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if constexpr (sizeof(U) == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global)
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(global),
                   "n"(static_cast<int>(sizeof(U)))
                   : "memory");
    return;
  }
#endif
  *shared = *global;
}
/// Closes the group of tile_copy calls issued since the last commit (possibly none).
EWISE_DEVICE void tile_copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/// Waits until at most `Pending` committed groups of this thread are still in flight.
template <int Pending>
EWISE_DEVICE void tile_copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

/// Stores a unit as one access: a 16-byte unit as one 16-byte store (st.global.v4; built from
/// scalars, as a transposed row is, the compiler would otherwise store it element by element).
template <class U>
EWISE_DEVICE void store_unit(U* dst, const U& v) {
  if constexpr (sizeof(U) == 16) {
    uint4 w;
    memcpy(&w, &v, sizeof w);
    __stwb(reinterpret_cast<uint4*>(dst), w);
  } else {
    *dst = v;
  }
}

/// Row j of a V x V block held as its V column pieces (element e of the row is element j of
/// column piece e). 2-byte elements are paired into 32-bit words with byte permutes.
template <class T, int V>
EWISE_DEVICE Pack<T, V> transposed_row(const Pack<T, V> (&columns)[V], int j) {
  Pack<T, V> r;
  if constexpr (sizeof(T) == 2 && V % 2 == 0) {
    unsigned w[V / 2];
#pragma unroll
    for (int k = 0; k < V / 2; ++k) {
      unsigned lo[V / 2], hi[V / 2];  // the words of column pieces 2k and 2k+1
      memcpy(lo, &columns[2 * k], sizeof lo);
      memcpy(hi, &columns[2 * k + 1], sizeof hi);
      w[k] = __byte_perm(lo[j / 2], hi[j / 2], j % 2 ? 0x7632 : 0x5410);
    }
    memcpy(&r, w, sizeof w);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = columns[e].v[j];
  }
  return r;
}

/// Dynamic shared memory of the tiled kernel (one declaration for every instantiation).
extern __shared__ __align__(16) unsigned char tiled_shared[];

/// out = f(a, b) over tiles of rows x cols. Staged inputs (stride along rows smaller than along
/// cols: a transposed view) are copied into shared memory along their contiguous rows dim and
/// read back along cols, so that their reads and the output's writes are both coalesced; the
/// other inputs are read directly along cols. On the vector path (at most one staged input)
/// every global access is 16 bytes: thread (rb, cb) of a tile reads a V x V block of the staged
/// tile as V 16-byte column pieces, transposes it in registers and writes V 16-byte row pieces.
/// Shared-memory tiles are stored column by column, unit rv of column c at rv ^ (c / V * W % G):
/// the units a warp writes to one column in one pass (8 of 16 bytes, 16 of 8, 32 of 4 or 2
/// bytes), and those it reads from one row of units, fall in different banks.
template <class T, class F, class Shape>
__global__ void __launch_bounds__(kTileThreads, Shape::kMinBlocks)
    tiled_kernel(F f, TiledArgs p, T* out, const T* a, const T* b) {
  constexpr int V = Shape::kVector, RV = Shape::kUnitRows, CV = Shape::kUnitCols;
  constexpr int R = RV * V, C = CV * V;  // tile rows and columns, in elements
  constexpr int S = Shape::kStages;
  using U = Pack<T, V>;
  // Units per 128 bytes of banks (at most RV): the swizzle period; W units share a 4-byte bank.
  constexpr int G = 128 / static_cast<int>(sizeof(U)) < RV ? 128 / static_cast<int>(sizeof(U)) : RV;
  constexpr int W = sizeof(U) >= 4 ? 1 : 4 / static_cast<int>(sizeof(U));
  constexpr int kCopies = C * RV / kTileThreads, kBlocks = RV * CV / kTileThreads;
  static_assert((RV & (RV - 1)) == 0 && (CV & (CV - 1)) == 0 && RV % G == 0,
                "tile units: powers of two, a whole number of swizzle periods per column");
  static_assert(CV >= (G < 32 ? G : 32), "a conflict-free read needs G consecutive unit columns");
  static_assert(
      kCopies >= 1 && kBlocks >= 1 && C * RV % kTileThreads == 0 && RV * CV % kTileThreads == 0,
      "every thread copies and computes the same number of units");
  static_assert(S >= 2, "at least two buffers: one computed, one being copied");
  // Where unit rv of tile column c (of unit column cb = c / V) is stored within the column.
  const auto swizzle = [](int rv, int cb) { return rv ^ (cb * W % G); };
  const int tid = static_cast<int>(threadIdx.x);
  const T* const in[2] = {a, b};
  const bool staged[2] = {p.staged_a, p.staged_b};
  const int slots = p.staged_a + p.staged_b;
  U* const shared = reinterpret_cast<U*>(tiled_shared);
  // Staged tile of input k (0 = a, 1 = b) in buffer `buf`.
  const auto tile = [&](int buf, int k) {
    return shared + (buf * slots + (k == 1 && p.staged_a ? 1 : 0)) * (C * RV);
  };

  struct Origin {
    std::int64_t base[3];  ///< offset of each operand's element (r0, c0)
    std::int64_t r0, c0;
  };
  const auto origin = [&](std::int64_t t) {
    std::uint64_t batch, in_batch, band, in_band, col_tile, row_in_band;
    p.per_batch.divmod(static_cast<std::uint64_t>(t), batch, in_batch);
    p.per_band.divmod(in_batch, band, in_band);
    if (band < p.full_bands) {
      col_tile = in_band / kBand;
      row_in_band = in_band % kBand;
    } else {
      p.last_band.divmod(in_band, col_tile, row_in_band);
    }
    Origin o;
    p.batch.offsets(batch, o.base);
    o.r0 = static_cast<std::int64_t>(band * kBand + row_in_band) * R;
    o.c0 = static_cast<std::int64_t>(col_tile) * C;
#pragma unroll
    for (int k = 0; k < 3; ++k) o.base[k] += o.r0 * p.row_stride[k] + o.c0 * p.col_stride[k];
    return o;
  };
  // Starts copying the staged tiles of tile t (if any) into buffer `buf`, one commit group:
  // thread tid takes units tid, tid + 256, ... in column-major order (a warp: whole columns, or
  // 32 units of one).
  constexpr int kColStep = kTileThreads / RV;  // tile columns between a thread's units
  const int rv = tid % RV, c_first = tid / RV;
  const auto stage = [&](std::int64_t t, int buf) {
    if (t < p.tiles) {
      const Origin o = origin(t);
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        if (!staged[k]) continue;
        const std::int64_t rs = p.row_stride[k + 1], cs = p.col_stride[k + 1];
        U* dst = tile(buf, k) + c_first * RV;
        const T* src = in[k] + o.base[k + 1] + c_first * cs + rv * V * rs;
        const bool row_ok = o.r0 + rv * V < p.rows;
#pragma unroll(kCopies <= 8 ? kCopies : 4)
        for (int i = 0; i < kCopies; ++i) {
          const int c = c_first + i * kColStep;
          if (row_ok && o.c0 + c < p.cols)
            tile_copy(dst + swizzle(rv, c / V), reinterpret_cast<const U*>(src));
          dst += kColStep * RV;
          src += kColStep * cs;
        }
      }
    }
    tile_copy_commit();
  };
  // Rows j0 .. j0+H-1 of input k's V x V block at unit (rb, cb) of the tile at `o`. Staged:
  // from `columns`, the block's column pieces (V > 1), or from shared memory (V == 1).
  constexpr int H = V < 4 ? V : 4;  // rows of a block computed together
  const auto block_rows = [&](const Origin& o, int buf, int k, int rb, int cb, int j0,
                              const U (&columns)[V], U (&v)[H]) {
    if (staged[k]) {
      if constexpr (V == 1) {
        v[0] = tile(buf, k)[cb * RV + swizzle(rb, cb)];
      } else {
#pragma unroll
        for (int j = 0; j < H; ++j) v[j] = transposed_row(columns, j0 + j);
      }
      return;
    }
    const std::int64_t rs = p.row_stride[k + 1], cs = p.col_stride[k + 1];
    const T* const src = in[k] + o.base[k + 1] + (rb * V + j0) * rs + cb * V * cs;
    if (V > 1 && cs == 0) {  // one value per row
#pragma unroll
      for (int j = 0; j < H; ++j) {
        const T x = src[j * rs];
#pragma unroll
        for (int e = 0; e < V; ++e) v[j].v[e] = x;
      }
    } else if (rs == 0) {  // the same elements on every row
      v[0] = *reinterpret_cast<const U*>(src);
#pragma unroll
      for (int j = 1; j < H; ++j) v[j] = v[0];
    } else {
#pragma unroll
      for (int j = 0; j < H; ++j) v[j] = *reinterpret_cast<const U*>(src + j * rs);
    }
  };
  // Thread tid computes unit blocks tid, tid + 256, ... in row-major order (a warp: consecutive
  // unit columns of one or two rows), H rows at a time, loads before stores.
  constexpr int kRowStep = kTileThreads / CV;  // unit rows between a thread's blocks
  const int cb = tid % CV, rb_first = tid / CV;
  const int column_input = staged[0] ? 0 : 1;  // the vector path's staged input, if any
  const auto compute = [&](std::int64_t t, int buf) {
    const Origin o = origin(t);
#pragma unroll(kBlocks <= 4 ? kBlocks : 1)
    for (int i = 0; i < kBlocks; ++i) {
      const int rb = rb_first + i * kRowStep;
      if (o.r0 + rb * V >= p.rows || o.c0 + cb * V >= p.cols) continue;
      U columns[V];
      if (V > 1 && slots > 0) {
        const U* const src = tile(buf, column_input) + cb * V * RV + swizzle(rb, cb);
#pragma unroll
        for (int j = 0; j < V; ++j) columns[j] = src[j * RV];
      }
      T* const dst = out + o.base[0] + rb * V * p.row_stride[0] + cb * V * p.col_stride[0];
#pragma unroll
      for (int j0 = 0; j0 < V; j0 += H) {
        U x[H], y[H];
        block_rows(o, buf, 0, rb, cb, j0, columns, x);
        block_rows(o, buf, 1, rb, cb, j0, columns, y);
#pragma unroll
        for (int j = 0; j < H; ++j)
          store_unit(reinterpret_cast<U*>(dst + (j0 + j) * p.row_stride[0]),
                     apply_pack(f, x[j], y[j]));
      }
    }
  };

  // Tiles t, t + grid, ...: the copies of the next S - 1 tiles are in flight while one is
  // computed (one commit group per tile, empty past the end, so the wait count is fixed).
  const std::int64_t grid = gridDim.x;
  std::int64_t t = blockIdx.x;
  if (t >= p.tiles) return;
  if (slots > 0)
#pragma unroll
    for (int s = 0; s < S - 1; ++s) stage(t + s * grid, s);
  for (int buf = 0; t < p.tiles; t += grid, buf = buf + 1 < S ? buf + 1 : 0) {
    if (slots > 0) {
      stage(t + (S - 1) * grid, buf > 0 ? buf - 1 : S - 1);
      tile_copy_wait<S - 1>();
      __syncthreads();  // tile t's staged inputs are in shared memory
    }
    compute(t, buf);
    if (slots > 0) __syncthreads();  // buffer `buf` is refilled in the next iteration
  }
}

// ---- matrix-vector kernels (sliding, sliding_shared, continuous, alternate, baseline) ------

/// A rank-2 plan (rows, cols) where one input (the vector) has one zero stride.
template <class Index>
struct MatrixVector {
  using Offset = std::make_signed_t<Index>;
  Index rows = 0, cols = 0;
  Offset out_row = 0, out_col = 0;  ///< strides of out
  Offset mat_row = 0, mat_col = 0;  ///< strides of the other input (the matrix)
  Offset vec_stride = 0;            ///< the vector's non-zero stride
  bool vector_is_a = false;         ///< the vector is the left operand
  bool row_vector = false;          ///< the vector runs along cols (one element per column)
  FastDivmod<Index> div_cols;       ///< continuous, alternate: linear index -> (row, col)
  Index chunk = 1;                  ///< continuous: elements per thread
  int sliding_factor = 1;           ///< sliding kernels: rows (cols) per thread
};

template <class T, class F, class Index>
EWISE_DEVICE T apply_mv(const F& f, const MatrixVector<Index>& p, T mat, T vec) {
  return p.vector_is_a ? apply(f, vec, mat) : apply(f, mat, vec);
}

/// sliding and sliding_shared. Block (32, by). Row vector: a block tile is 32 columns by
/// by*factor rows; thread (tx, ty) loads the vector element of its column once and applies it to
/// rows ty, ty+by, ... Column vector: a tile is by rows by 32*factor columns; thread (tx, ty)
/// loads the element of its row once and applies it to columns tx, tx+32, ...
/// Shared: the block's vector elements are loaded by its first row (row vector) or first
/// column (column vector) of threads into shared memory and read from there.
template <class T, class F, bool kShared>
__global__ void __launch_bounds__(kMaxThreads)
    sliding_kernel(F f, MatrixVector<std::uint64_t> p, std::int64_t tiles_x, std::int64_t tiles_y,
                   T* out, const T* mat, const T* vec) {
  __shared__ alignas(T) unsigned char shared_bytes[kShared ? 32 * sizeof(T) : 1];
  T* shared_vec = reinterpret_cast<T*>(shared_bytes);
  const std::int64_t tx = threadIdx.x, ty = threadIdx.y, by = blockDim.y;
  const auto rows = static_cast<std::int64_t>(p.rows), cols = static_cast<std::int64_t>(p.cols);
  const std::int64_t factor = p.sliding_factor;
  // `count` elements from (r, c) in steps of (dr, dc): kSlideUnroll matrix loads before the stores.
  const auto slide = [&](std::int64_t r, std::int64_t c, std::int64_t dr, std::int64_t dc,
                         std::int64_t count, T v) {
    const T* m = mat + r * p.mat_row + c * p.mat_col;
    T* o = out + r * p.out_row + c * p.out_col;
    const std::int64_t m_step = dr * p.mat_row + dc * p.mat_col;
    const std::int64_t o_step = dr * p.out_row + dc * p.out_col;
    for (std::int64_t k0 = 0; k0 < count; k0 += kSlideUnroll) {
      T x[kSlideUnroll];
#pragma unroll
      for (int u = 0; u < kSlideUnroll; ++u)
        if (k0 + u < count) x[u] = m[u * m_step];
#pragma unroll
      for (int u = 0; u < kSlideUnroll; ++u)
        if (k0 + u < count) o[u * o_step] = apply_mv(f, p, x[u], v);
      m += kSlideUnroll * m_step;
      o += kSlideUnroll * o_step;
    }
  };
  for (std::int64_t bty = blockIdx.y; bty < tiles_y; bty += gridDim.y) {
    for (std::int64_t btx = blockIdx.x; btx < tiles_x; btx += gridDim.x) {
      if (p.row_vector) {
        const std::int64_t c = btx * 32 + tx;
        T v{};
        if constexpr (kShared) {
          if (ty == 0 && c < cols) shared_vec[tx] = vec[c * p.vec_stride];
          __syncthreads();
          if (c < cols) v = shared_vec[tx];
        } else {
          if (c < cols) v = vec[c * p.vec_stride];
        }
        // rows r, r + by, ... below `rows`, at most `factor` of them
        const std::int64_t r = bty * by * factor + ty;
        if (c < cols && r < rows) slide(r, c, by, 0, min_of(factor, (rows - r + by - 1) / by), v);
      } else {
        const std::int64_t r = bty * by + ty;
        T v{};
        if constexpr (kShared) {
          if (tx == 0 && r < rows) shared_vec[ty] = vec[r * p.vec_stride];
          __syncthreads();
          if (r < rows) v = shared_vec[ty];
        } else {
          if (r < rows) v = vec[r * p.vec_stride];
        }
        const std::int64_t c = btx * 32 * factor + tx;
        if (r < rows && c < cols) slide(r, c, 0, 32, min_of(factor, (cols - c + 31) / 32), v);
      }
      if constexpr (kShared) __syncthreads();  // shared_vec is rewritten for the next tile
    }
  }
}

template <class T, class F, class Index>
EWISE_DEVICE void contiguous_mv_element(const F& f, const MatrixVector<Index>& p, Index i, T* out,
                                        const T* mat, const T* vec) {
  Index row, col;
  p.div_cols.divmod(i, row, col);
  const auto v = static_cast<typename MatrixVector<Index>::Offset>(p.row_vector ? col : row);
  out[i] = apply_mv(f, p, mat[i], vec[v * p.vec_stride]);
}

/// d2ltvm continuous schedule: thread t computes elements [t*chunk, (t+1)*chunk).
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    continuous_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index begin = global_thread<Index>() * p.chunk;
  const Index end = begin + p.chunk < n ? begin + p.chunk : n;
  for (Index i = begin; i < end; ++i) contiguous_mv_element(f, p, i, out, mat, vec);
}

/// d2ltvm alternate schedule: thread t computes elements t, t + nb*nt, t + 2*nb*nt, ...
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    alternate_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>())
    contiguous_mv_element(f, p, i, out, mat, vec);
}

/// Knet's vector broadcast: z[i] = x[(i/sx)%nx] op y[i] with hardware division; sx = 1,
/// nx = cols for a row vector, sx = cols, nx = rows for a column vector.
template <class T, class F, class Index>
__global__ void __launch_bounds__(kMaxThreads)
    baseline_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index sx = p.row_vector ? Index{1} : p.cols, nx = p.row_vector ? p.cols : p.rows;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>()) {
    const auto v = static_cast<typename MatrixVector<Index>::Offset>((i / sx) % nx);
    out[i] = apply_mv(f, p, mat[i], vec[v * p.vec_stride]);
  }
}

#undef EWISE_DEVICE

}  // namespace ewise::detail
