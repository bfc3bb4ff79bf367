// sparse/rows.cuh — what the row-sparse GPU operations share: rows.cu's accumulate and
// rows_union.cu's combine and coalesce. The index check, the sort's input (the row indices and
// storage positions), the layout of runs of equal rows, and the words read back.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ewise/coo.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "workspace.hpp"

namespace ewise::sparse_detail {

/// The index check of a row-sparse operand, per stored row k: a row index outside [0, nrows)
/// → words[0] = min(k); for a view marked canonical, a row index not above the one before →
/// words[1] = min(k). Null words: no check.
struct RowCheck {
  IndexArray rows;
  std::int64_t nrows = 0;
  bool canonical = false;
  unsigned long long* words = nullptr;

  __device__ void operator()(std::int64_t k) const {
    if (words == nullptr) return;
    const std::int64_t r = rows[k];
    if (!in_range(k, r)) return;
    if (canonical && k > 0 && rows[k - 1] >= r)
      atomicMin(words + 1, static_cast<unsigned long long>(k));
  }
  /// The range check alone of stored row k, whose row index r the caller read: false (and
  /// words[0] = min(k)) for r outside [0, nrows).
  __device__ bool in_range(std::int64_t k, std::int64_t r) const {
    if (words == nullptr || (r >= 0 && r < nrows)) return true;
    atomicMin(words, static_cast<unsigned long long>(k));
    return false;
  }
};

/// RowCheck of stored rows [0, n) (rows.cu's row_check_kernel, on `stream`).
void launch_row_check(const RowCheck& check, std::int64_t n, cudaStream_t stream);

/// The sort's input from `offset` on (combine's b follows a): keys[offset + k] = rows[k],
/// pos[offset + k] = offset + k for k < n, each row checked on the way (rows.cu's
/// row_keys_kernel, on `stream`).
void launch_row_keys(const RowCheck& check, std::int64_t n, std::int64_t offset, WordArray keys,
                     WordArray pos, cudaStream_t stream);

/// Runs of stored rows, each applied to one row of the table. Canonical (heads null): run s is
/// stored row s, at row rows[s]. Sorted: run s is positions [heads[s], heads[s + 1]) (the last
/// ends at n) of the sorted row indices `keys`, position j holding stored row pos[j].
struct RunLayout {
  IndexArray rows;
  WordArray keys, pos;
  const std::int64_t* heads = nullptr;
  std::int64_t runs = 0, n = 0;

