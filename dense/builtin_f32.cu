// dense/builtin_f32.cu — the built-in operations' kernels for f32 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::f32>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
