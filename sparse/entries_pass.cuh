// sparse/entries_pass.cuh — one pass over a matrix's entries in storage order, entry i giving
// output i: the canonical matrix's coalesce and multiply(a, dense), and multiply_values on any
// matrix (scale_entries.cu, coo_dense.cu). entries_kernel strides over the entries;
// banded_entries_kernel visits them once per band of columns when the factor is a row vector
// too large for the L2 (kColumnBands, policy.hpp).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ewise/coo.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "checks.hpp"
#include "ewise/ops.hpp"
#include "policy.hpp"

namespace ewise::sparse_detail {

/// The factor of an entry: dense's element at (row, col), a scalar's value, or none (coalesce)
/// when data is null and there is no scalar.
template <class T>
struct DenseFactor {
  const T* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
  bool scalar = false;
  detail::compute_t<T> value{};  ///< the scalar, in the compute type

  __host__ __device__ bool present() const { return data != nullptr || scalar; }
  /// The factor at (r, c), which `in` says is inside the shape (unchecked bad input reads no
  /// element); `value` otherwise (unused without a factor).
  template <class I>
  __device__ detail::compute_t<T> at(I r, I c, bool in) const {
    return data && in ? detail::to_compute(data[static_cast<std::int64_t>(r) * row_stride +
                                                static_cast<std::int64_t>(c) * col_stride])
                      : value;
  }
};

/// The factor of a checked dense or scalar operand (checks.hpp).
template <class T>
DenseFactor<T> factor_of(const DenseOperand& d) {
  DenseFactor<T> f{static_cast<const T*>(d.data), d.row_stride, d.col_stride, d.scalar, {}};
  if (d.scalar) std::memcpy(&f.value, &d.value, sizeof f.value);
  return f;
}

/// The value an output entry gets from its (summed) value `acc` and the factor `d`, stored as
/// V: T, or its compute type (the unrounded sums of coalesce_sums).
template <class V, class T>
__device__ __forceinline__ V scaled(const DenseFactor<T>& f, detail::compute_t<T> acc,
                                    detail::compute_t<T> d) {
  return detail::from_compute<V>(f.present() ? ops::Mul{}(acc, d) : acc);
}

/// Output entry i comes from entry i, in storage order: a canonical matrix's coalesce and
/// multiply(a, dense) (which also write the indices, out_rows and out_cols), and multiply_values
/// on any matrix (values only: out_rows and out_cols null). One pass checks the indices when
/// `check` is given (range; strictly increasing, against the predecessor), reads the factor and
/// writes the output. An entry out of range reads no factor, so unchecked bad input stays inside
/// its buffers. With column bands (kColumnBands) the grid is `bands` runs of band_blocks blocks
/// and each run takes the entries whose column is in its band; the last band also takes every
/// column out of range, so each entry is checked and written once.
template <class T, class I>
struct EntriesArgs {
  const I* rows;
  const I* cols;
  const T* vals;
  std::int64_t n, nrows, ncols;
  unsigned long long* check;  ///< EntryCheck words (out of range, not increasing), or null
  DenseFactor<T> factor;
  I* out_rows;  ///< with out_cols: null for values only
  I* out_cols;
  T* out_vals;
  int bands = 1;        ///< column bands: band b holds the columns c with c >> band_shift == b
  int band_shift = 0;
  unsigned band_blocks = 0;  ///< blocks of each band's run (banded_entries_kernel)

