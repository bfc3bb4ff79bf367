// sparse/rows.cpp — row-sparse operands (ewise/coo.hpp's RowSparseView): the view over tensors,
// the public accumulate, combine and coalesce (checks, the values converted to the result
// dtype, the backend where the inputs live), the index checks' messages, and the CPU backend's
// accumulate, combine and coalesce. The GPU backend's are rows.cu and rows_union.cu.
#include <algorithm>
#include <numeric>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "host_elem.hpp"
#include "host_sort.hpp"
#include "internal.hpp"
#include "promote.hpp"
#include "residency.hpp"

namespace ewise {

using namespace sparse_detail;

namespace {

DType index_dtype(IndexType t) { return t == IndexType::i32 ? DType::i32 : DType::i64; }

/// a's row indices and values as 1-D tensors (for the overlap and residency checks and the
/// values' conversion).
ConstTensorView rows_tensor(const RowSparseView& a) {
  return {a.rows, TensorDesc::contiguous(index_dtype(a.desc.index), Dims{a.desc.nnz}), a.memory};
}
ConstTensorView vals_tensor(const RowSparseView& a) {
  return {a.vals, TensorDesc::contiguous(a.desc.dtype, Dims{a.desc.nnz * a.desc.ncols}),
          a.memory};
}

/// accumulate's checks of dense (check_view accepted it) against a and the result dtype.
void check_rows_target(const RowSparseView& a, const TensorView& dense, DType result) {
  check_dense_output(a.desc, a.memory, true, nullptr, dense, result, "accumulate");
  // a's arrays are 1-D and dense 2-D: any overlap is a partial one.
  check_no_partial_overlap(dense, vals_tensor(a), "a.vals");
  check_no_partial_overlap(dense, rows_tensor(a), "a.rows");
}

/// Calls f(rows) with a host view's row indices as a typed pointer (the type switched once).
template <class F>
void with_host_rows(const RowSparseView& a, F&& f) {
  if (a.desc.index == IndexType::i32) f(static_cast<const std::int32_t*>(a.rows));
  else f(static_cast<const std::int64_t*>(a.rows));
}

/// The stored rows of a (and b) in the order they are summed: storage order, stably sorted by
/// row index unless already increasing (so each row's duplicates stay in storage order, a's
/// before b's); rows[i] is the row index of stored row order[i], b's numbered from a's nnz on.
void summing_order(const RowSparseView& a, const RowSparseView* b, std::vector<std::int64_t>& rows,
                   std::vector<std::int64_t>& order) {
  const std::int64_t na = a.desc.nnz, n = na + (b ? b->desc.nnz : 0);
  rows.resize(static_cast<std::size_t>(n));
  with_host_rows(a, [&](const auto* r) { std::copy(r, r + na, rows.begin()); });
  if (b) with_host_rows(*b, [&](const auto* r) { std::copy(r, r + (n - na), rows.begin() + na); });
  order.resize(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (!std::is_sorted(rows.begin(), rows.end())) {
    CooDesc keys = a.desc;  // the row indices: a matrix of one column's absolute indices
    keys.ncols = 1;
    sort_by_key(rows, order, key_bits(keys));
  }
}

}  // namespace

namespace sparse_detail {

void throw_row_out_of_range(const char* what, const CooDesc& d, std::int64_t k, std::int64_t row) {
  detail::throw_invalid(__FILE__, __LINE__,
                        detail::concat(what, ": stored row ", k, " has row index ", row,
                                       ", outside [0, ", d.nrows, ")"));
}

void throw_rows_not_increasing(const char* what, std::int64_t k, std::int64_t prev,
                               std::int64_t row) {
  detail::throw_invalid(__FILE__, __LINE__,
                        detail::concat(what, " is marked canonical but stored row ", k,
                                       " (row index ", row, ") does not come after stored row ",
                                       k - 1, " (row index ", prev,
                                       ") (canonical: row indices strictly increasing)"));
}

void check_row_indices_host(const RowSparseView& a, const char* what) {
  with_host_rows(a, [&](const auto* rows) {
    for (std::int64_t k = 0; k < a.desc.nnz; ++k) {
      const std::int64_t r = rows[k];
      if (r < 0 || r >= a.desc.nrows) throw_row_out_of_range(what, a.desc, k, r);
      if (a.desc.canonical && k > 0 && rows[k - 1] >= r)
        throw_rows_not_increasing(what, k, rows[k - 1], r);
    }
  });
}

void host_accumulate_rows(BinaryOp op, const TensorView& dense, const RowSparseView& a) {
  const std::int64_t n = a.desc.nnz, w = a.desc.ncols;
  if (n == 0 || w == 0) return;
  std::vector<std::int64_t> rows, order;
  summing_order(a, nullptr, rows, order);
  const std::int64_t rs = dense.desc.strides[0], cs = dense.desc.strides[1];
  with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    using C = typename E::compute;
    std::vector<C> sum(static_cast<std::size_t>(w));
    with_union_op(op, [&](auto f) {
      for (std::int64_t i = 0; i < n;) {
        const std::int64_t r = rows[i];
        for (std::int64_t c = 0; c < w; ++c) sum[c] = E::load(a.vals, order[i] * w + c);
        for (++i; i < n && rows[i] == r; ++i)
          for (std::int64_t c = 0; c < w; ++c)
            sum[c] = ops::Add{}(sum[c], E::load(a.vals, order[i] * w + c));
        for (std::int64_t c = 0; c < w; ++c) {
          const std::int64_t at = r * rs + c * cs;
          E::store(dense.data, at, f(E::load(dense.data, at), sum[c]));
        }
      }
    });
  });
}

HostRowSparse host_combine_rows(const RowSparseView& a, const RowSparseView* b,
                                const UnionArgs* u, const DenseOperand* factor) {
  const std::int64_t na = a.desc.nnz, n = na + (b ? b->desc.nnz : 0), w = a.desc.ncols;
  std::vector<std::int64_t> rows, order;
  summing_order(a, b, rows, order);
  std::int64_t runs = 0;
  for (std::int64_t i = 0; i < n; ++i) runs += i == 0 || rows[i] != rows[i - 1];
  CooDesc d = a.desc;
  d.nnz = runs;
  d.canonical = true;
  HostRowSparse out(d);
  with_host_rows(out.view(), [&](const auto* r) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(r)>>;
    auto* const out_rows = static_cast<I*>(out.rows());
    with_elem(d.dtype, [&](auto e) {
      using E = decltype(e);
      using C = typename E::compute;
      // the sums of a's and of b's rows at one row index, and whether each stores one
      std::vector<C> sa(static_cast<std::size_t>(w)), sb(static_cast<std::size_t>(w));
      const auto add_row = [&](std::vector<C>& sum, bool first, const void* vals, std::int64_t k) {
        for (std::int64_t c = 0; c < w; ++c) {
          const C x = E::load(vals, k * w + c);
          sum[c] = first ? x : ops::Add{}(sum[c], x);
        }
      };
      with_union_op(u ? u->op : BinaryOp::add, [&](auto f) {
        std::int64_t s = 0;
        for (std::int64_t i = 0; i < n; ++s) {
          const std::int64_t r = rows[i];
          bool has_a = false, has_b = false;
          for (; i < n && rows[i] == r; ++i) {
            const std::int64_t k = order[i];
            if (k < na) add_row(sa, !has_a, a.vals, k), has_a = true;
            else add_row(sb, !has_b, b->vals, k - na), has_b = true;
          }
          out_rows[s] = static_cast<I>(r);
          for (std::int64_t c = 0; c < w; ++c) {
            const C x = has_a ? sa[c] : static_cast<C>(u->fill_a);  // (coalesce: has_a always)
            const C y = u        ? f(x, has_b ? sb[c] : static_cast<C>(u->fill_b))
                        : factor ? ops::Mul{}(x, factor_at<E>(*factor, r, c))
                                 : x;
            E::store(out.vals(), s * w + c, y);
          }
        }
      });
    });
  });
  return out;
}

}  // namespace sparse_detail

