// sparse/api.cpp — the public sparse entry points: check each argument once, find the result
// dtype (promote.hpp), then run on the backend where the inputs live (GPU: the operands' memory
// and the stream checked against the current device (src/residency.hpp), the operands of
// another dtype converted, then the device_* functions of internal.hpp; CPU: the index checks,
// the conversions, then the host_* functions of internal.hpp, sparse/reference.cpp).
// coo_algorithm_name and parse_coo_algorithm are in select.cpp, beside the rule.
#include <string_view>
#include <type_traits>

#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/sparse.hpp"
#include "internal.hpp"
#include "promote.hpp"
#include "residency.hpp"
#include "select.hpp"

namespace ewise {

using namespace sparse_detail;

namespace {

/// Where a result type lives.
template <class Result>
struct ResultMemory;
template <>
struct ResultMemory<DeviceCoo> : std::integral_constant<Memory, Memory::device> {};
template <>
struct ResultMemory<HostCoo> : std::integral_constant<Memory, Memory::host> {};
template <>
struct ResultMemory<DeviceTensor> : std::integral_constant<Memory, Memory::device> {};
template <>
struct ResultMemory<HostTensor> : std::integral_constant<Memory, Memory::host> {};

/// The union's operation and fills (union_fill) for a result of `dtype`; op already checked.
UnionArgs union_args(BinaryOp op, DType dtype, const SparseOptions& options) {
  return {op, union_fill(options.fill_a, dtype, "fill_a"),
          union_fill(options.fill_b, dtype, "fill_b")};
}

/// A dense operand's part in promotion (a 0-d one ranks below tensors under PyTorch's rule).
OperandType dense_type(const ConstTensorView& dense, Promotion rule) {
  return Operand(dense).type(rule);
}

/// The CPU backend's index check of a host view (check_indices_host) where validate_indices asks
/// for it. Off, the caller vouches for the indices, as for device views (bad ones are then
/// undefined behaviour): the CSR and CSC forms pass views they have checked themselves, and a
/// trusted union of two 4096² 10% matrices spent a fifth of its time in the check.
void check_host_indices(const SparseOptions& options, const CooView& v, const char* what) {
  if (options.validate_indices) check_indices_host(v, what);
}

/// The checks combine(op, a, dense[, out]) runs before it looks at out, in order, and the
/// call's result dtype.
struct CombineDense {
  DType result;
  UnionArgs union_args;
};
CombineDense check_combine_dense(BinaryOp op, const CooView& a, const ConstTensorView& dense,
                                 const SparseOptions& options) {
  check_union_op(op, "combine");
  check_dense_operand(a, dense, "combine");
  check_dense_result_options(options.drop_zeros, "combine");
  const DType r = result_dtype(op, options.promotion, a.desc.dtype,
                               dense_type(dense, options.promotion));
  return {r, union_args(op, r, options)};
}

/// combine(op, a, dense, out) on arguments checked and, for device views, resident: the
/// backend where a lives, on a and dense in the result dtype.
void combine_checked(const CooView& a, const ConstTensorView& dense, const CombineDense& c,
                     const TensorView& out, const SparseOptions& options, cudaStream_t stream) {
  Promoted p(c.result, options.memory, stream);
  if (a.memory == Memory::host) {
    check_host_indices(options, a, "a");
    const CooView pa = p.coo(a);
    host_combine_dense(c.union_args.op, c.union_args.fill_a, pa,
                       dense_operand(pa.desc, p.dense(dense)), out);
  } else {
    const detail::CallMemory memory(options.memory);
    const CooView pa = p.coo(a);
    device_combine_dense(pa, dense_operand(pa.desc, p.dense(dense)), out, c.union_args, options,
                         stream);
  }
}

/// a (checked, and resident for device views) times a dense or scalar factor made for the
/// result dtype `to`: the backend where a lives.
template <class Result, class Factor>
Result multiply_checked(const CooView& a, DType to, Factor&& factor, const SparseOptions& options,
                        cudaStream_t stream) {
  Promoted p(to, options.memory, stream);
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    const CooView pa = p.coo(a);
    return host_multiply_dense(pa, factor(p, pa), options);
  } else {
    const detail::CallMemory memory(options.memory);
    const CooView pa = p.coo(a);
    return device_multiply_dense(pa, factor(p, pa), options, stream);
  }
}

}  // namespace

