// sparse/rows.cu — accumulate(op, dense, row-sparse a) on the GPU (sparse.hpp), and the
// pieces rows.cuh declares (combine and coalesce are rows_union.cu's). One kernel,
// rows_kernel, applies runs of stored rows to the table: thread i takes a run and kRowCols of
// its columns, sums the run's values at each in storage order in the compute type and applies
// op once to dense(row, c). Distinct runs have distinct rows, so no two threads write
// one element and no atomics are needed.
//   canonical a  each stored row is a run of its own, read in place (after a checking pass
//                when validate_indices: one synchronization);
//   other a      the row indices (nnz of them, not nnz * ncols coordinates) and their storage
//                positions are radix-sorted, stably, over the bits nrows needs (a pass that
//                makes the keys checks the indices), the runs of equal rows found by CUB's
//                DeviceSelect (compaction.cuh's RunHeads); one synchronization reads the check
//                and the number of runs before anything is written. Runs longer than
//                kLongRun (a frequent embedding id: thousands of rows) go to rows.cuh's
//                long_rows_kernel instead (picked by LongRunLists' DevicePartition, the
//                longest first), with TableSink applying the sums.
//   small a      (not canonical, at most kSmallRows stored rows, row indices of 32 bits):
//                one block sorts the row indices in shared memory and writes the same layout
//                (small_runs_kernel), runs and long runs counted on the device, so the kernels
//                after it are queued at once: no synchronization but the check's.
#include <cstdint>
#include <optional>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_partition.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>

#include "compaction.cuh"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "rows.cuh"
#include "sort.cuh"
#include "status.cuh"
#include "workspace.hpp"

namespace ewise::sparse_detail {
namespace {

__global__ void __launch_bounds__(kBlock) row_check_kernel(RowCheck check, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    check(k);
}

/// The sort's input from `offset` on (combine's b follows a): keys[offset + k] = rows[k],
/// pos[offset + k] = offset + k; each row checked on the way.
__global__ void __launch_bounds__(kBlock) row_keys_kernel(RowCheck check, std::int64_t n,
                                                          std::int64_t offset, WordArray keys,
                                                          WordArray pos) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    check(k);
    keys.set(offset + k, static_cast<std::uint64_t>(check.rows[k]));
    pos.set(offset + k, static_cast<std::uint64_t>(offset + k));
  }
}

/// The small path's shape: one block of kSmallThreads threads sorts up to kSmallItems row
/// indices each (kSmallRows in all; fewer items a thread for fewer rows: a block sort's passes
/// cost about what its items do, 2,000 rows in 19-22 us at 16 items, 13-16 at 8). A 2,000-row
/// gradient took 121 us a call on the sorted path (seven kernels and a synchronization between
/// them; cupyx.scatter_add 30 us), H200.
inline constexpr int kSmallThreads = 256, kSmallItems = 16;
inline constexpr std::int64_t kSmallRows = kSmallThreads * kSmallItems;

/// The sorted path's layout of n <= kSmallThreads * Items stored rows, made by one block:
/// keys[j] and pos[j] the row indices and storage positions sorted by row (stably: equal rows
/// in storage order) over `bits` bits; heads[s] the first position of run s, n for every s
/// from the run count to n (so that run s ends at heads[s + 1] and the runs past the count are
/// empty); longs the runs of more than kLongRun stored rows, their count at *long_count. Each
/// row is range-checked as it is read. Global memory is read and written across the threads
/// (coalesced), the sort's blocked items passing through shared memory.
template <int Items>
__global__ void __launch_bounds__(kSmallThreads)
    small_runs_kernel(RowCheck check, std::int64_t n, int bits, std::uint32_t* keys,
                      std::uint32_t* pos, std::int64_t* heads, std::int64_t* longs,
                      std::int64_t* long_count) {
  constexpr int kRows = kSmallThreads * Items;
  using Sort = cub::BlockRadixSort<std::uint32_t, kSmallThreads, Items, std::uint32_t>;
  using Scan = cub::BlockScan<int, kSmallThreads>;
  __shared__ union {
    typename Sort::TempStorage sort;
    struct {
      std::uint32_t keys[kRows];
      std::uint16_t pos[kRows], heads[kRows];
      typename Scan::TempStorage scan;
      int longs;
    } runs;
  } shared;
  const int count = static_cast<int>(n), first = static_cast<int>(threadIdx.x) * Items;
  // Past n, all ones: after every row of the same bits (the sort is stable).
  for (int j = static_cast<int>(threadIdx.x); j < kRows; j += kSmallThreads) {
    const std::int64_t r = j < count ? check.rows[j] : -1;
    if (j < count) check.in_range(j, r);
    shared.runs.keys[j] = j < count ? static_cast<std::uint32_t>(r) : ~0u;
  }
  __syncthreads();
  // Blocked: thread t holds positions t * Items + i, so storage order is the sort's
  // input order.
  std::uint32_t key[Items], at[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    key[i] = shared.runs.keys[first + i];
    at[i] = static_cast<std::uint32_t>(first + i);
  }
  __syncthreads();  // the keys' storage becomes the sort's
  Sort(shared.sort).Sort(key, at, 0, bits);
  __syncthreads();  // and the runs' again
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    shared.runs.keys[first + i] = key[i];
    shared.runs.pos[first + i] = static_cast<std::uint16_t>(at[i]);
  }
  if (threadIdx.x == 0) shared.runs.longs = 0;
  __syncthreads();
  const auto is_head = [&](int j) {
    return j < count && (j == 0 || shared.runs.keys[j] != shared.runs.keys[j - 1]);
  };
  int mine = 0;
