// dense/builtin_bf16.cu — the built-in operations' kernels for bf16 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<__nv_bfloat16>()>(BinaryOp op, const DensePlan& plan,
                                            cudaStream_t stream) {
  launch_builtin<__nv_bfloat16>(op, plan, stream);
}
}  // namespace ewise::detail
