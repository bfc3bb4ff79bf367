// dense/builtin_f16.cu — the built-in operations' kernels for f16 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<__half>()>(BinaryOp op, const DensePlan& plan,
                                     cudaStream_t stream) {
  launch_builtin<__half>(op, plan, stream);
}
}  // namespace ewise::detail
