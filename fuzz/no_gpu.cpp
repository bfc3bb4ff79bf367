// fuzz/no_gpu.cpp — the GPU backend's entry points for the libFuzzer targets (scripts/fuzz.sh),
// which compile the library's host sources but none of its CUDA kernels: the entries only pass
// host views, so these are never called; if one is, it throws a non-ewise exception, which the
// target reports as a bug. Not part of the library or of ewise_testing.
#include <stdexcept>

#include "../dense/builtin.hpp"
#include "../dense/convert.hpp"
#include "../sparse/internal.hpp"

namespace ewise {
namespace {
[[noreturn]] void no_gpu(const char* what) {
  throw std::logic_error(std::string("fuzz build: the GPU backend (") + what +
                         ") was called, but the fuzz entries pass host views only");
}
}  // namespace

namespace detail {
#define EWISE_NO_GPU_BUILTIN(D) \
  template <>                   \
  void run_builtin<D>(BinaryOp, const DensePlan&, cudaStream_t) { no_gpu("run_builtin"); }
EWISE_NO_GPU_BUILTIN(DType::f16)
EWISE_NO_GPU_BUILTIN(DType::bf16)
EWISE_NO_GPU_BUILTIN(DType::f32)
EWISE_NO_GPU_BUILTIN(DType::f64)
EWISE_NO_GPU_BUILTIN(DType::i32)
EWISE_NO_GPU_BUILTIN(DType::i64)
#undef EWISE_NO_GPU_BUILTIN
void run_converting(const CallTypes&, const DensePlan&, cudaStream_t) { no_gpu("run_converting"); }
}  // namespace detail

namespace sparse_detail {
DeviceCoo device_multiply(const CooView&, const CooView&, CooAlgorithm, const SparseOptions&,
                          cudaStream_t) {
  no_gpu("device_multiply");
}
DeviceCoo device_multiply_dense(const CooView&, const DenseOperand&, const SparseOptions&,
                                cudaStream_t) {
  no_gpu("device_multiply_dense");
}
void device_multiply_values(const CooView&, const DenseOperand&, const TensorView&,
                            const SparseOptions&, cudaStream_t) {
  no_gpu("device_multiply_values");
}
DeviceCoo device_coalesce(const CooView&, const SparseOptions&, cudaStream_t) {
  no_gpu("device_coalesce");
}
DeviceCoo device_dense_to_coo(const ConstTensorView&, const CooDesc&, cudaStream_t) {
  no_gpu("device_dense_to_coo");
}
DeviceTensor device_coo_to_dense(const CooView&, const SparseOptions&, cudaStream_t) {
  no_gpu("device_coo_to_dense");
}
DeviceTensor device_csr_row_offsets(const CooView&, const SparseOptions&, cudaStream_t) {
  no_gpu("device_csr_row_offsets");
}
DeviceCoo device_combine(const CooView&, const CooView&, const UnionArgs&, const SparseOptions&,
                         cudaStream_t) {
  no_gpu("device_combine");
}
void device_combine_dense(const CooView&, const DenseOperand&, const TensorView&,
                          const UnionArgs&, const SparseOptions&, cudaStream_t) {
  no_gpu("device_combine_dense");
}
void device_accumulate(const TensorView&, const CooView&, BinaryOp, const SparseOptions&,
                       cudaStream_t) {
  no_gpu("device_accumulate");
}
void device_check_indices(const CooView&, const char*, cudaStream_t) {
  no_gpu("device_check_indices");
}
}  // namespace sparse_detail
}  // namespace ewise