RowSparseView row_sparse_view(const ConstTensorView& rows, const ConstTensorView& vals,
                              std::int64_t nrows, bool canonical) {
  check_view(rows, "rows");
  check_view(vals, "vals");
  EWISE_EXPECTS(rows.desc.rank() == 1 && rows.desc.is_contiguous() &&
                    (rows.desc.dtype == DType::i32 || rows.desc.dtype == DType::i64),
                "row_sparse_view: rows must be a contiguous 1-D i32 or i64 tensor; got ",
                rows.desc.str());
  EWISE_EXPECTS((vals.desc.rank() == 1 || vals.desc.rank() == 2) && vals.desc.is_contiguous() &&
                    vals.desc.shape[0] == rows.desc.shape[0],
                "row_sparse_view: vals must be a contiguous (nnz, ncols) or (nnz,) tensor with "
                "nnz = ", rows.desc.shape[0], " (the length of rows); got ", vals.desc.str());
  EWISE_EXPECTS(rows.memory == vals.memory, "row_sparse_view: rows are in ",
                memory_name(rows.memory), " memory but vals in ", memory_name(vals.memory));
  const std::int64_t ncols = vals.desc.rank() == 2 ? vals.desc.shape[1] : 1;
  const RowSparseView v{rows.data, vals.data,
                        CooDesc{nrows, ncols, rows.desc.shape[0],
                                rows.desc.dtype == DType::i32 ? IndexType::i32 : IndexType::i64,
                                vals.desc.dtype, canonical},
                        rows.memory};
  check_view(v, "row_sparse_view");
  return v;
}

