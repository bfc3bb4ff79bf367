// dense/builtin_bf16.cu — the built-in operations' kernels for bf16 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::bf16>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