CooAlgorithm select_coo_algorithm(const CooView& a, const CooView& b, CooAlgorithm requested) {
  check_operands(a, b);
  return resolve_algorithm(a.desc, b.desc, requested);
}

void check_indices(const CooView& coo, const char* what, cudaStream_t stream) {
  check_view(coo, what);
  if (coo.memory == Memory::host) {
    check_indices_host(coo, what);
  } else {
    detail::DeviceOperands().add(coo, what).check(stream);
    device_check_indices(coo, what, stream);
  }
}

CooView coo_view(const ConstTensorView& rows, const ConstTensorView& cols,
                 const ConstTensorView& vals, std::int64_t nrows, std::int64_t ncols,
                 bool canonical) {
  check_view(rows, "rows");
  check_view(cols, "cols");
  check_view(vals, "vals");
  for (const ConstTensorView* v : {&rows, &cols, &vals})
    EWISE_EXPECTS(v->desc.rank() == 1 && v->desc.is_contiguous(),
                  "coo_view: rows, cols and vals must be contiguous 1-D tensors; got ",
                  v->desc.str());
  const std::int64_t nr = rows.desc.shape[0], nc = cols.desc.shape[0], nv = vals.desc.shape[0];
  EWISE_EXPECTS(nr == nc && nc == nv, "coo_view: rows, cols and vals lengths differ: ", nr,
                ", ", nc, ", ", nv);
  EWISE_EXPECTS(rows.desc.dtype == cols.desc.dtype &&
                    (rows.desc.dtype == DType::i32 || rows.desc.dtype == DType::i64),
                "coo_view: rows and cols must both be i32 or both i64; got ",
                dtype_name(rows.desc.dtype), " and ", dtype_name(cols.desc.dtype));
  EWISE_EXPECTS(rows.memory == cols.memory && cols.memory == vals.memory,
                "coo_view: rows, cols and vals are not all in one memory (",
                memory_name(rows.memory), ", ", memory_name(cols.memory), ", ",
                memory_name(vals.memory), ")");
  const IndexType index = rows.desc.dtype == DType::i32 ? IndexType::i32 : IndexType::i64;
  const CooView v{rows.data, cols.data, vals.data,
                  CooDesc{nrows, ncols, nr, index, vals.desc.dtype, canonical}, rows.memory};
  check_view(v, "coo_view");
  return v;
}

template <class Result>
Result multiply(const CooView& a, const CooView& b, const SparseOptions& options,
                cudaStream_t stream) {
  check_operands(a, b);
  check_result_memory(a.memory, ResultMemory<Result>::value, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               {b.desc.dtype, Weight::tensor});
  Promoted p(r, options.memory, stream);
  // The CPU backend has one algorithm: the requested one is only checked to be a known name,
  // not held to the GPU algorithms' size limits.
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    EWISE_EXPECTS(std::string_view(coo_algorithm_name(options.algorithm)) != "unknown",
                  "multiply: unknown COO algorithm ", static_cast<int>(options.algorithm));
    check_host_indices(options, a, "a");
    check_host_indices(options, b, "b");
    return host_multiply(p.coo(a), p.coo(b), options);
  } else {
    const CooAlgorithm algorithm = resolve_algorithm(a.desc, b.desc, options.algorithm);
    detail::DeviceOperands().add(a, "a").add(b, "b").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_multiply(p.coo(a), p.coo(b), algorithm, options, stream);
  }
}

template <class Result>
Result multiply(const CooView& a, const ConstTensorView& dense, const SparseOptions& options,
                cudaStream_t stream) {
  check_dense_operand(a, dense);
  check_result_memory(a.memory, ResultMemory<Result>::value, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               dense_type(dense, options.promotion));
  if constexpr (ResultMemory<Result>::value == Memory::device)
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
  return multiply_checked<Result>(
      a, r, [&](Promoted& p, const CooView& pa) { return dense_operand(pa.desc, p.dense(dense)); },
      options, stream);
}