#pragma unroll
  for (int i = 0; i < Items; ++i) mine += is_head(first + i);
  int run = 0, runs = 0;
  Scan(shared.runs.scan).ExclusiveSum(mine, run, runs);
#pragma unroll
  for (int i = 0; i < Items; ++i)
    if (is_head(first + i)) shared.runs.heads[run++] = static_cast<std::uint16_t>(first + i);
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.x); j <= count; j += kSmallThreads) {
    if (j < count) {
      keys[j] = shared.runs.keys[j];
      pos[j] = shared.runs.pos[j];
    }
    const int start = j < runs ? shared.runs.heads[j] : count;
    heads[j] = start;
    const int end = j + 1 < runs ? shared.runs.heads[j + 1] : count;
    if (j < runs && end - start > kLongRun) longs[atomicAdd(&shared.runs.longs, 1)] = j;
  }
  __syncthreads();
  if (threadIdx.x == 0) *long_count = shared.runs.longs;
}

template <class T, class Op>
struct RowRuns {
  RunLayout runs;
  std::uint64_t width = 0;   ///< ncols
  std::uint64_t groups = 0;  ///< groups of kRowCols columns: rows_kernel's threads a run
  detail::FastDivmod<std::uint64_t> by_groups;
  const T* vals = nullptr;
  Strided2<T> dense;
  Op op;
};

template <class T, class Op>
__global__ void __launch_bounds__(kBlock) rows_kernel(RowRuns<T, Op> a) {
  using C = detail::compute_t<T>;
  const RunLayout& l = a.runs;
  const std::uint64_t total = static_cast<std::uint64_t>(l.runs) * a.groups;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t s, g;
    a.by_groups.divmod(i, s, g);
    const std::int64_t start = l.start(static_cast<std::int64_t>(s));
    const std::int64_t end = l.end(static_cast<std::int64_t>(s));
    // long_rows_kernel's; or empty (the small path's runs past its count)
    if (end - start > kLongRun || end == start) continue;
    const std::int64_t row = l.row(static_cast<std::int64_t>(s), start);
    const std::uint64_t c0 = g * kRowCols;
    const int m = static_cast<int>(a.width - c0 < kRowCols ? a.width - c0 : kRowCols);
    // In storage order, from the first value (so a lone -0 stays -0); the row's kRowCols
    // columns are independent sums sharing each position's load.
    C sum[kRowCols] = {};
#pragma unroll 4
    for (std::int64_t j = start; j < end; ++j) {
      const std::uint64_t k = l.stored(j);
      const T* v = a.vals + k * a.width + c0;
#pragma unroll
      for (int q = 0; q < kRowCols; ++q) {
        if (q >= m) break;
        const C x = static_cast<C>(detail::to_compute(v[q]));
        sum[q] = j == start ? x : ops::Add{}(sum[q], x);
      }
    }
#pragma unroll
    for (int q = 0; q < kRowCols; ++q) {
      if (q >= m) break;
      T& x = a.dense.at(row, static_cast<std::int64_t>(c0) + q);
      x = detail::from_compute<T>(a.op(static_cast<C>(detail::to_compute(x)), sum[q]));
    }
  }
}

