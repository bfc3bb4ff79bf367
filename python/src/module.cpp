// python/src/module.cpp — the extension module `ewise._ewise`: exception translation and the
// dense entry points. The Python package (python/ewise/) allocates results with the producer's
// framework and picks the stream; this layer only makes views and calls the C++ API.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "views.hpp"

namespace ewise::python {

void bind_sparse(nb::module_& m);  // sparse.cpp

namespace {

cudaStream_t as_stream(std::uintptr_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

// out = a op b. Device arrays run on `stream` (the producer's current stream, chosen by the
// Python layer) without synchronizing; host arrays on the CPU backend.
void binary(const std::string& op, const InArray& a, const InArray& b, const OutArray& out,
            const std::optional<std::string>& kernel, std::uintptr_t stream) {
  DenseOptions options;
  if (kernel) options.kernel = parse_kernel(*kernel);
  const BinaryOp parsed = parse_op(op);
  const ConstTensorView va = const_view(a), vb = const_view(b);
  const TensorView vo = view(out);
  nb::gil_scoped_release release;
  ewise::binary(parsed, va, vb, vo, options, as_stream(stream));
}

std::vector<std::int64_t> broadcast_shape(const std::vector<std::int64_t>& a,
                                          const std::vector<std::int64_t>& b) {
  const Dims d = broadcast_shapes(Dims::from(a.data(), static_cast<int>(a.size())),
                                  Dims::from(b.data(), static_cast<int>(b.size())));
  return {d.begin(), d.end()};
}

}  // namespace
}  // namespace ewise::python

NB_MODULE(_ewise, m) {
  namespace nb = nanobind;
  using namespace ewise::python;
  m.doc() = "ewise's C++ library, as the ewise package calls it (see ewise/__init__.py)";

  // ewise::InvalidArgument -> ValueError, ewise::CudaError -> RuntimeError, the message as is.
  // (Translators run most recent first: the base class ewise::Error is registered first.)
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ewise::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ewise::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("binary", &binary, nb::arg("op"), nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel").none(), nb::arg("stream"),
        "out = a op b with broadcasting; op and kernel by their C++ names");
  m.def("broadcast_shape", &broadcast_shape, nb::arg("a"), nb::arg("b"),
        "NumPy's broadcast shape of two shapes, or ValueError naming both");
  m.def("gpu_available", &ewise::gpu_available, "True when a CUDA device can be used");
  m.def("kernels", [] {
    std::vector<std::string> names;
    for (const auto& k : ewise::kKernelNames) names.emplace_back(k.name);
    return names;
  }, "the dense kernels' names (README, \"Dense kernels\")");
  bind_sparse(m);
}