template <class Result>
Result multiply(const CooView& a, const Scalar& s, const SparseOptions& options,
                cudaStream_t stream) {
  check_view(a, "a");
  check_result_memory(a.memory, ResultMemory<Result>::value, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype, s.type());
  const DenseOperand factor = scalar_factor(BinaryOp::multiply, a, s, r, options.promotion);
  if constexpr (ResultMemory<Result>::value == Memory::device)
    detail::DeviceOperands().add(a, "a").check(stream);
  return multiply_checked<Result>(
      a, r, [&](Promoted&, const CooView&) { return factor; }, options, stream);
}

void multiply_values(const CooView& a, const ConstTensorView& dense, const TensorView& out_vals,
                     const SparseOptions& options, cudaStream_t stream) {
  check_dense_operand(a, dense);
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               dense_type(dense, options.promotion));
  check_values_output(a, dense, out_vals, r, options.drop_zeros);
  Promoted p(r, options.memory, stream);
  if (a.memory == Memory::host) {
    check_host_indices(options, a, "a");
    const CooView pa = p.coo(a);
    host_multiply_values(pa, dense_operand(pa.desc, p.dense(dense)), out_vals);
  } else {
    detail::DeviceOperands().add(a, "a").add(dense, "dense").add(out_vals, "out_vals").check(
        stream);
    const CooView pa = p.coo(a);
    device_multiply_values(pa, dense_operand(pa.desc, p.dense(dense)), out_vals, options, stream);
  }
}

template <class Result>
Result combine(BinaryOp op, const CooView& a, const CooView& b, const SparseOptions& options,
               cudaStream_t stream) {
  check_union_op(op, "combine");
  check_operands(a, b, "combine");
  check_result_memory(a.memory, ResultMemory<Result>::value, "combine");
  const DType r = result_dtype(op, options.promotion, a.desc.dtype,
                               {b.desc.dtype, Weight::tensor});
  const UnionArgs u = union_args(op, r, options);
  Promoted p(r, options.memory, stream);
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    check_host_indices(options, b, "b");
    return host_combine(p.coo(a), p.coo(b), u, options);
  } else {
    detail::DeviceOperands().add(a, "a").add(b, "b").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_combine(p.coo(a), p.coo(b), u, options, stream);
  }
}

template <class Result>
Result combine(BinaryOp op, const CooView& a, const Scalar& s, const SparseOptions& options,
               cudaStream_t stream) {
  check_union_op(op, "combine");
  check_view(a, "a");
  check_result_memory(a.memory, ResultMemory<Result>::value, "combine");
  const DType r = result_dtype(op, options.promotion, a.desc.dtype, s.type());
  check_scalar_union(op, s, "COO");
  // a + 0 and a - 0 are a (SciPy returns a copy): its canonical form, in the result dtype.
  Promoted p(r, options.memory, stream);
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    return host_coalesce(p.coo(a), options);
  } else {
    detail::DeviceOperands().add(a, "a").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_coalesce(p.coo(a), options, stream);
  }
}

void combine(BinaryOp op, const CooView& a, const ConstTensorView& dense, const TensorView& out,
             const SparseOptions& options, cudaStream_t stream) {
  const CombineDense c = check_combine_dense(op, a, dense, options);
  check_view(out, "out");
  check_union_output(a, &dense, out, c.result, "combine");
  if (a.memory == Memory::device)
    detail::DeviceOperands().add(a, "a").add(dense, "dense").add(out, "out").check(stream);
  combine_checked(a, dense, c, out, options, stream);
}

template <class Result>
Result combine(BinaryOp op, const CooView& a, const ConstTensorView& dense,
               const SparseOptions& options, cudaStream_t stream) {
  const CombineDense c = check_combine_dense(op, a, dense, options);
  check_result_memory(a.memory, ResultMemory<Result>::value, "combine");
  if constexpr (ResultMemory<Result>::value == Memory::device)
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
  // The result is made here to fit: the checks of an out given by the caller do not apply.
  Result out(c.result, Dims{a.desc.nrows, a.desc.ncols}, stream, options.memory);
  combine_checked(a, dense, c, out.view(), options, stream);
  return out;
}

