// sparse/promote.hpp — mixed value dtypes in the sparse operations: the dtype a call gives
// (ewise::op_types under SparseOptions::promotion), the operands converted to it, and a scalar
// operand's factor. Host-compilable; promote.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "checks.hpp"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/memory.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

/// The dtype of op(a, b) for a first operand (a COO matrix, or accumulate's dense) of dtype `a`:
/// op_types(op, rule, a, b).result, which throws InvalidArgument naming the op and the dtypes
/// when the rule refuses them. For a sparse dtype and the sparse operations (multiply, add,
/// subtract, minimum, maximum) it is a sparse dtype under both rules.
DType result_dtype(BinaryOp op, Promotion rule, DType a, OperandType b);

/// accumulate's checks of dense and the options, and its result dtype, for a sparse operand of
/// dtype a (whose view the caller checked): dense a valid view, drop_zeros off, then
/// result_dtype(op, options.promotion, dense's dtype, a).
DType accumulate_dtype(BinaryOp op, const TensorView& dense, DType a,
                       const SparseOptions& options);

/// Operands with their values in one dtype: a view already of that dtype is used as it is; any
/// other is converted (one pass over its elements: a COO's nnz values, a dense operand's
/// elements) into storage owned here, on the operands' backend (device views: on `stream`,
/// allocated from `memory`; host views ignore both). The conversion is the cast every ewise
/// output gets (ewise/promotion.hpp): integers to floats rounded to nearest, floats rounded to
/// nearest-even, a NaN made canonical.
class Promoted {
 public:
  Promoted(DType to, MemoryResource* memory, cudaStream_t stream)
      : to_(to), memory_(memory), stream_(stream) {}

  DType dtype() const noexcept { return to_; }
  /// a with its values of dtype() (its index arrays shared).
  CooView coo(const CooView& a);
  /// dense with dtype(): when converted, a contiguous copy of the elements it holds, broadcast
  /// to its shape again where it broadcasts (stride 0), so a broadcast costs no memory.
  ConstTensorView dense(const ConstTensorView& dense);

 private:
  DType to_;
  MemoryResource* memory_;
  cudaStream_t stream_;
  std::vector<HostTensor> host_;
  std::vector<DeviceTensor> device_;
};

/// The factor of multiply(a, s): s's value in the compute type of the result `to`
/// (detail::check_types: NumPy's rule converts it to the result dtype first, PyTorch's straight
/// to the compute type).
DenseOperand scalar_factor(BinaryOp op, const CooView& a, const Scalar& s, DType to,
                           Promotion rule);

}  // namespace ewise::sparse_detail