/// long_rows_kernel's sink for accumulate: dense(row, c) = op(dense(row, c), the run's sum).
template <class T, class Op>
struct TableSink {
  RunLayout runs;
  Strided2<T> dense;
  Op op;
  __device__ void operator()(std::int64_t s, std::int64_t start, std::uint64_t c,
                             detail::compute_t<T> sum, bool, detail::compute_t<T>, bool) const {
    using C = detail::compute_t<T>;
    T& x = dense.at(runs.row(s, start), static_cast<std::int64_t>(c));
    x = detail::from_compute<T>(op(static_cast<C>(detail::to_compute(x)), sum));
  }
};

/// Run s (of *count, read on the device) is longer than `above` stored rows and at most `upto`.
struct RunLongerThan {
  const std::int64_t* heads;
  const std::int64_t* count;
  std::int64_t n, above, upto;
  __device__ bool operator()(std::int64_t s) const {
    const std::int64_t runs = *count;
    if (s >= runs) return false;
    const std::int64_t length = (s + 1 < runs ? heads[s + 1] : n) - heads[s];
    return length > above && length <= upto;
  }
};

/// The check words, the run count and the long runs' count, read back at once (synchronizes);
/// throws for a failed check, naming the first bad stored row.
struct Words {
  std::int64_t check[2], runs, long_runs[2];
};
Words read_words(const unsigned long long* device_words, const RowSparseView& a,
                 cudaStream_t stream) {
  const Words w = read_back<Words>(device_words, stream);
  throw_row_check(w.check, a, "a", stream);
  return w;
}

}  // namespace

/// Throws for a failed RowCheck of operand `what` (its two words read back), naming the first
/// bad stored row.
void throw_row_check(const std::int64_t (&check)[2], const RowSparseView& a, const char* what,
                     cudaStream_t stream) {
  const auto row_at = [&](std::int64_t k) { return device_index(a.rows, a.desc.index, k, stream); };
  if (check[0] >= 0) throw_row_out_of_range(what, a.desc, check[0], row_at(check[0]));
  if (check[1] >= 0)
    throw_rows_not_increasing(what, check[1], row_at(check[1] - 1), row_at(check[1]));
}

LongRunLists::LongRunLists(const std::int64_t* heads, const std::int64_t* runs, std::int64_t n,
                           std::int64_t* counts, cudaStream_t stream) {
  const RunLongerThan very_long{heads, runs, n, kVeryLong, n};
  const RunLongerThan long_run{heads, runs, n, kLongRun, kVeryLong};
  const auto select = [&](void* temp, std::size_t& temp_bytes, std::int64_t* first,
                          std::int64_t* second) {
    EWISE_CUDA_CHECK(cub::DevicePartition::If(
        temp, temp_bytes, thrust::counting_iterator<std::int64_t>(0), first, second,
        thrust::make_discard_iterator(), counts, n, very_long, long_run, stream));
  };
  std::size_t temp_bytes = 0;
  select(nullptr, temp_bytes, nullptr, nullptr);
  const auto room = static_cast<std::size_t>(n) * sizeof(std::int64_t);
  storage_ = Workspace({room, room, temp_bytes}, stream);
  select(storage_.get(2), temp_bytes, storage_.get<std::int64_t>(0),
         storage_.get<std::int64_t>(1));
}

void launch_row_check(const RowCheck& check, std::int64_t n, cudaStream_t stream) {
  detail::launch("sparse row_check", row_check_kernel, dim3(blocks_for(n)), dim3(kBlock), 0, stream,
                 check, n);
}

void launch_row_keys(const RowCheck& check, std::int64_t n, std::int64_t offset, WordArray keys,
                     WordArray pos, cudaStream_t stream) {
  detail::launch("sparse row_keys", row_keys_kernel, dim3(blocks_for(n)), dim3(kBlock), 0, stream,
                 check, n, offset, keys, pos);
}

