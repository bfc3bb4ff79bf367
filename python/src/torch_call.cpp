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

bool read_scalar(nb::handle x, Scalar& s) {
  PyObject* p = x.ptr();
  // Exact types: a NumPy scalar (numpy.float64 subclasses float) is typed, not weak, and takes
  // the general path, which makes it a 0-d array.
  if (PyBool_Check(p)) {
    s = Scalar::weak_bool(p == Py_True);
  } else if (PyFloat_CheckExact(p)) {
    s = Scalar::weak_float(PyFloat_AS_DOUBLE(p));
  } else if (PyLong_CheckExact(p)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    s = Scalar::weak_int(v);
  } else {
    return false;
  }
  return true;
}

std::optional<DType> fast_result(nb::handle op, const FastOperand& a, const FastOperand& b,
                                 const FastArray* out, Promotion rule) {
  const FastArray& t = a.is_scalar ? b.tensor : a.tensor;  // one of them is a tensor
  if ((!b.is_scalar && b.tensor.device != t.device) || (out != nullptr && out->device != t.device))
    return std::nullopt;
  const auto type = [&](const FastOperand& x) {
    if (x.is_scalar) return x.scalar.type();
    const bool zero_dim = rule == Promotion::torch && x.tensor.shape.size() == 0;
    return OperandType{x.tensor.dtype, zero_dim ? Weight::zero_dim : Weight::tensor};
  };
  DType result{};
  try {
    result = op_types(parse_op(text(op)), rule, type(a), type(b)).result;
  } catch (const InvalidArgument&) {
    return std::nullopt;  // an unknown op, or one undefined for the dtypes: the general path's
  }
  // Into an out of another dtype where same_kind allows the cast (x_bf16 += y_f32); else the
  // general path refuses the call.
  if (out != nullptr && !can_cast_same_kind(result, out->dtype)) return std::nullopt;
  return result;
}

NewResult new_result(const FastOperand& a, const FastOperand& b) {
  if (a.is_scalar) return {b.tensor.shape, Like::b};
  if (b.is_scalar) return {a.tensor.shape, Like::a};
  // The general path reports a failed broadcast with this same message.
  const Dims &sa = a.tensor.shape, &sb = b.tensor.shape;
  NewResult r{sa == sb ? sa : broadcast_shapes(sa, sb)};
  r.like = r.shape == sa ? Like::a : r.shape == sb ? Like::b : Like::none;
  return r;
}

void run_binary(nb::handle op, nb::handle kernel, const FastOperand& a, const FastOperand& b,
                const FastArray& out, bool host, std::uintptr_t stream, Promotion rule) {
  DenseOptions options;
  if (!kernel.is_none()) options.kernel = parse_kernel(text(kernel));
  const BinaryOp parsed = parse_op(text(op));
  const Memory memory = host ? Memory::host : Memory::device;
  options.promotion = rule;
  const auto operand = [&](const FastOperand& x) -> Operand {
    if (x.is_scalar) return x.scalar;
    const FastArray& t = x.tensor;
    return ConstTensorView(t.data, TensorDesc::strided(t.dtype, t.shape, t.strides), memory);
  };
  const Operand va = operand(a), vb = operand(b);
  const TensorView vo{out.data, TensorDesc::strided(out.dtype, out.shape, out.strides), memory};
  check_dtypes(parsed, va, vb, out.dtype, rule);  // a scalar out of its dtype's range
  nb::gil_scoped_release release;
  if (host) {
    ewise::binary(parsed, va, vb, vo, options, nullptr);
  } else {
    const CurrentDevice current(out.device);
    ewise::binary(parsed, va, vb, vo, options, as_stream(stream));
  }
}

}  // namespace ewise::python
