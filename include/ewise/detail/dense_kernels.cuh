// ewise/detail/dense_kernels.cuh — the dense kernels, templated on the storage type T, the
// functor F (called with compute types, see types.cuh) and, where index arithmetic dominates,
// the index type (uint32_t when every index and offset fits in int32, else uint64_t).
//
// Each kernel is a thin __global__ function over argument structs built on the host by
// dense_dispatch.cuh. Dims in device structs are stored innermost first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
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

/// Edge of the tiled kernel's square tiles: 64 for types of up to 4 bytes (16 elements per thread:
/// enough loads in flight between the barriers), 32 for 8-byte types (shared memory).
template <class T>
inline constexpr int kTileEdge = sizeof(T) <= 4 ? 64 : 32;
/// Block of the tiled kernel: 32 x kTileRows threads.
inline constexpr int kTileRows = 8;

/// Uninitialised shared storage for an E x (E+1) tile of T (the +1 avoids bank conflicts when a
/// column is read).
template <class T, int E>
struct TileStorage {
  alignas(T) unsigned char bytes[E * (E + 1) * sizeof(T)];
  EWISE_DEVICE T (*tile())[E + 1] { return reinterpret_cast<T(*)[E + 1]>(bytes); }
};

template <class T, class F>
__global__ void __launch_bounds__(32 * kTileRows)
    tiled_kernel(F f, TiledArgs p, T* out, const T* a, const T* b) {
  constexpr int E = kTileEdge<T>, CX = E / 32, CY = E / kTileRows;  // per thread: CX x CY
  __shared__ TileStorage<T, E> storage_a, storage_b;
  T(*tile_a)[E + 1] = storage_a.tile();
  T(*tile_b)[E + 1] = storage_b.tile();
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool staged = p.staged_a || p.staged_b;
  for (std::int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    std::uint64_t batch, in_batch, band, in_band, col_tile, row_in_band;
    p.per_batch.divmod(static_cast<std::uint64_t>(t), batch, in_batch);
    p.per_band.divmod(in_batch, band, in_band);
    if (band < p.full_bands) {
      col_tile = in_band / kBand;
      row_in_band = in_band % kBand;
    } else {
      p.last_band.divmod(in_band, col_tile, row_in_band);
    }
    const std::uint64_t row_tile = band * kBand + row_in_band;
    std::int64_t base[3];
    p.batch.offsets(batch, base);
    const std::int64_t r0 = static_cast<std::int64_t>(row_tile) * E;
    const std::int64_t c0 = static_cast<std::int64_t>(col_tile) * E;
    const auto at = [&](int k, std::int64_t r, std::int64_t c) {
      return base[k] + r * p.row_stride[k] + c * p.col_stride[k];
    };
    if (staged) {  // threads run along the tile dim: coalesced for the staged inputs
      T xs[CX][CY], ys[CX][CY];
#pragma unroll
      for (int i = 0; i < CX; ++i)
#pragma unroll
        for (int j = 0; j < CY; ++j) {
          const std::int64_t r = r0 + tx + 32 * i, c = c0 + ty + kTileRows * j;
          if (r < p.rows && c < p.cols) {
            if (p.staged_a) xs[i][j] = a[at(1, r, c)];
            if (p.staged_b) ys[i][j] = b[at(2, r, c)];
          }
        }
#pragma unroll
      for (int i = 0; i < CX; ++i)
#pragma unroll
        for (int j = 0; j < CY; ++j) {
          const int rl = tx + 32 * i, cl = ty + kTileRows * j;
          if (r0 + rl < p.rows && c0 + cl < p.cols) {
            if (p.staged_a) tile_a[cl][rl] = xs[i][j];
            if (p.staged_b) tile_b[cl][rl] = ys[i][j];
          }
        }
      __syncthreads();
    }
    // Threads run along the innermost dim: coalesced for the output and unstaged inputs.
    T x[CX][CY], y[CX][CY];
#pragma unroll
    for (int i = 0; i < CX; ++i)
#pragma unroll
      for (int j = 0; j < CY; ++j) {
        const int cl = tx + 32 * i, rl = ty + kTileRows * j;
        const std::int64_t r = r0 + rl, c = c0 + cl;
        if (r < p.rows && c < p.cols) {
          x[i][j] = p.staged_a ? tile_a[cl][rl] : a[at(1, r, c)];
          y[i][j] = p.staged_b ? tile_b[cl][rl] : b[at(2, r, c)];
        }
      }
#pragma unroll
    for (int i = 0; i < CX; ++i)
#pragma unroll
      for (int j = 0; j < CY; ++j) {
        const std::int64_t r = r0 + ty + kTileRows * j, c = c0 + tx + 32 * i;
        if (r < p.rows && c < p.cols) out[at(0, r, c)] = apply(f, x[i][j], y[i][j]);
      }
    if (staged) __syncthreads();  // the tile is rewritten in the next iteration
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
