// dense/convert_predicates.cu — the converting kernel for the comparisons, the logical and the
// bitwise operations (convert.cuh).
#include "convert.cuh"

namespace ewise::detail {
void run_converting_predicates(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  run_converting_of<ops::Equal, ops::NotEqual, ops::Less, ops::LessEqual, ops::Greater,
                    ops::GreaterEqual, ops::LogicalAnd, ops::LogicalOr, ops::LogicalXor,
                    ops::BitAnd, ops::BitOr, ops::BitXor>(t, plan, stream);
}
}  // namespace ewise::detail
