// ewise/sparse.hpp — operations on sparse matrices: COO (types in ewise/coo.hpp), and CSR and CSC
// (ewise/compressed.hpp; their forms at the end of this file).
//
//   DeviceCoo c = ewise::multiply(a, b);             // c = a ⊙ b, structural intersection
//   DeviceCoo s = ewise::multiply(a, row_scale);     // COO ⊙ dense (dense broadcasts)
//   DeviceCoo h = ewise::multiply(a, Scalar::weak_float(0.5));  // a * 0.5, a's pattern
//   ewise::multiply_values(a, dense, out_vals);      // the same values in a's own pattern
//   HostCoo h = ewise::multiply<HostCoo>(ha, hb);    // host views: the CPU backend
//   DeviceCoo u = ewise::combine(BinaryOp::sub, a, b);    // u = a - b, structural union
//   DeviceTensor e = ewise::combine(BinaryOp::add, a, d); // dense a + d (d broadcasts)
//   ewise::accumulate(BinaryOp::add, weights, grad);      // weights += grad, in place
//
// Where the inputs live picks the backend: device views run on the GPU, on `stream`; host views
// run on the CPU reference backend (ewise/sparse_reference.hpp; `stream` is ignored). The
// result type says where the result lives: DeviceCoo / DeviceTensor (the default) for device
// inputs, HostCoo / HostTensor for host inputs; any other pairing, or mixing host and device
// inputs, throws InvalidArgument. Device forms synchronize `stream` (at most three times; four
// for bitmap_merge and hash_merge with drop_zeros) to learn the size of their result or to read
// the index checks (coalesce and multiply(COO, dense) of a canonical matrix, with
// validate_indices and drop_zeros off, and multiply_values without validate_indices do not
// synchronize; the union forms' counts are at combine and accumulate); their last kernels may
// still run when they return: the result is complete in stream order on `stream`. Temporaries
// are freed stream-ordered, also when they throw. Device memory, the temporaries' and the
// result's, comes from SparseOptions::memory (ewise/memory.hpp).
//
// Value dtypes: a COO matrix holds values of one of kSparseDTypes (f16, bf16, f32, f64, i32,
// i64; ewise/coo.hpp). The operands of a call may differ in dtype: the result dtype is the
// dense operation's (ewise::op_types of multiply, add, ... under SparseOptions::promotion,
// NumPy's rule by default: an f32 COO with an f64 COO or dense operand gives f64, i32 with f32
// gives f64; PyTorch's gives f32 there), a sparse dtype for every pair. Each operand of another
// dtype is converted to it first — a COO operand's nnz values, or a dense operand's elements,
// in one pass (sparse/promote.cpp; the cast of every ewise output: integers to floats rounded
// to nearest, floats rounded to nearest-even) — then the same-dtype kernels below run. Forms
// with an output (combine into out, accumulate, multiply_values) need it to be of the result
// dtype: writing the result into another would round it twice.
// Scalars: multiply(a, s) scales a's values keeping its pattern; combine(add or subtract, a, s)
// takes only a zero s (a + 0 is a, as in SciPy; any other value would be stored at every
// coordinate, and is refused as SciPy refuses it). A scalar is weak in promotion as Python's
// scalars are (ewise/promotion.hpp): an f16 matrix times 0.5 stays f16.
//
// Semantics shared by every operation:
//   * An entry is a stored coordinate. A coordinate stored more than once (a duplicate) stands
//     for the sum of its values: duplicates are summed first, one after another in storage
//     order, in the compute type (f32 for f16/bf16, the dtype itself otherwise; integers wrap).
//   * Values are computed in the compute type and rounded to the dtype once, so every
//     algorithm gives bit-identical results, and so does the CPU backend; a NaN is written as
//     the canonical NaN (ewise/ops.hpp), a copied one too.
//   * Results are canonical: sorted by absolute index row * ncols + col, no duplicates, nnz
//     exact. Results carry the inputs' index type and the result dtype.
//   * Zeros are structural: an entry whose value is zero (stored so, or a product or sum that is
//     zero) stays an entry. SparseOptions::drop_zeros removes entries whose final value
//     compares equal to zero (+0 and -0; NaN is kept).
//
// Checks made before any output is written (each throws InvalidArgument naming the values): a
// view's descriptor (negative extents or nnz, nrows * ncols overflowing int64, an int32 index type
// too small for the shape, null arrays with nnz > 0, values not of a sparse dtype), operands of
// different shapes or index types, dtypes the promotion rule refuses (PyTorch's: u16, u32, u64 with
// another dtype), an output not of the result dtype, mixed host/device inputs, a result type that
// does not match the inputs' memory, and, unless SparseOptions::validate_indices is false, every
// index: a row outside [0, nrows) or a column outside [0, ncols), and a matrix marked canonical
// whose entries are not strictly increasing by absolute index. On the GPU that check runs inside a
// pass that reads the indices anyway (sort keys, bitmap, merge), or in a pass of its own; the first
// bad entry is reported, and the status is read at the pipeline's first synchronization, before
// anything is written at an index-derived address. Skipping it on bad input is undefined behaviour.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstdint>
#include <string_view>

