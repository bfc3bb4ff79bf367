// dense/builtin_f64.cu — the built-in operations' kernels for f64 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template <>
void run_builtin<dtype_of<double>()>(BinaryOp op, const DensePlan& plan,
                                     cudaStream_t stream) {
  launch_builtin<double>(op, plan, stream);
}
}  // namespace ewise::detail
