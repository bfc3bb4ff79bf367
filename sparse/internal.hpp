// sparse/internal.hpp — the backends' entry points, called once the arguments are checked, and
// what both backends share. Host-compilable.
//
// Every check runs once per public call: the public entry points (api.cpp for ewise/sparse.hpp,
// sparse_reference.cpp for ewise/sparse_reference.hpp) run the argument checks (checks.hpp) and
// pass what they computed (DenseOperand, UnionArgs, the resolved algorithm) down; the functions
// declared here take checked arguments and check nothing again. The index checks are the
// backends' own: the CPU backend's functions take operands whose indices the caller checked
// (check_indices_host); the GPU backend's run them in their pipelines (validate_indices).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "checks.hpp"
#include "ewise/buffer.hpp"
#include "ewise/compressed.hpp"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

/// Key width for a shape: 32 bits when every absolute index fits, else 64.
inline bool wide_keys(const CooDesc& d) { return d.nrows * d.ncols > (std::int64_t{1} << 32); }

/// Bits a radix sort must look at (both backends' sorts): enough for nrows * ncols - 1 (at least 1).
inline int key_bits(const CooDesc& d) {
  const auto top = static_cast<std::uint64_t>(std::max<std::int64_t>(d.nrows * d.ncols - 1, 1));
  int bits = 0;
  while (bits < 64 && (top >> bits) != 0) ++bits;
  return bits;
}

/// A descriptor of the result of an operation on `like`, with `nnz` entries.
inline CooDesc result_desc(const CooDesc& like, std::int64_t nnz) {
  return {like.nrows, like.ncols, nnz, like.index, like.dtype, true};
}

/// Calls f(functor) with the ops.hpp functor of a union operation (check_union_op first).
template <class F>
decltype(auto) with_union_op(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::sub: return f(ops::Sub{});
    case BinaryOp::min: return f(ops::Min{});
    case BinaryOp::max: return f(ops::Max{});
    default: return f(ops::Add{});
  }
}

/// The checked arguments of a union: the operation and the fills as the dtype holds them
/// (union_fill).
struct UnionArgs {
  BinaryOp op = BinaryOp::add;
  double fill_a = 0, fill_b = 0;
};

// ---- the CPU backend (reference.cpp): host views, indices checked --------------------------

HostCoo host_multiply(const CooView& a, const CooView& b, const SparseOptions& options);
HostCoo host_multiply_dense(const CooView& a, const DenseOperand& dense,
                            const SparseOptions& options);
void host_multiply_values(const CooView& a, const DenseOperand& dense, const TensorView& out_vals);
// compressed_host.cpp:
/// majors[k] = the major index of v's entry k (I: v's index type), after checking v's offsets
/// (offsets[0] = 0, never decreasing, offsets[major] = nnz) and its indices (range; with
/// v.desc.canonical, strictly increasing in each slice); throws for the first failure, `what`
/// naming v.
template <class I>
void host_expand(const CompressedView& v, I* majors, const char* what);
/// offsets[r] (nrows + 1 of index type I) = the entries of canonical a in rows before r.
template <class I>
void host_offsets(const CooView& a, I* offsets);
/// v ⊙ factor in v's pattern for a canonical v (values of the result dtype, the factor made for
/// it in the call's orientation): host_expand's checks, the offsets and indices copied, each
/// value times the factor at its (major, minor); the slices split over the pool's threads.
void host_scale_compressed(const CompressedView& v, const DenseOperand& factor, void* out_offsets,
                           void* out_indices, void* out_vals);
HostCoo host_combine(const CooView& a, const CooView& b, const UnionArgs& u,
                     const SparseOptions& options);
/// fill_a as union_fill returned it (the dense form does not use fill_b).
void host_combine_dense(BinaryOp op, double fill_a, const CooView& a, const DenseOperand& dense,
                        const TensorView& out);
void host_accumulate(BinaryOp op, const TensorView& dense, const CooView& a);
HostCoo host_coalesce(const CooView& a, const SparseOptions& options);
/// accumulate(op, dense, row-sparse a) of a's dtype (rows.cpp).
void host_accumulate_rows(BinaryOp op, const TensorView& dense, const RowSparseView& a);
/// device_combine_rows' CPU backend, indices checked (rows.cpp).
HostRowSparse host_combine_rows(const RowSparseView& a, const RowSparseView* b,
                                const UnionArgs* u, const DenseOperand* factor);
/// desc: check_dense_to_coo's descriptor of the result.
HostCoo host_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc);
HostTensor host_coo_to_dense(const CooView& a);
/// a marked canonical (check_canonical_for_csr).
HostTensor host_csr_row_offsets(const CooView& a);

// ---- the GPU backend: device views, indices checked by the pipelines -----------------------
// `algorithm` is already resolved (never automatic).
DeviceCoo device_multiply(const CooView& a, const CooView& b, CooAlgorithm algorithm,
                          const SparseOptions& options, cudaStream_t stream);        // multiply.cu
DeviceCoo device_multiply_dense(const CooView& a, const DenseOperand& dense,
                                const SparseOptions& options, cudaStream_t stream);  // coo_dense.cu
void device_multiply_values(const CooView& a, const DenseOperand& dense, const TensorView& out_vals,
                            const SparseOptions& options, cudaStream_t stream);      // coo_dense.cu
DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options,
                          cudaStream_t stream);                                      // coalesce.cu
/// The canonical form of a matrix not marked canonical with its values the sums of its
/// duplicates in the compute type, unrounded (dtype f32 for f16 and bf16; the union's dense
/// forms round once, after the operation).
DeviceCoo device_coalesce_sums(const CooView& a, bool validate, cudaStream_t stream);  // coalesce.cu
DeviceCoo device_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc,
                              cudaStream_t stream);                                  // convert.cu
