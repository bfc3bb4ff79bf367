// sparse/checks.cpp — argument checks shared by the CPU and GPU backends (checks.hpp).
#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"

namespace ewise::sparse_detail {

void check_operands(const CooView& a, const CooView& b, const char* op) {
  check_view(a, "a");
  check_view(b, "b");
  EWISE_EXPECTS(a.desc.nrows == b.desc.nrows && a.desc.ncols == b.desc.ncols,
                op, ": shapes differ: a is ", a.desc.nrows, "x", a.desc.ncols, ", b is ",
                b.desc.nrows, "x", b.desc.ncols);
  EWISE_EXPECTS(a.desc.index == b.desc.index, op, ": index types differ: a is ",
                index_name(a.desc.index), ", b is ", index_name(b.desc.index));
  EWISE_EXPECTS(a.memory == b.memory, op, ": a is in ", memory_name(a.memory),
                " memory but b is in ", memory_name(b.memory), " memory");
}

void check_dense_operand(const CooView& a, const ConstTensorView& dense, const char* op) {
  check_view(a, "a");
  check_dense_operand(a.desc, a.memory, dense, op);
}

void check_dense_operand(const CooDesc& a, Memory memory, const ConstTensorView& dense,
                         const char* op) {
  check_view(dense, "dense");
  EWISE_EXPECTS(memory == dense.memory, op, ": a is in ", memory_name(memory),
                " memory but dense is in ", memory_name(dense.memory), " memory");
  const std::size_t elem = dtype_size(dense.desc.dtype);
  EWISE_EXPECTS(dense.memory != Memory::device || dense.desc.numel() == 0 ||
                    reinterpret_cast<std::uintptr_t>(dense.data) % elem == 0,
                op, ": dense operand data ", dense.data, " is not aligned to its ", elem,
                "-byte ", dtype_name(dense.desc.dtype), " elements");
  EWISE_EXPECTS(dense.desc.rank() <= 2, op, ": dense operand ", dense.desc.shape.str(),
                " has rank ", dense.desc.rank(), "; it must broadcast to the sparse shape (",
                a.nrows, ",", a.ncols, ")");
  (void)broadcast_strides(dense.desc, Dims{a.nrows, a.ncols});  // throws unless it does
}

DenseOperand dense_operand(const CooDesc& a, const ConstTensorView& dense) {
  const Dims s = broadcast_strides(dense.desc, Dims{a.nrows, a.ncols});
  return {dense.data, s[0], s[1]};
}

namespace {

/// check_no_partial_overlap of out with each of a's arrays: a.vals, a.rows, a.cols.
void check_no_partial_overlap_with(const CooView& a, const TensorView& out) {
  const CooDesc& d = a.desc;
  const DType index = d.index == IndexType::i32 ? DType::i32 : DType::i64;
  const auto array = [&](const void* p, DType t) {
    return ConstTensorView(p, TensorDesc::contiguous(t, Dims{d.nnz}), a.memory);
  };
  check_no_partial_overlap(out, array(a.vals, d.dtype), "a.vals");
  check_no_partial_overlap(out, array(a.rows, index), "a.rows");
  check_no_partial_overlap(out, array(a.cols, index), "a.cols");
}

}  // namespace

void check_values_output(const CooView& a, const ConstTensorView& dense,
                         const TensorView& out_vals, DType result, bool drop_zeros) {
  check_view(out_vals, "out_vals");
  const CooDesc& d = a.desc;
  EWISE_EXPECTS(!drop_zeros,
                "multiply_values keeps every entry of a (its pattern): drop_zeros must be false");
  EWISE_EXPECTS(out_vals.desc.dtype == result, "multiply_values: out_vals is ",
                dtype_name(out_vals.desc.dtype), " but a (", dtype_name(d.dtype), ") times dense (",
                dtype_name(dense.desc.dtype), ") is ", dtype_name(result));
  EWISE_EXPECTS(out_vals.desc.rank() == 1 && out_vals.desc.shape[0] == d.nnz &&
                    out_vals.desc.is_contiguous(),
                "multiply_values: out_vals must be a contiguous 1-D tensor of a.nnz = ", d.nnz,
                " elements; got ", out_vals.desc.str());
  EWISE_EXPECTS(out_vals.memory == a.memory, "multiply_values: a is in ", memory_name(a.memory),
                " memory but out_vals is in ", memory_name(out_vals.memory), " memory");
  const std::size_t elem = dtype_size(result);
  EWISE_EXPECTS(out_vals.memory != Memory::device || d.nnz == 0 ||
                    reinterpret_cast<std::uintptr_t>(out_vals.data) % elem == 0,
                "multiply_values: out_vals data ", out_vals.data, " is not aligned to its ", elem,
                "-byte ", dtype_name(result), " elements");
  check_no_partial_overlap_with(a, out_vals);
  check_no_partial_overlap(out_vals, dense, "dense");
  // Exact aliasing of the other arrays (which check_no_partial_overlap lets through).
  EWISE_EXPECTS(d.nnz == 0 || (out_vals.data != a.rows && out_vals.data != a.cols),
                "multiply_values: out_vals is one of a's index arrays");
  EWISE_EXPECTS(d.nnz == 0 || out_vals.data != dense.data,
                "multiply_values: out_vals is the dense operand's data");
}

void check_union_op(BinaryOp op, const char* fn) {
  EWISE_EXPECTS(op == BinaryOp::add || op == BinaryOp::sub || op == BinaryOp::min ||
                    op == BinaryOp::max,
                fn, ": the union operations are add, subtract, minimum and maximum; got ",
                op_name(op),
                op == BinaryOp::mul ? " (the intersection is multiply)" : "");
}

void check_scalar_union(BinaryOp op, const Scalar& s, const char* form) {
  EWISE_EXPECTS(op == BinaryOp::add || op == BinaryOp::sub, "combine: ", op_name(op), " of a ",
                form, " matrix and a scalar is not sparse (it is defined at every coordinate); "
                "pass the scalar as a 0-d dense operand for a dense result");
  bool zero = false;
  switch (dtype_kind(s.dtype())) {
    case DTypeKind::floating: zero = s.as_double() == 0; break;
    case DTypeKind::unsigned_int: zero = s.as_uint() == 0; break;
    default: zero = s.as_int() == 0;
  }
  EWISE_EXPECTS(zero, "combine: ", op_name(op), " of a ", form, " matrix and the nonzero scalar ",
                s.str(), " would store a value at every coordinate (SciPy refuses it too); pass "
                "it as a 0-d dense operand for a dense result");
}

double union_fill(double fill, DType dtype, const char* what) {
  switch (dtype) {
    case DType::f16: return f16_bits_to_float(float_to_f16_bits(static_cast<float>(fill)));
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(fill)));
    case DType::f32: return static_cast<float>(fill);
    case DType::f64: return fill;
    case DType::i32:
    case DType::i64: {
      const double lo = dtype == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
      const double hi = dtype == DType::i32 ? 2147483648.0 : 9223372036854775808.0;
      EWISE_EXPECTS(fill == std::trunc(fill) && fill >= lo && fill < hi, what, " = ", fill,
                    " is not an integer that ", dtype_name(dtype), " holds");
      return fill;
    }
    default: break;
  }
  EWISE_EXPECTS(false, what, ": ", dtype_name(dtype), " is not a sparse dtype");
  return 0;
}

