// dense/builtin_f64.cu — the built-in operations' kernels for f64 (see builtin.hpp).
#include "builtin.cuh"

namespace ewise::detail {
template void run_builtin<DType::f64>(BinaryOp, const DenseLaunch&, cudaStream_t);
}  // namespace ewise::detail
