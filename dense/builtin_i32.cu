// dense/builtin_i32.cu — the built-in operations' kernels for i32 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<std::int32_t>()>(BinaryOp op, const DensePlan& plan,
                                           cudaStream_t stream) {
  launch_builtin<std::int32_t>(op, plan, stream);
}
}  // namespace ewise::detail
