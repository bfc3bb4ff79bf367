// python/src/views.hpp — ewise views over the arrays nanobind imports through DLPack, dense
// operands (those views or Python scalars), and what both extension modules (_ewise,
// _ewise_torch) need besides: the device guard and the error translation.
//
// A DLPack tensor is a pointer (plus a byte offset, which nanobind folds into data()), a dtype,
// a device, a shape and strides counted in elements (never bytes: NumPy's byte strides are
// divided by the item size when NumPy exports), so a view is made without copying anything.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise::python {

namespace nb = nanobind;

/// An input: any dtype, device and strides; read-only producers accepted (np.broadcast_to).
using InArray = nb::ndarray<nb::ro>;
/// An output the call writes into.
using OutArray = nb::ndarray<>;

/// The ewise dtype of a DLPack dtype; throws nb::type_error for any other.
DType dtype_of(nb::dlpack::dtype t);
/// The DLPack dtype NumPy and the others know for an ewise dtype.
nb::dlpack::dtype dlpack_dtype(DType t);
/// Host for kDLCPU; device for kDLCUDA, kDLCUDAHost and kDLCUDAManaged (memory the GPU
/// addresses); throws nb::value_error for other devices.
Memory memory_of(int device_type);

/// The stream a Python caller names by its handle (an integer; 0 is the legacy default stream).
inline cudaStream_t as_stream(std::uintptr_t stream) {
  return reinterpret_cast<cudaStream_t>(stream);
}

/// Makes a CUDA device current for the guard's lifetime (when it is not already), then restores
/// the one that was.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

/// Registers the translation of ewise's exceptions into Python's, the message as is:
/// ewise::InvalidArgument -> ValueError, any other ewise::Error (CudaError) -> RuntimeError.
void register_error_translators();

TensorDesc desc_of(const InArray& a);
ConstTensorView const_view(const InArray& a);
TensorView view(const OutArray& a);

/// A dense operand from Python: a Python bool, int or float as a weak Scalar (NumPy 2 and
/// PyTorch treat Python scalars as weak), else an array imported through DLPack, which `array`
/// keeps alive. The Python layer passes NumPy scalars as 0-d arrays: they are not weak.
struct PyOperand {
  InArray array;
  Operand operand{ConstTensorView{}};
};

/// The two operands of op under `rule` (TypeError when both are Python scalars, or an operand
/// is neither a scalar nor an array DLPack imports). A Python int outside int64 is taken as
/// NumPy takes it, converted to the dtype op computes in: a float, or u64 where it fits; else
/// OverflowError, as NumPy raises.
struct PyOperands {
  PyOperand a, b;
};
PyOperands py_operands(BinaryOp op, nb::handle a, nb::handle b, Promotion rule);

/// detail::check_types on a call, its refusals raised as Python raises NumPy's: TypeError where
/// the operation is not defined for the dtypes or its result does not cast to out's dtype,
/// OverflowError for a Python integer the operation's dtype cannot hold. The general path and
/// the fast paths call it before anything runs.
void check_dtypes(BinaryOp op, const Operand& a, const Operand& b, DType out, Promotion rule);

}  // namespace ewise::python
