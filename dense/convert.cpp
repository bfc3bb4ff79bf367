// dense/convert.cpp — the converting kernel's dispatch to its instantiation files.
#include "convert.hpp"

namespace ewise::detail {

void run_converting(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  switch (op_family(t.op)) {
    case OpFamily::comparison:
    case OpFamily::logical:
    case OpFamily::bitwise: return run_converting_predicates(t, plan, stream);
    case OpFamily::arithmetic:
    case OpFamily::divide: break;
  }
  if (static_cast<int>(t.op) <= static_cast<int>(BinaryOp::maximum))
    return run_converting_basic(t, plan, stream);
  run_converting_division(t, plan, stream);
}

}  // namespace ewise::detail
