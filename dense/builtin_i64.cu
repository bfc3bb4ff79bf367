// dense/builtin_i64.cu — the built-in operations' kernels for i64 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<std::int64_t>()>(BinaryOp op, const DensePlan& plan,
                                           cudaStream_t stream) {
  launch_builtin<std::int64_t>(op, plan, stream);
}
}  // namespace ewise::detail
