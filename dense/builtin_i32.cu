// dense/builtin_i32.cu — the built-in operations' kernels for i32 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::i32>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
