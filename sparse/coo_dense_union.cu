// sparse/coo_dense_union.cu — COO ⊕ dense on the GPU (sparse.hpp): combine(op, a, dense, out)
// and accumulate(op, dense, a). Both work on a canonical matrix (a matrix not marked canonical
// is coalesced first by coo_dense.cu's pipeline, which sums duplicates in storage order and
// keeps the sums in the compute type, so that the result is rounded once). combine writes the
// table once, a tile of kCellTile cells a block, each tile's entries staged in shared memory
// first; accumulate is one thread per entry.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ewise/buffer.hpp"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "policy.hpp"

namespace ewise::sparse_detail {
namespace {

/// Calls f(I{}, V{}) with m's index type I and its value type V: T, or T's compute type when
/// m is CanonicalOperand's coalesced copy of an f16 or bf16 matrix (sums kept in f32, which its
/// dtype says).
template <class T, class F>
void with_entry_types(const CooView& m, F&& f) {
  const auto with_values = [&](auto itag) {
    if constexpr (!std::is_same_v<T, detail::compute_t<T>>) {
      if (m.desc.dtype == DType::f32) return f(itag, detail::compute_t<T>{});
    }
    f(itag, T{});
  };
  if (m.desc.index == IndexType::i64) with_values(std::int64_t{});
  else with_values(std::int32_t{});
}

// ---- combine: one pass over the table -------------------------------------------------------

/// Tile t covers cells [t * kCellTile, (t + 1) * kCellTile) of the row-major table (key =
/// row * ncols + col). starts[t] = the first entry whose key is at least t * kCellTile, for t in
/// [0, tiles] (starts[tiles] = n), found in one pass over the sorted keys: entry k starts the
/// tiles in (tile(k - 1), tile(k)], and k = n the tiles after the last entry's. A thread writes
/// up to 32 tiles itself; a longer stretch (empty tiles) is written by its whole warp, so that a
/// matrix with few entries on a large table does not leave it to one thread. Keys are clamped
/// to tiles: a broken canonical promise left unchecked writes nothing outside starts.
template <class I>
__global__ void __launch_bounds__(kBlock)
    tile_starts_kernel(ImplicitKeys<I> keys, std::int64_t n, std::int64_t tiles,
                       std::int64_t* starts) {
  const auto tile = [&](std::int64_t k) {
    const std::uint64_t t = keys[k] / static_cast<std::uint64_t>(kCellTile);
    return static_cast<std::int64_t>(std::min(t, static_cast<std::uint64_t>(tiles)));
  };
  const int lane = threadIdx.x % 32;
  // Whole warps take each step (the stride and each warp's first k are multiples of 32), so
  // that every lane takes part in the warp's shuffles.
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k - lane <= n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t lo = 0, hi = -1;  // the tiles entry k starts: [lo, hi]
    if (k <= n) {
      lo = k == 0 ? 0 : tile(k - 1) + 1;
      hi = k == n ? tiles : tile(k);
    }
    const bool warp_writes = hi - lo >= 32;
    if (!warp_writes)
      for (std::int64_t t = lo; t <= hi; ++t) starts[t] = k;
    for (unsigned pending = __ballot_sync(~0u, warp_writes); pending != 0;
         pending &= pending - 1) {
      const int src = __ffs(pending) - 1;
      const std::int64_t wlo = __shfl_sync(~0u, lo, src), whi = __shfl_sync(~0u, hi, src),
                         wk = __shfl_sync(~0u, k, src);
      for (std::int64_t t = wlo + lane; t <= whi; t += 32) starts[t] = wk;
    }
  }
}

template <class T, class I, class V, class Op>
struct CombineDenseArgs {
  ImplicitKeys<I> keys;  ///< the canonical matrix's indices
  const V* vals;
  std::int64_t n;              ///< its entries
  const std::int64_t* starts;  ///< tiles + 1 tile starts (tile_starts_kernel)
  std::int64_t cells, tiles;
  detail::FastDivmod<std::uint64_t> ncols;
  /// kBlock cells in rows and columns: kBlock / ncols and kBlock % ncols.
  std::uint64_t step_rows, step_cols;
  detail::compute_t<T> fill;
  Op op;
  Strided2<const T> dense;
  Strided2<T> out;
};

// Where a thread's cells of a tile, x, x + kBlock, ..., lie in dense and out (element offsets),
// and how many of them it loads before it writes any (its batch: out may be dense, so the
// compiler keeps every load after the stores before it).

/// dense and out both row-major contiguous and full: the offset is the cell. A batch is all of
/// the thread's cells, kCellItems loads in flight, at 58 (f32) to 80 (f64) registers on sm_90.
struct FlatCells {
  static constexpr int kBatch = kCellItems;
  std::int64_t x;
  template <class Args>
  __device__ __forceinline__ FlatCells(const Args&, std::int64_t cell) : x(cell) {}
  template <class Args>
  __device__ __forceinline__ std::int64_t dense_offset(const Args&) const { return x; }
  template <class Args>
  __device__ __forceinline__ std::int64_t out_offset(const Args&) const { return x; }
  template <class Args>
  __device__ __forceinline__ void next(const Args&) { x += kBlock; }
};

/// Any strides: (row, col) of the first cell from a divmod, then stepped by kBlock / ncols rows
/// and kBlock % ncols columns with at most one carry. Batches of 4 keep the kernel at 48 (f64)
/// to 64 (f16) registers on sm_90; the 64-bit offsets of all 16 cells at once leave room for
/// one or two blocks an SM (docs/benchmarks.md).
struct StridedCells {
  static constexpr int kBatch = 4;
  std::uint64_t r, c;
  template <class Args>
  __device__ __forceinline__ StridedCells(const Args& a, std::int64_t cell) {
    a.ncols.divmod(static_cast<std::uint64_t>(cell), r, c);
  }
  template <class Args>
  __device__ __forceinline__ std::int64_t dense_offset(const Args& a) const {
    return offset(a.dense.row_stride, a.dense.col_stride);
  }
  template <class Args>
  __device__ __forceinline__ std::int64_t out_offset(const Args& a) const {
    return offset(a.out.row_stride, a.out.col_stride);
  }
  template <class Args>
  __device__ __forceinline__ void next(const Args& a) {
    r += a.step_rows;
    c += a.step_cols;
    if (c >= a.ncols.divisor) {
      c -= a.ncols.divisor;
      ++r;
    }
  }