void check_dense_result_options(bool drop_zeros, const char* fn) {
  EWISE_EXPECTS(!drop_zeros, fn, ": a dense result has no entries to drop: drop_zeros must be ",
                "false");
}

void check_dense_output(const CooDesc& d, Memory memory, bool row_sparse,
                        const ConstTensorView* dense, const TensorView& out, DType result,
                        const char* fn) {
  const char* name = dense ? "out" : "dense";
  // An output of another dtype would round the result a second time.
  EWISE_EXPECTS(out.desc.dtype == result, fn, ": ", name, " is ", dtype_name(out.desc.dtype),
                " but the result of ", dense ? dtype_name(dense->desc.dtype) : name, " and a (",
                dtype_name(d.dtype), ") is ", dtype_name(result), "; ", name, " needs that dtype");
  EWISE_EXPECTS(out.desc.rank() == 2 && out.desc.shape[0] == d.nrows &&
                    out.desc.shape[1] == d.ncols,
                fn, ": ", name, " must be a (", d.nrows, ",", d.ncols, ") tensor",
                row_sparse ? detail::concat(" for row-sparse a (", d.str(), ")") : std::string(),
                "; got ", out.desc.str());
  EWISE_EXPECTS(out.memory == memory, fn, ": a is in ", memory_name(memory), " memory but ",
                name, " is in ", memory_name(out.memory), " memory");
  const std::size_t elem = dtype_size(result);
  EWISE_EXPECTS(out.memory != Memory::device || out.desc.numel() == 0 ||
                    reinterpret_cast<std::uintptr_t>(out.data) % elem == 0,
                fn, ": ", name, " data ", out.data, " is not aligned to its ", elem, "-byte ",
                dtype_name(result), " elements");
  EWISE_EXPECTS(out.desc.is_non_overlapping(), fn, ": ", name, " ", out.desc.str(),
                " revisits elements (a stride of 0 or strides that overlap); it is written");
}

