// python/src/torch_native.cpp — the extension module `ewise._ewise_torch`: the fast path of
// ewise.binary for plain torch tensors built against libtorch (python/CMakeLists.txt builds it
// when CMake's Python imports a CUDA build of torch with its headers: EWISE_TORCH_NATIVE).
//
// binary() is _ewise.torch_binary (torch_binary.cpp) with the same rules: None, for the general
// path to run and report, unless a, b and out are of the exact type torch.Tensor (or one of a
// and b a Python bool, float or int within int64), with no gradient to record, strided, on one
// CUDA device, of ewise's dtypes, op defined for them under PyTorch's rule and out (if any) of
// a dtype the result casts to (torch_call.hpp, fast_result), and without the negative bit. Only
// the two costs the Python API has are gone: each tensor is read from its at::Tensor
// (THPVariable_Unpack) instead of through attribute calls, and the result is allocated by
// at::empty_like / at::empty as PyTorch's own operators allocate theirs. The rest is
// torch_call.hpp, shared with the other paths.
//
// The torch libraries are linked without a run path: the Python layer imports this module only
// after torch, whose import has loaded them, and falls back to _ewise.torch_binary when the
// import fails. The inline parts of libtorch's headers (at::Tensor, THPVariable) must match the
// torch of the process, so the module refuses to load under another torch version than the one
// it was built against.
#include <nanobind/nanobind.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "ewise/tensor.hpp"
#include "torch_call.hpp"
#include "views.hpp"

namespace ewise::python {
namespace {

// True when x is exactly a torch.Tensor (THPVariable_CheckExact also admits
// torch.nn.Parameter, which the general path handles as the subclass it is).
bool is_plain_tensor(nb::handle x) {
  return Py_TYPE(x.ptr()) == reinterpret_cast<PyTypeObject*>(THPVariableClass);
}

// Reads x into t when it is on the wanted device type (CUDA, or the CPU for the host variant),
// strided, of one of ewise's dtypes (so never conjugated: that bit is complex-only), without
// the negative bit and of rank kMaxRank at most; else false. Also false where libtorch refuses
// a read (a tensor without storage, such as functorch's wrappers): the general path reports
// those. `written`: x is the output, whose pointer is taken for writing (a lazily cloned tensor
// gets its own memory first).
bool read(const at::Tensor& x, bool host, bool written, FastArray& t) {
  if (!(host ? x.is_cpu() : x.is_cuda()) || x.layout() != at::kStrided || x.is_neg() ||
      x.dim() > kMaxRank)
    return false;
  switch (x.scalar_type()) {
    case at::kHalf: t.dtype = DType::f16; break;
    case at::kBFloat16: t.dtype = DType::bf16; break;
    case at::kFloat: t.dtype = DType::f32; break;
    case at::kDouble: t.dtype = DType::f64; break;
    case at::kInt: t.dtype = DType::i32; break;
    case at::kLong: t.dtype = DType::i64; break;
    case at::kBool: t.dtype = DType::b8; break;
    case at::kChar: t.dtype = DType::i8; break;
    case at::kByte: t.dtype = DType::u8; break;
    case at::kShort: t.dtype = DType::i16; break;
    default: return false;
  }
  try {
    const int rank = static_cast<int>(x.dim());
    t.device = static_cast<int>(x.get_device());
    t.shape = Dims::from(x.sizes().data(), rank);
    t.strides = Dims::from(x.strides().data(), rank);
    t.data = written ? x.mutable_data_ptr() : const_cast<void*>(x.const_data_ptr());
  } catch (const c10::Error&) {
    return false;
  }
  return true;
}

// PyTorch's dtype of an ewise dtype that read() takes.
at::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
    case DType::f32: return at::kFloat;
    case DType::f64: return at::kDouble;
    case DType::i32: return at::kInt;
    case DType::i64: return at::kLong;
    case DType::b8: return at::kBool;
    case DType::i8: return at::kChar;
    case DType::u8: return at::kByte;
    case DType::i16: return at::kShort;
    default: throw std::logic_error("ewise: no PyTorch dtype read() takes");
  }
}

