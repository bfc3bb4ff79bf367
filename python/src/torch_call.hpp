// python/src/torch_call.hpp — what the two fast paths of ewise.binary for plain torch tensors
// share: _ewise.torch_binary (torch_binary.cpp, through PyTorch's Python API) and
// _ewise_torch.binary (torch_native.cpp, built against libtorch). They differ only in how they
// read a tensor and allocate the result; from the fields read to the C++ call, this is the one
// implementation.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

#include "ewise/tensor.hpp"

namespace ewise::python {

namespace nb = nanobind;

/// A torch tensor as the fast paths read it: data pointer, CUDA device index (-1 on the CPU),
/// dtype, shape and strides in elements.
struct TorchTensor {
  void* data = nullptr;
  int device = -1;
  DType dtype = DType::f32;
  Dims shape, strides;
};

/// True when b and out (null when there is none) have a's device and dtype, and op (its C++
/// name) gives that dtype under PyTorch's rule (not a comparison, nor divide on integers); else
/// the call is the general path's, which promotes and reports every error.
bool runs_fast(nb::handle op, const TorchTensor& a, const TorchTensor& b, const TorchTensor* out);

/// The operand whose layout a new result takes (empty_like), if any.
enum class Like { a, b, none };

/// The new result of a op b (no out=): its shape, broadcast (a failed broadcast throws the
/// general path's error), and its layout: like a when it has a's shape, else like b when it has
/// b's, else new and contiguous.
struct NewResult {
  Dims shape;
  Like like = Like::none;
};
NewResult new_result(const TorchTensor& a, const TorchTensor& b);

/// out = a op b (op and kernel: the C++ names as Python strings, kernel None for automatic)
/// with the GIL released: on the CPU backend when `host`, else on `stream` (PyTorch's current
/// one of a's device) with a's device made current.
void run_binary(nb::handle op, nb::handle kernel, const TorchTensor& a, const TorchTensor& b,
                const TorchTensor& out, bool host, std::uintptr_t stream);

/// The rest of a fast call once a, b and out (unless None) are read into ta, tb and to: the
/// result, out or a new tensor, then out = a op b. `allocate(r, to)` returns the new tensor for
/// the NewResult r and fills to.data and to.strides (to's shape, dtype and device are r's and
/// a's); `stream(device)` returns PyTorch's current stream of a CUDA device (not called on the
/// host).
template <class Allocate, class Stream>
nb::object finish_binary(nb::handle op, nb::handle kernel, nb::handle out, const TorchTensor& ta,
                         const TorchTensor& tb, TorchTensor& to, bool host, Allocate allocate,
                         Stream stream) {
  nb::object result;
  if (!out.is_none()) {
    result = nb::borrow(out);
  } else {
    const NewResult r = new_result(ta, tb);
    to.shape = r.shape;
    to.dtype = ta.dtype;
    to.device = ta.device;
    result = allocate(r, to);
  }
  run_binary(op, kernel, ta, tb, to, host, host ? 0 : stream(ta.device));
  return result;
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
