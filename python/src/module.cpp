// python/src/module.cpp — the extension module `ewise._ewise`: exception translation and the
// dense entry points. The Python package (python/ewise/) allocates results with the producer's
// framework and picks the stream; this layer only makes views and calls the C++ API (except the
// fast paths for torch tensors, torch_binary.cpp, and NumPy arrays, numpy_binary.cpp, which do
// both through the CPython API).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/promotion.hpp"
#include "views.hpp"

namespace ewise::python {

void bind_sparse(nb::module_& m);  // sparse.cpp
void bind_torch(nb::module_& m);   // torch_binary.cpp
void bind_numpy(nb::module_& m);   // numpy_binary.cpp

namespace {

Promotion parse_promotion(const std::string& name) {
  if (name == "numpy") return Promotion::numpy;
  if (name == "torch") return Promotion::torch;
  throw nb::value_error(("ewise: unknown promotion rule '" + name + "': numpy or torch").c_str());
}

Weight parse_weight(const std::string& name) {
  if (name == "tensor") return Weight::tensor;
  if (name == "zero_dim") return Weight::zero_dim;
  if (name == "weak") return Weight::weak;
  throw nb::value_error(("ewise: unknown weight '" + name + "': tensor, zero_dim or weak").c_str());
}

// out = a op b (a, b: arrays or Python scalars) under the promotion rule named `promotion`.
// Device arrays run on `stream` (the producer's current stream, chosen by the Python layer)
// without synchronizing; host arrays on the CPU backend.
void binary(const std::string& op, nb::handle a, nb::handle b, const OutArray& out,
            const std::optional<std::string>& kernel, std::uintptr_t stream,
            const std::string& promotion) {
  DenseOptions options;
  if (kernel) options.kernel = parse_kernel(*kernel);
  options.promotion = parse_promotion(promotion);
  const BinaryOp parsed = parse_op(op);
  const PyOperands operands = py_operands(parsed, a, b, options.promotion);
  const TensorView vo = view(out);
  check_dtypes(parsed, operands.a.operand, operands.b.operand, vo.desc.dtype, options.promotion);
  nb::gil_scoped_release release;
  ewise::binary(parsed, operands.a.operand, operands.b.operand, vo, options, as_stream(stream));
}

// The (compute, result) dtype names of op on operands of (dtype name, weight name) under a
// promotion rule; TypeError naming the dtypes where the operation is not defined for them.
std::pair<std::string, std::string> types(const std::string& op, const std::string& promotion,
                                          const std::string& a_dtype, const std::string& a_weight,
                                          const std::string& b_dtype,
                                          const std::string& b_weight) {
  const auto operand = [](const std::string& dtype, const std::string& weight) {
    return OperandType{parse_dtype(dtype), parse_weight(weight)};
  };
  const BinaryOp parsed = parse_op(op);
  const Promotion rule = parse_promotion(promotion);
  const OperandType ta = operand(a_dtype, a_weight), tb = operand(b_dtype, b_weight);
  try {
    const OpTypes t = op_types(parsed, rule, ta, tb);
    return {dtype_name(t.compute), dtype_name(t.result)};
  } catch (const InvalidArgument& e) {
    throw nb::type_error(e.what());
  }
}

// A DLPack-exporting array over memory described by the array interface protocols
// (__array_interface__, __cuda_array_interface__): a pointer, a DLPack dtype, a shape and
// strides in elements, any sign. It lets the Python layer pass arrays whose own DLPack export
// is wrong (CuPy's negative strides); `owner` (the producer's array) is kept alive with it.
nb::object strided_view(std::uintptr_t data, std::uint8_t code, std::uint8_t bits,
                        const std::vector<std::size_t>& shape,
                        const std::vector<std::int64_t>& strides, int device_type,
                        int device_id, nb::handle owner) {
  EWISE_EXPECTS(shape.size() == strides.size(), "strided_view: ", shape.size(),
                " extents but ", strides.size(), " strides");
  return nb::ndarray<nb::array_api>(reinterpret_cast<void*>(data), shape.size(), shape.data(),
                                    owner, strides.data(), nb::dlpack::dtype{code, bits, 1},
                                    device_type, device_id)
      .cast();
}

// An owned buffer, host or device, behind an array handed to Python.
struct Owned {
  HostBuffer host;
  DeviceBuffer device;
};

// A new contiguous array of `dtype` (an ewise dtype name) and `shape`, owned by the returned
// DLPack-exporting array (nb::array_api): on the host (DLPack device type kDLCPU) or on CUDA
// device `device_id` (kDLCUDA, from ewise's pool, allocated and freed on the legacy default
// stream). Results for producers that cannot allocate one for ewise (JAX, whose arrays are
// immutable, and NumPy, which cannot export bfloat16). At least one byte, so that the pointer
// is never null.
nb::object empty(const std::string& dtype, const std::vector<std::int64_t>& shape,
                 int device_type, int device_id) {
  const TensorDesc desc = TensorDesc::contiguous(
      parse_dtype(dtype), Dims::from(shape.data(), static_cast<int>(shape.size())));
  const std::size_t bytes =
      std::max<std::size_t>(static_cast<std::size_t>(desc.numel()) * dtype_size(desc.dtype), 1);
  auto owned = std::make_unique<Owned>();
  void* data = nullptr;
  if (memory_of(device_type) == Memory::host) {
    owned->host = HostBuffer(bytes);
    data = owned->host.data();
  } else {
    const CurrentDevice current(device_id);
    owned->device = DeviceBuffer(bytes);
    data = owned->device.data();
  }
  nb::capsule owner(owned.release(), [](void* p) noexcept { delete static_cast<Owned*>(p); });
  const std::vector<std::size_t> extents(shape.begin(), shape.end());
  return nb::ndarray<nb::array_api>(data, extents.size(), extents.data(), owner, nullptr,
                                    dlpack_dtype(desc.dtype), device_type, device_id)
      .cast();
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

  register_error_translators();
  m.def("binary", &binary, nb::arg("op"), nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel").none(), nb::arg("stream"), nb::arg("promotion"),
        "out = a op b with broadcasting; a and b arrays or Python scalars (weak), op and kernel "
        "by their C++ names, promotion \"numpy\" or \"torch\"");
  m.def("op_types", &types, nb::arg("op"), nb::arg("promotion"), nb::arg("a_dtype"),
        nb::arg("a_weight"), nb::arg("b_dtype"), nb::arg("b_weight"),
        "(compute, result) dtype names of op on operands of (dtype name, weight: tensor, "
        "zero_dim or weak) under a promotion rule (ewise/promotion.hpp's op_types)");
  m.def("strided_view", &strided_view, nb::arg("data"), nb::arg("code"), nb::arg("bits"),
        nb::arg("shape"), nb::arg("strides"), nb::arg("device_type"), nb::arg("device_id"),
        nb::arg("owner"),
        "a DLPack-exporting view of (data, DLPack dtype code and bits, shape, element strides) "
        "on a DLPack device, owned by owner");
  m.def("empty", &empty, nb::arg("dtype"), nb::arg("shape"), nb::arg("device_type"),
        nb::arg("device_id"),
        "a new contiguous array of an ewise dtype on a DLPack device (host, or a CUDA device "
        "from ewise's pool), exported through DLPack");
  m.def("set_device", [](int device) {
    int previous = 0;
    EWISE_CUDA_CHECK(cudaGetDevice(&previous));
    EWISE_CUDA_CHECK(cudaSetDevice(device));
    return previous;
  }, nb::arg("device"), "makes a CUDA device current; returns the one that was");
  m.def("synchronize", [](std::uintptr_t stream) {
    nb::gil_scoped_release release;
    EWISE_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  }, nb::arg("stream"), "waits for the work queued on a CUDA stream (a handle; 0: legacy)");
  m.def("broadcast_shape", &broadcast_shape, nb::arg("a"), nb::arg("b"),
        "NumPy's broadcast shape of two shapes, or ValueError naming both");
  m.def("gpu_available", &ewise::gpu_available, "True when a CUDA device can be used");
  m.def("gpu_unavailable_reason", &ewise::gpu_unavailable_reason,
        "why no CUDA device can be used; empty when one can");
  m.def("kernels", [] {
    std::vector<std::string> names;
    for (const auto& k : ewise::kKernelNames) names.emplace_back(k.name);
    return names;
  }, "the dense kernels' names (README, \"Dense kernels\")");
  bind_sparse(m);
  bind_torch(m);
  bind_numpy(m);
}
