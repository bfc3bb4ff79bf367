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
__global__ void general_kernel(F f, Strided<Index> p, Index n, T* out, const T* a, const T* b) {
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
__global__ void vectorized_kernel(F f, VectorizedArgs p, T* out, const T* a, const T* b) {
  constexpr int V = 16 / sizeof(T);
  using P = Pack<T, V>;
  const std::int64_t tid = global_thread<std::int64_t>(), nthreads = grid_threads<std::int64_t>();
  const T a0 = a[0], b0 = b[0];  // the values of scalar operands
  const auto scalar = [&](std::int64_t i) {
    out[i] = apply(f, p.a_full ? a[i] : a0, p.b_full ? b[i] : b0);
  };
  for (std::int64_t i = tid; i < p.head; i += nthreads) scalar(i);
  P* vout = reinterpret_cast<P*>(out + p.head);
  const P* va = reinterpret_cast<const P*>(a + p.head);
  const P* vb = reinterpret_cast<const P*>(b + p.head);
  // Two vectors per thread per step, both loaded before either is used.
  for (std::int64_t v = tid; v < p.vectors; v += 2 * nthreads) {
    const std::int64_t w = v + nthreads;
    const bool second = w < p.vectors;
    P x0, x1, y0, y1;
    if (p.a_full) { x0 = va[v]; if (second) x1 = va[w]; }
    if (p.b_full) { y0 = vb[v]; if (second) y1 = vb[w]; }
    P r;
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = apply(f, p.a_full ? x0.v[e] : a0, p.b_full ? y0.v[e] : b0);
    vout[v] = r;
    if (second) {
#pragma unroll
      for (int e = 0; e < V; ++e) r.v[e] = apply(f, p.a_full ? x1.v[e] : a0, p.b_full ? y1.v[e] : b0);
      vout[w] = r;
    }
  }
  for (std::int64_t i = p.head + p.vectors * V + tid; i < p.n; i += nthreads) scalar(i);
}

// ---- row_vectorized: inner stride 0 or 1 for every operand --------------------------------

template <class Index>
struct RowArgs {
  Index slots = 0;                ///< rows * vectors per row
  FastDivmod<Index> per_row;      ///< vectors (of V elements) per row
  Strided<Index> rows;            ///< the outer dims (a single extent-1 dim for rank-1 plans)
  bool a_full = true, b_full = true;  ///< inner stride 1 (else 0: one value per row)
};

template <class T, class F, class Index, int V>
__global__ void row_vectorized_kernel(F f, RowArgs<Index> p, T* out, const T* a, const T* b) {
  using P = Pack<T, V>;
  using Offset = typename Strided<Index>::Offset;
  const Index tid = global_thread<Index>(), nthreads = grid_threads<Index>();
  // Two slots per thread per step, both loaded before either is used.
  for (Index s = tid; s < p.slots; s += 2 * nthreads) {
    T* po[2];
    P x[2], y[2];
    bool live[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const Index slot = s + u * nthreads;
      live[u] = u == 0 || slot < p.slots;
      if (!live[u]) continue;
      Index row, vec;
      p.per_row.divmod(slot, row, vec);
      Offset off[3];
      p.rows.offsets(row, off);
      const Offset col = static_cast<Offset>(vec) * V;
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
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (!live[u]) continue;
      P r;
#pragma unroll
      for (int e = 0; e < V; ++e) r.v[e] = apply(f, x[u].v[e], y[u].v[e]);
      *reinterpret_cast<P*>(po[u]) = r;
    }
  }
}

// ---- tiled: an input transposed relative to the output ------------------------------------

struct TiledArgs {
  std::int64_t rows = 0, cols = 0;    ///< extents of the tile dim (rows) and innermost (cols)
  std::int64_t row_stride[3] = {}, col_stride[3] = {};
  std::int64_t tiles = 0;             ///< tiles over all batches
  FastDivmod<std::uint64_t> col_tiles, row_tiles;
  Strided<std::uint64_t> batch;       ///< the other dims (a single extent-1 dim if none)
  bool staged_a = false, staged_b = false;
};

/// Uninitialised shared storage for a kTile x (kTile+1) tile of T (the +1 avoids bank
/// conflicts when a column is read).
template <class T>
struct TileStorage {
  alignas(T) unsigned char bytes[32 * 33 * sizeof(T)];
  EWISE_DEVICE T (*tile())[33] { return reinterpret_cast<T(*)[33]>(bytes); }
};

template <class T, class F>
__global__ void tiled_kernel(F f, TiledArgs p, T* out, const T* a, const T* b) {
  __shared__ TileStorage<T> storage_a, storage_b;
  T(*tile_a)[33] = storage_a.tile();
  T(*tile_b)[33] = storage_b.tile();
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool staged = p.staged_a || p.staged_b;
  for (std::int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    std::uint64_t rest, col_tile, batch, row_tile;
    p.col_tiles.divmod(static_cast<std::uint64_t>(t), rest, col_tile);
    p.row_tiles.divmod(rest, batch, row_tile);
    std::int64_t base[3];
    p.batch.offsets(batch, base);
    const std::int64_t r0 = static_cast<std::int64_t>(row_tile) * 32;
    const std::int64_t c0 = static_cast<std::int64_t>(col_tile) * 32;
    const auto at = [&](int k, std::int64_t r, std::int64_t c) {
      return base[k] + r * p.row_stride[k] + c * p.col_stride[k];
    };
    if (staged) {  // threads run along the tile dim: coalesced for the staged inputs
      for (int j = ty; j < 32; j += blockDim.y) {
        const std::int64_t r = r0 + tx, c = c0 + j;
        if (r < p.rows && c < p.cols) {
          if (p.staged_a) tile_a[j][tx] = a[at(1, r, c)];
          if (p.staged_b) tile_b[j][tx] = b[at(2, r, c)];
        }
      }
      __syncthreads();
    }
    for (int i = ty; i < 32; i += blockDim.y) {  // threads run along the innermost dim
      const std::int64_t r = r0 + i, c = c0 + tx;
      if (r < p.rows && c < p.cols) {
        const T x = p.staged_a ? tile_a[tx][i] : a[at(1, r, c)];
        const T y = p.staged_b ? tile_b[tx][i] : b[at(2, r, c)];
        out[at(0, r, c)] = apply(f, x, y);
      }
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
__global__ void sliding_kernel(F f, MatrixVector<std::uint64_t> p, std::int64_t tiles_x,
                               std::int64_t tiles_y, T* out, const T* mat, const T* vec) {
  __shared__ alignas(T) unsigned char shared_bytes[kShared ? 32 * sizeof(T) : 1];
  T* shared_vec = reinterpret_cast<T*>(shared_bytes);
  const std::int64_t tx = threadIdx.x, ty = threadIdx.y, by = blockDim.y;
  const auto rows = static_cast<std::int64_t>(p.rows), cols = static_cast<std::int64_t>(p.cols);
  const std::int64_t factor = p.sliding_factor;
  const auto put = [&](std::int64_t r, std::int64_t c, T v) {
    out[r * p.out_row + c * p.out_col] = apply_mv(f, p, mat[r * p.mat_row + c * p.mat_col], v);
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
        if (c < cols)
          for (std::int64_t k = 0, r = bty * by * factor + ty; k < factor && r < rows; ++k, r += by)
            put(r, c, v);
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
        if (r < rows)
          for (std::int64_t k = 0, c = btx * 32 * factor + tx; k < factor && c < cols; ++k, c += 32)
            put(r, c, v);
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
__global__ void continuous_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index begin = global_thread<Index>() * p.chunk;
  const Index end = begin + p.chunk < n ? begin + p.chunk : n;
  for (Index i = begin; i < end; ++i) contiguous_mv_element(f, p, i, out, mat, vec);
}

/// d2ltvm alternate schedule: thread t computes elements t, t + nb*nt, t + 2*nb*nt, ...
template <class T, class F, class Index>
__global__ void alternate_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>())
    contiguous_mv_element(f, p, i, out, mat, vec);
}

/// Knet's vector broadcast: z[i] = x[(i/sx)%nx] op y[i] with hardware division; sx = 1,
/// nx = cols for a row vector, sx = cols, nx = rows for a column vector.
template <class T, class F, class Index>
__global__ void baseline_kernel(F f, MatrixVector<Index> p, T* out, const T* mat, const T* vec) {
  const Index n = p.rows * p.cols;
  const Index sx = p.row_vector ? Index{1} : p.cols, nx = p.row_vector ? p.cols : p.rows;
  for (Index i = global_thread<Index>(); i < n; i += grid_threads<Index>()) {
    const auto v = static_cast<typename MatrixVector<Index>::Offset>((i / sx) % nx);
    out[i] = apply_mv(f, p, mat[i], vec[v * p.vec_stride]);
  }
}

#undef EWISE_DEVICE

}  // namespace ewise::detail