void check_union_output(const CooView& a, const ConstTensorView* dense, const TensorView& out,
                        DType result, const char* fn) {
  check_dense_output(a.desc, a.memory, false, dense, out, result, fn);
  // a's arrays are 1-D and out is 2-D, so any overlap is one (none counts as exact).
  check_no_partial_overlap_with(a, out);
  if (dense) check_no_partial_overlap(out, *dense, "dense");
}

void check_result_memory(Memory inputs, Memory result, const char* op) {
  EWISE_EXPECTS(inputs == result, op, ": the inputs are in ", memory_name(inputs),
                " memory but the result type lives in ", memory_name(result),
                " memory (use the ", inputs == Memory::host ? "Host" : "Device",
                " result type, or copy the inputs)");
}

void throw_out_of_range(const char* what, const CooDesc& d, std::int64_t k, std::int64_t row,
                        std::int64_t col) {
  detail::throw_invalid(__FILE__, __LINE__,
                        detail::concat(what, ": entry ", k, " is at (", row, ", ", col,
                                       "), outside its ", d.nrows, "x", d.ncols, " shape"));
}

void throw_not_increasing(const char* what, std::int64_t k, std::int64_t prev_row,
                          std::int64_t prev_col, std::int64_t row, std::int64_t col) {
  detail::throw_invalid(
      __FILE__, __LINE__,
      detail::concat(what, " is marked canonical but entry ", k, " at (", row, ", ", col,
                     ") does not come after entry ", k - 1, " at (", prev_row, ", ", prev_col,
                     ") (canonical: sorted by row * ncols + col, no duplicates)"));
}

void throw_offsets_decrease(const char* what, const CompressedView& v, std::int64_t k,
                            std::int64_t at_k, std::int64_t at_next) {
  detail::throw_invalid(__FILE__, __LINE__,
                        detail::concat(what, " (", format_name(v.format), " ", v.desc.str(),
                                       "): offsets decrease: offsets[", k, "] = ", at_k,
                                       " > offsets[", k + 1, "] = ", at_next));
}

void throw_offsets_ends(const char* what, const CompressedView& v, std::int64_t first,
                        std::int64_t last) {
  detail::throw_invalid(
      __FILE__, __LINE__,
      detail::concat(what, " (", format_name(v.format), " ", v.desc.str(), "): offsets run from ",
                     first, " to ", last, " (offsets[", v.major_extent(),
                     "]), not from 0 to nnz = ", v.desc.nnz));
}

void throw_index_out_of_range(const char* what, const CompressedView& v, std::int64_t k,
                              std::int64_t major, std::int64_t minor) {
  const bool csr = v.format == SparseFormat::csr;
  detail::throw_invalid(
      __FILE__, __LINE__,
      detail::concat(what, " (", format_name(v.format), " ", v.desc.str(), "): entry ", k,
                     " is at (", csr ? major : minor, ", ", csr ? minor : major,
                     "), outside its ", v.desc.nrows, "x", v.desc.ncols, " shape"));
}

void throw_slice_not_increasing(const char* what, const CompressedView& v, std::int64_t k,
                                std::int64_t major, std::int64_t prev, std::int64_t minor) {
  const bool csr = v.format == SparseFormat::csr;
  const char* slice = csr ? "row" : "column";
  const char* index = csr ? "column" : "row";
  detail::throw_invalid(
      __FILE__, __LINE__,
      detail::concat(what, " (", format_name(v.format), " ", v.desc.str(),
                     ") is marked canonical but in ", slice, " ", major, " entry ", k, " (",
                     index, " ", minor, ") does not come after entry ", k - 1, " (", index, " ",
                     prev, ") (canonical: indices strictly increasing within each ", slice,
                     ")"));
}

std::int64_t host_index(const void* p, IndexType t, std::int64_t k) {
  if (t == IndexType::i32) {
    std::int32_t v;
    std::memcpy(&v, static_cast<const std::byte*>(p) + k * 4, 4);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, static_cast<const std::byte*>(p) + k * 8, 8);
  return v;
}

