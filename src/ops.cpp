#include "ewise/ops.hpp"

#include "ewise/error.hpp"

namespace ewise {

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::min: return "min";
    case BinaryOp::max: return "max";
  }
  return "unknown";
}

BinaryOp parse_op(std::string_view name) {
  for (BinaryOp op : kAllOps)
    if (name == op_name(op)) return op;
  EWISE_EXPECTS(false, "unknown operation '", name, "' (expected add, sub, mul, div, min or max)");
  return BinaryOp::add;
}

}  // namespace ewise
