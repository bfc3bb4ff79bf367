// sparse/scale_entries.hpp — the GPU pipeline shared by coalesce (coalesce.cu) and
// multiply(COO, dense) (coo_dense.cu), defined in scale_entries.cu. Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include "checks.hpp"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/sparse.hpp"

namespace ewise::sparse_detail {

/// a ⊙ dense (dense given) or the canonical form of a (dense null), on checked arguments.
/// Canonical a: one pass (it synchronizes only to check the indices, then drop_zeros compacts
/// the result). Otherwise a stable radix sort of (key, value) and one pass over the runs of
/// equal keys that sums, multiplies, drops zeros when asked and compacts (one
/// synchronization). With `sums` (a not canonical, no dense), the result's values are the
/// runs' sums in the compute type, unrounded (dtype f32 for f16 and bf16).
DeviceCoo scale_entries(const CooView& a, const DenseOperand* dense, const SparseOptions& options,
                        cudaStream_t stream, bool sums = false);

}  // namespace ewise::sparse_detail
