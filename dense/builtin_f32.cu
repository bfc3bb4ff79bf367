// dense/builtin_f32.cu — the built-in operations' kernels for f32 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<float>()>(BinaryOp op, const DensePlan& plan,
                                    cudaStream_t stream) {
  launch_builtin<float>(op, plan, stream);
}
}  // namespace ewise::detail