 private:
  __device__ __forceinline__ std::int64_t offset(std::int64_t rs, std::int64_t cs) const {
    return static_cast<std::int64_t>(r) * rs + static_cast<std::int64_t>(c) * cs;
  }
};

/// A tile's entries in shared memory: the value of each stored cell (in the compute type) and
/// a bit per cell saying whether it is stored.
template <class C>
struct CellTileEntries {
  C vals[kCellTile];
  unsigned stored[kCellTile / 32];
};

/// out(r, c) = op(v, dense(r, c)) where a stores v at (r, c), op(fill, dense(r, c)) elsewhere,
/// each cell written once. A block per tile (grid-stride over tiles): it stages the tile's
/// entries in shared memory, then thread x writes cells x, x + kBlock, ... of the tile
/// (coalesced), loading a batch of dense elements before it writes them. A cell is read and
/// written by one thread, read first, so out may be dense itself. The presence words a warp
/// read are cleared by that warp, so that the next tile finds them zero after one barrier.
template <class T, class I, class V, class Op, class Cells>
__global__ void __launch_bounds__(kBlock) combine_dense_kernel(CombineDenseArgs<T, I, V, Op> a) {
  using C = detail::compute_t<T>;
  constexpr int kBatch = Cells::kBatch;
  static_assert(kCellItems % kBatch == 0, "whole batches");
  __shared__ CellTileEntries<C> sm;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int w = threadIdx.x; w < kCellTile / 32; w += kBlock) sm.stored[w] = 0;
  __syncthreads();
  for (std::int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const std::int64_t first = t * kCellTile, rest = a.cells - first;
    const int len = static_cast<int>(rest < kCellTile ? rest : kCellTile);
    // The tile's entries, clamped to [0, n] (memory-safe on a broken canonical promise left
    // unchecked, whose result is unspecified).
    const std::int64_t s = std::clamp<std::int64_t>(a.starts[t], 0, a.n);
    const std::int64_t e = std::clamp<std::int64_t>(a.starts[t + 1], 0, a.n);
    for (std::int64_t k = s + threadIdx.x; k < e; k += kBlock) {
      const std::uint64_t cell = a.keys[k] - static_cast<std::uint64_t>(first);
      if (cell < static_cast<std::uint64_t>(len)) {
        sm.vals[cell] = static_cast<C>(detail::to_compute(a.vals[k]));
        atomicOr(&sm.stored[cell / 32], 1u << (cell % 32));
      }
    }
    __syncthreads();
    Cells at(a, first + threadIdx.x);
#pragma unroll
    for (int j0 = 0; j0 < kCellItems; j0 += kBatch) {
      C d[kBatch];
      Cells load = at;
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if ((j0 + j) * kBlock + static_cast<int>(threadIdx.x) < len)
          d[j] = detail::to_compute(a.dense.data[load.dense_offset(a)]);
        load.next(a);
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = (j0 + j) * kBlock + static_cast<int>(threadIdx.x);  // word j * kWarps + warp
        if (i < len) {
          const C v = ((sm.stored[i / 32] >> lane) & 1u) != 0 ? sm.vals[i] : a.fill;
          a.out.data[at.out_offset(a)] = detail::from_compute<T>(a.op(v, d[j]));
        }
        at.next(a);
      }
    }
    __syncwarp();
    if (lane < kCellItems) sm.stored[lane * kWarps + warp] = 0;
    __syncthreads();
  }
}