// out = a op b (out None: a new tensor) for plain torch tensors and Python scalars; None when
// the general path must run (see the file comment). `host`: the same path for CPU tensors (the
// CPU backend, no stream), so that the checks, reads and allocation are tested without a GPU.
nb::object binary(nb::handle op, nb::handle a, nb::handle b, nb::handle out, nb::handle kernel,
                  bool host) {
  const bool has_out = !out.is_none();
  FastOperand fa, fb;
  fa.is_scalar = read_scalar(a, fa.scalar);
  fb.is_scalar = read_scalar(b, fb.scalar);
  if ((fa.is_scalar && fb.is_scalar) || (!fa.is_scalar && !is_plain_tensor(a)) ||
      (!fb.is_scalar && !is_plain_tensor(b)) || (has_out && !is_plain_tensor(out)))
    return nb::none();
  const at::Tensor* xa = fa.is_scalar ? nullptr : &THPVariable_Unpack(a.ptr());
  const at::Tensor* xb = fb.is_scalar ? nullptr : &THPVariable_Unpack(b.ptr());
  // Recorded for autograd by the general path (ewise.torch.binary) when grad mode is on.
  if (((xa != nullptr && xa->requires_grad()) || (xb != nullptr && xb->requires_grad())) &&
      c10::GradMode::is_enabled())
    return nb::none();
  // out first: taking its pointer for writing can give it memory of its own (a lazy clone), and
  // an operand that is out must then read that same pointer.
  FastArray to;
  if ((has_out && !read(THPVariable_Unpack(out.ptr()), host, true, to)) ||
      (xa != nullptr && !read(*xa, host, false, fa.tensor)) ||
      (xb != nullptr && !read(*xb, host, false, fb.tensor)))
    return nb::none();
  const std::optional<DType> result =
      fast_result(op, fa, fb, has_out ? &to : nullptr, Promotion::torch);
  if (!result) return nb::none();

  return finish_binary(
      op, kernel, out, fa, fb, to, *result, host,
      [&](const NewResult& r, FastArray& t) {
        const at::Tensor& first = xa != nullptr ? *xa : *xb;
        const at::TensorOptions options = first.options().dtype(scalar_type(*result));
        at::Tensor x = r.like == Like::a   ? at::empty_like(*xa, options)
                       : r.like == Like::b ? at::empty_like(*xb, options)
                                           : at::empty(at::IntArrayRef(r.shape.begin(),
                                                                       r.shape.end()),
                                                       options);
        t.data = x.mutable_data_ptr();
        t.strides = Dims::from(x.strides().data(), static_cast<int>(x.dim()));
        nb::object result_object = nb::steal(THPVariable_Wrap(std::move(x)));
        if (!result_object.is_valid()) throw nb::python_error();
        return result_object;
      },
      [](int device) {
        return reinterpret_cast<std::uintptr_t>(
            c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream());
      });
}

}  // namespace
}  // namespace ewise::python

NB_MODULE(_ewise_torch, m) {
  namespace nb = nanobind;
  using namespace ewise::python;
  m.doc() = "ewise.binary's fast path for plain torch tensors, built against libtorch "
            "(see ewise/_interop/torch.py)";
  // EWISE_TORCH_VERSION: torch.__version__ at configure time (python/CMakeLists.txt).
  nb::object torch = nb::steal(PyImport_GetModule(nb::str("torch").ptr()));
  if (!torch.is_valid()) {
    PyErr_Clear();
    throw nb::import_error("ewise._ewise_torch: import torch first");
  }
  const std::string version = nb::str(torch.attr("__version__")).c_str();
  if (version != EWISE_TORCH_VERSION)
    throw nb::import_error(("ewise._ewise_torch was built against torch " EWISE_TORCH_VERSION
                            ", this is torch " + version)
                               .c_str());
  m.attr("torch_version") = EWISE_TORCH_VERSION;

  register_error_translators();
  // libtorch's errors (an allocation that fails: torch.OutOfMemoryError) as torch raises them.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const c10::Error&) {
      torch::translate_exception_to_python(p);
    }
  });

  def_binary(m, "binary", "binary_host", &binary,
             "_ewise.torch_binary through libtorch: out = a op b (op and kernel by their C++ "
             "names) for plain CUDA torch tensors on one device with no gradient to record, on "
             "PyTorch's current stream; returns out (a new tensor when None), or None when the "
             "call needs the general path",
             "binary for CPU torch tensors, on the CPU backend: the same checks, reads and "
             "allocation, for the tests");
}
