// python/src/torch_call.hpp — what the fast paths of ewise.binary for plain arrays (and Python
// scalars) share: _ewise.torch_binary (torch_binary.cpp, through PyTorch's Python API),
// _ewise_torch.binary (torch_native.cpp, built against libtorch) and _ewise.numpy_binary
// (numpy_binary.cpp, NumPy's arrays on the CPU backend). They differ only in how they
// read a tensor and allocate the result; from the fields read to the C++ call, this is the one
// implementation.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>

#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise::python {

namespace nb = nanobind;

/// An array as the fast paths read it (a torch tensor, a NumPy array): data pointer, CUDA device
/// index (-1 on the CPU), dtype, shape and strides in elements.
struct FastArray {
  void* data = nullptr;
  int device = -1;
  DType dtype = DType::f32;
  Dims shape, strides;
};

/// An operand of a fast call: an array, read into `tensor`, or a Python scalar.
struct FastOperand {
  bool is_scalar = false;
  Scalar scalar;       ///< a weak Python bool, float, or int within int64
  FastArray tensor;  ///< when not a scalar
};

/// x as a weak Scalar into s when it is a Python bool, float, or int within int64 (of exactly
/// those types); false for anything else, with no error set (an int beyond int64 takes the
/// general path, which converts or refuses it as the framework does).
bool read_scalar(nb::handle x, Scalar& s);

/// The result's dtype when the call runs fast: op (its C++ name) defined for a and b under
/// `rule` (PyTorch's: a 0-d tensor ranks below tensors with dims; a Python scalar is weak under
/// both), every array on one device, out (when not null) of a dtype the result casts to
/// (same_kind, as the library checks); else nothing, and the general path runs and reports.
std::optional<DType> fast_result(nb::handle op, const FastOperand& a, const FastOperand& b,
                                 const FastArray* out, Promotion rule);

/// The operand whose layout a new result takes (empty_like), if any.
enum class Like { a, b, none };

/// The new result of a op b (no out=): its shape, broadcast (a failed broadcast throws the
/// general path's error), and its layout: like a when it has a's shape, else like b when it has
/// b's, else new and contiguous. A scalar has no shape: the result is like the tensor.
struct NewResult {
  Dims shape;
  Like like = Like::none;
};
NewResult new_result(const FastOperand& a, const FastOperand& b);

/// out = a op b under `rule` (op and kernel: the C++ names as Python strings, kernel None for
/// automatic) with the GIL released: on the CPU backend when `host`, else on `stream` (the
/// framework's current one of the arrays' device) with that device made current.
void run_binary(nb::handle op, nb::handle kernel, const FastOperand& a, const FastOperand& b,
                const FastArray& out, bool host, std::uintptr_t stream, Promotion rule);

/// The rest of a fast call once a, b and out (unless None) are read and `result` is
/// fast_result's: the result, out or a new tensor, then out = a op b. `allocate(r, to)` returns
/// the new tensor for the NewResult r and fills to.data and to.strides (to's shape, dtype and
/// device are r's, `result` and the tensors'); `stream(device)` returns PyTorch's current
/// stream of a CUDA device (not called on the host).
template <class Allocate, class Stream>
nb::object finish_binary(nb::handle op, nb::handle kernel, nb::handle out, const FastOperand& a,
                         const FastOperand& b, FastArray& to, DType result, bool host,
                         Allocate allocate, Stream stream, Promotion rule = Promotion::torch) {
  const int device = a.is_scalar ? b.tensor.device : a.tensor.device;
  nb::object r;
  if (!out.is_none()) {
    r = nb::borrow(out);
  } else {
    const NewResult shape = new_result(a, b);
    to.shape = shape.shape;
    to.dtype = result;
    to.device = device;
    r = allocate(shape, to);
  }
  run_binary(op, kernel, a, b, to, host, host ? 0 : stream(device), rule);
  return r;
}

/// Defines `name`(op, a, b, out, kernel) as f(op, a, b, out, kernel, false), the CUDA path, and
/// `host_name`(...) as f(..., true), its CPU form for the tests; out and kernel may be None.
template <class F>
void def_binary(nb::module_& m, const char* name, const char* host_name, F f, const char* doc,
                const char* host_doc) {
  const auto define = [&](const char* def_name, bool host, const char* def_doc) {
    m.def(
        def_name,
        [f, host](nb::handle op, nb::handle a, nb::handle b, nb::handle out, nb::handle kernel) {
          return f(op, a, b, out, kernel, host);
        },
        nb::arg("op"), nb::arg("a"), nb::arg("b"), nb::arg("out").none(),
        nb::arg("kernel").none(), def_doc);
  };
  define(name, false, doc);
  define(host_name, true, host_doc);
}

}  // namespace ewise::python
