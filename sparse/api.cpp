// sparse/api.cpp — the public sparse entry points: check each argument once, then run on the
// backend where the inputs live (GPU: the operands' memory and the stream checked against the
// current device (src/residency.hpp), then the device_* functions of internal.hpp; CPU: the
// index checks, then the host_* functions of internal.hpp, sparse/reference.cpp).
// coo_algorithm_name and parse_coo_algorithm are in select.cpp, beside the rule.
#include <string_view>
#include <type_traits>

#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/sparse.hpp"
#include "internal.hpp"
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

/// The union's operation and fills (union_fill) for operands of `dtype`; op already checked.
UnionArgs union_args(BinaryOp op, DType dtype, const SparseOptions& options) {
  return {op, union_fill(options.fill_a, dtype, "fill_a"),
          union_fill(options.fill_b, dtype, "fill_b")};
}

/// The checks combine(op, a, dense[, out]) runs before it looks at out, in order.
struct CombineDense {
  DenseOperand dense;
  UnionArgs union_args;
};
CombineDense check_combine_dense(BinaryOp op, const CooView& a, const ConstTensorView& dense,
                                 const SparseOptions& options) {
  check_union_op(op, "combine");
  const DenseOperand d = check_dense_operand(a, dense, "combine");
  check_dense_result_options(options.drop_zeros, "combine");
  return {d, union_args(op, a.desc.dtype, options)};
}

/// combine(op, a, dense, out) on arguments checked and, for device views, resident: the
/// backend where a lives.
void combine_checked(const CooView& a, const CombineDense& c, const TensorView& out,
                     const SparseOptions& options, cudaStream_t stream) {
  if (a.memory == Memory::host) {
    check_indices_host(a, "a");
    host_combine_dense(c.union_args.op, c.union_args.fill_a, a, c.dense, out);
  } else {
    const detail::CallMemory memory(options.memory);
    device_combine_dense(a, c.dense, out, c.union_args, options, stream);
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
                "coo_view: rows, cols and vals are not all in one memory (", memory_name(rows.memory),
                ", ", memory_name(cols.memory), ", ", memory_name(vals.memory), ")");
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
  // The CPU backend has one algorithm: the requested one is only checked to be a known name,
  // not held to the GPU algorithms' size limits.
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    EWISE_EXPECTS(std::string_view(coo_algorithm_name(options.algorithm)) != "unknown",
                  "multiply: unknown COO algorithm ", static_cast<int>(options.algorithm));
    check_indices_host(a, "a");
    check_indices_host(b, "b");
    return host_multiply(a, b, options);
  } else {
    const CooAlgorithm algorithm = resolve_algorithm(a.desc, b.desc, options.algorithm);
    detail::DeviceOperands().add(a, "a").add(b, "b").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_multiply(a, b, algorithm, options, stream);
  }
}

template <class Result>
Result multiply(const CooView& a, const ConstTensorView& dense, const SparseOptions& options,
                cudaStream_t stream) {
  const DenseOperand d = check_dense_operand(a, dense);
  check_result_memory(a.memory, ResultMemory<Result>::value, "multiply");
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_indices_host(a, "a");
    return host_multiply_dense(a, d, options);
  } else {
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_multiply_dense(a, d, options, stream);
  }
}

void multiply_values(const CooView& a, const ConstTensorView& dense, const TensorView& out_vals,
                     const SparseOptions& options, cudaStream_t stream) {
  const DenseOperand d = check_dense_operand(a, dense);
  check_values_output(a, dense, out_vals, options.drop_zeros);
  if (a.memory == Memory::host) {
    check_indices_host(a, "a");
    host_multiply_values(a, d, out_vals);
  } else {
    detail::DeviceOperands().add(a, "a").add(dense, "dense").add(out_vals, "out_vals").check(
        stream);
    device_multiply_values(a, d, out_vals, options, stream);
  }
}

template <class Result>
Result combine(BinaryOp op, const CooView& a, const CooView& b, const SparseOptions& options,
               cudaStream_t stream) {
  check_union_op(op, "combine");
  check_operands(a, b, "combine");
  check_result_memory(a.memory, ResultMemory<Result>::value, "combine");
  const UnionArgs u = union_args(op, a.desc.dtype, options);
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_indices_host(a, "a");
    check_indices_host(b, "b");
    return host_combine(a, b, u, options);
  } else {
    detail::DeviceOperands().add(a, "a").add(b, "b").check(stream);
    const detail::CallMemory memory(options.memory);
    return device_combine(a, b, u, options, stream);
  }
}

void combine(BinaryOp op, const CooView& a, const ConstTensorView& dense, const TensorView& out,
             const SparseOptions& options, cudaStream_t stream) {
  const CombineDense c = check_combine_dense(op, a, dense, options);
  check_view(out, "out");
  check_union_output(a, &dense, out, "combine");
  if (a.memory == Memory::device)
    detail::DeviceOperands().add(a, "a").add(dense, "dense").add(out, "out").check(stream);
  combine_checked(a, c, out, options, stream);
}

template <class Result>
Result combine(BinaryOp op, const CooView& a, const ConstTensorView& dense,
               const SparseOptions& options, cudaStream_t stream) {
  const CombineDense c = check_combine_dense(op, a, dense, options);
  check_result_memory(a.memory, ResultMemory<Result>::value, "combine");
  if constexpr (ResultMemory<Result>::value == Memory::device)
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
  // The result is made here to fit: the checks of an out given by the caller do not apply.
  Result out(a.desc.dtype, Dims{a.desc.nrows, a.desc.ncols}, stream, options.memory);
  combine_checked(a, c, out.view(), options, stream);
  return out;
}

void accumulate(BinaryOp op, const TensorView& dense, const CooView& a,
                const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "accumulate");
  check_view(a, "a");
  check_view(dense, "dense");
  check_dense_result_options(options.drop_zeros, "accumulate");
  check_union_output(a, nullptr, dense, "accumulate");
  if (a.memory == Memory::host) {
    check_indices_host(a, "a");
    host_accumulate(op, dense, a);
  } else {
    detail::DeviceOperands().add(a, "a").add(dense, "dense").check(stream);
    const detail::CallMemory memory(options.memory);
    device_accumulate(dense, a, op, options, stream);
  }
}

template <class Result>
Result coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  check_view(a, "a");
  check_result_memory(a.memory, ResultMemory<Result>::value, "coalesce");
  if constexpr (ResultMemory<Result>::value == Memory::host) {
    check_indices_host(a, "a");
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
    check_indices_host(a, "a");
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
    check_indices_host(a, "a");
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
