// ewise/detail/dense/tiled.cuh — the tiled kernel: rank >= 2 plans with an input that runs
// along another dim than the output (a transposed view). Tiles of the innermost dim and the
// tile dim; staged inputs go through shared memory (asynchronous copies into several buffers)
// so that reads and writes are both coalesced. Planned by plan_tiled: 16-byte units or element
// by element, tile shapes from tile_shape (policy.hpp).
#pragma once

#include <cstdint>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

/// The tiled kernel works on `rows` (the plan dim tiled with the innermost one) x `cols` (the
/// innermost dim) matrices, one per combination of the other (batch) dims.
struct TiledArgs {
  std::int64_t rows = 0, cols = 0;  ///< extents of the tile dim (rows) and innermost (cols)
  std::int64_t row_stride[3] = {}, col_stride[3] = {};
  std::int64_t tiles = 0;               ///< tiles over all batches
  FastDivmod<std::uint64_t> per_batch;  ///< row tiles * col tiles
  FastDivmod<std::uint64_t> per_band;   ///< kTileBand * col tiles
  FastDivmod<std::uint64_t> last_band;  ///< row tiles in the last band (1..kTileBand)
  std::uint64_t full_bands = 0;         ///< bands of kTileBand row tiles
  Strided<std::uint64_t> batch;         ///< the other dims (a single extent-1 dim if none)
  bool staged_a = false, staged_b = false;
};

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
template <class T, class F, bool kVector>
__global__ void __launch_bounds__(kTileThreads, tile_shape(sizeof(T), kVector).min_blocks)
    tiled_kernel(F f, TiledArgs p, T* out, const T* a, const T* b) {
  constexpr TileShape kShape = tile_shape(sizeof(T), kVector);
  constexpr int V = kShape.vector, RV = kShape.unit_rows, CV = kShape.unit_cols;
  constexpr int R = RV * V, C = CV * V;  // tile rows and columns, in elements
  constexpr int S = kShape.stages;
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
      col_tile = in_band / kTileBand;
      row_in_band = in_band % kTileBand;
    } else {
      p.last_band.divmod(in_band, col_tile, row_in_band);
    }
    Origin o;
    p.batch.offsets(batch, o.base);
    o.r0 = static_cast<std::int64_t>(band * kTileBand + row_in_band) * R;
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

template <class T, class F>
void launch_tiled(const F& f, const DensePlan& plan, cudaStream_t stream) {
  const TiledPlan& t = plan.tiled;
  const int r = plan.plan.rank() - 1;
  TiledArgs p;
  p.rows = plan.plan.shape[t.tile_dim];
  p.cols = plan.plan.shape[r];
  for (int k = 0; k < 3; ++k) {
    p.row_stride[k] = plan.plan.strides[k][t.tile_dim];
    p.col_stride[k] = plan.plan.strides[k][r];
  }
  p.tiles = t.tiles;
  p.per_batch = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(t.row_tiles * t.col_tiles));
  p.per_band = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(kTileBand * t.col_tiles));
  p.full_bands = static_cast<std::uint64_t>(t.row_tiles / kTileBand);
  const std::int64_t last = t.row_tiles % kTileBand;
  p.last_band = FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(last > 0 ? last : kTileBand));
  int dims[kMaxRank], n = 0;
  for (int d = 0; d < r; ++d)
    if (d != t.tile_dim) dims[n++] = d;
  p.batch = make_strided<std::uint64_t>(plan.plan, dims, n);
  p.staged_a = t.staged_a;
  p.staged_b = t.staged_b;
  const auto smem = static_cast<std::size_t>(t.shared_bytes);
  const auto kernel = t.vector ? tiled_kernel<T, F, true> : tiled_kernel<T, F, false>;
  if (smem > 48 * 1024)  // above the default limit of dynamic shared memory: opt in
    EWISE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  launch("tiled", kernel, grid_blocks(kernel, plan.grid, kTileThreads, smem), kTileThreads, smem,
         stream, f, p, static_cast<T*>(plan.out), static_cast<const T*>(plan.a),
         static_cast<const T*>(plan.b));
}

}  // namespace ewise::detail
