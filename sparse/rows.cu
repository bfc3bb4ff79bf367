// sparse/rows.cu — accumulate(op, dense, row-sparse a) on the GPU (sparse.hpp). One kernel,
// rows_kernel, applies runs of stored rows to the table: thread i takes run s = i / ncols and
// column c = i % ncols, sums the run's values at c in storage order in the compute type and
// applies op once to dense(row, c). Distinct runs have distinct rows, so no two threads write
// one element and no atomics are needed.
//   canonical a  each stored row is a run of its own, read in place (after a checking pass
//                when validate_indices: one synchronization);
//   other a      the row indices (nnz of them, not nnz * ncols coordinates) and their storage
//                positions are radix-sorted, stably, over the bits nrows needs (a pass that
//                makes the keys checks the indices), the runs of equal rows found by CUB's
//                DeviceSelect (compaction.cuh's RunHeads); one synchronization reads the check
//                and the number of runs before anything is written.
#include <cstdint>
#include <cstring>
#include <optional>

#include "compaction.cuh"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

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
    if (r < 0 || r >= nrows) atomicMin(words, static_cast<unsigned long long>(k));
    else if (canonical && k > 0 && rows[k - 1] >= r)
      atomicMin(words + 1, static_cast<unsigned long long>(k));
  }
};

__global__ void __launch_bounds__(kBlock) row_check_kernel(RowCheck check, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    check(k);
}

/// The sort's input: keys[k] = rows[k], pos[k] = k; each row checked on the way.
__global__ void __launch_bounds__(kBlock)
    row_keys_kernel(RowCheck check, std::int64_t n, WordArray keys, WordArray pos) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    check(k);
    keys.set(k, static_cast<std::uint64_t>(check.rows[k]));
    pos.set(k, static_cast<std::uint64_t>(k));
  }
}

/// Runs of stored rows, each applied to one row of the table. Canonical (heads null): run s is
/// stored row s, at row rows[s]. Sorted: run s is positions [heads[s], heads[s + 1]) (the last
/// ends at n) of the sorted row indices `keys`, position j holding stored row pos[j].
struct RunLayout {
  IndexArray rows;
  WordArray keys, pos;
  const std::int64_t* heads = nullptr;
  std::int64_t runs = 0, n = 0;
};

template <class T, class Op>
struct RowRuns {
  RunLayout runs;
  std::uint64_t width = 0;  ///< ncols
  detail::FastDivmod<std::uint64_t> by_width;
  const T* vals = nullptr;
  Strided2<T> dense;
  Op op;
};

template <class T, class Op>
__global__ void __launch_bounds__(kBlock) rows_kernel(RowRuns<T, Op> a) {
  using C = detail::compute_t<T>;
  const RunLayout& l = a.runs;
  const std::uint64_t total = static_cast<std::uint64_t>(l.runs) * a.width;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t s, c;
    a.by_width.divmod(i, s, c);
    std::int64_t row, start, end;
    if (l.heads) {
      start = l.heads[s];
      end = static_cast<std::int64_t>(s) + 1 < l.runs ? l.heads[s + 1] : l.n;
      row = static_cast<std::int64_t>(l.keys[start]);
    } else {
      start = static_cast<std::int64_t>(s);
      end = start + 1;
      row = l.rows[start];
    }
    const auto value = [&](std::int64_t j) {
      const std::uint64_t k = l.heads ? l.pos[j] : static_cast<std::uint64_t>(j);
      return static_cast<C>(detail::to_compute(a.vals[k * a.width + c]));
    };
    // In storage order, from the first value (so a lone -0 stays -0); four loads issued
    // before their adds, so that a long run (a hot embedding row) is not one load at a time.
    C sum = value(start);
    std::int64_t j = start + 1;
    for (; j + 4 <= end; j += 4) {
      const C v0 = value(j), v1 = value(j + 1), v2 = value(j + 2), v3 = value(j + 3);
      sum = ops::Add{}(ops::Add{}(ops::Add{}(ops::Add{}(sum, v0), v1), v2), v3);
    }
    for (; j < end; ++j) sum = ops::Add{}(sum, value(j));
    T& x = a.dense.at(row, static_cast<std::int64_t>(c));
    x = detail::from_compute<T>(a.op(static_cast<C>(detail::to_compute(x)), sum));
  }
}

