// examples/consumer/functor.cu — a CUDA translation unit using the installed ewise/dense.cuh.
#include "ewise/dense.cuh"
#include "functor.hpp"

namespace {
struct Midpoint {
  __device__ float operator()(float x, float y) const { return (x + y) * 0.5f; }
};
}  // namespace

ewise::DeviceTensor midpoint(const ewise::ConstTensorView& a, const ewise::ConstTensorView& b) {
  return ewise::binary<ewise::dtype_mask({ewise::DType::f32})>(Midpoint{}, a, b);
}
