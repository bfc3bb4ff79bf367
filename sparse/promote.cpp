// sparse/promote.cpp — mixed value dtypes in the sparse operations (promote.hpp).
#include "promote.hpp"

#include <algorithm>

#include "ewise/dense.hpp"
#include "ewise/detail/compute.hpp"

namespace ewise::sparse_detail {

DType result_dtype(BinaryOp op, Promotion rule, DType a, OperandType b) {
  return op_types(op, rule, {a, Weight::tensor}, b).result;
}

DType accumulate_dtype(BinaryOp op, const TensorView& dense, DType a,
                       const SparseOptions& options) {
  check_view(dense, "dense");
  check_dense_result_options(options.drop_zeros, "accumulate");
  return result_dtype(op, options.promotion, dense.desc.dtype, {a, Weight::tensor});
}

namespace {

/// The elements of v cast to out's dtype, into `out` (contiguous, v's shape): x · 1 computed in
/// x's own dtype is x exactly, and ewise::binary casts it to out's dtype as it stores it.
void cast_into(const ConstTensorView& v, const TensorView& out, cudaStream_t stream) {
  binary(BinaryOp::multiply, v, Scalar::weak_int(1), out, DenseOptions{}, stream);
}

}  // namespace

CooView Promoted::coo(const CooView& a) {
  if (a.desc.dtype == to_) return a;
  const ConstTensorView vals(a.vals, TensorDesc::contiguous(a.desc.dtype, Dims{a.desc.nnz}),
                             a.memory);
  CooView out = a;
  out.desc.dtype = to_;
  out.vals = dense(vals).data;
  return out;
}

ConstTensorView Promoted::dense(const ConstTensorView& d) {
  if (d.desc.dtype == to_) return d;
  // Only the elements d holds are converted: a broadcast dim (stride 0) is converted at extent 1
  // and broadcast again (a stride-0 view of a huge shape would otherwise be materialized).
  Dims held = d.desc.shape;
  for (int i = 0; i < held.size(); ++i)
    if (d.desc.strides[i] == 0) held[i] = std::min<std::int64_t>(held[i], 1);
  const ConstTensorView src(d.data, TensorDesc{d.desc.dtype, held, d.desc.strides}, d.memory);
  const auto broadcast_back = [&](ConstTensorView v) {
    for (int i = 0; i < held.size(); ++i)
      if (d.desc.strides[i] == 0) {
        v.desc.shape[i] = d.desc.shape[i];
        v.desc.strides[i] = 0;
      }
    return v;
  };
  if (d.memory == Memory::host) {
    HostTensor& t = host_.emplace_back(to_, held);
    cast_into(src, t.view(), stream_);
    return broadcast_back(t.view());
  }
  DeviceTensor& t = device_.emplace_back(to_, held, stream_, memory_);
  cast_into(src, t.view(), stream_);
  return broadcast_back(t.view());
}

DenseOperand scalar_factor(BinaryOp op, const CooView& a, const Scalar& s, DType to,
                           Promotion rule) {
  const ConstTensorView vals(a.vals, TensorDesc::contiguous(a.desc.dtype, Dims{a.desc.nnz}),
                             a.memory);
  return {nullptr, 0, 0, true, detail::check_types(op, vals, s, to, rule).b_value};
}

}  // namespace ewise::sparse_detail
