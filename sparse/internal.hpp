// sparse/internal.hpp — the GPU backend's entry points, called by api.cpp once the arguments
// are checked (each defined in the file named beside it), and what both backends share.
// Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "checks.hpp"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

/// A descriptor of the result of an operation on `like`, with `nnz` entries.
inline CooDesc result_desc(const CooDesc& like, std::int64_t nnz) {
  return {like.nrows, like.ncols, nnz, like.index, like.dtype, true};
}

// Device views; `algorithm` is already resolved (never automatic).
DeviceCoo device_multiply(const CooView& a, const CooView& b, CooAlgorithm algorithm,
                          const SparseOptions& options, cudaStream_t stream);        // multiply.cu
DeviceCoo device_multiply_dense(const CooView& a, const DenseOperand& dense,
                                const SparseOptions& options, cudaStream_t stream);  // coo_dense.cu
void device_multiply_values(const CooView& a, const DenseOperand& dense, const TensorView& out_vals,
                            const SparseOptions& options, cudaStream_t stream);      // coo_dense.cu
DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options,
                          cudaStream_t stream);                                      // coo_dense.cu
DeviceCoo device_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc,
                              cudaStream_t stream);                                  // convert.cu
DeviceTensor device_coo_to_dense(const CooView& a, const SparseOptions& options,
                                 cudaStream_t stream);                               // convert.cu
DeviceTensor device_csr_row_offsets(const CooView& a, const SparseOptions& options,
                                    cudaStream_t stream);                            // convert.cu
void device_check_indices(const CooView& m, const char* what, cudaStream_t stream);  // status.cu

}  // namespace ewise::sparse_detail
