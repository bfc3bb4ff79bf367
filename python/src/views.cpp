// python/src/views.cpp — DLPack arrays as ewise views, Python scalars as ewise scalars (see
// views.hpp).
#include "views.hpp"

#include <exception>
#include <iterator>
#include <string>

#include "ewise/detail/compute.hpp"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"

namespace ewise::python {

namespace {

using code = nb::dlpack::dtype_code;

// ewise's dtypes as DLPack's (code, bits), one lane: the one table both directions read.
struct DLPackDType {
  DType dtype;
  code c;
  std::uint8_t bits;
};
constexpr DLPackDType kDLPackDTypes[] = {
    {DType::f16, code::Float, 16}, {DType::bf16, code::Bfloat, 16}, {DType::f32, code::Float, 32},
    {DType::f64, code::Float, 64}, {DType::i32, code::Int, 32},     {DType::i64, code::Int, 64},
    {DType::b8, code::Bool, 8},    {DType::i8, code::Int, 8},       {DType::u8, code::UInt, 8},
    {DType::i16, code::Int, 16},   {DType::u16, code::UInt, 16},    {DType::u32, code::UInt, 32},
    {DType::u64, code::UInt, 64}};

}  // namespace

DType dtype_of(nb::dlpack::dtype t) {
  if (t.lanes == 1)
    for (const DLPackDType& d : kDLPackDTypes)
      if (t.code == static_cast<std::uint8_t>(d.c) && t.bits == d.bits) return d.dtype;
  static const char* const kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex",
                                        "bool"};
  const std::string name = t.code < std::size(kCodes) ? kCodes[t.code]
                                                       : "code " + std::to_string(t.code) + " ";
  throw nb::type_error(("ewise: unsupported dtype " + name + std::to_string(t.bits) +
                        (t.lanes == 1 ? "" : "x" + std::to_string(t.lanes)) +
                        ": ewise supports bool, int8, uint8, int16, uint16, int32, uint32, int64, "
                        "uint64, float16, bfloat16, float32, float64")
                           .c_str());
}

nb::dlpack::dtype dlpack_dtype(DType t) {
  for (const DLPackDType& d : kDLPackDTypes)
    if (d.dtype == t) return {static_cast<std::uint8_t>(d.c), d.bits, 1};
  throw nb::type_error("ewise: unknown dtype");
}

Memory memory_of(int device_type) {
  if (device_type == nb::device::cpu::value) return Memory::host;
  if (device_type == nb::device::cuda::value || device_type == nb::device::cuda_host::value ||
      device_type == nb::device::cuda_managed::value)
    return Memory::device;
  throw nb::value_error(("ewise: unsupported DLPack device type " + std::to_string(device_type) +
                         ": ewise runs on the CPU (kDLCPU) and on CUDA devices")
                            .c_str());
}

CurrentDevice::CurrentDevice(int device) {
  EWISE_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    EWISE_CUDA_CHECK(cudaSetDevice(device));
    restore_ = true;
  }
}

CurrentDevice::~CurrentDevice() {
  if (restore_) (void)cudaSetDevice(previous_);
}

