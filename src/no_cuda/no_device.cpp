// src/no_cuda/no_device.cpp — a build without CUDA (EWISE_WITH_CUDA=OFF) compiles none of the
// .cu files and src/residency.cpp: these are the functions of theirs that host code calls.
// Every GPU path of an entry point checks its operands' residency first (DeviceOperands::check,
// residency.hpp), which here throws CudaError with the runtime's no-driver code, as the CUDA
// build does on a machine without a driver; nothing after it is reached. The launchers throw
// the same should a path ever skip that check. The linker names any launcher added to the CUDA
// build and missing here, so this list cannot fall behind silently. The libFuzzer targets
// (scripts/fuzz.sh) link the same file.
#include "../../dense/builtin.hpp"
#include "../../dense/convert.hpp"
#include "../../sparse/internal.hpp"
#include "ewise/error.hpp"
#include "residency.hpp"
#include "strided_device.hpp"

namespace ewise {
namespace detail {
namespace {

[[noreturn]] void no_gpu(const char* what) {
  throw_cuda(cudaErrorInsufficientDriver, what, __FILE__, __LINE__);
}

}  // namespace

DeviceOperands& DeviceOperands::add(const ConstTensorView&, const char*) { return *this; }
DeviceOperands& DeviceOperands::add(const CooView&, const char*) { return *this; }
void DeviceOperands::check(cudaStream_t) const { no_gpu("the device operands' residency check"); }

void device_fill_random(const TensorView&, const RandomSpec&, cudaStream_t) {
  no_gpu("device_fill_random");
}
void device_poison(const TensorView&, const void*, cudaStream_t) { no_gpu("device_poison"); }
void device_gather(const ConstTensorView&, void*, cudaStream_t) { no_gpu("device_gather"); }

#define EWISE_NO_DEVICE_BUILTIN(D) \
  template <>                      \
  void run_builtin<D>(BinaryOp, const DensePlan&, cudaStream_t) { no_gpu("run_builtin"); }
EWISE_NO_DEVICE_BUILTIN(DType::f16)
EWISE_NO_DEVICE_BUILTIN(DType::bf16)
EWISE_NO_DEVICE_BUILTIN(DType::f32)
EWISE_NO_DEVICE_BUILTIN(DType::f64)
EWISE_NO_DEVICE_BUILTIN(DType::i32)
EWISE_NO_DEVICE_BUILTIN(DType::i64)
#undef EWISE_NO_DEVICE_BUILTIN
void run_converting_basic(const CallTypes&, const DensePlan&, cudaStream_t) {
  no_gpu("run_converting_basic");
}
void run_converting_division(const CallTypes&, const DensePlan&, cudaStream_t) {
  no_gpu("run_converting_division");
}
void run_converting_predicates(const CallTypes&, const DensePlan&, cudaStream_t) {
  no_gpu("run_converting_predicates");
}

}  // namespace detail

namespace sparse_detail {
using detail::no_gpu;

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
void device_row_offsets(const CooView&, void*, IndexType, cudaStream_t) {
  no_gpu("device_row_offsets");
}
void device_expand_offsets(const CompressedView&, void*, unsigned long long*, cudaStream_t) {
  no_gpu("device_expand_offsets");
}
bool device_scales_in_place(const CompressedView&, const DenseOperand&) {
  no_gpu("device_scales_in_place");
}
void device_scale_compressed(const CompressedView&, const DenseOperand&, bool, void*, void*, void*,
                             cudaStream_t) {
  no_gpu("device_scale_compressed");
}
void device_read_expand_checks(const ExpandCheck*, int, const unsigned long long*, cudaStream_t) {
  no_gpu("device_read_expand_checks");
}
DeviceCoo device_compressed_merge(const CompressedView&, const CompressedView&, const UnionArgs*,
                                  const SparseOptions&, cudaStream_t) {
  no_gpu("device_compressed_merge");
}
DeviceCoo device_combine(const CooView&, const CooView&, const UnionArgs&, const SparseOptions&,
                         cudaStream_t) {
  no_gpu("device_combine");
}
void device_combine_dense(const CooView&, const DenseOperand&, const TensorView&, const UnionArgs&,
                          const SparseOptions&, cudaStream_t) {
  no_gpu("device_combine_dense");
}
void device_accumulate(const TensorView&, const CooView&, BinaryOp, const SparseOptions&,
                       cudaStream_t) {
  no_gpu("device_accumulate");
}
void device_check_indices(const CooView&, const char*, cudaStream_t) {
  no_gpu("device_check_indices");
}
void device_accumulate_rows(const TensorView&, const RowSparseView&, BinaryOp,
                            const SparseOptions&, cudaStream_t) {
  no_gpu("device_accumulate_rows");
}
DeviceRowSparse device_combine_rows(const RowSparseView&, const RowSparseView*, const UnionArgs*,
                                    const DenseOperand*, const SparseOptions&, cudaStream_t) {
  no_gpu("device_combine_rows");
}
void device_spell_rows(const void*, std::int64_t, std::int64_t, IndexType, void*, void*,
                       cudaStream_t) {
  no_gpu("device_spell_rows");
}
DeviceRowSparse device_coo_to_rows(const CooView&, cudaStream_t) {
  no_gpu("device_coo_to_rows");
}

}  // namespace sparse_detail
}  // namespace ewise