DeviceTensor device_coo_to_dense(const CooView& a, const SparseOptions& options,
                                 cudaStream_t stream);                               // convert.cu
DeviceTensor device_csr_row_offsets(const CooView& a, const SparseOptions& options,
                                    cudaStream_t stream);                            // convert.cu
/// offsets[r] (nrows + 1 of index type t) = the entries of canonical a in rows before r.
void device_row_offsets(const CooView& a, void* offsets, IndexType t,
                        cudaStream_t stream);                                        // convert.cu
/// majors[k] (nnz of v's index type) = the major index of v's entry k; with `bad` (a device
/// block of kExpandCheckWords words set to ~0), in the same pass, checks v's offsets, its
/// indices' range and, when v is marked canonical, their order in each slice, keeping the first
/// failure of each check there for device_read_expand_checks.
inline constexpr int kExpandCheckWords = 4;
void device_expand_offsets(const CompressedView& v, void* majors, unsigned long long* bad,
                           cudaStream_t stream);                                     // compressed.cu
/// Whether device_scale_compressed takes v ⊙ factor: unless the factor is a row vector that
/// needs column bands (entries_pass.cuh), which the COO pass over the spelled entries has.
bool device_scales_in_place(const CompressedView& v, const DenseOperand& factor);  // compressed.cu
/// v ⊙ factor in v's pattern, for a canonical v (values of the result dtype, factor made for it):
/// the offsets and indices copied to out_offsets and out_indices, out_vals[k] = vals[k] times
/// the factor at entry k's (major, minor), in one pass that makes device_expand_offsets' checks
/// with `check`, read back after it (one synchronization; throws naming v "a").
void device_scale_compressed(const CompressedView& v, const DenseOperand& factor, bool check,
                             void* out_offsets, void* out_indices, void* out_vals,
                             cudaStream_t stream);                            // compressed.cu
/// One operand's check of device_expand_offsets (or device_scale_compressed): the view, its
/// majors (null: found from the offsets), its name in messages.
struct ExpandCheck {
  CompressedView view;
  const void* majors = nullptr;
  const char* what = "";
};
/// Reads back the checks of n <= 2 operands (words: n blocks of kExpandCheckWords, in order;
/// one synchronization) and throws naming the first failure.
void device_read_expand_checks(const ExpandCheck* checks, int n, const unsigned long long* words,
                               cudaStream_t stream);                                 // compressed.cu
/// Throws for the first failure of one operand's check words read back to the host (`bad`).
void throw_expand_check(const ExpandCheck& check, const unsigned long long* bad,
                        cudaStream_t stream);                                     // compressed.cu
/// a ⊙ b (u null) or the union of a and b (u's operation and fills) for two canonical device
/// operands of one format, index type and dtype with entries, merged as they are stored (the
/// single pass over their offsets and indices, single_pass.cuh): a COO result in the call's
/// orientation (rows the major indices), canonical; their offsets and indices checked in the
/// same pass with validate_indices.
DeviceCoo device_compressed_merge(const CompressedView& a, const CompressedView& b,
                                  const UnionArgs* u, const SparseOptions& options,
                                  cudaStream_t stream);  // compressed_merge.cu
DeviceCoo device_combine(const CooView& a, const CooView& b, const UnionArgs& u,
                         const SparseOptions& options, cudaStream_t stream);        // union.cu
void device_combine_dense(const CooView& a, const DenseOperand& dense, const TensorView& out,
                          const UnionArgs& u, const SparseOptions& options,
                          cudaStream_t stream);                    // coo_dense_union.cu
void device_accumulate(const TensorView& dense, const CooView& a, BinaryOp op,
                       const SparseOptions& options, cudaStream_t stream);  // coo_dense_union.cu
void device_check_indices(const CooView& m, const char* what, cudaStream_t stream);  // status.cu
/// accumulate(op, dense, row-sparse a) of a's dtype; checks a's row indices (validate_indices).
void device_accumulate_rows(const TensorView& dense, const RowSparseView& a, BinaryOp op,
                            const SparseOptions& options, cudaStream_t stream);  // rows.cu
/// combine(u->op, a, *b) of row-sparse operands of one dtype, or coalesce(a) where b and u are
/// null, each value then multiplied by factor's at its (row, column) where factor is not null
/// (multiply(a, dense): b and u null); checks the row indices (validate_indices).
DeviceRowSparse device_combine_rows(const RowSparseView& a, const RowSparseView* b,
                                    const UnionArgs* u, const DenseOperand* factor,
                                    const SparseOptions& options,
                                    cudaStream_t stream);  // rows_union.cu
/// to_coo's indices on the GPU: entry k * width + j of the n stored rows at `rows` (a canonical
/// row-sparse matrix's) is (rows[k], j), written to out_rows and out_cols (index type `index`).
void device_spell_rows(const void* rows, std::int64_t n, std::int64_t width, IndexType index,
                       void* out_rows, void* out_cols, cudaStream_t stream);  // rows_convert.cu
/// to_row_sparse on the GPU of a canonical COO matrix c (one synchronization: the row count).
DeviceRowSparse device_coo_to_rows(const CooView& c, cudaStream_t stream);  // rows_convert.cu

// ---- row-sparse index checks (rows.cpp) ----------------------------------------------------
/// Throws naming the first stored row whose index is outside [0, nrows), or, for a view marked
/// canonical, the first not after its predecessor.
void check_row_indices_host(const RowSparseView& a, const char* what);
[[noreturn]] void throw_row_out_of_range(const char* what, const CooDesc& d, std::int64_t k,
                                         std::int64_t row);
[[noreturn]] void throw_rows_not_increasing(const char* what, std::int64_t k, std::int64_t prev,
                                            std::int64_t row);

}  // namespace ewise::sparse_detail
