// dense/convert_division.cu — the converting kernel for floor_divide, remainder, power, fmin,
// fmax (convert.cuh).
#include "convert.cuh"

namespace ewise::detail {
void run_converting_division(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  run_converting_of<ops::FloorDiv, ops::Remainder, ops::Pow, ops::FMin, ops::FMax>(t, plan,
                                                                                   stream);
}
}  // namespace ewise::detail