#include "ewise/buffer.hpp"
#include "ewise/compressed.hpp"
#include "ewise/coo.hpp"
#include "ewise/memory.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// How multiply(COO, COO) finds matching coordinates. All give identical results.
enum class CooAlgorithm : std::uint8_t {
  /// By the operands' sizes and sortedness: sort_search when one operand is small (few entries
  /// to sort, or far fewer than the other); else merge when both are canonical; else
  /// bitmap_merge when its bitmap is small for the input and fits in L2; else merge.
  /// select_coo_algorithm names the choice; the thresholds are in sparse/policy.hpp and the
  /// rule in sparse/select.cpp.
  automatic,
  /// The HammerBlade write-up's optimized kernel: one operand is radix-sorted by absolute
  /// index (only the bits nrows*ncols needs; 32-bit keys when they fit; skipped when it is
  /// canonical), every entry of the other binary-searches it once, keeping the position;
  /// matches are counted per tile, offsets come from a CUB exclusive scan, then written. When
  /// the searching operand is not canonical, its matches are sorted and their duplicates summed.
  sort_search,
  /// Merge-path intersection of both operands in sorted order, the same number of entries per
  /// block. Canonical operands are used as they are; others are radix-sorted first.
  merge,
  /// For unsorted input: a bitmap of nrows * ncols bits marks b's coordinates and a keeps only
  /// the entries whose bit is set (a'); the bitmap of a''s coordinates does the same for b; merge
  /// runs on what is left, so only matching entries are ever sorted. Refused when the bitmap
  /// would exceed kBitmapMaxBytes.
  bitmap_merge,
  /// The write-up's first, unoptimized kernel: every entry of `a` scans all of `b`. For small
  /// inputs only: refused when nnz(a) * nnz(b) > kLinearSearchMaxWork.
  linear_search,
  /// bitmap_merge with a hash set of the coordinates stored instead of a bitmap of every cell
  /// (open addressing, 16 to 32 bytes per entry of b), so any shape takes it: only matching
  /// entries are sorted. Not chosen by automatic: its table costs more than the sort, so it is
  /// slower than merge on every structure kind measured (docs/benchmarks.md).
  hash_merge,
};

/// The most memory bitmap_merge's bitmap may take (nrows * ncols / 8 bytes).
inline constexpr std::int64_t kBitmapMaxBytes = std::int64_t{1} << 32;
/// The largest nnz(a) * nnz(b) that linear_search accepts.
inline constexpr std::int64_t kLinearSearchMaxWork = std::int64_t{1} << 30;

const char* coo_algorithm_name(CooAlgorithm a);  ///< "automatic", "sort_search", "merge", ...
/// Parses a name as printed by coo_algorithm_name; throws InvalidArgument otherwise.
CooAlgorithm parse_coo_algorithm(std::string_view name);