  __device__ int band_of(I c) const {
    return c >= 0 && c < ncols ? static_cast<int>(c >> band_shift) : bands - 1;
  }
};

/// One entry's work in entries_kernel and banded_entries_kernel: entry i (row r, column c,
/// value v, its predecessor's indices pr and pc when checking) is this thread's when `live`; the
/// whole warp calls, since the checks vote. Streaming: evict-first stores.
template <bool Streaming, class T, class I>
__device__ __forceinline__ void finish_entry(const EntriesArgs<T, I>& a, std::int64_t i, bool live,
                                             I r, I c, T v, I pr, I pc) {
  const unsigned lane = threadIdx.x & 31;
  const bool in = r >= 0 && r < a.nrows && c >= 0 && c < a.ncols;
  if (a.check) {
    const bool after = pr < r || (pr == r && pc < c);
    // Within a warp the lowest flagged lane holds the smallest index.
    const unsigned out = __ballot_sync(0xffffffffu, live && !in);
    const unsigned order = __ballot_sync(0xffffffffu, live && in && i > 0 && !after);
    if (out && lane == static_cast<unsigned>(__ffs(out) - 1)) atomicMin(a.check, static_cast<unsigned long long>(i));
    if (order && lane == static_cast<unsigned>(__ffs(order) - 1))
      atomicMin(a.check + 1, static_cast<unsigned long long>(i));
  }
  if (!live) return;
  // Without a factor (coalesce) the value is copied, its NaN made canonical (ops.hpp).
  const T out = scaled<T>(a.factor, detail::to_compute(v), a.factor.at(r, c, in));
  const auto store = [](auto* p, auto x) {
    if (Streaming) __stcs(p, x);
    else *p = x;
  };
  if (a.out_rows) {
    store(a.out_rows + i, r);
    store(a.out_cols + i, c);
  }
  store(a.out_vals + i, out);
}

/// Every entry in storage order, a grid-stride loop of one entry a thread.
template <class T, class I>
__global__ void __launch_bounds__(kBlock) entries_kernel(EntriesArgs<T, I> a) {
  // A block-uniform trip count, so that whole warps vote.
  for (std::int64_t i0 = std::int64_t{blockIdx.x} * kBlock; i0 < a.n; i0 += std::int64_t{gridDim.x} * kBlock) {
    const std::int64_t i = i0 + threadIdx.x;
    const bool live = i < a.n;
    I r = 0, c = 0, pr = 0, pc = 0;
    T v{};
    if (live) {
      r = a.rows[i];
      c = a.cols[i];
      v = a.vals[i];
      if (a.check && i > 0) {  // the predecessor: in cache, its warp neighbour loads it
        pr = a.rows[i - 1];
        pc = a.cols[i - 1];
      }
    }
    finish_entry<false>(a, i, live, r, c, v, pr, pc);
  }
}

/// The entries in column bands: the grid is a.bands runs of a.band_blocks blocks, in band
/// order, and each run strides over the entries in stretches of kBlock * kEntryItems, taking
/// those of its band. A thread loads the columns of kEntryItems entries before it knows which are
/// its band's; the rows and values only of those. The entries are read and written with
/// evict-first loads and stores, so that the L2 holds the band's part of the vector.
template <class T, class I>
__global__ void __launch_bounds__(kBlock) banded_entries_kernel(EntriesArgs<T, I> a) {
  constexpr std::int64_t kStep = std::int64_t{kBlock} * kEntryItems;
  const int band = static_cast<int>(blockIdx.x / a.band_blocks);
  const std::int64_t stride = std::int64_t{a.band_blocks} * kStep;
  for (std::int64_t i0 = std::int64_t{blockIdx.x % a.band_blocks} * kStep; i0 < a.n; i0 += stride) {
    // The stretch's bands: when its first and last entries share a row, those between their
    // columns' bands (all of a canonical stretch's entries), else all. A block outside them
    // skips the stretch without reading its columns; the lowest of them also takes any entry
    // outside (input not in order), so that every entry is visited, checked and written once.
    const std::int64_t last = std::min(i0 + kStep, a.n) - 1;
    int lo = 0, hi = a.bands - 1;
    if (a.rows[i0] == a.rows[last]) {
      const int first_band = a.band_of(a.cols[i0]), last_band = a.band_of(a.cols[last]);
      lo = min(first_band, last_band);
      hi = max(first_band, last_band);
    }
    if (band < lo || band > hi) continue;
    I c[kEntryItems];
#pragma unroll
    for (int k = 0; k < kEntryItems; ++k) {
      const std::int64_t i = i0 + k * kBlock + threadIdx.x;
      c[k] = i < a.n ? __ldcs(a.cols + i) : I{0};
    }
#pragma unroll
    for (int k = 0; k < kEntryItems; ++k) {
      const std::int64_t i = i0 + k * kBlock + threadIdx.x;
      const int b = a.band_of(c[k]);
      const bool live = i < a.n && (b == band || (band == lo && (b < lo || b > hi)));
      // A warp's entries are mostly of one band (a row's columns are in order), so most warps
      // have none of this band's and skip the rest (the checks only vote on live lanes).
      if (!__any_sync(0xffffffffu, live)) continue;
      I r = 0, pr = 0, pc = 0;
      T v{};
      if (live) {
        r = __ldcs(a.rows + i);
        v = __ldcs(a.vals + i);
        if (a.check && i > 0) {
          pr = a.rows[i - 1];
          pc = a.cols[i - 1];
        }
      }
      finish_entry<true>(a, i, live, r, c[k], v, pr, pc);
    }
  }
}

/// The column bands of a pass whose factor reads (r, c) at r * row_stride + c * col_stride
/// elements of elem_bytes (data: whether it reads a dense operand at all): more than one
/// (kColumnBands) only for a row vector (row stride 0) too large for the L2 beside the entries.
/// Its footprint is a column's bytes, or one 32-byte sector a column where the column stride
/// spreads the elements that far apart.
struct ColumnBands {
  int bands = 1;
  int shift = 0;  ///< band b holds the columns c with c >> shift == b
};
inline ColumnBands column_bands(bool data, std::int64_t row_stride, std::int64_t col_stride,
                                std::int64_t ncols, std::int64_t elem_bytes) {
  const std::int64_t l2_bytes =
      data && row_stride == 0 && col_stride != 0 ? detail::current_device_props().l2_bytes : 0;
  const std::int64_t column_bytes = std::min<std::int64_t>(std::abs(col_stride) * elem_bytes, 32);
  if (l2_bytes == 0 || ncols * column_bytes <= l2_bytes * kColumnBands.min_l2_percent / 100)
    return {};
  const std::int64_t band_bytes = l2_bytes / kColumnBands.l2_divisor;
  const auto bands_of = [&](int shift) {
    return (ncols + (std::int64_t{1} << shift) - 1) >> shift;
  };
  int shift = 0;  // the widest power-of-two band within band_bytes
  while ((std::int64_t{2} << shift) * column_bytes <= band_bytes) ++shift;
  if (bands_of(shift) > kColumnBands.max_bands) ++shift;
  if (bands_of(shift) > 1 && bands_of(shift) <= kColumnBands.max_bands_widened)
    return {static_cast<int>(bands_of(shift)), shift};
  return {};
}

/// Launches entries_kernel over a.n > 0 entries, or banded_entries_kernel when the factor needs
/// column bands (column_bands).
template <class T, class I>
void launch_entries(const char* name, EntriesArgs<T, I> a, cudaStream_t stream) {
  const ColumnBands cb = column_bands(a.factor.data != nullptr, a.factor.row_stride,
                                      a.factor.col_stride, a.ncols, sizeof(T));
  a.bands = cb.bands;
  a.band_shift = cb.shift;
  if (a.bands == 1) {
    detail::launch(name, entries_kernel<T, I>, dim3(blocks_for(a.n)), dim3(kBlock), 0, stream, a);
    return;
  }
  a.band_blocks = static_cast<unsigned>(std::clamp<std::int64_t>(
      tiles_for(a.n, std::int64_t{kBlock} * kEntryItems), 1, kTilePolicy.max_grid_blocks / a.bands));
  detail::launch(name, banded_entries_kernel<T, I>, dim3(a.band_blocks * a.bands), dim3(kBlock), 0,
                 stream, a);
}

/// Calls f(I{}) with the index type I of t.
template <class F>
void with_index(IndexType t, F&& f) {
  if (t == IndexType::i64) f(std::int64_t{});
  else f(std::int32_t{});
}

}  // namespace ewise::sparse_detail
