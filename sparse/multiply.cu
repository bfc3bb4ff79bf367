// sparse/multiply.cu — COO ⊙ COO on the GPU: the steps every algorithm shares (empty operands,
// dropping zeros) around the pipeline of the algorithm selected (multiply.cuh).
#include <utility>

#include "drop_zeros.cuh"
#include "internal.hpp"
#include "multiply.cuh"

namespace ewise::sparse_detail {

DeviceCoo device_multiply(const CooView& a, const CooView& b, CooAlgorithm algorithm,
                          const SparseOptions& options, cudaStream_t stream) {
  Status status(stream);
  const bool validate = options.validate_indices;
  DeviceCoo out;
  if (a.desc.nnz == 0 || b.desc.nnz == 0) {
    status.check(a, "a", validate);
    status.check(b, "b", validate);
    status.read();
    out = DeviceCoo(result_desc(a.desc, 0), stream);
  } else if (algorithm == CooAlgorithm::merge) {
    out = merge_pipeline(a, b, validate, status, stream);
  } else if (algorithm == CooAlgorithm::bitmap_merge) {
    out = bitmap_merge_pipeline(a, b, validate, status, stream);
  } else if (algorithm == CooAlgorithm::hash_merge) {
    out = hash_merge_pipeline(a, b, validate, status, stream);
  } else if (algorithm == CooAlgorithm::linear_search) {
    out = linear_search_pipeline(a, b, validate, status, stream);
  } else {
    out = sort_search_pipeline(a, b, validate, status, stream);
  }
  return options.drop_zeros ? drop_zero_entries(std::move(out), status, stream) : std::move(out);
}

}  // namespace ewise::sparse_detail
