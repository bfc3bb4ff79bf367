// sparse/sorted_runs.cuh — the sort-and-reduce pass of a matrix not marked canonical
// (scale_entries.cu): sort_input_kernel makes the keys and a copy of the values for a stable
// radix sort; sorted_runs_kernel sums each run of equal keys in storage order, multiplies it by
// the factor and compacts the outputs in a single pass (SinglePassTiles' decoupled look-back).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compaction.cuh"
#include "entries_pass.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "run_sums.cuh"

namespace ewise::sparse_detail {

/// Whether an output entry with value v is kept (drop_zeros drops +0 and -0, keeps NaN).
template <class T>
__device__ __forceinline__ bool kept(bool drop_zeros, T v) {
  return !drop_zeros || detail::to_compute(v) != detail::compute_t<T>(0);
}

/// Keys (row * ncols + col) and a copy of the values of a matrix's entries, for the sort; runs
/// the range check; resets the single-pass tiles of sorted_runs (so the grid has at least
/// tiles.tiles threads).
template <class T, class I, class K>
__global__ void sort_input_kernel(const I* rows, const I* cols, const T* vals, std::int64_t n,
                                  std::int64_t nrows, std::int64_t ncols, unsigned long long* check,
                                  K* keys, T* vals_copy, SinglePassTiles tiles) {
  tiles.reset();
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = rows[i], c = cols[i];
    if (check && (r < 0 || r >= nrows || c < 0 || c >= ncols))
      atomicMin(check, static_cast<unsigned long long>(i));
    keys[i] = static_cast<K>(static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(ncols) +
                             static_cast<std::uint64_t>(c));
    vals_copy[i] = vals[i];
  }
}

/// A matrix's entries stably sorted by key: one output per run of equal keys (its values
/// summed in storage order), times the factor, compacted in a single pass (drop_zeros drops
/// as it goes); the count goes to *total. A key past the shape (unchecked bad input) reads no
/// factor. Values are written as V (see scaled).
template <class T, class K, class I, class V>
struct RunsArgs {
  const K* keys;
  const T* vals;
  std::int64_t n;
  std::uint64_t ncols, cells;
  DenseFactor<T> factor;
  bool drop_zeros;
  I* out_rows;
  I* out_cols;
  V* out_vals;
  SinglePassTiles tiles;
  std::int64_t* total;
};

/// Blocks an SM that sorted_runs_kernel's register count is held to: four (64 registers) with
/// 32-bit indices and 4-byte sums, else three (80). Left free, the compiler sizes the whole
/// kernel for finish_long_runs' path (up to 97 registers; ptxas, sm_90), which few tiles take.
template <class T, class I>
constexpr int sorted_runs_min_blocks() {
  return sizeof(I) == 4 && sizeof(detail::compute_t<T>) == 4 ? 4 : 3;
}

template <class T, class K, class I, class V>
__global__ void __launch_bounds__(kBlock, (sorted_runs_min_blocks<T, I>()))
    sorted_runs_kernel(RunsArgs<T, K, I, V> a) {
  using C = detail::compute_t<T>;
  const std::int64_t t = a.tiles.take();
  const unsigned lane = threadIdx.x & 31;
  const std::int64_t begin = t * kTile;
  K key[kItems];
  T v[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    key[k] = 0;
    v[k] = T{};
    if (i < a.n) {
      key[k] = a.keys[i];
      v[k] = a.vals[i];
    }
  }
  bool head[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    K prev = __shfl_up_sync(0xffffffffu, key[k], 1);
    if (lane == 0 && i > 0 && i < a.n) prev = a.keys[i - 1];
    head[k] = i < a.n && (i == 0 || prev != key[k]);
  }
  // Each run summed in storage order (the sort is stable): its first kShortRun + 1 entries by
  // its head's thread; the rest of a longer run by the warp after this loop, so that
  // finish_long_runs' code is here once rather than once an item.
  C acc[kItems];
  unsigned long_runs = 0;  // bit k: item k heads a run longer than kShortRun + 1
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    acc[k] = detail::to_compute(v[k]);
    if (head[k]) {
      std::int64_t j = begin + tile_offset(k) + 1;
      const std::int64_t stop = j + kShortRun;
      for (; j < a.n && j < stop && a.keys[j] == key[k]; ++j)
        acc[k] = ops::Add{}(acc[k], detail::to_compute(a.vals[j]));
      if (j == stop && j < a.n && a.keys[j] == key[k]) long_runs |= 1u << k;
    }
  }
  // Each round finishes one long run of every thread that has one left, its lowest item. The
  // keys are read again afterwards (from the caches) rather than held through the rounds: that
  // leaves finish_long_runs the registers to read its staged values ahead of their adds.
  if (__any_sync(0xffffffffu, long_runs != 0)) {
    do {
      const bool pending = long_runs != 0;
      const int k = pending ? __ffs(long_runs) - 1 : 0;
      const std::int64_t head_pos = begin + tile_offset(0) + 32 * k;
      C run_acc = acc[0];
#pragma unroll
      for (int i = 1; i < kItems; ++i)
        if (i == k) run_acc = acc[i];
      run_acc = finish_long_runs<sizeof(C) == 4 ? 2 : 1>(
          pending, pending ? a.keys[head_pos] : K{}, head_pos + 1 + kShortRun, a.n, run_acc,
          [keys = a.keys](std::int64_t p) { return __ldg(keys + p); },
          [vals = a.vals](std::int64_t p) { return detail::to_compute(__ldg(vals + p)); });
#pragma unroll
      for (int i = 0; i < kItems; ++i)
        if (pending && i == k) acc[i] = run_acc;
      long_runs &= long_runs - 1;
    } while (__any_sync(0xffffffffu, long_runs != 0));
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const std::int64_t i = begin + tile_offset(k);
      key[k] = i < a.n ? a.keys[i] : K{};
    }
  }
  std::uint64_t r[kItems], c[kItems];
  detail::compute_t<T> d[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    split_key(key[k], a.ncols, &r[k], &c[k]);
    d[k] = a.factor.at(r[k], c[k], head[k] && key[k] < a.cells);
  }
  V out[kItems];
  bool keep[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    out[k] = scaled<V>(a.factor, acc[k], d[k]);
    keep[k] = head[k] && kept(a.drop_zeros, out[k]);
  }
  unsigned rank[kItems];
  const unsigned count = tile_ranks(keep, rank);
  const std::int64_t first = a.tiles.exclusive(t, count);
  if (t == a.tiles.tiles - 1 && threadIdx.x == 0) *a.total = first + count;
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if (keep[k]) {
      const std::int64_t slot = first + rank[k];
      a.out_rows[slot] = static_cast<I>(r[k]);
      a.out_cols[slot] = static_cast<I>(c[k]);
      a.out_vals[slot] = out[k];
    }
}

}  // namespace ewise::sparse_detail
