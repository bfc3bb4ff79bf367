// sparse/drop_zeros.cuh — SparseOptions::drop_zeros for the results of the COO pipelines that
// keep zeros as they go (drop_zeros.cu).
#pragma once

#include <cuda_runtime.h>

#include "ewise/buffer.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {

/// `in` without its entries whose value compares equal to zero.
DeviceCoo drop_zero_entries(DeviceCoo in, Status& status, cudaStream_t stream);

}  // namespace ewise::sparse_detail
