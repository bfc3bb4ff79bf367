// sparse/checks.hpp — argument checks shared by the CPU and GPU backends (checks.cpp), and the
// messages of a failed index check. Host-compilable.
#pragma once

#include <cstdint>

#include "ewise/compressed.hpp"
#include "ewise/coo.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

/// check_view on both; same shape, index type and memory (the value dtypes may differ:
/// promote.hpp). `op` names the operation.
void check_operands(const CooView& a, const CooView& b, const char* op = "multiply");

/// A dense operand read at (r, c) as data[r * row_stride + c * col_stride] (elements), or a
/// scalar: `value` at every coordinate, in the compute type (its bits in the low bytes, as
/// detail::CallTypes holds a scalar).
struct DenseOperand {
  const void* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
  bool scalar = false;
  std::uint64_t value = 0;
};
/// check_view on both; same memory; device data aligned; dense broadcasts to a's shape.
void check_dense_operand(const CooView& a, const ConstTensorView& dense,
                         const char* op = "multiply");
/// The same of a sparse operand of any form already checked, of shape `a` in `memory`.
void check_dense_operand(const CooDesc& a, Memory memory, const ConstTensorView& dense,
                         const char* op);
/// dense (checked) as read at a's coordinates.
DenseOperand dense_operand(const CooDesc& a, const ConstTensorView& dense);

/// Throws unless op is one of the union operations (add, sub, min, max).
void check_union_op(BinaryOp op, const char* fn);
/// Throws unless combine(op, a, s) of a sparse matrix and a scalar is sparse: op add or subtract
/// (check_union_op passed) and s zero (either zero for floats). `form` names a's form in the
/// message ("COO", "CSR", "CSC"). Made before anything of a is read.
void check_scalar_union(BinaryOp op, const Scalar& s, const char* form);
/// A fill value as the dtype holds it (see SparseOptions::fill_a), returned as a double that
/// converts exactly to the compute type. Throws for an integer dtype and a fill that is not an
/// integer in its range. `what` names the option.
double union_fill(double fill, DType dtype, const char* what);
/// Throws when drop_zeros is set for an operation with a dense result (`fn`: combine with a
/// dense operand, accumulate).
void check_dense_result_options(bool drop_zeros, const char* fn);
/// The checks of a dense output shared by every sparse form (check_view accepted out): out a
/// rank-2 (nrows, ncols) tensor of the call's result dtype in the sparse operand's memory (d,
/// `memory`; `row_sparse`: a row-sparse operand, said in the shape's message), device data
/// aligned, not revisiting an element. `dense`: combine's dense operand (out is then "out"),
/// null for accumulate (out is "dense").
void check_dense_output(const CooDesc& d, Memory memory, bool row_sparse,
                        const ConstTensorView* dense, const TensorView& out, DType result,
                        const char* fn);
/// The checks of the dense outputs of combine (fn "combine", `dense` given: out may be exactly
/// dense) and accumulate (fn "accumulate", `dense` null) on an out that check_view accepted:
/// out a rank-2 (nrows, ncols) tensor of the call's result dtype in a's memory, device data
/// aligned, not revisiting an element (check_dense_output), overlapping none of a's arrays (nor
/// dense, but exactly).
void check_union_output(const CooView& a, const ConstTensorView* dense, const TensorView& out,
                        DType result, const char* fn);

/// The checks of multiply_values beyond check_dense_operand: out_vals a contiguous 1-D tensor
/// of a.nnz elements of the result dtype in a's memory (device data aligned), overlapping none
/// of a's arrays or dense except exactly a.vals (in place); drop_zeros off.
void check_values_output(const CooView& a, const ConstTensorView& dense,
                         const TensorView& out_vals, DType result, bool drop_zeros);

/// Throws unless `inputs` equals `result` (the memory the chosen result type lives in).
void check_result_memory(Memory inputs, Memory result, const char* op);

/// The messages of check_indices: entry k is out of range / not after entry k - 1.
[[noreturn]] void throw_out_of_range(const char* what, const CooDesc& d, std::int64_t k,
                                     std::int64_t row, std::int64_t col);
[[noreturn]] void throw_not_increasing(const char* what, std::int64_t k, std::int64_t prev_row,
                                       std::int64_t prev_col, std::int64_t row, std::int64_t col);

/// check_indices on a host view.
void check_indices_host(const CooView& m, const char* what);

/// Whether each key row * ncols + col of host entries [lo, hi) exceeds the one before (entry
/// lo - 1 included): sorted without duplicates, for indices within the shape (checked). Blocks
/// of keys compared without a branch; false at the first block that fails.
bool keys_increase(const CooView& m, std::int64_t lo, std::int64_t hi);

/// Row or column index k of a host array of index type t.
std::int64_t host_index(const void* p, IndexType t, std::int64_t k);

/// Throws unless a is marked canonical (for coo_to_csr_row_offsets).
void check_canonical_for_csr(const CooView& a);
/// The dtype of CSR row offsets for a (see sparse.hpp).
DType csr_offsets_dtype(const CooDesc& a);

/// dense_to_coo's checks: rank 2, shape suits `index`. Returns the COO descriptor (nnz 0).
CooDesc check_dense_to_coo(const ConstTensorView& dense, IndexType index);

/// The messages of a compressed view's failed offsets check: offsets[k] > offsets[k + 1]; the
/// first or last offset (first, last) not 0 and nnz.
[[noreturn]] void throw_offsets_decrease(const char* what, const CompressedView& v, std::int64_t k,
                                         std::int64_t at_k, std::int64_t at_next);
[[noreturn]] void throw_offsets_ends(const char* what, const CompressedView& v, std::int64_t first,
                                     std::int64_t last);
/// The messages of a compressed view's failed index check: entry k (of major index `major`)
/// has a minor index outside the shape; in a view marked canonical, entry k's minor index does
/// not come after entry k - 1's (`prev`) in the same slice.
[[noreturn]] void throw_index_out_of_range(const char* what, const CompressedView& v,
                                           std::int64_t k, std::int64_t major,
                                           std::int64_t minor);
[[noreturn]] void throw_slice_not_increasing(const char* what, const CompressedView& v,
                                             std::int64_t k, std::int64_t major,
                                             std::int64_t prev, std::int64_t minor);

}  // namespace ewise::sparse_detail
