// sparse/coo_dense.cu — COO ⊙ dense on the GPU: multiply(a, dense) (scale_entries with the
// factor) and multiply_values (entries_kernel, values only, in a's storage order).
#include "entries_pass.cuh"
#include "ewise/detail/types.cuh"
#include "internal.hpp"
#include "scale_entries.hpp"

namespace ewise::sparse_detail {

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
    const DenseFactor<T> factor = factor_of<T>(dense);
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
