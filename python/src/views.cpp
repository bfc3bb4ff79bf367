// python/src/views.cpp — DLPack arrays as ewise views (see views.hpp).
#include "views.hpp"

#include <exception>
#include <iterator>
#include <string>

#include "ewise/error.hpp"

namespace ewise::python {

DType dtype_of(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    if (t.code == static_cast<std::uint8_t>(code::Float)) {
      if (t.bits == 16) return DType::f16;
      if (t.bits == 32) return DType::f32;
      if (t.bits == 64) return DType::f64;
    } else if (t.code == static_cast<std::uint8_t>(code::Bfloat) && t.bits == 16) {
      return DType::bf16;
    } else if (t.code == static_cast<std::uint8_t>(code::Int)) {
      if (t.bits == 32) return DType::i32;
      if (t.bits == 64) return DType::i64;
    }
  }
  static const char* const kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex",
                                        "bool"};
  const std::string name = t.code < std::size(kCodes) ? kCodes[t.code]
                                                       : "code " + std::to_string(t.code) + " ";
  throw nb::type_error(("ewise: unsupported dtype " + name + std::to_string(t.bits) +
                        (t.lanes == 1 ? "" : "x" + std::to_string(t.lanes)) +
                        ": ewise supports float16, bfloat16, float32, float64, int32, int64")
                           .c_str());
}

nb::dlpack::dtype dlpack_dtype(DType t) {
  using code = nb::dlpack::dtype_code;
  auto make = [](code c, int bits) {
    return nb::dlpack::dtype{static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(bits), 1};
  };
  switch (t) {
    case DType::f16: return make(code::Float, 16);
    case DType::bf16: return make(code::Bfloat, 16);
    case DType::f32: return make(code::Float, 32);
    case DType::f64: return make(code::Float, 64);
    case DType::i32: return make(code::Int, 32);
    case DType::i64: return make(code::Int, 64);
  }
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

}  // namespace ewise::python
