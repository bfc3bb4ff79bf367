// ewise/sparse_reference.hpp — the CPU reference for the sparse operations.
//
// The oracle of every sparse GPU test and the backend behind the host forms of ewise/sparse.hpp
// (multiply<HostCoo> and friends). Plain: each operand becomes its coordinates in (row, col)
// order with the sum of each one's values, accumulated in storage order in the compute type (f32
// for f16/bf16, the dtype itself otherwise; integers wrap): in one pass for an operand already in
// that order, after a stable sort otherwise; the semantics the GPU reproduces bit for bit; the union forms apply their op once to the two sums (or a sum and a fill or dense
// element). Inputs must be host views; each function is the host form of its ewise/sparse.hpp
// namesake (the same checks, operands of different dtypes promoted the same way); every index
// (and canonical promise) is always checked. The algorithm in SparseOptions is ignored (there
// is one); drop_zeros is honoured.
#pragma once

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/ops.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

HostCoo reference_multiply(const CooView& a, const CooView& b, const SparseOptions& options = {});
HostCoo reference_multiply(const CooView& a, const ConstTensorView& dense,
                           const SparseOptions& options = {});
void reference_multiply_values(const CooView& a, const ConstTensorView& dense,
                               const TensorView& out_vals, const SparseOptions& options = {});
HostCoo reference_combine(BinaryOp op, const CooView& a, const CooView& b,
                          const SparseOptions& options = {});
void reference_combine(BinaryOp op, const CooView& a, const ConstTensorView& dense,
                       const TensorView& out, const SparseOptions& options = {});
void reference_accumulate(BinaryOp op, const TensorView& dense, const CooView& a,
                          const SparseOptions& options = {});
HostCoo reference_coalesce(const CooView& a, const SparseOptions& options = {});
HostCoo reference_dense_to_coo(const ConstTensorView& dense, IndexType index = IndexType::i32);
HostTensor reference_coo_to_dense(const CooView& a);
HostTensor reference_coo_to_csr_row_offsets(const CooView& a);

}  // namespace ewise