struct SparseOptions {
  /// multiply(COO, COO) on the GPU; the CPU backend has one algorithm and ignores it (it only
  /// checks that it is a known value, not the GPU algorithms' size limits).
  CooAlgorithm algorithm = CooAlgorithm::automatic;
  /// Check every index (and every canonical promise) before computing, on either backend.
  /// Off, the caller vouches for them: bad ones are undefined behaviour.
  bool validate_indices = true;
  /// Remove result entries whose value is zero (see the file comment). multiply, coalesce and
  /// combine(COO, COO); the dense forms of combine and accumulate reject it.
  bool drop_zeros = false;
  /// combine: the value a missing operand counts as (see combine). Converted to the result
  /// dtype once:
  /// f32 and f64 rounded to nearest-even, f16 and bf16 through f32 (rounded to f32, then to
  /// the 16-bit type); for i32 and i64 it must be an integer in the dtype's range (a double, so
  /// i64 fills beyond 2^53 are the integers a double holds), InvalidArgument otherwise. A NaN
  /// fill is the canonical NaN.
  double fill_a = 0;
  double fill_b = 0;
  /// Whose rules give the result dtype of operands of different dtypes (see the file comment).
  Promotion promotion = Promotion::numpy;
  /// Device memory for the call's temporaries and result (ewise/memory.hpp); nullptr: the
  /// device's default resource (ewise's pool unless set). Must outlive the result.
  MemoryResource* memory = nullptr;
};

/// The algorithm multiply(a, b) runs for these operands with `requested` (never automatic).
/// Throws InvalidArgument when `requested` cannot run them (linear_search on large inputs,
/// bitmap_merge on huge shapes) or the operands do not go together. `a` and `b` may be host or device views.
CooAlgorithm select_coo_algorithm(const CooView& a, const CooView& b,
                                  CooAlgorithm requested = CooAlgorithm::automatic);

/// Throws InvalidArgument naming the first entry whose row or column is out of range, or, for
/// a view marked canonical, the first entry not strictly after its predecessor. Device views
/// are checked on the GPU (synchronizes `stream`). `what` names the matrix in the message.
void check_indices(const CooView& coo, const char* what = "COO matrix",
                   cudaStream_t stream = nullptr);

/// A COO view over three 1-D tensors (contiguous; rows and cols both i32 or both i64; all in
/// one memory). Throws InvalidArgument when their lengths differ, naming them, or when they
/// are not 1-D, contiguous, of an index dtype, or do not suit the shape.
CooView coo_view(const ConstTensorView& rows, const ConstTensorView& cols,
                 const ConstTensorView& vals, std::int64_t nrows, std::int64_t ncols,
                 bool canonical = false);

/// a ⊙ b: the structural intersection. An entry at (i, j) for every coordinate stored in both
/// a and b (after summing each operand's duplicates), with value (Σ a_ij) · (Σ b_ij); nothing
/// for coordinates stored in only one. nnz is the number of matching coordinates.
/// Result: DeviceCoo (device inputs) or HostCoo (host inputs).
template <class Result = DeviceCoo>
Result multiply(const CooView& a, const CooView& b, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);

/// a ⊙ dense, keeping a's pattern: the canonical form of a, each entry (i, j) multiplied by
/// dense's element at (i, j), where dense broadcasts to a's shape: (nrows, ncols), a row
/// vector (1, ncols) or (ncols,), a column vector (nrows, 1), or a scalar () or (1, 1). Any
/// strides. Result: DeviceCoo (device inputs) or HostCoo (host inputs). A
/// DeviceCoo made from a matrix not marked canonical has arrays allocated for a.nnz entries, of
/// which the first nnz() are the result (duplicates summed, zeros dropped when asked).
template <class Result = DeviceCoo>
Result multiply(const CooView& a, const ConstTensorView& dense, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);

