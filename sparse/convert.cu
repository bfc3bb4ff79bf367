// sparse/convert.cu — coalesce, COO ⊙ dense and the conversions on the GPU.
#include <utility>

#include "kernels.cuh"

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
    vals[slot] = at(i, &r, &c);
    rows.set(slot, r);
    cols.set(slot, c);
  }
};

/// offsets[r] = number of entries with row < r, for r in [0, nrows], by binary search over the
/// (sorted) row indices.
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

DeviceCoo finish(DeviceCoo out, const SparseOptions& options, Status& status, cudaStream_t stream) {
  return options.drop_zeros ? drop_zero_entries(std::move(out), status, stream) : std::move(out);
}

}  // namespace

DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  Status status(stream);
  const Runs runs = find_runs(a, options.validate_indices, status, stream);
  DeviceCoo out(result_desc(a.desc, runs.nout), stream);
  if (runs.nout > 0 && runs.seq.unique) {  // already canonical: copy
    const auto ib = static_cast<std::size_t>(a.desc.nnz) * index_size(a.desc.index);
    EWISE_CUDA_CHECK(cudaMemcpyAsync(out.rows(), a.rows, ib, cudaMemcpyDeviceToDevice, stream));
    EWISE_CUDA_CHECK(cudaMemcpyAsync(out.cols(), a.cols, ib, cudaMemcpyDeviceToDevice, stream));
    EWISE_CUDA_CHECK(cudaMemcpyAsync(out.vals(), a.vals,
                                     static_cast<std::size_t>(a.desc.nnz) * dtype_size(a.desc.dtype),
                                     cudaMemcpyDeviceToDevice, stream));
  } else {
    FinalizeArgs f = finalize_args(a, runs);
    set_output(f, out);
    finalize(f, a.desc.dtype, stream);
  }
  return finish(std::move(out), options, status, stream);
}

DeviceCoo device_multiply_dense(const CooView& a, const DenseOperand& dense,
                                const SparseOptions& options, cudaStream_t stream) {
  Status status(stream);
  const Runs runs = find_runs(a, options.validate_indices, status, stream);
  DeviceCoo out(result_desc(a.desc, runs.nout), stream);
  FinalizeArgs f = finalize_args(a, runs);
  f.factor = Factor::dense;
  f.dense = dense.data;
  f.dense_row_stride = dense.row_stride;
  f.dense_col_stride = dense.col_stride;
  set_output(f, out);
  finalize(f, a.desc.dtype, stream);
  return finish(std::move(out), options, status, stream);
}

DeviceTensor device_coo_to_dense(const CooView& a, const SparseOptions& options,
                                 cudaStream_t stream) {
  Status status(stream);
  const Runs runs = find_runs(a, options.validate_indices, status, stream);
  DeviceTensor out(a.desc.dtype, Dims{a.desc.nrows, a.desc.ncols}, stream);
  if (out.bytes() > 0) EWISE_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), stream));
  FinalizeArgs f = finalize_args(a, runs);
  f.out_dense = out.data();
  finalize(f, a.desc.dtype, stream);
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
  detail::launch("sparse csr_offsets", csr_offsets_kernel, dim3(blocks_for(a.desc.nrows + 1)),
                 dim3(kBlock), 0, stream, index_array(a.rows, a.desc.index), a.desc.nnz,
                 a.desc.nrows, IndexArray{out.data(), t == DType::i64});
  return out;
}

void device_check_indices(const CooView& m, const char* what, cudaStream_t stream) {
  Status status(stream);
  status.check(m, what, true);
  status.read();
}

}  // namespace ewise::sparse_detail