void device_accumulate_rows(const TensorView& dense, const RowSparseView& a, BinaryOp op,
                            const SparseOptions& options, cudaStream_t stream) {
  const std::int64_t n = a.desc.nnz, width = a.desc.ncols;
  if (n == 0) return;
  const bool validate = options.validate_indices;
  const IndexArray rows = index_array(a.rows, a.desc.index);
  // Five words (Words): the two checks' first bad stored rows (all ones: none), the run count,
  // the very long and the long runs' counts.
  DeviceBuffer words(sizeof(Words), stream);
  auto* const w = static_cast<unsigned long long*>(words.data());
  EWISE_CUDA_CHECK(cudaMemsetAsync(w, 0xFF, 2 * sizeof(std::int64_t), stream));
  RowCheck check{rows, a.desc.nrows, a.desc.canonical, validate ? w : nullptr};
  RunLayout layout{rows, {}, {}, nullptr, n, n};
  // The sorted path's storage, kept until the kernel is queued.
  std::optional<SortScratch> sorted;
  std::optional<RunHeads> heads;
  std::optional<Workspace> small;
  LongRunLists longs;
  if (!a.desc.canonical && n <= kSmallRows && a.desc.nrows <= (std::int64_t{1} << 32)) {
    // keys, pos, heads (n + 1), the long runs' list; its length is Words::long_runs[0]
    const auto words = static_cast<std::size_t>(n);
    small.emplace(std::vector<std::size_t>{4 * words, 4 * words, 8 * words + 8, 8 * words},
                  stream);
    CooDesc keys_desc = a.desc;
    keys_desc.ncols = 1;
    auto* const long_count = reinterpret_cast<std::int64_t*>(w) + 3;
    const auto run = [&](auto kernel) {
      detail::launch("sparse small_runs", kernel, dim3(1), dim3(kSmallThreads), 0, stream, check,
                     n, key_bits(keys_desc), small->get<std::uint32_t>(0),
                     small->get<std::uint32_t>(1), small->get<std::int64_t>(2),
                     small->get<std::int64_t>(3), long_count);
    };
    if (n <= kSmallRows / 4) run(small_runs_kernel<kSmallItems / 4>);
    else if (n <= kSmallRows / 2) run(small_runs_kernel<kSmallItems / 2>);
    else run(small_runs_kernel<kSmallItems>);
    if (validate) read_words(w, a, stream);
    layout.keys = WordArray{small->get<std::uint32_t>(0), false};
    layout.pos = WordArray{small->get<std::uint32_t>(1), false};
    layout.heads = small->get<std::int64_t>(2);
    longs = LongRunLists(small->get<std::int64_t>(3), long_count, n / (kLongRun + 1));
  } else if (a.desc.canonical) {
    if (validate) {
      launch_row_check(check, n, stream);
      read_words(w, a, stream);
    }
  } else {
    // The keys are the row indices: a matrix of one column's absolute indices.
    CooDesc keys_desc = a.desc;
    keys_desc.ncols = 1;
    const bool wide = wide_keys(keys_desc);
    const bool wide_pos = n > (std::int64_t{1} << 32);
    sorted.emplace(n, wide, wide_pos ? 8 : 4, key_bits(keys_desc), stream);
    launch_row_keys(check, n, 0, WordArray{sorted->keys_in(), wide},
                    WordArray{sorted->vals_in(), wide_pos}, stream);
    sorted->sort();
    layout.keys = WordArray{sorted->keys(), wide};
    layout.pos = WordArray{sorted->vals(), wide_pos};
    KeySeq keys;
    keys.keys = layout.keys;
    heads.emplace(keys, n, reinterpret_cast<std::int64_t*>(w) + 2, stream);
    layout.heads = heads->positions();
    auto* const counts = reinterpret_cast<std::int64_t*>(w) + 2;
    longs = LongRunLists(layout.heads, counts, n, counts + 1, stream);
    const Words read = read_words(w, a, stream);
    layout.runs = read.runs;
    longs.count[0] = read.long_runs[0];
    longs.count[1] = read.long_runs[1];
  }
  if (width == 0) return;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_union_op(op, [&](auto f) {
      using Op = decltype(f);
      const auto groups = static_cast<std::uint64_t>((width + kRowCols - 1) / kRowCols);
      const RowRuns<T, Op> args{layout,
                                static_cast<std::uint64_t>(width),
                                groups,
                                detail::FastDivmod<std::uint64_t>(groups),
                                static_cast<const T*>(a.vals),
                                {static_cast<T*>(dense.data), dense.desc.strides[0],
                                 dense.desc.strides[1]},
                                f};
      detail::launch("sparse rows", rows_kernel<T, Op>,
                     dim3(blocks_for(layout.runs * static_cast<std::int64_t>(groups))),
                     dim3(kBlock), 0, stream, args);
      LongRuns<T> r;
      r.runs = layout;
      r.a = args.vals;
      r.width = args.width;
      longs.launch(r, TableSink<T, Op>{layout, args.dense, f}, stream);
    });
  });
}

}  // namespace ewise::sparse_detail
