// python/src/torch_call.cpp — the fast paths' shared part (see torch_call.hpp).
#include "torch_call.hpp"

#include <string_view>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/promotion.hpp"
#include "views.hpp"

namespace ewise::python {
namespace {

std::string_view text(nb::handle s) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(s.ptr(), &size);
  if (data == nullptr) throw nb::python_error();
  return {data, static_cast<std::size_t>(size)};
}

}  // namespace

bool runs_fast(nb::handle op, const TorchTensor& a, const TorchTensor& b, const TorchTensor* out) {
  const auto same = [&](const TorchTensor& t) {
    return t.device == a.device && t.dtype == a.dtype;
  };
  if (!same(b) || (out != nullptr && !same(*out))) return false;
  const OperandType t{a.dtype, Weight::tensor};
  try {
    return op_types(parse_op(text(op)), Promotion::torch, t, t).result == a.dtype;
  } catch (const InvalidArgument&) {
    return false;  // an unknown op, or one undefined for the dtype: the general path reports it
  }
}

NewResult new_result(const TorchTensor& a, const TorchTensor& b) {
  // The general path reports a failed broadcast with this same message.
  NewResult r{a.shape == b.shape ? a.shape : broadcast_shapes(a.shape, b.shape)};
  r.like = r.shape == a.shape ? Like::a : r.shape == b.shape ? Like::b : Like::none;
  return r;
}

void run_binary(nb::handle op, nb::handle kernel, const TorchTensor& a, const TorchTensor& b,
                const TorchTensor& out, bool host, std::uintptr_t stream) {
  DenseOptions options;
  if (!kernel.is_none()) options.kernel = parse_kernel(text(kernel));
  const BinaryOp parsed = parse_op(text(op));
  const Memory memory = host ? Memory::host : Memory::device;
  options.promotion = Promotion::torch;  // torch tensors (runs_fast: a result of their dtype)
  const ConstTensorView va(a.data, TensorDesc::strided(a.dtype, a.shape, a.strides), memory);
  const ConstTensorView vb(b.data, TensorDesc::strided(b.dtype, b.shape, b.strides), memory);
  const TensorView vo{out.data, TensorDesc::strided(out.dtype, out.shape, out.strides), memory};
  nb::gil_scoped_release release;
  if (host) {
    ewise::binary(parsed, va, vb, vo, options, nullptr);
  } else {
    const CurrentDevice current(a.device);
    ewise::binary(parsed, va, vb, vo, options, as_stream(stream));
  }
}

}  // namespace ewise::python
