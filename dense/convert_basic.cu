// dense/convert_basic.cu — the converting kernel for add, subtract, multiply, divide, minimum,
// maximum (convert.cuh).
#include "convert.cuh"

namespace ewise::detail {
void run_converting_basic(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  run_converting_of<ops::Add, ops::Sub, ops::Mul, ops::Div, ops::Min, ops::Max>(t, plan, stream);
}
}  // namespace ewise::detail