void register_error_translators() {
  // Translators run most recent first: the base class ewise::Error is registered first.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

TensorDesc desc_of(const InArray& a) {
  const DType dtype = dtype_of(a.dtype());
  const int rank = static_cast<int>(a.ndim());
  EWISE_EXPECTS(rank <= kMaxRank, "rank ", rank, " exceeds the maximum rank ", kMaxRank);
  Dims shape = Dims::of_rank(rank, 0), strides = Dims::of_rank(rank, 0);
  for (int i = 0; i < rank; ++i) {
    shape[i] = static_cast<std::int64_t>(a.shape(static_cast<std::size_t>(i)));
    strides[i] = a.stride(static_cast<std::size_t>(i));
  }
  return TensorDesc::strided(dtype, shape, strides);
}

ConstTensorView const_view(const InArray& a) {
  return {a.data(), desc_of(a), memory_of(a.device_type())};
}

TensorView view(const OutArray& a) {
  const InArray in(a);
  return {a.data(), desc_of(in), memory_of(a.device_type())};
}

namespace {

bool is_py_scalar(nb::handle x) {
  return PyBool_Check(x.ptr()) || PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr());
}

PyOperand array_operand(nb::handle x, const char* what) {
  PyOperand p;
  if (!nb::try_cast<InArray>(x, p.array))
    throw nb::type_error((std::string("ewise: ") + what + " (a " + Py_TYPE(x.ptr())->tp_name +
                          ") is neither a Python scalar nor an array DLPack can import")
                             .c_str());
  p.operand = const_view(p.array);
  return p;
}

[[noreturn]] void throw_overflow(nb::handle x, DType dtype) {
  const std::string message = "ewise: Python integer " + std::string(nb::str(x).c_str()) +
                              " out of bounds for " + (is_integer(dtype) ? dtype_name(dtype)
                                                                         : "i64");
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw nb::python_error();
}

// A Python scalar as a weak Scalar, the operand of op with an array of dtype `other`.
Scalar scalar_of(nb::handle x, BinaryOp op, DType other, Promotion rule) {
  PyObject* p = x.ptr();
  if (PyBool_Check(p)) return Scalar::weak_bool(p == Py_True);
  if (PyFloat_Check(p)) return Scalar::weak_float(PyFloat_AS_DOUBLE(p));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow == 0) return Scalar::weak_int(v);
  // Beyond int64, a comparison with an integer array is exact in NumPy 2: a u64 array takes the
  // int as a u64 when it holds it; otherwise every element lies on one side of it, and 2^65 (or
  // -2^65), exact in f64, stands for it.
  if (op_family(op) == OpFamily::comparison && is_integer(other)) {
    if (other == DType::u64 && overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(p);
      if (!PyErr_Occurred()) return Scalar::of_uint(DType::u64, u);
      PyErr_Clear();
    }
    return Scalar::weak_float(overflow > 0 ? 36893488147419103232.0 : -36893488147419103232.0);
  }
  // Beyond int64, NumPy converts the int to the dtype op computes in, when that holds it (a
  // float, u64); anything else overflows.
  DType compute = DType::i64;
  try {
    compute = op_types(op, rule, {other, Weight::tensor}, {DType::i64, Weight::weak}).compute;
  } catch (const InvalidArgument& e) {
    throw nb::type_error(e.what());
  }
  if (is_floating(compute)) {
    const double d = PyLong_AsDouble(p);
    if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();  // beyond f64: OverflowError
    return Scalar::weak_float(d);
  }
  if (compute == DType::u64 && overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(p);
    if (!PyErr_Occurred()) return Scalar::of_uint(DType::u64, u);
    PyErr_Clear();
  }
  throw_overflow(x, compute);
}

}  // namespace

// Raises the dtype errors of a call as Python raises NumPy's (views.hpp): TypeError (NumPy's
// UFuncTypeError is one) where the operation is not defined for the dtypes or its result cannot
// be cast to out's dtype; OverflowError for a Python integer the operation's dtype cannot hold
// (NumPy's rule). The message is the C++ library's (detail::check_types), naming the dtypes.
void check_dtypes(BinaryOp op, const Operand& a, const Operand& b, DType out, Promotion rule) {
  try {
    detail::check_types(op, a, b, out, rule);
  } catch (const InvalidArgument& e) {
    // check_types refuses three things: the operation, the cast into out, a scalar's value.
    bool typed = false;
    try {
      typed = can_cast_same_kind(op_types(op, rule, a.type(rule), b.type(rule)).result, out);
    } catch (const InvalidArgument&) {
    }
    PyErr_SetString(typed ? PyExc_OverflowError : PyExc_TypeError, e.what());
    throw nb::python_error();
  }
}

PyOperands py_operands(BinaryOp op, nb::handle a, nb::handle b, Promotion rule) {
  const bool sa = is_py_scalar(a), sb = is_py_scalar(b);
  if (sa && sb)
    throw nb::type_error("ewise: a and b are both Python scalars: at least one must be an array");
  PyOperands r;
  if (!sa) r.a = array_operand(a, "a");
  if (!sb) r.b = array_operand(b, "b");
  if (sa) r.a.operand = scalar_of(a, op, r.b.operand.view().desc.dtype, rule);
  if (sb) r.b.operand = scalar_of(b, op, r.a.operand.view().desc.dtype, rule);
  return r;
}

}  // namespace ewise::python