void accumulate(BinaryOp op, const TensorView& dense, const RowSparseView& a,
                const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "accumulate");
  check_view(a, "a");
  const DType r = accumulate_dtype(op, dense, a.desc.dtype, options);
  check_rows_target(a, dense, r);
  if (a.memory == Memory::device)
    detail::DeviceOperands().add(rows_tensor(a), "a.rows").add(vals_tensor(a), "a.vals")
        .add(dense, "dense").check(stream);
  else
    check_row_indices_host(a, "a");
  // a's values in the result dtype (converted in one pass when they are of another).
  Promoted p(r, options.memory, stream);
  RowSparseView m = a;
  m.vals = p.dense(vals_tensor(a)).data;
  m.desc.dtype = r;
  if (a.memory == Memory::host) {
    host_accumulate_rows(op, dense, m);
  } else {
    const detail::CallMemory memory(options.memory);
    device_accumulate_rows(dense, m, op, options, stream);
  }
}

namespace {

/// Where a row-sparse result lives.
template <class Result>
constexpr Memory kRowResultMemory =
    std::is_same_v<Result, DeviceRowSparse> ? Memory::device : Memory::host;

/// combine's and coalesce's checks of a row-sparse operand's view and of the options.
void check_row_operand(const RowSparseView& a, const char* what, const SparseOptions& options,
                       const char* call) {
  check_view(a, what);
  EWISE_EXPECTS(!options.drop_zeros, call, ": drop_zeros is not supported for row-sparse "
                "operands (a stored row is kept whole)");
}

/// The row-sparse call on the backend where its operands live (host views' row indices checked
/// first where validate_indices asks): a with its values in `dtype`, b likewise (or null), u the
/// union's arguments (or null: coalesce), multiply's dense factor or scalar one (or neither:
/// b and u null where there is one).
template <class Result>
Result run_rows(const RowSparseView& a, const RowSparseView* b, const UnionArgs* u,
                const ConstTensorView* dense, const DenseOperand* scalar, DType dtype,
                const SparseOptions& options, cudaStream_t stream, const char* call) {
  check_result_memory(a.memory, kRowResultMemory<Result>, call);
  if (a.memory == Memory::host && options.validate_indices) {
    check_row_indices_host(a, "a");
    if (b) check_row_indices_host(*b, "b");
  }
  if constexpr (kRowResultMemory<Result> == Memory::device) {
    detail::DeviceOperands ops;
    ops.add(rows_tensor(a), "a.rows").add(vals_tensor(a), "a.vals");
    if (b) ops.add(rows_tensor(*b), "b.rows").add(vals_tensor(*b), "b.vals");
    if (dense) ops.add(*dense, "dense");
    ops.check(stream);
  }
  Promoted p(dtype, options.memory, stream);
  const auto promoted = [&](const RowSparseView& v) {
    RowSparseView m = v;
    m.vals = p.dense(vals_tensor(v)).data;
    m.desc.dtype = dtype;
    return m;
  };
  const RowSparseView pa = promoted(a);
  const RowSparseView pb = b ? promoted(*b) : RowSparseView{};
  const DenseOperand factor = dense    ? dense_operand(a.desc, p.dense(*dense))
                              : scalar ? *scalar
                                       : DenseOperand{};
  const DenseOperand* f = dense || scalar ? &factor : nullptr;
  if constexpr (kRowResultMemory<Result> == Memory::host) {
    return host_combine_rows(pa, b ? &pb : nullptr, u, f);
  } else {
    const detail::CallMemory memory(options.memory);
    return device_combine_rows(pa, b ? &pb : nullptr, u, f, options, stream);
  }
}

}  // namespace

