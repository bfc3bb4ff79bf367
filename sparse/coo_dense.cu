// sparse/coo_dense.cu — COO ⊙ dense, multiply_values and coalesce on the GPU, which share one
// pipeline: one pass over the entries in storage order (a canonical matrix; multiply_values on
// any matrix), or a radix sort and one pass over its runs of equal keys.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "compaction.cuh"
#include "ewise/detail/device_props.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// The factor of an entry: dense's element at (row, col), or none (coalesce) when data is null.
template <class T>
struct DenseFactor {
  const T* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
};

/// The value an output entry gets from its (summed) value `acc` and the factor's element `d`,
/// stored as V: T, or its compute type (the unrounded sums of coalesce_sums).
template <class V, class T>
__device__ __forceinline__ V scaled(const DenseFactor<T>& f, detail::compute_t<T> acc, T d) {
  return detail::from_compute<V>(f.data ? ops::Mul{}(acc, detail::to_compute(d)) : acc);
}

/// Whether an output entry with value v is kept (drop_zeros drops +0 and -0, keeps NaN).
template <class T>
__device__ __forceinline__ bool kept(bool drop_zeros, T v) {
  return !drop_zeros || detail::to_compute(v) != detail::compute_t<T>(0);
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
  const T d = a.factor.data && in ? a.factor.data[r * a.factor.row_stride + c * a.factor.col_stride] : T{};
  const T out = scaled<T>(a.factor, detail::to_compute(v), d);
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

/// Launches entries_kernel over a.n > 0 entries, or banded_entries_kernel (kColumnBands) when
/// the factor is a row vector (row stride 0) too large for the L2: its footprint is a column's
/// bytes, or one 32-byte sector a column where the column stride spreads the elements that far
/// apart.
template <class T, class I>
void launch_entries(const char* name, EntriesArgs<T, I> a, cudaStream_t stream) {
  const std::int64_t l2_bytes = a.factor.data && a.factor.row_stride == 0 && a.factor.col_stride != 0
                                   ? detail::current_device_props().l2_bytes
                                   : 0;
  const std::int64_t column_bytes =
      std::min<std::int64_t>(std::abs(a.factor.col_stride) * std::int64_t{sizeof(T)}, 32);
  if (l2_bytes > 0 && a.ncols * column_bytes > l2_bytes * kColumnBands.min_l2_percent / 100) {
    const std::int64_t band_bytes = l2_bytes / kColumnBands.l2_divisor;
    const auto bands_of = [&](int shift) { return (a.ncols + (std::int64_t{1} << shift) - 1) >> shift; };
    int shift = 0;  // the widest power-of-two band within band_bytes
    while ((std::int64_t{2} << shift) * column_bytes <= band_bytes) ++shift;
    if (bands_of(shift) > kColumnBands.max_bands) ++shift;
    if (bands_of(shift) > 1 && bands_of(shift) <= kColumnBands.max_bands_widened) {
      a.bands = static_cast<int>(bands_of(shift));
      a.band_shift = shift;
    }
  }
  if (a.bands == 1) {
    detail::launch(name, entries_kernel<T, I>, dim3(blocks_for(a.n)), dim3(kBlock), 0, stream, a);
    return;
  }
  a.band_blocks = static_cast<unsigned>(std::clamp<std::int64_t>(
      tiles_for(a.n, std::int64_t{kBlock} * kEntryItems), 1, kTilePolicy.max_grid_blocks / a.bands));
  detail::launch(name, banded_entries_kernel<T, I>, dim3(a.band_blocks * a.bands), dim3(kBlock), 0,
                 stream, a);
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
/// 32-bit indices and 4-byte sums, else three (80), the counts the compiler picked for most
/// instances before finish_long_runs staged its values; left free, it takes up to 97 registers
/// for that path, which few tiles take (ptxas, sm_90).
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
  T d[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    split_key(key[k], a.ncols, &r[k], &c[k]);
    d[k] = T{};
    if (a.factor.data && head[k] && key[k] < a.cells)
      d[k] = a.factor.data[static_cast<std::int64_t>(r[k]) * a.factor.row_stride +
                           static_cast<std::int64_t>(c[k]) * a.factor.col_stride];
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

template <class F>
void with_index(IndexType t, F&& f) {
  if (t == IndexType::i64) f(std::int64_t{});
  else f(std::int32_t{});
}

/// a ⊙ dense (dense given) or the canonical form of a (dense null). Canonical a: one pass
/// (it synchronizes only to check the indices, then drop_zeros compacts the result). Otherwise
/// a stable radix sort of (key, value) and one pass over the runs of equal keys that sums,
/// multiplies, drops zeros when asked and compacts (one synchronization). With `sums` (a not
/// canonical, no dense), the result's values are the runs' sums in the compute type, unrounded
/// (dtype f32 for f16 and bf16).
DeviceCoo scale_entries(const CooView& a, const DenseOperand* dense, const SparseOptions& options,
                        cudaStream_t stream, bool sums = false) {
  const CooDesc& desc = a.desc;
  const std::int64_t n = desc.nnz;
  CooDesc out_desc = result_desc(desc, n);
  if (sums && (desc.dtype == DType::f16 || desc.dtype == DType::bf16)) out_desc.dtype = DType::f32;
  if (n == 0) return DeviceCoo(CooDesc{out_desc.nrows, out_desc.ncols, 0, out_desc.index,
                                       out_desc.dtype, true}, stream);
  constexpr int kTotal = 0;  // status total slot
  const bool sorts = !desc.canonical;
  // Trusted canonical input without drop_zeros needs no status: the call does not synchronize.
  std::optional<Status> status;
  if (sorts || options.validate_indices || options.drop_zeros) status.emplace(stream);
  unsigned long long* check = status ? status->fused(a, "a", options.validate_indices).words : nullptr;
  // Room for every entry; the sorting path shrinks the count to the runs it keeps.
  DeviceCoo out(out_desc, stream);
  detail::dispatch_dtype(desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DenseFactor<T> factor;
    if (dense) factor = {static_cast<const T*>(dense->data), dense->row_stride, dense->col_stride};
    with_index(desc.index, [&](auto itag) {
      using I = decltype(itag);
      const auto* rows = static_cast<const I*>(a.rows);
      const auto* cols = static_cast<const I*>(a.cols);
      const auto* vals = static_cast<const T*>(a.vals);
      auto* out_rows = static_cast<I*>(out.rows());
      auto* out_cols = static_cast<I*>(out.cols());
      if (!sorts) {
        auto* out_vals = static_cast<T*>(out.vals());
        launch_entries<T, I>("sparse canonical_entries",
                             {rows, cols, vals, n, desc.nrows, desc.ncols, check, factor,
                              out_rows, out_cols, out_vals},
                             stream);
        return;
      }
      const std::int64_t tiles = tiles_for(n);
      const bool wk = wide_keys(desc);
      SortScratch sort(n, wk, sizeof(T), key_bits(desc), stream, SinglePassTiles::bytes(tiles));
      const SinglePassTiles single_pass(sort.extra(), tiles);
      // sort_input resets the tiles: at least one thread per tile.
      const unsigned grid = std::max(blocks_for(n), static_cast<unsigned>((tiles + kBlock - 1) / kBlock));
      const auto run = [&](auto ktag, auto vtag) {
        using K = decltype(ktag);
        using V = decltype(vtag);
        detail::launch("sparse sort_input", sort_input_kernel<T, I, K>, dim3(grid), dim3(kBlock), 0,
                       stream, rows, cols, vals, n, desc.nrows, desc.ncols, check,
                       static_cast<K*>(sort.keys_in()), static_cast<T*>(sort.vals_in()), single_pass);
        sort.sort();
        const RunsArgs<T, K, I, V> args{static_cast<const K*>(sort.keys()),
                                        static_cast<const T*>(sort.vals()), n,
                                        static_cast<std::uint64_t>(desc.ncols),
                                        static_cast<std::uint64_t>(desc.nrows * desc.ncols),
                                        factor, options.drop_zeros, out_rows, out_cols,
                                        static_cast<V*>(out.vals()), single_pass,
                                        status->total_slot(kTotal)};
        detail::launch("sparse sorted_runs", sorted_runs_kernel<T, K, I, V>,
                       dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, args);
      };
      const auto with_value_type = [&](auto ktag) {
        if (sums) run(ktag, detail::compute_t<T>{});
        else run(ktag, T{});
      };
      if (wk) with_value_type(std::uint64_t{});
      else with_value_type(std::uint32_t{});
    });
  });
  // Canonical with drop_zeros: the compaction reads the status (and throws for bad indices).
  if (!sorts && options.drop_zeros) return drop_zero_entries(std::move(out), *status, stream);
  if (status) status->read();  // throws for bad indices
  if (sorts) out.set_nnz(status->total(kTotal));
  return out;
}

}  // namespace

DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  return scale_entries(a, nullptr, options, stream);
}