  /// Run s's stored rows: positions [start(s), end(s)).
  __device__ std::int64_t start(std::int64_t s) const { return heads ? heads[s] : s; }
  __device__ std::int64_t end(std::int64_t s) const {
    return heads == nullptr ? s + 1 : s + 1 < runs ? heads[s + 1] : n;
  }
  /// The stored row at position j.
  __device__ std::uint64_t stored(std::int64_t j) const {
    return heads ? pos[j] : static_cast<std::uint64_t>(j);
  }
  /// Run s's row index, s's stored rows starting at `start`.
  __device__ std::int64_t row(std::int64_t s, std::int64_t start) const {
    return heads ? static_cast<std::int64_t>(keys[start]) : rows[s];
  }
};

/// Runs longer than this are long_rows_kernel's (sorted path): a thread of rows_kernel or
/// union_rows_kernel sums its run with four loads in flight, two dependent round trips each, so
/// its longest run sets the kernel's time.
inline constexpr std::int64_t kLongRun = 16;
/// long_rows_kernel's shape: kLongWarps warps, all but the first loading kLongRows rows each
/// per lane group a chunk; a warp's lanes are 4 rows of kSlab columns (32-byte segments of f32
/// rows), so that a hot run of a 64-wide table is 8 blocks streaming in parallel.
inline constexpr int kLongWarps = 8, kLongRows = 16, kSlab = 8;
inline constexpr int kLongChunk = (kLongWarps - 1) * kLongRows * (32 / kSlab);  ///< 448 rows
/// Runs of more than this many stored rows start first in long_rows_kernel.
inline constexpr std::int64_t kVeryLong = 4 * kLongChunk;

/// long_rows_kernel's runs and operands: the long runs (first, nfirst of them, the longest;
/// then second) of `runs`, whose positions below na hold a's stored rows and the others b's
/// (b null: a's alone), rows of `width` values; `slabs` blocks a run, kSlab columns each.
/// nruns: the runs in both lists. first_count, where not null, is first's length on the device
/// (nfirst its bound; second empty) and takes nruns' place.
template <class T>
struct LongRuns {
  RunLayout runs;
  const T* a = nullptr;
  const T* b = nullptr;
  std::int64_t na = 0;
  std::uint64_t width = 0;
  const std::int64_t* first = nullptr;
  const std::int64_t* second = nullptr;
  std::int64_t nfirst = 0, nruns = 0, slabs = 0;
  const std::int64_t* first_count = nullptr;
};

/// The sum, in storage order from the first value, of column c of the stored rows at sorted
/// positions [j0, j1) of l (row pos[j] - offset of vals), by the whole block alike: warps 1..
/// load a chunk of kLongChunk rows (lane: row lane / kSlab of 4, column lane % kSlab; kLongRows
/// rows each, all issued before any is stored, their positions loaded a chunk ahead) into
/// `tile`; warp 0's first kSlab lanes sum it while the loaders issue the next chunk. The sum is
/// theirs (0 for an empty range); the other threads' is unspecified.
template <class T, class C>
__device__ C block_run_sum(const RunLayout& l, std::int64_t j0, std::int64_t j1, const T* vals,
                           std::uint64_t offset, std::uint64_t width, std::uint64_t c,
                           bool active, C (&tile)[kLongChunk][kSlab]) {
  constexpr int kGroups = 32 / kSlab;  // rows a warp's load instruction reads
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int col = lane % kSlab, group = lane / kSlab;
  // Row u of this thread in the chunk: consecutive rows across a warp's groups.
  const auto chunk_row = [&](int u) { return ((warp - 1) * kLongRows + u) * kGroups + group; };
  std::uint64_t pos[kLongRows];
  const auto load_pos = [&](std::int64_t base) {
#pragma unroll
    for (int u = 0; u < kLongRows; ++u) {
      const std::int64_t j = base + chunk_row(u);
      pos[u] = j < j1 ? l.pos[j] - offset : 0;
    }
  };
  if (warp > 0) load_pos(j0);
  C sum{};
  for (std::int64_t base = j0; base < j1; base += kLongChunk) {
    C v[kLongRows];
    if (warp > 0) {
#pragma unroll
      for (int u = 0; u < kLongRows; ++u)
        v[u] = active && base + chunk_row(u) < j1
                   ? static_cast<C>(detail::to_compute(vals[pos[u] * width + c]))
                   : C{};
      load_pos(base + kLongChunk);
    }
    __syncthreads();  // warp 0 is done with the previous chunk
    if (warp > 0) {
#pragma unroll
      for (int u = 0; u < kLongRows; ++u) tile[chunk_row(u)][col] = v[u];
    }
    __syncthreads();
    if (warp == 0 && group == 0 && active) {
      const int m = static_cast<int>(j1 - base < kLongChunk ? j1 - base : kLongChunk);
      int r = 0;
      if (base == j0) sum = tile[r++][col];  // from the first value (a lone -0 stays -0)
      // Eight values read before their adds: one shared-memory latency per eight, not per add
      // (a run of 12,956 rows took 239 us with one read per add, its 29 chunks 8 us each).
      for (; r + 8 <= m; r += 8) {
        C x[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) x[u] = tile[r + u][col];
#pragma unroll
        for (int u = 0; u < 8; ++u) sum = ops::Add{}(sum, x[u]);
      }
      for (; r < m; ++r) sum = ops::Add{}(sum, tile[r][col]);
    }
  }
  return sum;
}

/// The long runs, the longest first (blocks start about in index order, and a run of thousands
/// of rows started in the last wave set the kernel's time): the k-th run, k < nruns (or
/// *first_count), is first[k] for k < nfirst, else second[k - nfirst]; block b sums runs
/// b / slabs, then every (gridDim.x / slabs)-th after it (one each where the grid covers them),
/// at the kSlab columns from (b % slabs) * kSlab: a's stored rows and b's apart
/// (block_run_sum, the split found by binary search: a run's positions ascend), then sink(s,
/// start, c, a's sum, whether a has rows, b's sum, whether b has rows) in the threads that hold
/// the sums (f64: 28 KB of shared memory).
template <class T, class Sink>
__global__ void __launch_bounds__(kLongWarps * 32) long_rows_kernel(LongRuns<T> r, Sink sink) {
  using C = detail::compute_t<T>;
  __shared__ C tile[kLongChunk][kSlab];
  const RunLayout& l = r.runs;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t runs = r.first_count != nullptr ? *r.first_count : r.nruns;
  const std::uint64_t c = (blockIdx.x % r.slabs) * kSlab + static_cast<std::uint64_t>(lane % kSlab);
  const bool active = c < r.width;
  // The whole block alike (block_run_sum's barriers order one run's tile after another's).
  for (std::int64_t k = blockIdx.x / r.slabs; k < runs; k += gridDim.x / r.slabs) {
    const std::int64_t s = k < r.nfirst ? r.first[k] : r.second[k - r.nfirst];
    const std::int64_t start = l.start(s), end = l.end(s);
    std::int64_t mid = end;  // the first of b's stored rows
    if (r.b) {
      std::int64_t lo = start;
      while (lo < mid) {
        const std::int64_t m = lo + (mid - lo) / 2;
        if (static_cast<std::int64_t>(l.pos[m]) < r.na) lo = m + 1;
        else mid = m;
      }
    }
    const C sa = block_run_sum(l, start, mid, r.a, 0, r.width, c, active, tile);
    const C sb = r.b ? block_run_sum(l, mid, end, r.b, static_cast<std::uint64_t>(r.na),
                                     r.width, c, active, tile)
                     : C{};
    if (threadIdx.x < kSlab && active) sink(s, start, c, sa, mid > start, sb, end > mid);
  }
}

/// The long runs of a sorted layout and their storage: the runs of more than kVeryLong stored
/// rows (first) and the other runs of more than kLongRun (second), each a list of run numbers.
/// Empty (no runs) for a canonical layout, whose runs are one stored row each.
class LongRunLists {
 public:
  LongRunLists() = default;
  /// Queues the selection among the runs starting at `heads` (n stored rows, the run count at
  /// *runs on the device): one CUB DevicePartition, the two lists' lengths to counts[0] and
  /// counts[1] on the device (rows.cu). The caller reads them back into `count`.
  LongRunLists(const std::int64_t* heads, const std::int64_t* runs, std::int64_t n,
               std::int64_t* counts, cudaStream_t stream);
  /// A list made on the device (rows.cu's small path): `list`, of *length runs on the device
  /// and at most `most`, as first; second empty. Nothing is read back: launch sizes the grid
  /// for two blocks an SM, each looping over the runs it is given, not for `most` runs.
  LongRunLists(const std::int64_t* list, const std::int64_t* length, std::int64_t most)
      : count{most, 0}, first_(list), length_(length) {}