template <class Result>
Result combine(BinaryOp op, const RowSparseView& a, const RowSparseView& b,
               const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "combine");
  check_row_operand(a, "a", options, "combine");
  check_row_operand(b, "b", options, "combine");
  EWISE_EXPECTS(a.desc.nrows == b.desc.nrows && a.desc.ncols == b.desc.ncols,
                "combine: row-sparse operands of different shapes: a is ", a.desc.nrows, " x ",
                a.desc.ncols, ", b ", b.desc.nrows, " x ", b.desc.ncols);
  EWISE_EXPECTS(a.desc.index == b.desc.index, "combine: a's row indices are ",
                index_name(a.desc.index), " but b's ", index_name(b.desc.index));
  EWISE_EXPECTS(a.memory == b.memory, "combine: a is in ", memory_name(a.memory),
                " memory but b in ", memory_name(b.memory));
  const DType r = result_dtype(op, options.promotion, a.desc.dtype,
                               {b.desc.dtype, Weight::tensor});
  const UnionArgs u{op, union_fill(options.fill_a, r, "fill_a"),
                    union_fill(options.fill_b, r, "fill_b")};
  return run_rows<Result>(a, &b, &u, nullptr, nullptr, r, options, stream, "combine");
}

template <class Result>
Result coalesce(const RowSparseView& a, const SparseOptions& options, cudaStream_t stream) {
  check_row_operand(a, "a", options, "coalesce");
  return run_rows<Result>(a, nullptr, nullptr, nullptr, nullptr, a.desc.dtype, options, stream,
                          "coalesce");
}

template <class Result>
Result multiply(const RowSparseView& a, const ConstTensorView& dense, const SparseOptions& options,
                cudaStream_t stream) {
  check_row_operand(a, "a", options, "multiply");
  check_dense_operand(a.desc, a.memory, dense, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               Operand(dense).type(options.promotion));
  return run_rows<Result>(a, nullptr, nullptr, &dense, nullptr, r, options, stream, "multiply");
}

template <class Result>
Result multiply(const RowSparseView& a, const Scalar& s, const SparseOptions& options,
                cudaStream_t stream) {
  check_row_operand(a, "a", options, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype, s.type());
  const DenseOperand factor{
      nullptr, 0, 0, true,
      detail::check_types(BinaryOp::multiply, vals_tensor(a), s, r, options.promotion).b_value};
  return run_rows<Result>(a, nullptr, nullptr, nullptr, &factor, r, options, stream, "multiply");
}

#define EWISE_ROWS_INSTANTIATE(RowSparse)                                                     \
  template RowSparse combine<RowSparse>(BinaryOp, const RowSparseView&, const RowSparseView&, \
                                        const SparseOptions&, cudaStream_t);                  \
  template RowSparse coalesce<RowSparse>(const RowSparseView&, const SparseOptions&,         \
                                         cudaStream_t);                                       \
  template RowSparse multiply<RowSparse>(const RowSparseView&, const ConstTensorView&,        \
                                         const SparseOptions&, cudaStream_t);                 \
  template RowSparse multiply<RowSparse>(const RowSparseView&, const Scalar&,                 \
                                         const SparseOptions&, cudaStream_t);
EWISE_ROWS_INSTANTIATE(DeviceRowSparse)
EWISE_ROWS_INSTANTIATE(HostRowSparse)
#undef EWISE_ROWS_INSTANTIATE

}  // namespace ewise
