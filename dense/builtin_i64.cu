// dense/builtin_i64.cu — the built-in operations' kernels for i64 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::i64>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
