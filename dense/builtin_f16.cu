// dense/builtin_f16.cu — the built-in operations' kernels for f16 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::f16>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