// ---- accumulate: one thread per entry -------------------------------------------------------

template <class T, class I, class V, class Op>
struct UnionEntriesArgs {
  const I* rows;
  const I* cols;
  const V* vals;  ///< each entry's sum (the matrix is canonical): T or its compute type
  std::int64_t n;
  Strided2<T> dense;
  Op op;
};

/// dense(r, c) = op(dense(r, c), v) for each entry at (r, c) with value v. The coordinates are
/// distinct (canonical), so no two threads write one element and no atomics are needed.
template <class T, class I, class V, class Op>
__global__ void __launch_bounds__(kBlock) union_entries_kernel(UnionEntriesArgs<T, I, V, Op> a) {
  using C = detail::compute_t<T>;
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < a.n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    T& x = a.dense.at(a.rows[k], a.cols[k]);
    const C v = static_cast<C>(detail::to_compute(a.vals[k]));
    x = detail::from_compute<T>(a.op(detail::to_compute(x), v));
  }
}

/// The canonical form of a to work on: a itself (its indices checked by a pass of their own
/// when asked, one synchronization), or a coalesced copy with its sums in the compute type
/// (which the sort's pass checks; one synchronization). Either way every index is checked
/// before this returns.
class CanonicalOperand {
 public:
  CanonicalOperand(const CooView& a, bool validate, cudaStream_t stream) : view_(a) {
    if (a.desc.canonical || a.desc.nnz == 0) {
      if (validate && a.desc.nnz > 0) device_check_indices(a, "a", stream);
      return;
    }
    owned_ = device_coalesce_sums(a, validate, stream);
    view_ = owned_.view();
  }
  const CooView& view() const { return view_; }

 private:
  DeviceCoo owned_;
  CooView view_;
};

}  // namespace

