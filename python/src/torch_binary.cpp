// python/src/torch_binary.cpp — the fast path of ewise.binary for plain CUDA torch tensors,
// through the CPython API only (ewise neither builds nor links against libtorch).
//
// For tensors of the exact type torch.Tensor (one of a and b may be a Python bool, float or int
// within int64), with no gradient to record, on one CUDA device, of ewise's dtypes, op defined
// for them under PyTorch's rule and out (if any) of a dtype the result casts to (torch_call.hpp,
// fast_result), and without the negative bit, torch_binary reads each tensor's pointer, shape
// and strides with a few attribute calls, allocates the result through PyTorch's own Python
// callables, and calls ewise::binary on PyTorch's current raw stream of that device
// (torch_call.hpp: the part shared with _ewise_torch, which reads and allocates through
// libtorch instead). For anything else it returns None and the Python layer runs the general
// path (DLPack), which casts into an out of another dtype, converts big ints and gives every
// error its message. The PyTorch objects it needs are taken from sys.modules["torch"] on the
// first call that sees a tensor: ewise never imports torch.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>

#include "ewise/tensor.hpp"
#include "torch_call.hpp"

namespace ewise::python {
namespace {

constexpr int kDTypes = 10;

// PyTorch's objects, looked up once; strong references kept for the life of the process
// (torch is never unloaded).
struct TorchParts {
  PyTypeObject* tensor = nullptr;    // torch.Tensor
  PyObject* dtypes[kDTypes] = {};    // torch.float16, ... in the order of kDTypeValues
  PyObject* is_grad_enabled = nullptr;
  PyObject* empty_like = nullptr;
  PyObject* current_stream = nullptr;  // torch._C._cuda_getCurrentRawStream (CUDA builds)
};

// The dtypes every torch release since 2.0 has (torch.uint16, uint32 and uint64 came in 2.3:
// tensors of those take the general path).
constexpr const char* kDTypeNames[kDTypes] = {"float16", "bfloat16", "float32", "float64",
                                              "int32",   "int64",    "bool",    "int8",
                                              "uint8",   "int16"};
constexpr DType kDTypeValues[kDTypes] = {DType::f16, DType::bf16, DType::f32, DType::f64,
                                         DType::i32, DType::i64,  DType::b8,  DType::i8,
                                         DType::u8,  DType::i16};

// The attribute names, interned once.
struct Names {
  PyObject* requires_grad;
  PyObject* is_cuda;
  PyObject* is_cpu;
  PyObject* get_device;
  PyObject* is_neg;
  PyObject* dtype;
  PyObject* shape;
  PyObject* stride;
  PyObject* data_ptr;
  PyObject* new_empty;
};

const Names& names() {
  static const Names n = [] {
    const auto intern = [](const char* s) {
      PyObject* name = PyUnicode_InternFromString(s);
      if (name == nullptr) throw nb::python_error();
      return name;
    };
    return Names{intern("requires_grad"), intern("is_cuda"), intern("is_cpu"),
                 intern("get_device"),    intern("is_neg"),  intern("dtype"),
                 intern("shape"),         intern("stride"),  intern("data_ptr"),
                 intern("new_empty")};
  }();
  return n;
}

TorchParts g_torch;
bool g_torch_ready = false;

// Fills g_torch from sys.modules["torch"]; false (no error set) while torch is not imported,
// or not far enough into its import to have the objects.
bool load_torch() {
  nb::object torch = nb::steal(PyImport_GetModule(nb::str("torch").ptr()));
  if (!torch.is_valid()) {
    PyErr_Clear();
    return false;
  }
  TorchParts parts;
  const auto get = [](PyObject* owner, const char* name) {
    PyObject* value = PyObject_GetAttrString(owner, name);
    if (value == nullptr) PyErr_Clear();
    return value;
  };
  PyObject* tensor = get(torch.ptr(), "Tensor");
  if (tensor == nullptr || !PyType_Check(tensor)) {
    Py_XDECREF(tensor);
    return false;
  }
  parts.tensor = reinterpret_cast<PyTypeObject*>(tensor);
  bool complete = true;
  for (int i = 0; i < kDTypes; ++i)
    complete &= (parts.dtypes[i] = get(torch.ptr(), kDTypeNames[i])) != nullptr;
  complete &= (parts.is_grad_enabled = get(torch.ptr(), "is_grad_enabled")) != nullptr;
  complete &= (parts.empty_like = get(torch.ptr(), "empty_like")) != nullptr;
  if (PyObject* c = get(torch.ptr(), "_C")) {
    parts.current_stream = get(c, "_cuda_getCurrentRawStream");
    Py_DECREF(c);
  }
  if (!complete) {
    Py_DECREF(tensor);
    for (PyObject* d : parts.dtypes) Py_XDECREF(d);
    Py_XDECREF(parts.is_grad_enabled);
    Py_XDECREF(parts.empty_like);
    Py_XDECREF(parts.current_stream);
    return false;
  }
  g_torch = parts;
  g_torch_ready = true;
  return true;
}

// True when x is a torch.Tensor (exactly); loads PyTorch's objects on the first tensor seen.
// The type's name is compared first so that other arrays never look torch up.
bool is_tensor(PyObject* x) {
  if (g_torch_ready) return Py_TYPE(x) == g_torch.tensor;
  if (std::strcmp(Py_TYPE(x)->tp_name, "Tensor") != 0 || !load_torch()) return false;
  return Py_TYPE(x) == g_torch.tensor;
}

// Each read below returns false when the value could not be read (the error is cleared: the
// general path runs and reports whatever makes the tensor unreadable, e.g. a sparse layout's
// missing strides).
bool fail() {
  PyErr_Clear();
  return false;
}

// A flag from a new reference v (an attribute or a call's result), which it releases.
bool take_flag(PyObject* v, bool& value) {
  if (v == nullptr) return fail();
  value = v == Py_True;
  Py_DECREF(v);
  return true;
}

bool read_flag(PyObject* x, PyObject* name, bool& value) {
  return take_flag(PyObject_GetAttr(x, name), value);
}

PyObject* call_method(PyObject* x, PyObject* name) {
  PyObject* args[] = {x};
  return PyObject_VectorcallMethod(name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
}

bool call_flag(PyObject* x, PyObject* name, bool& value) {
  return take_flag(call_method(x, name), value);
}

// A tuple of ints (torch.Size is a tuple subclass; stride() returns a tuple) as Dims.
bool read_dims(PyObject* values, Dims& d) {
  if (values == nullptr || !PyTuple_Check(values)) return fail();
  const Py_ssize_t rank = PyTuple_GET_SIZE(values);
  if (rank > kMaxRank) return false;
  d = Dims::of_rank(static_cast<int>(rank), 0);
  for (Py_ssize_t i = 0; i < rank; ++i) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(values, i));
    if (v == -1 && PyErr_Occurred()) return fail();
    d[static_cast<int>(i)] = v;
  }
  return true;
}

bool read_shape(PyObject* x, Dims& shape) {
  PyObject* s = PyObject_GetAttr(x, names().shape);
  const bool ok = read_dims(s, shape);
  Py_XDECREF(s);
  return ok;
}

bool read_strides(PyObject* x, Dims& strides) {
  PyObject* s = call_method(x, names().stride);
  const bool ok = read_dims(s, strides);
  Py_XDECREF(s);
  return ok;
}

bool read_pointer(PyObject* x, void*& data) {
  PyObject* p = call_method(x, names().data_ptr);
  if (p == nullptr) return fail();
  data = PyLong_AsVoidPtr(p);
  Py_DECREF(p);
  return !PyErr_Occurred() || fail();
}

// True when x is on the wanted device type (CUDA, or the CPU for the host variant), with ewise's
// dtypes and without the negative bit; fills everything but data, shape and strides.
bool check(PyObject* x, bool host, FastArray& t) {
  const Names& n = names();
  bool on_device = false, negative = false;
  if (!read_flag(x, host ? n.is_cpu : n.is_cuda, on_device) || !on_device) return false;
  PyObject* device = call_method(x, n.get_device);
  if (device == nullptr) return fail();
  t.device = static_cast<int>(PyLong_AsLong(device));
  Py_DECREF(device);
  if (PyErr_Occurred()) return fail();
  if (!call_flag(x, n.is_neg, negative) || negative) return false;
  PyObject* dtype = PyObject_GetAttr(x, n.dtype);
  if (dtype == nullptr) return fail();
  int i = 0;
  while (i < kDTypes && g_torch.dtypes[i] != dtype) ++i;
  Py_DECREF(dtype);
  if (i == kDTypes) return false;
  t.dtype = kDTypeValues[i];
  return true;
}

bool read(PyObject* x, FastArray& t) {
  return read_shape(x, t.shape) && read_strides(x, t.strides) && read_pointer(x, t.data);
}

nb::object call(PyObject* callable, PyObject* arg) {
  PyObject* args[] = {arg};
  PyObject* r = PyObject_Vectorcall(callable, args, 1, nullptr);
  if (r == nullptr) throw nb::python_error();
  return nb::steal(r);
}

// PyTorch's dtype object of an ewise dtype that check() takes.
PyObject* torch_dtype(DType t) {
  for (int i = 0; i < kDTypes; ++i)
    if (kDTypeValues[i] == t) return g_torch.dtypes[i];
  throw std::logic_error("ewise: no PyTorch dtype check() takes");
}

// callable(args..., dtype=`dtype`) where dtype is not null, else callable(args...).
nb::object call_dtype(PyObject* callable, std::initializer_list<PyObject*> args, PyObject* dtype,
                      bool method) {
  static PyObject* const kwnames = [] {
    PyObject* t = Py_BuildValue("(s)", "dtype");
    if (t == nullptr) throw nb::python_error();
    return t;
  }();
  PyObject* all[4] = {};
  std::size_t n = 0;
  for (PyObject* x : args) all[n++] = x;
  if (dtype != nullptr) all[n] = dtype;
  const std::size_t positional = n | (method ? PY_VECTORCALL_ARGUMENTS_OFFSET : 0);
  PyObject* r = method ? PyObject_VectorcallMethod(callable, all, positional,
                                                   dtype != nullptr ? kwnames : nullptr)
                       : PyObject_Vectorcall(callable, all, positional,
                                             dtype != nullptr ? kwnames : nullptr);
  if (r == nullptr) throw nb::python_error();
  return nb::steal(r);
}

// The new result `r` of dtype `result` for a and b (the tensors among them read), with its
// strides: like a or b as r says (its layout: torch.empty_like), else a new contiguous tensor
// (new_empty of the first tensor); the dtype passed only where it is not that tensor's. On
// the CPU here: empty_like 2.3 us, new_empty 4.2, torch.empty(shape, dtype=, device=) 5.5.
nb::object allocate(PyObject* a, const FastOperand& fa, PyObject* b, const FastOperand& fb,
                    const NewResult& r, DType result, Dims& strides) {
  const auto dtype_of = [&](const FastArray& t) {
    return t.dtype == result ? nullptr : torch_dtype(result);
  };
  const auto like = [&](PyObject* x, const FastArray& t) {
    nb::object made = call_dtype(g_torch.empty_like, {x}, dtype_of(t), false);
    // empty_like keeps a dense layout as it is: a contiguous operand gives a contiguous result.
    const Dims contiguous = TensorDesc::contiguous(result, r.shape).strides;
    if (t.strides == contiguous)
      strides = contiguous;
    else if (!read_strides(made.ptr(), strides))
      throw std::runtime_error("ewise: cannot read the strides of torch.empty_like's result");
    return made;
  };
  if (r.like == Like::a) return like(a, fa.tensor);
  if (r.like == Like::b) return like(b, fb.tensor);
  nb::object extents = nb::steal(PyTuple_New(r.shape.size()));
  if (!extents.is_valid()) throw nb::python_error();
  for (int i = 0; i < r.shape.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(r.shape[i]);
    if (v == nullptr) throw nb::python_error();
    PyTuple_SET_ITEM(extents.ptr(), i, v);
  }
  strides = TensorDesc::contiguous(result, r.shape).strides;
  return call_dtype(names().new_empty, {a, extents.ptr()}, dtype_of(fa.tensor), true);
}

// out = a op b (out None: a new tensor) for plain torch tensors and Python scalars; None when
// the general path must run (see the file comment). `host`: the same path for CPU tensors (the
// CPU backend, no stream), so that the checks, reads and allocation are tested without a GPU.
nb::object torch_binary(nb::handle op, nb::handle a, nb::handle b, nb::handle out,
                        nb::handle kernel, bool host) {
  const bool has_out = !out.is_none();
  FastOperand fa, fb;
  fa.is_scalar = read_scalar(a, fa.scalar);
  fb.is_scalar = read_scalar(b, fb.scalar);
  if ((fa.is_scalar && fb.is_scalar) || (!fa.is_scalar && !is_tensor(a.ptr())) ||
      (!fb.is_scalar && !is_tensor(b.ptr())) || (has_out && !is_tensor(out.ptr())))
    return nb::none();
  const Names& n = names();
  bool a_grad = false, b_grad = false;
  if ((!fa.is_scalar && !read_flag(a.ptr(), n.requires_grad, a_grad)) ||
      (!fb.is_scalar && !read_flag(b.ptr(), n.requires_grad, b_grad)))
    return nb::none();
  if (a_grad || b_grad) {
    // Recorded for autograd by the general path (ewise.torch.binary) when grad mode is on.
    PyObject* enabled = PyObject_Vectorcall(g_torch.is_grad_enabled, nullptr, 0, nullptr);
    if (enabled == nullptr) throw nb::python_error();
    const bool on = enabled == Py_True;
    Py_DECREF(enabled);
    if (on) return nb::none();
  }
  FastArray to;
  if ((!fa.is_scalar && !check(a.ptr(), host, fa.tensor)) ||
      (!fb.is_scalar && !check(b.ptr(), host, fb.tensor)) ||
      (has_out && !check(out.ptr(), host, to)))
    return nb::none();
  if ((!fa.is_scalar && !read(a.ptr(), fa.tensor)) ||
      (!fb.is_scalar && !read(b.ptr(), fb.tensor)) || (has_out && !read(out.ptr(), to)))
    return nb::none();
  const std::optional<DType> result =
      fast_result(op, fa, fb, has_out ? &to : nullptr, Promotion::torch);
  if (!result || (!host && g_torch.current_stream == nullptr)) return nb::none();

  return finish_binary(
      op, kernel, out, fa, fb, to, *result, host,
      [&](const NewResult& r, FastArray& t) {
        // (a scalar operand: the result is like the tensor, never new_empty's)
        nb::object made = allocate(a.ptr(), fa, b.ptr(), fb, r, *result, t.strides);
        if (!read_pointer(made.ptr(), t.data))
          throw std::runtime_error("ewise: cannot read the data pointer of a new torch tensor");
        return made;
      },
      [](int device) {
        nb::object handle = call(g_torch.current_stream, nb::int_(device).ptr());
        const auto stream = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(handle.ptr()));
        if (PyErr_Occurred()) throw nb::python_error();
        return stream;
      });
}

}  // namespace

void bind_torch(nb::module_& m) {
  def_binary(m, "torch_binary", "torch_binary_host", &torch_binary,
             "out = a op b (op and kernel by their C++ names) for plain CUDA torch tensors on "
             "one device with no gradient to record, on PyTorch's current stream; returns out (a "
             "new tensor when None), or None when the call needs the general path",
             "torch_binary for CPU torch tensors, on the CPU backend: the same checks, reads and "
             "allocation, for the tests");
}

}  // namespace ewise::python
