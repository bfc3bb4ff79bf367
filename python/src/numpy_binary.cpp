// python/src/numpy_binary.cpp — the fast path of ewise.binary for NumPy's arrays, on the CPU
// backend, through the CPython API only (ewise does not build against NumPy's headers).
//
// For arrays of the exact type numpy.ndarray (one of a and b may be a Python bool, float or int
// within int64) whose buffers export one of ewise's dtypes with element strides, op defined for
// them under NumPy's rule and out (if any) writable and of a dtype the result casts to
// (torch_call.hpp, fast_result), numpy_binary reads each array through the buffer protocol,
// allocates a new result with numpy.empty (C order, as the general path does) and calls
// ewise::binary on the host with the GIL released. For anything else it returns None and the
// Python layer runs the general path (DLPack), which takes NumPy scalars, bfloat16, big ints and
// every other array and gives every error its message. NumPy's objects are taken from
// sys.modules["numpy"] on the first call that sees an ndarray: ewise never imports NumPy here.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <optional>

#include "ewise/tensor.hpp"
#include "torch_call.hpp"

namespace ewise::python {
namespace {

struct NumPyParts {
  PyTypeObject* ndarray = nullptr;
  PyObject* empty = nullptr;  // numpy.empty
  PyObject* dtypes[13] = {};  // numpy's scalar types by ewise dtype (kAllDTypes' order)
};
NumPyParts g_numpy;
bool g_numpy_ready = false;

constexpr const char* kNumPyNames[13] = {"float16", "", "float32", "float64", "int32", "int64",
                                         "bool",    "int8", "uint8", "int16", "uint16",
                                         "uint32",  "uint64"};  // bf16: the general path's

// Fills g_numpy from sys.modules["numpy"]; false (no error set) while NumPy is not imported.
bool load_numpy() {
  nb::object numpy = nb::steal(PyImport_GetModule(nb::str("numpy").ptr()));
  if (!numpy.is_valid()) {
    PyErr_Clear();
    return false;
  }
  NumPyParts parts;
  PyObject* ndarray = PyObject_GetAttrString(numpy.ptr(), "ndarray");
  PyObject* empty = PyObject_GetAttrString(numpy.ptr(), "empty");
  bool complete = ndarray != nullptr && PyType_Check(ndarray) && empty != nullptr;
  for (int i = 0; i < 13 && complete; ++i)
    if (*kNumPyNames[i] && !(parts.dtypes[i] = PyObject_GetAttrString(numpy.ptr(), kNumPyNames[i])))
      complete = false;
  if (!complete) {  // (a NumPy that is still importing: try again next call)
    PyErr_Clear();
    Py_XDECREF(ndarray);
    Py_XDECREF(empty);
    for (PyObject* d : parts.dtypes) Py_XDECREF(d);
    return false;
  }
  parts.ndarray = reinterpret_cast<PyTypeObject*>(ndarray);
  parts.empty = empty;
  g_numpy = parts;  // strong references kept for the life of the process
  g_numpy_ready = true;
  return true;
}

// True when x is a numpy.ndarray (exactly); loads NumPy's objects on the first array seen. The
// type's name is compared first so that other objects never look NumPy up.
bool is_ndarray(PyObject* x) {
  if (g_numpy_ready) return Py_TYPE(x) == g_numpy.ndarray;
  if (std::strcmp(Py_TYPE(x)->tp_name, "numpy.ndarray") != 0 || !load_numpy()) return false;
  return Py_TYPE(x) == g_numpy.ndarray;
}

// The ewise dtype of a buffer's struct format and item size (native byte order only).
std::optional<DType> format_dtype(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) return std::nullopt;
  if (*format == '@' || *format == '=' || *format == '<') ++format;  // little-endian machines
  if (format[0] == 0 || format[1] != 0) return std::nullopt;
  const bool s8 = itemsize == 8, s4 = itemsize == 4, s2 = itemsize == 2, s1 = itemsize == 1;
  switch (format[0]) {
    case 'e': if (s2) return DType::f16; break;
    case 'f': if (s4) return DType::f32; break;
    case 'd': if (s8) return DType::f64; break;
    case '?': if (s1) return DType::b8; break;
    case 'b': if (s1) return DType::i8; break;
    case 'B': if (s1) return DType::u8; break;
    case 'h': if (s2) return DType::i16; break;
    case 'H': if (s2) return DType::u16; break;
    case 'i': case 'l': case 'q':
      if (s4) return DType::i32;
      if (s8) return DType::i64;
      break;
    case 'I': case 'L': case 'Q':
      if (s4) return DType::u32;
      if (s8) return DType::u64;
      break;
  }
  return std::nullopt;
}

// A buffer held for the call (released on scope exit).
struct Buffer {
  Py_buffer view{};
  bool held = false;
  ~Buffer() {
    if (held) PyBuffer_Release(&view);
  }
};

// Reads x's buffer into a (writable when `written`); false, with no error set, where it has no
// buffer of ewise's dtypes with element strides or more than kMaxRank dims.
bool read(PyObject* x, bool written, Buffer& buf, FastArray& a) {
  if (PyObject_GetBuffer(x, &buf.view, written ? PyBUF_RECORDS : PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  buf.held = true;
  const std::optional<DType> d = format_dtype(buf.view.format, buf.view.itemsize);
  if (!d || buf.view.ndim > kMaxRank) return false;
  a.dtype = *d;
  a.device = -1;
  a.data = buf.view.buf;
  const int rank = buf.view.ndim;
  a.shape = Dims::of_rank(rank, 0);
  a.strides = Dims::of_rank(rank, 0);
  for (int i = 0; i < rank; ++i) {
    if (buf.view.strides[i] % buf.view.itemsize != 0) return false;  // not in whole elements
    a.shape[i] = buf.view.shape[i];
    a.strides[i] = buf.view.strides[i] / buf.view.itemsize;
  }
  return true;
}

// numpy.empty(shape, dtype=numpy's `d`), its buffer read into `t` (C order).
nb::object allocate(const Dims& shape, DType d, Buffer& buf, FastArray& t) {
  nb::object extents = nb::steal(PyTuple_New(shape.size()));
  if (!extents.is_valid()) throw nb::python_error();
  for (int i = 0; i < shape.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(shape[i]);
    if (v == nullptr) throw nb::python_error();
    PyTuple_SET_ITEM(extents.ptr(), i, v);
  }
  static PyObject* const kwnames = Py_BuildValue("(s)", "dtype");
  if (kwnames == nullptr) throw nb::python_error();
  PyObject* args[] = {extents.ptr(), g_numpy.dtypes[static_cast<int>(d)]};
  PyObject* r = PyObject_Vectorcall(g_numpy.empty, args, 1, kwnames);
  if (r == nullptr) throw nb::python_error();
  nb::object result = nb::steal(r);
  if (!read(result.ptr(), true, buf, t))
    throw nb::type_error("ewise: cannot read numpy.empty's result");
  return result;
}

// out = a op b (out None: a new array) for NumPy's arrays and Python scalars on the CPU backend;
// None when the general path must run (see the file comment).
nb::object numpy_binary(nb::handle op, nb::handle a, nb::handle b, nb::handle out,
                        nb::handle kernel) {
  const bool has_out = !out.is_none();
  FastOperand fa, fb;
  fa.is_scalar = read_scalar(a, fa.scalar);
  fb.is_scalar = read_scalar(b, fb.scalar);
  if ((fa.is_scalar && fb.is_scalar) || (!fa.is_scalar && !is_ndarray(a.ptr())) ||
      (!fb.is_scalar && !is_ndarray(b.ptr())) || (has_out && !is_ndarray(out.ptr())))
    return nb::none();
  Buffer ba, bb, bo, bn;
  FastArray to;
  if ((!fa.is_scalar && !read(a.ptr(), false, ba, fa.tensor)) ||
      (!fb.is_scalar && !read(b.ptr(), false, bb, fb.tensor)) ||
      (has_out && !read(out.ptr(), true, bo, to)))
    return nb::none();
  const std::optional<DType> result =
      fast_result(op, fa, fb, has_out ? &to : nullptr, Promotion::numpy);
  if (!result || (!has_out && g_numpy.dtypes[static_cast<int>(*result)] == nullptr))
    return nb::none();
  return finish_binary(
      op, kernel, out, fa, fb, to, *result, /*host=*/true,
      [&](const NewResult& r, FastArray& t) { return allocate(r.shape, *result, bn, t); },
      [](int) -> std::uintptr_t { return 0; }, Promotion::numpy);
}

}  // namespace

void bind_numpy(nb::module_& m) {
  m.def("numpy_binary", &numpy_binary, nb::arg("op"), nb::arg("a"), nb::arg("b"),
        nb::arg("out").none(), nb::arg("kernel").none(),
        "out = a op b (op and kernel by their C++ names) for NumPy arrays on the CPU backend, "
        "under NumPy's rule; returns out (a new array when None), or None when the call needs "
        "the general path");
}

}  // namespace ewise::python