/// a ⊙ s, keeping a's pattern: the canonical form of a, each entry's value (duplicates summed)
/// times the scalar, rounded once; zeros kept unless drop_zeros. The scalar is passed to the
/// kernel by value (nothing is copied to the device). Result dtype: op_types(multiply, a, s);
/// a weak scalar keeps a's dtype unless its kind is higher (an i32 matrix times 0.5 is f64).
template <class Result = DeviceCoo>
Result multiply(const CooView& a, const Scalar& s, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);

/// a ⊙ dense's values in a's own pattern: out_vals[k] = a.vals[k] · dense[a.rows[k], a.cols[k]]
/// for every stored entry k, in a's storage order (dense broadcasts as for multiply(a, dense)).
/// Nothing is sorted, summed or dropped and no index is copied: a's rows and cols with out_vals
/// are the result, a duplicate's entries each scaled (their sum is the product of the sum).
/// For a canonical a the values equal multiply(a, dense)'s. The allocating multiply(a, dense)
/// shares its kernel (sparse/entries_pass.cuh).
/// out_vals: a contiguous 1-D tensor of a.nnz elements of the result dtype, in a's memory; it
/// may be a.vals itself (in place) and may overlap nothing else of a or dense. drop_zeros must be
/// false (InvalidArgument otherwise); the algorithm is ignored.
/// Device views: with validate_indices, a checking pass runs first and synchronizes `stream`
/// once (bad indices throw before anything is written); without it the call is one kernel and
/// does not synchronize: an entry out of range reads nothing outside dense and gets an
/// unspecified value. Host views run on the CPU backend.
void multiply_values(const CooView& a, const ConstTensorView& dense, const TensorView& out_vals,
                     const SparseOptions& options = {}, cudaStream_t stream = nullptr);

// ---- union: add, sub, min, max over the coordinates stored in either operand -----------------
//
// op is BinaryOp::add, subtract, minimum or maximum (or their short names add, sub, min, max;
// multiply is multiply(); any other throws InvalidArgument). Values are op(x, y) in the compute
// type (f32 for f16/bf16), rounded once, NaN canonical, exactly as the dense op (ewise/ops.hpp):
// min and max propagate NaN, and on equal operands (+0 and -0 included) give the first, x.
// Duplicates of a COO operand are summed first, in storage order (as for multiply), then op is
// applied once.
//
//   form                          x at (i, j)                    y at (i, j)        result
//   combine(op, a, b)             Σa_ij, or fill_a if not stored Σb_ij, or fill_b   canonical COO
//                                                                                   of the union
//   combine(op, a, dense[, out])  Σa_ij, or fill_a if not stored dense(i, j)        dense (nrows,
//                                                                                   ncols)
//   accumulate(op, dense, a)      dense(i, j)                    Σa_ij              dense(i, j),
//                                 only where a stores (i, j); elsewhere dense is not touched
//
// Against the peers (fills 0):
//   * SciPy: combine(add/sub/min/max, a, b) with drop_zeros is A + B, A - B, A.minimum(B),
//     A.maximum(B) (so A - B where A is missing is -B); SciPy's sparse binary ops store only
//     nonzero results, ewise keeps structural zeros unless drop_zeros.
//   * GraphBLAS: combine is SuiteSparse's GxB_eWiseUnion with α = fill_a, β = fill_b.
//     GrB_eWiseAdd differs: it passes a lone entry through unchanged, so its A - B gives B, not
//     -B, where A is missing, and min with an absent operand gives the present one, not
//     min(x, 0). accumulate(op, D, a) is GraphBLAS's accumulate, D<> op= A (GrB_assign or
//     GrB_eWiseAdd into D with accum op): op applied where A has an entry, D kept elsewhere.
//   * PyTorch: combine(add, a, b) is (A + B).coalesce(); accumulate(add, d, a) is
//     d.add_(A) (duplicates summed first); combine(add, a, d) is A + d.
// accumulate touches only a's stored coordinates (no pass over dense): for add and sub it
// equals dense = op(dense, densify(a)) except that a -0 of dense where a stores nothing stays
// -0 (-0 + +0 would be +0) and an untouched NaN keeps its bits; for min and max it is the
// masked (accumulate) form, not dense = min(dense, densify(a)), which would also take
// min(dense, 0) at every coordinate a does not store.