void device_combine_dense(const CooView& a, const DenseOperand& dense, const TensorView& out,
                          const UnionArgs& u, const SparseOptions& options, cudaStream_t stream) {
  const std::int64_t nc = a.desc.ncols, cells = a.desc.nrows * nc;
  const CanonicalOperand canonical(a, options.validate_indices, stream);
  if (cells == 0) return;
  const CooView& m = canonical.view();
  const std::int64_t n = m.desc.nnz;
  const std::int64_t tiles = cells / kCellTile + (cells % kCellTile != 0);
  // Offsets equal to the cell (row-major, contiguous, full shape; a stride of a unit extent
  // does not matter) for both: FlatCells.
  const auto row_major = [&](std::int64_t rs, std::int64_t cs) {
    return (a.desc.nrows == 1 || rs == nc) && (nc == 1 || cs == 1);
  };
  const bool flat = row_major(dense.row_stride, dense.col_stride) &&
                    row_major(out.desc.strides[0], out.desc.strides[1]);
  DeviceBuffer starts(static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t), stream);
  auto* const starts_data = static_cast<std::int64_t*>(starts.data());
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    const Strided2<const T> d{static_cast<const T*>(dense.data), dense.row_stride,
                              dense.col_stride};
    const Strided2<T> o{static_cast<T*>(out.data), out.desc.strides[0], out.desc.strides[1]};
    with_union_op(u.op, [&](auto op) {
      using Op = decltype(op);
      with_entry_types<T>(m, [&](auto itag, auto vtag) {
        using I = decltype(itag);
        using V = decltype(vtag);
        const ImplicitKeys<I> keys{static_cast<const I*>(m.rows), static_cast<const I*>(m.cols),
                                   static_cast<std::uint64_t>(nc)};
        detail::launch("sparse tile_starts", tile_starts_kernel<I>, dim3(blocks_for(n + 1)),
                       dim3(kBlock), 0, stream, keys, n, tiles, starts_data);
        const CombineDenseArgs<T, I, V, Op> args{keys,
                                                 static_cast<const V*>(m.vals),
                                                 n,
                                                 starts_data,
                                                 cells,
                                                 tiles,
                                                 detail::FastDivmod<std::uint64_t>(nc),
                                                 static_cast<std::uint64_t>(kBlock / nc),
                                                 static_cast<std::uint64_t>(kBlock % nc),
                                                 static_cast<C>(u.fill_a),
                                                 op,
                                                 d,
                                                 o};
        // A block per tile up to the grid cap, beyond which blocks take several tiles.
        const auto grid = static_cast<unsigned>(
            std::min<std::int64_t>(tiles, kTilePolicy.max_grid_blocks));
        if (flat) {
          detail::launch("sparse combine_dense", combine_dense_kernel<T, I, V, Op, FlatCells>,
                         dim3(grid), dim3(kBlock), 0, stream, args);
        } else {
          detail::launch("sparse combine_dense", combine_dense_kernel<T, I, V, Op, StridedCells>,
                         dim3(grid), dim3(kBlock), 0, stream, args);
        }
      });
    });
  });
}

void device_accumulate(const TensorView& dense, const CooView& a, BinaryOp op,
                       const SparseOptions& options, cudaStream_t stream) {
  const CanonicalOperand canonical(a, options.validate_indices, stream);
  const CooView& m = canonical.view();
  const std::int64_t n = m.desc.nnz;
  if (n == 0) return;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Strided2<T> d{static_cast<T*>(dense.data), dense.desc.strides[0], dense.desc.strides[1]};
    with_union_op(op, [&](auto f) {
      using Op = decltype(f);
      with_entry_types<T>(m, [&](auto itag, auto vtag) {
        using I = decltype(itag);
        using V = decltype(vtag);
        const UnionEntriesArgs<T, I, V, Op> args{static_cast<const I*>(m.rows),
                                                 static_cast<const I*>(m.cols),
                                                 static_cast<const V*>(m.vals), n, d, f};
        detail::launch("sparse union_entries", union_entries_kernel<T, I, V, Op>,
                       dim3(blocks_for(n)), dim3(kBlock), 0, stream, args);
      });
    });
  });
}

}  // namespace ewise::sparse_detail
