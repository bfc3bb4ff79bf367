// sparse/coalesce.cu — coalesce on the GPU: scale_entries without a factor.
#include "internal.hpp"
#include "scale_entries.hpp"

namespace ewise::sparse_detail {

DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  return scale_entries(a, nullptr, options, stream);
}

DeviceCoo device_coalesce_sums(const CooView& a, bool validate, cudaStream_t stream) {
  SparseOptions options;
  options.validate_indices = validate;
  return scale_entries(a, nullptr, options, stream, true);
}

}  // namespace ewise::sparse_detail
