// sparse/multiply.cuh — the pipelines of COO ⊙ COO, one per algorithm, each in its own file;
// multiply.cu runs the one selected. Each takes device views with checked arguments and
// nonzero nnz, runs the index checks (unless !validate) through `status`, and returns the
// canonical product with explicit zeros kept.
#pragma once

#include <cuda_runtime.h>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {

DeviceCoo sort_search_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                               cudaStream_t stream);  // sort_search.cu
DeviceCoo linear_search_pipeline(const CooView& a, const CooView& b, bool validate,
                                 Status& status, cudaStream_t stream);  // linear_search.cu
DeviceCoo merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                         cudaStream_t stream);  // merge.cu
DeviceCoo bitmap_merge_pipeline(const CooView& a, const CooView& b, bool validate,
                                Status& status, cudaStream_t stream);  // bitmap_merge.cu
DeviceCoo hash_merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                              cudaStream_t stream);  // hash_merge.cu

}  // namespace ewise::sparse_detail