void accumulate(BinaryOp op, const TensorView& dense, const CooView& a,
                const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "accumulate");
  check_view(a, "a");
  const DType r = accumulate_dtype(op, dense, a.desc.dtype, options);
  check_union_output(a, nullptr, dense, r, "accumulate");
  Promoted p(r, options.memory, stream);
  if (a.memory == Memory::host) {
    check_host_indices(options, a, "a");
    host_accumulate(op, dense, p.coo(a));
  } else {
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
    const detail::CallMemory memory(options.memory);
    device_accumulate(dense, p.coo(a), op, options, stream);
  }
}

template <class Result>
Result coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  check_view(a, "a");
  check_result_memory(a.memory, ResultMemory<Result>::value, "coalesce");
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    return host_coalesce(a, options);
  } else {
    detail::DeviceOperands().add(a, "a").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_coalesce(a, options, stream);
  }
}

template <class Result>
Result dense_to_coo(const ConstTensorView& dense, IndexType index, cudaStream_t stream,
                    MemoryResource* memory) {
  const CooDesc desc = check_dense_to_coo(dense, index);
  check_result_memory(dense.memory, ResultMemory<Result>::value, "dense_to_coo");
  if constexpr (ResultMemory<Result>::value == Memory::host) return host_dense_to_coo(dense, desc);
  else {
    detail::DeviceOperands().add(dense, "dense").check(stream);
    const detail::CallMemory call_memory(memory);
    return device_dense_to_coo(dense, desc, stream);
  }
}

template <class Result>
Result coo_to_dense(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  check_view(a, "a");
  check_result_memory(a.memory, ResultMemory<Result>::value, "coo_to_dense");
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    return host_coo_to_dense(a);
  } else {
    detail::DeviceOperands().add(a, "a").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_coo_to_dense(a, options, stream);
  }
}

template <class Result>
Result coo_to_csr_row_offsets(const CooView& a, const SparseOptions& options,
                              cudaStream_t stream) {
  check_view(a, "a");
  check_canonical_for_csr(a);
  check_result_memory(a.memory, ResultMemory<Result>::value, "coo_to_csr_row_offsets");
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_host_indices(options, a, "a");
    return host_csr_row_offsets(a);
  } else {
    detail::DeviceOperands().add(a, "a").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_csr_row_offsets(a, options, stream);
  }
}

#define EWISE_SPARSE_INSTANTIATE(Coo, Tensor)                                                   \
  template Coo multiply<Coo>(const CooView&, const CooView&, const SparseOptions&, cudaStream_t); \
  template Coo multiply<Coo>(const CooView&, const ConstTensorView&, const SparseOptions&,      \
                             cudaStream_t);                                                     \
  template Coo multiply<Coo>(const CooView&, const Scalar&, const SparseOptions&, cudaStream_t); \
  template Coo combine<Coo>(BinaryOp, const CooView&, const Scalar&, const SparseOptions&,       \
                            cudaStream_t);                                                      \
  template Coo coalesce<Coo>(const CooView&, const SparseOptions&, cudaStream_t);               \
  template Coo combine<Coo>(BinaryOp, const CooView&, const CooView&, const SparseOptions&,      \
                            cudaStream_t);                                                      \
  template Tensor combine<Tensor>(BinaryOp, const CooView&, const ConstTensorView&,             \
                                  const SparseOptions&, cudaStream_t);                          \
  template Coo dense_to_coo<Coo>(const ConstTensorView&, IndexType, cudaStream_t,                \
                                 MemoryResource*);                                              \
  template Tensor coo_to_dense<Tensor>(const CooView&, const SparseOptions&, cudaStream_t);     \
  template Tensor coo_to_csr_row_offsets<Tensor>(const CooView&, const SparseOptions&,          \
                                                 cudaStream_t);
EWISE_SPARSE_INSTANTIATE(DeviceCoo, DeviceTensor)
EWISE_SPARSE_INSTANTIATE(HostCoo, HostTensor)
#undef EWISE_SPARSE_INSTANTIATE

}  // namespace ewise