/// a op b over the structural union: an entry at every coordinate stored in a or b, value
/// op(x, y) as in the table above; drop_zeros removes results equal to ±0. Canonical, exact nnz,
/// the inputs' index type, the result dtype. Result: DeviceCoo (device inputs) or HostCoo (host).
/// GPU (sparse/union.cu): a merge-path union over the operands in sorted order (canonical
/// operands as they are, others radix-sorted first) in the merge algorithm's tiles; the
/// algorithm option is ignored. Synchronizes `stream` once (twice with drop_zeros).
template <class Result = DeviceCoo>
Result combine(BinaryOp op, const CooView& a, const CooView& b, const SparseOptions& options = {},
               cudaStream_t stream = nullptr);

/// a op s for add and subtract with a scalar zero: the canonical form of a in the result dtype
/// (op_types(op, a, s)), as SciPy's A + 0 is A. A nonzero s is refused (InvalidArgument naming
/// the op and the value), as SciPy refuses it; so are minimum and maximum. For the dense result
/// op(densify(a), s), pass s as a 0-d dense operand.
template <class Result = DeviceCoo>
Result combine(BinaryOp op, const CooView& a, const Scalar& s, const SparseOptions& options = {},
               cudaStream_t stream = nullptr);

/// op(densify(a), dense) as a new dense (nrows, ncols) tensor of the result dtype, contiguous:
/// op(Σa_ij, dense(i, j)) where a stores (i, j), op(fill_a, dense(i, j)) elsewhere; dense
/// broadcasts to a's shape as for multiply(a, dense). fill_b is not used; drop_zeros must be
/// false. Result: DeviceTensor (device inputs) or HostTensor (host inputs).
template <class Result = DeviceTensor>
Result combine(BinaryOp op, const CooView& a, const ConstTensorView& dense,
               const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// The same into `out`: a rank-2 (nrows, ncols) tensor of the result dtype in a's memory, any
/// strides that do not revisit an element, overlapping none of a's arrays; it may be dense
/// itself (exactly: same data and descriptor) and may overlap dense in no other way.
/// GPU (sparse/coo_dense_union.cu): a non-canonical a is coalesced first (a radix sort, one
/// synchronization, which also checks the indices); a canonical one is checked by a pass of its
/// own (one synchronization) unless validate_indices is off (then none). Then one pass over
/// the matrix writes every element once, each tile of it with a's entries in that tile staged
/// first (a temporary of 8 bytes per 4096 elements locates them); each element of dense is
/// read before the element of out at the same place is written, so out may be dense.
/// Nothing is written before the indices are checked.
void combine(BinaryOp op, const CooView& a, const ConstTensorView& dense, const TensorView& out,
             const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// dense = op(dense, Σa_ij) at each coordinate a stores, in place; nothing else is read or
/// written (see the comparison above). dense: a rank-2 (nrows, ncols) tensor of the result
/// dtype (so a may be narrower: an f64 dense accumulates an f32 matrix, not the reverse) in
/// a's memory, any strides that do not revisit an element (so no broadcast, stride 0),
/// overlapping none of a's arrays; drop_zeros must be false; the fills are not used.
/// GPU (sparse/coo_dense_union.cu): canonical a: one thread per entry, no atomics, preceded by
/// a checking pass with validate_indices (one synchronization; none without it). Other a:
/// coalesced first (a radix sort that sums duplicates in storage order, one synchronization),
/// then the same pass. Throws before writing anything for bad input.
void accumulate(BinaryOp op, const TensorView& dense, const CooView& a,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// A row-sparse view over two tensors (ewise/coo.hpp): rows, a contiguous 1-D tensor of nnz row
/// indices (i32 or i64), and vals, a contiguous (nnz, ncols) tensor of a sparse dtype (or 1-D
/// (nnz,): ncols 1), both in one memory, of a matrix of `nrows` rows. Throws InvalidArgument
/// naming the tensors when they do not fit together.
RowSparseView row_sparse_view(const ConstTensorView& rows, const ConstTensorView& vals,
                              std::int64_t nrows, bool canonical = false);

/// dense[r, :] = op(dense[r, :], Σ rows of a stored at r) for every row index r a stores, in
/// place: accumulate's semantics above with a's entries the (rows[k], c) of its stored rows, so
/// a stored row's duplicates are summed in storage order in the compute type and op is applied
/// once; rows a does not store are not touched. dense: a rank-2 (nrows, ncols) tensor of the
/// result dtype (op_types under options.promotion) in a's memory, any strides that do not
/// revisit an element, overlapping none of a's arrays; drop_zeros must be false.
/// GPU (sparse/rows.cu): a canonical a is one pass over its values, no atomics (after a
/// checking pass with validate_indices: one synchronization). Otherwise its row indices (not its
/// nnz * ncols coordinates) are radix-sorted over the bits nrows needs, stably, with their
/// positions, and each distinct row's stored rows summed in storage order (one synchronization,
/// which also reads the index check). Throws before writing anything for bad input: a row index
/// outside [0, nrows), or, for a view marked canonical, rows not strictly increasing.
void accumulate(BinaryOp op, const TensorView& dense, const RowSparseView& a,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// a op b over the union of the row indices stored in a or b (gradient accumulation across
/// micro-batches: combine(add, g1, g2)): a canonical row-sparse result (row indices strictly
/// increasing) with, at each such row index r and column c, op(x, y) in the table above's
/// union terms: x = Σ of a's rows stored at r (in storage order), or fill_a where a stores no
/// row r; y the same of b with fill_b. op: add, subtract, minimum or maximum. a and b: the same
/// nrows, row width (ncols) and index type and memory (their value dtypes may differ: the result
/// dtype is op_types'); drop_zeros must be false (a row is kept whole). Result: DeviceRowSparse
/// (device inputs) or HostRowSparse (host), a's index type.
/// GPU (sparse/rows_union.cu): both operands' row indices (nnz of them, not nnz * ncols
/// coordinates) and storage positions radix-sorted together, stably, over the bits nrows needs
/// (a's first on equal rows), the runs of equal rows found by CUB, one synchronization for the
/// checks and the counts, then one kernel (a thread a run and four columns, a's and b's sums
/// apart) and, for runs of more than 16 stored rows, a block a run and 8 columns. Throws before
/// writing anything for bad input (a row index outside [0, nrows), rows of a view marked
/// canonical not strictly increasing).
template <class Result = DeviceRowSparse>
Result combine(BinaryOp op, const RowSparseView& a, const RowSparseView& b,
               const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// The canonical form of a: row indices strictly increasing, the rows stored at one row index
/// summed in storage order (the first as it is: a lone -0 stays -0), in a's dtype and index
/// type (PyTorch's coalesce of a hybrid tensor). GPU as combine's, with one operand; a view
/// marked canonical is copied in one pass (after the index check where validate_indices).
template <class Result = DeviceRowSparse>
Result coalesce(const RowSparseView& a, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);

/// a ⊙ dense in a's pattern (row scaling, masks): coalesce(a) with the value at each (row r,
/// column c) multiplied by dense's element at (r, c), rounded once, where dense broadcasts to
/// (nrows, ncols) as for multiply(COO, dense): the whole table, a column vector (nrows, 1) that
/// scales rows, a row vector, a scalar; any strides. Result dtype: op_types(multiply) under
/// options.promotion; drop_zeros must be false. GPU as coalesce, the product made where each
/// value is written (a canonical a: one pass).
template <class Result = DeviceRowSparse>
Result multiply(const RowSparseView& a, const ConstTensorView& dense,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// a ⊙ s in a's pattern: coalesce(a), each value times the scalar (passed by value, as for
/// multiply(COO, s)), rounded once; the result dtype as multiply(COO, s) gives it.
template <class Result = DeviceRowSparse>
Result multiply(const RowSparseView& a, const Scalar& s, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);

/// The 2-D COO matrix of row-sparse a (PyTorch's hybrid tensor made 2-D): coalesce(a)'s stored
/// rows spelled out, an entry (r, c) at every column c of each stored row r (zeros included),
/// canonical, in a's dtype and index type. Result: DeviceCoo (device a) or HostCoo (host); the
/// value block is coalesce's, taken over as the value array (the layouts agree), and the indices
/// one pass over the entries. drop_zeros must be false (a stored row is kept whole).
template <class Result = DeviceCoo>
Result to_coo(const RowSparseView& a, const SparseOptions& options = {},
              cudaStream_t stream = nullptr);

/// The row-sparse form of COO a (a hybrid tensor with one sparse dimension): a stored row for
/// each row index where a has an entry, strictly increasing, holding coalesce(a)'s values at
/// their columns and zeros at the others; a's dtype and index type. Result: DeviceRowSparse
/// (device a) or HostRowSparse (host). GPU: coalesce, the run heads of the rows (one CUB select;
/// one synchronization reads their count), then one pass over the entries. drop_zeros must be
/// false.
template <class Result = DeviceRowSparse>
Result to_row_sparse(const CooView& a, const SparseOptions& options = {},
                     cudaStream_t stream = nullptr);

/// The canonical form of a: sorted, duplicates summed. A matrix marked canonical is copied.
/// Result: DeviceCoo or HostCoo (a DeviceCoo's arrays as for COO ⊙ dense: a.nnz entries).
template <class Result = DeviceCoo>
Result coalesce(const CooView& a, const SparseOptions& options = {}, cudaStream_t stream = nullptr);

/// The nonzeros of a rank-2 tensor (any strides) as a canonical COO matrix with `index`
/// indices: every element that compares unequal to zero (so -0 is dropped and NaN kept).
/// Throws when the shape does not suit `index`. Result: DeviceCoo or HostCoo; device memory
/// from `memory` (see SparseOptions::memory).
template <class Result = DeviceCoo>
Result dense_to_coo(const ConstTensorView& dense, IndexType index = IndexType::i32,
                    cudaStream_t stream = nullptr, MemoryResource* memory = nullptr);

/// The dense (nrows, ncols) tensor of a: duplicates summed, +0 where nothing is stored.
/// Result: DeviceTensor or HostTensor.
template <class Result = DeviceTensor>
Result coo_to_dense(const CooView& a, const SparseOptions& options = {},
                    cudaStream_t stream = nullptr);

/// CSR row offsets of a canonical matrix: a 1-D tensor of nrows + 1 entries, offsets[r] = the
/// number of entries in rows before r (so offsets[nrows] = nnz); with a's column indices and
/// values it is a's CSR form. dtype i32 when a's indices are i32 and nnz fits, else i64.
/// Throws InvalidArgument when a is not marked canonical (coalesce it first).
/// Result: DeviceTensor or HostTensor.
template <class Result = DeviceTensor>
Result coo_to_csr_row_offsets(const CooView& a, const SparseOptions& options = {},
                              cudaStream_t stream = nullptr);

// ---- CSR and CSC operands (ewise/compressed.hpp) ------------------------------------------
//
// Each operation above takes CSR and CSC operands, with COO's semantics for the matrices they
// hold (duplicates summed in storage order, values rounded once, structural zeros), and gives a
// sparse result in the first operand's format (canonical; offsets and indices of the operands'
// index type: a result of more than 2^31 - 1 entries with int32 ones throws InvalidArgument).
// How (sparse/compressed.cpp): each compressed operand's major indices are spelled out (one pass
// writing nnz indices on the operand's backend; nothing is sorted), the COO operation runs on the
// views that makes, in the first operand's orientation (a CSC call runs on the transposes: a
// dense operand and out are read transposed, without a copy), and a sparse result's offsets are
// found from its sorted major indices. A canonical operand in the first one's format is a
// canonical COO matrix so: merge and union run on it as they are. An operand of the other
// format (CSR with CSC), or one not marked canonical, goes through the COO path's sort.
// Checks: the COO forms' argument checks (shapes, dtypes, outputs) first; then, in the pass that
// spells the major indices out, each operand's offsets (offsets[0] = 0, none decreasing,
// offsets[major] = nnz), index ranges and, for one marked canonical, each slice's order (host
// views always; device views with validate_indices, every operand's read back with one
// synchronization), before anything else runs; the messages name the format and the slice.

/// A compressed view over three 1-D tensors (contiguous; offsets and indices both i32 or both
/// i64; all in one memory) of an nrows × ncols matrix in `format`. Throws InvalidArgument naming
/// the tensors when offsets does not hold major + 1 elements, indices and vals differ in length,
/// or they are not 1-D, contiguous, of an index dtype, or do not suit the shape.
CompressedView compressed_view(const ConstTensorView& offsets, const ConstTensorView& indices,
                               const ConstTensorView& vals, std::int64_t nrows,
                               std::int64_t ncols, SparseFormat format, bool canonical = false);

/// a ⊙ b of two compressed matrices (multiply(COO, COO)); the result in a's format.
template <class Result = DeviceCompressed>
Result multiply(const CompressedView& a, const CompressedView& b,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// a ⊙ dense in a's pattern (multiply(COO, dense)); the result in a's format.
template <class Result = DeviceCompressed>
Result multiply(const CompressedView& a, const ConstTensorView& dense,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// a ⊙ s in a's pattern (multiply(COO, Scalar)); the result in a's format.
template <class Result = DeviceCompressed>
Result multiply(const CompressedView& a, const Scalar& s, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);
/// a op b over the structural union (combine(op, COO, COO)); the result in a's format.
template <class Result = DeviceCompressed>
Result combine(BinaryOp op, const CompressedView& a, const CompressedView& b,
               const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// a op 0 (combine(op, COO, Scalar)): a's canonical form in the result dtype.
template <class Result = DeviceCompressed>
Result combine(BinaryOp op, const CompressedView& a, const Scalar& s,
               const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// op(densify(a), dense) as a new dense tensor (combine(op, COO, dense)).
template <class Result = DeviceTensor>
Result combine(BinaryOp op, const CompressedView& a, const ConstTensorView& dense,
               const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// The same into out (combine(op, COO, dense, out)).
void combine(BinaryOp op, const CompressedView& a, const ConstTensorView& dense,
             const TensorView& out, const SparseOptions& options = {},
             cudaStream_t stream = nullptr);
/// dense = op(dense, Σa_ij) where a stores (i, j) (accumulate(op, dense, COO)).
void accumulate(BinaryOp op, const TensorView& dense, const CompressedView& a,
                const SparseOptions& options = {}, cudaStream_t stream = nullptr);
/// a's canonical form in its format: each slice's indices sorted, duplicates summed (SciPy's
/// sum_duplicates); a matrix marked canonical is copied.
template <class Result = DeviceCompressed>
Result coalesce(const CompressedView& a, const SparseOptions& options = {},
                cudaStream_t stream = nullptr);
/// The canonical COO form of a (a canonical CSR matrix: its row indices spelled out and its
/// arrays copied, nothing sorted; a CSC one is sorted into row-major order).
template <class Result = DeviceCoo>
Result to_coo(const CompressedView& a, const SparseOptions& options = {},
              cudaStream_t stream = nullptr);
/// a in `format`, canonical (a COO matrix not marked canonical, or any for CSC, is sorted and
/// its duplicates summed first).
template <class Result = DeviceCompressed>
Result to_compressed(const CooView& a, SparseFormat format, const SparseOptions& options = {},
                     cudaStream_t stream = nullptr);

}  // namespace ewise
