// sparse/convert.cu — the conversions on the GPU: coo_to_dense, dense_to_coo and CSR row
// offsets (of coo_to_csr_row_offsets and of compressed results).
#include <algorithm>
#include <optional>

#include "compaction.cuh"
#include "finalize.cuh"
#include "internal.hpp"
#include "merge_path.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// Entries of a rank-2 tensor that compare unequal to zero, in row-major order.
template <class T>
struct DenseNonzeros {
  const T* data;
  std::int64_t row_stride, col_stride, ncols;
  IndexArray rows, cols;
  T* vals;
  __device__ T at(std::int64_t i, std::int64_t* r, std::int64_t* c) const {
    *r = i / ncols;
    *c = i - *r * ncols;
    return data[*r * row_stride + *c * col_stride];
  }
  __device__ bool flag(std::int64_t i) const {
    std::int64_t r, c;
    return detail::to_compute(at(i, &r, &c)) != detail::compute_t<T>(0);
  }
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    std::int64_t r, c;
    vals[slot] = detail::from_compute<T>(detail::to_compute(at(i, &r, &c)));  // NaN canonical
    rows.set(slot, r);
    cols.set(slot, c);
  }
};

/// offsets[r] = number of entries with row < r, for r in [0, nrows], from the sorted row
/// indices: a thread per row, by binary search over all of them (for rows of many entries;
/// device_row_offsets chooses).
__global__ void csr_offsets_kernel(IndexArray rows, std::int64_t nnz, std::int64_t nrows,
                                   IndexArray offsets) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r <= nrows;
       r += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t lo = 0, hi = nnz;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (rows[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    offsets.set(r, lo);
  }
}

/// Rows of sparse_row_offsets_kernel a lane takes (a warp 32 times as many).
constexpr int kOffsetRowsPerLane = 8;

/// The offsets of csr_offsets_kernel for rows of few entries. A warp takes
/// 32 * kOffsetRowsPerLane consecutive rows: it finds where their entries lie by two searches of
/// its own (warp_partition_point, a round of 32 loads a step), then each lane finds the offsets
/// of its rows (every 32nd) in that window by binary lifting, its rows' steps in lockstep so
/// that their loads overlap. Far fewer loads than a bisection per row where windows hold few
/// entries, but longer chains of dependent loads over fewer threads where they hold many.
__global__ void sparse_row_offsets_kernel(IndexArray rows, std::int64_t nnz, std::int64_t nrows,
                                          IndexArray offsets) {
  constexpr std::int64_t kRows = 32 * kOffsetRowsPerLane;
  const std::int64_t lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  for (std::int64_t r0 = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32 * kRows;
       r0 <= nrows; r0 += warps * kRows) {  // uniform across the warp
    const std::int64_t last = std::min(r0 + kRows, nrows + 1) - 1;  // rows [r0, last]
    const std::int64_t lo =
        warp_partition_point(0, nnz, [&](std::int64_t k) { return rows[k] < r0; });
    const std::int64_t hi =
        warp_partition_point(lo, nnz, [&](std::int64_t k) { return rows[k] < last; });
    std::int64_t below[kOffsetRowsPerLane];  // entries in [lo, hi) with row < the lane's row j
#pragma unroll
    for (int j = 0; j < kOffsetRowsPerLane; ++j) below[j] = lo;
    std::int64_t step = 1;
    while (step <= (hi - lo) / 2) step *= 2;
    for (; step > 0 && lo < hi; step /= 2) {
#pragma unroll
      for (int j = 0; j < kOffsetRowsPerLane; ++j) {
        const std::int64_t r = r0 + j * 32 + lane;
        if (below[j] + step <= hi && rows[below[j] + step - 1] < r) below[j] += step;
      }
    }
#pragma unroll
    for (int j = 0; j < kOffsetRowsPerLane; ++j)
      if (r0 + j * 32 + lane <= last) offsets.set(r0 + j * 32 + lane, below[j]);
  }
}

}  // namespace

DeviceTensor device_coo_to_dense(const CooView& a, const SparseOptions& options,
                                 cudaStream_t stream) {
  Status status(stream);
  // Unsorted entries: sorted (the sort's first pass checks them), then one output per run of
  // equal keys. Canonical ones (checked by a pass of their own): one output per entry.
  const bool sorts = !a.desc.canonical && a.desc.nnz > 0;
  if (!sorts) status.check(a, "a", options.validate_indices);
  const SortedSeq s =
      sort_entries(a, sorts ? status.fused(a, "a", options.validate_indices) : EntryCheck{}, stream);
  std::optional<RunHeads> heads;
  if (!s.seq.unique) heads.emplace(s.seq.keys, s.seq.n, status.total_slot(0), stream);
  status.read();
  const std::int64_t nout = heads ? status.total(0) : a.desc.nnz;
  DeviceTensor out(a.desc.dtype, Dims{a.desc.nrows, a.desc.ncols}, stream);
  if (out.bytes() > 0) EWISE_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), stream));
  finalize(FinalizeArgs::sums(s.seq, heads ? heads->positions() : nullptr, nout).to_dense(out.data()),
           a.desc.dtype, stream);
  return out;
}

DeviceCoo device_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc,
                              cudaStream_t stream) {
  const std::int64_t n = desc.nrows * desc.ncols;
  if (n == 0) return DeviceCoo(desc, stream);
  return detail::dispatch_dtype(desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DenseNonzeros<T> op{static_cast<const T*>(dense.data), dense.desc.strides[0],
                        dense.desc.strides[1], desc.ncols, {}, {}, nullptr};
    Status status(stream);
    Compaction c(n, stream);
    c.count(op);
    DeviceCoo out(result_desc(desc, c.scan_total(status, 0)), stream);
    op.rows = index_array(out.rows(), desc.index);
    op.cols = index_array(out.cols(), desc.index);
    op.vals = static_cast<T*>(out.vals());
    c.write(op);
    return out;
  });
}

DeviceTensor device_csr_row_offsets(const CooView& a, const SparseOptions& options,
                                    cudaStream_t stream) {
  Status status(stream);
  status.check(a, "a", options.validate_indices);
  status.read();
  const DType t = csr_offsets_dtype(a.desc);
  DeviceTensor out(t, Dims{a.desc.nrows + 1}, stream);
  device_row_offsets(a, out.data(), t == DType::i64 ? IndexType::i64 : IndexType::i32, stream);
  return out;
}

void device_row_offsets(const CooView& a, void* offsets, IndexType t, cudaStream_t stream) {
  const std::int64_t nrows = a.desc.nrows, nnz = a.desc.nnz;
  const IndexArray rows = index_array(a.rows, a.desc.index), out = index_array(offsets, t);
  // Windows for rows of fewer than 8 entries on average (H200, CSR ⊙/⊕ CSR of about 10M
  // entries a side: a power-law graph's product, 2.3 entries a row, 0.503 -> 0.426 ms a call;
  // results of 30 to 23,000 entries a row lost 18-68 µs).
  if (nnz / 8 < nrows + 1)
    detail::launch("sparse csr_offsets", sparse_row_offsets_kernel,
                   dim3(blocks_for((nrows + kOffsetRowsPerLane) / kOffsetRowsPerLane)),
                   dim3(kBlock), 0, stream, rows, nnz, nrows, out);
  else
    detail::launch("sparse csr_offsets", csr_offsets_kernel, dim3(blocks_for(nrows + 1)),
                   dim3(kBlock), 0, stream, rows, nnz, nrows, out);
}

}  // namespace ewise::sparse_detail