  std::int64_t count[2] = {};  ///< the lengths of first and second, once read back (or bounds)

  /// long_rows_kernel over the lists with `sink`, r's runs and operands set (nothing for no
  /// runs or rows of width 0): a block per run and kSlab columns, the first list's first.
  template <class T, class Sink>
  void launch(LongRuns<T> r, const Sink& sink, cudaStream_t stream) const {
    const std::int64_t runs = count[0] + count[1];
    if (runs == 0 || r.width == 0) return;
    r.first = first_ != nullptr ? first_ : storage_.get<const std::int64_t>(0);
    r.second = first_ != nullptr ? nullptr : storage_.get<const std::int64_t>(1);
    r.nfirst = count[0];
    r.nruns = runs;
    r.first_count = length_;
    r.slabs = static_cast<std::int64_t>((r.width + kSlab - 1) / kSlab);
    // A grid over a bound of the runs' count: blocks past the count on the device would only
    // return (1,872 of them, 5 us: 2,000 stored rows of 128 columns, H200).
    const std::int64_t covered =
        length_ == nullptr
            ? runs
            : std::clamp<std::int64_t>(2 * detail::current_device_props().sm_count / r.slabs, 1,
                                       runs);
    detail::launch("sparse long_rows", long_rows_kernel<T, Sink>,
                   dim3(static_cast<unsigned>(covered * r.slabs)), dim3(kLongWarps * 32), 0,
                   stream, r, sink);
  }

 private:
  Workspace storage_;  ///< first, second, DevicePartition's temporary storage
  const std::int64_t* first_ = nullptr;   ///< a list made on the device, or null (storage_'s)
  const std::int64_t* length_ = nullptr;  ///< its length on the device
};

/// Columns a thread of rows_kernel takes: their sums share each run lookup and position load,
/// and a quarter as many threads run (the embedding case's short runs, H200: 41 us, against 71
/// with one column a thread, whose dependent loads were a round trip each).
inline constexpr int kRowCols = 4;

/// Throws for a failed RowCheck of operand `what` (its two words read back), naming the first
/// bad stored row (rows.cu).
void throw_row_check(const std::int64_t (&check)[2], const RowSparseView& a, const char* what,
                     cudaStream_t stream);

/// The value of type W at device_words, read back (synchronizes).
template <class W>
W read_back(const void* device_words, cudaStream_t stream) {
  W w{};
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&w, device_words, sizeof w, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return w;
}

}  // namespace ewise::sparse_detail