DeviceCoo device_coalesce_sums(const CooView& a, bool validate, cudaStream_t stream) {
  SparseOptions options;
  options.validate_indices = validate;
  return scale_entries(a, nullptr, options, stream, true);
}

DeviceCoo device_multiply_dense(const CooView& a, const DenseOperand& dense,
                                const SparseOptions& options, cudaStream_t stream) {
  return scale_entries(a, &dense, options, stream);
}

void device_multiply_values(const CooView& a, const DenseOperand& dense, const TensorView& out_vals,
                            const SparseOptions& options, cudaStream_t stream) {
  const CooDesc& desc = a.desc;
  if (desc.nnz == 0) return;
  // The check has a pass of its own (and synchronizes) so that nothing is written for bad input.
  if (options.validate_indices) device_check_indices(a, "a", stream);
  detail::dispatch_dtype(desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const DenseFactor<T> factor{static_cast<const T*>(dense.data), dense.row_stride,
                                dense.col_stride};
    with_index(desc.index, [&](auto itag) {
      using I = decltype(itag);
      launch_entries<T, I>("sparse multiply_values",
                           {static_cast<const I*>(a.rows), static_cast<const I*>(a.cols),
                            static_cast<const T*>(a.vals), desc.nnz, desc.nrows, desc.ncols,
                            nullptr, factor, nullptr, nullptr, static_cast<T*>(out_vals.data)},
                           stream);
    });
  });
}

}  // namespace ewise::sparse_detail