namespace {

/// Throws for the first entry of [lo, hi) outside the shape or, canonical, not after the one
/// before it (entry lo - 1 included).
void throw_first_bad(const CooView& m, const char* what, std::int64_t lo, std::int64_t hi) {
  const CooDesc& d = m.desc;
  for (std::int64_t k = lo; k < hi; ++k) {
    const std::int64_t r = host_index(m.rows, d.index, k), c = host_index(m.cols, d.index, k);
    if (r < 0 || r >= d.nrows || c < 0 || c >= d.ncols) throw_out_of_range(what, d, k, r, c);
    if (!d.canonical || k == 0) continue;
    const std::int64_t pr = host_index(m.rows, d.index, k - 1);
    const std::int64_t pc = host_index(m.cols, d.index, k - 1);
    if (r < pr || (r == pr && c <= pc)) throw_not_increasing(what, k, pr, pc, r, c);
  }
}

/// Blocks of entries checked without a branch (the first bad entry found again for the message;
/// per entry, with a branch each, the checks took as long as the CPU backend's merge of the two
/// operands).
constexpr std::int64_t kCheckBlock = 4096;

/// keys_increase for index type I.
template <class I>
bool keys_increase_of(const CooView& m, std::int64_t lo, std::int64_t hi) {
  const I* rows = static_cast<const I*>(m.rows);
  const I* cols = static_cast<const I*>(m.cols);
  const std::int64_t nc = m.desc.ncols;
  const auto key = [&](std::int64_t k) {
    return static_cast<std::int64_t>(rows[k]) * nc + cols[k];
  };
  for (std::int64_t b = std::max<std::int64_t>(lo, 1); b < hi; b += kCheckBlock) {
    bool bad = false;
    const std::int64_t e = std::min(hi, b + kCheckBlock);
    for (std::int64_t k = b; k < e; ++k) bad |= key(k) <= key(k - 1);
    if (bad) return false;
  }
  return true;
}

/// check_indices_host for index type I: a block's indices as unsigned against the extents (so
/// a negative one is out too), then, marked canonical, its keys (keys_increase).
template <class I>
void check_indices_of(const CooView& m, const char* what) {
  const CooDesc& d = m.desc;
  const I* rows = static_cast<const I*>(m.rows);
  const I* cols = static_cast<const I*>(m.cols);
  const auto nr = static_cast<std::uint64_t>(d.nrows), nc = static_cast<std::uint64_t>(d.ncols);
  const auto u = [](I x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x)); };
  for (std::int64_t lo = 0; lo < d.nnz; lo += kCheckBlock) {
    const std::int64_t hi = std::min(d.nnz, lo + kCheckBlock);
    bool bad = false;
    for (std::int64_t k = lo; k < hi; ++k) bad |= (u(rows[k]) >= nr) | (u(cols[k]) >= nc);
    if (d.canonical && !bad) bad = !keys_increase_of<I>(m, lo, hi);
    if (bad) throw_first_bad(m, what, lo, hi);
  }
}

}  // namespace

void check_indices_host(const CooView& m, const char* what) {
  if (m.desc.index == IndexType::i32) check_indices_of<std::int32_t>(m, what);
  else check_indices_of<std::int64_t>(m, what);
}

bool keys_increase(const CooView& m, std::int64_t lo, std::int64_t hi) {
  return m.desc.index == IndexType::i32 ? keys_increase_of<std::int32_t>(m, lo, hi)
                                        : keys_increase_of<std::int64_t>(m, lo, hi);
}

void check_canonical_for_csr(const CooView& a) {
  EWISE_EXPECTS(a.desc.canonical, "coo_to_csr_row_offsets: the matrix (", a.desc.str(),
                ") is not marked canonical; coalesce it first");
  EWISE_EXPECTS(a.desc.nrows < INT64_MAX, "coo_to_csr_row_offsets: the matrix (", a.desc.str(),
                ") has ", a.desc.nrows, " rows; its nrows + 1 offsets do not fit int64");
}

DType csr_offsets_dtype(const CooDesc& a) {
  return a.index == IndexType::i32 && a.nnz <= INT32_MAX ? DType::i32 : DType::i64;
}

CooDesc check_dense_to_coo(const ConstTensorView& dense, IndexType index) {
  check_view(dense, "dense");
  EWISE_EXPECTS(dense.desc.rank() == 2, "dense_to_coo: the tensor ", dense.desc.shape.str(),
                " has rank ", dense.desc.rank(), "; a matrix has rank 2");
  CooDesc d{dense.desc.shape[0], dense.desc.shape[1], 0, index, dense.desc.dtype, true};
  d.validate();
  return d;
}

}  // namespace ewise::sparse_detail