/// Bits a radix sort of row indices below nrows looks at (at least 1).
int row_bits(std::int64_t nrows) {
  int bits = 1;
  while (bits < 63 && (std::int64_t{1} << bits) < nrows) ++bits;
  return bits;
}

/// The check words and the run count, read back at once (synchronizes); throws for a failed
/// check, naming the first bad stored row.
std::int64_t read_words(const unsigned long long* device_words, const RowSparseView& a,
                        cudaStream_t stream) {
  std::int64_t w[3] = {};
  EWISE_CUDA_CHECK(cudaMemcpyAsync(w, device_words, sizeof w, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto row_at = [&](std::int64_t k) {
    std::int64_t v = 0;
    const std::size_t sz = index_size(a.desc.index);
    EWISE_CUDA_CHECK(cudaMemcpyAsync(&v, static_cast<const std::byte*>(a.rows) + k * std::int64_t(sz),
                                     sz, cudaMemcpyDeviceToHost, stream));
    EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (sz == 4) {
      std::int32_t v32;
      std::memcpy(&v32, &v, 4);
      return std::int64_t{v32};
    }
    return v;
  };
  if (w[0] >= 0) throw_row_out_of_range("a", a.desc, w[0], row_at(w[0]));
  if (w[1] >= 0) throw_rows_not_increasing("a", w[1], row_at(w[1] - 1), row_at(w[1]));
  return w[2];
}

}  // namespace

void device_accumulate_rows(const TensorView& dense, const RowSparseView& a, BinaryOp op,
                            const SparseOptions& options, cudaStream_t stream) {
  const std::int64_t n = a.desc.nnz, width = a.desc.ncols;
  if (n == 0) return;
  const bool validate = options.validate_indices;
  const IndexArray rows = index_array(a.rows, a.desc.index);
  // Three words: the two checks' first bad stored rows (all ones: none), the run count.
  DeviceBuffer words(3 * sizeof(std::int64_t), stream);
  auto* const w = static_cast<unsigned long long*>(words.data());
  EWISE_CUDA_CHECK(cudaMemsetAsync(w, 0xFF, 2 * sizeof(std::int64_t), stream));
  RowCheck check{rows, a.desc.nrows, a.desc.canonical, validate ? w : nullptr};
  RunLayout layout{rows, {}, {}, nullptr, n, n};
  // The sorted path's storage, kept until the kernel is queued.
  std::optional<SortScratch> sorted;
  std::optional<RunHeads> heads;
  if (a.desc.canonical) {
    if (validate) {
      detail::launch("sparse row_check", row_check_kernel, dim3(blocks_for(n)), dim3(kBlock), 0,
                     stream, check, n);
      read_words(w, a, stream);
    }
  } else {
    const bool wide = a.desc.nrows > (std::int64_t{1} << 32);
    const bool wide_pos = n > (std::int64_t{1} << 32);
    sorted.emplace(n, wide, wide_pos ? 8 : 4, row_bits(a.desc.nrows), stream);
    detail::launch("sparse row_keys", row_keys_kernel, dim3(blocks_for(n)), dim3(kBlock), 0,
                   stream, check, n, WordArray{sorted->keys_in(), wide},
                   WordArray{sorted->vals_in(), wide_pos});
    sorted->sort();
    layout.keys = WordArray{sorted->keys(), wide};
    layout.pos = WordArray{sorted->vals(), wide_pos};
    KeySeq keys;
    keys.keys = layout.keys;
    heads.emplace(keys, n, reinterpret_cast<std::int64_t*>(w) + 2, stream);
    layout.heads = heads->positions();
    layout.runs = read_words(w, a, stream);
  }
  if (width == 0) return;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_union_op(op, [&](auto f) {
      using Op = decltype(f);
      const RowRuns<T, Op> args{layout,
                                static_cast<std::uint64_t>(width),
                                detail::FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(width)),
                                static_cast<const T*>(a.vals),
                                {static_cast<T*>(dense.data), dense.desc.strides[0],
                                 dense.desc.strides[1]},
                                f};
      detail::launch("sparse rows", rows_kernel<T, Op>, dim3(blocks_for(layout.runs * width)),
                     dim3(kBlock), 0, stream, args);
    });
  });
}

}  // namespace ewise::sparse_detail
