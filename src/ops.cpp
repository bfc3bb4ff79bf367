#include "ewise/ops.hpp"

#include "ewise/error.hpp"

namespace ewise {

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::subtract: return "subtract";
    case BinaryOp::multiply: return "multiply";
    case BinaryOp::divide: return "divide";
    case BinaryOp::minimum: return "minimum";
    case BinaryOp::maximum: return "maximum";
    case BinaryOp::floor_divide: return "floor_divide";
    case BinaryOp::remainder: return "remainder";
    case BinaryOp::power: return "power";
    case BinaryOp::fmin: return "fmin";
    case BinaryOp::fmax: return "fmax";
    case BinaryOp::equal: return "equal";
    case BinaryOp::not_equal: return "not_equal";
    case BinaryOp::less: return "less";
    case BinaryOp::less_equal: return "less_equal";
    case BinaryOp::greater: return "greater";
    case BinaryOp::greater_equal: return "greater_equal";
    case BinaryOp::logical_and: return "logical_and";
    case BinaryOp::logical_or: return "logical_or";
    case BinaryOp::logical_xor: return "logical_xor";
    case BinaryOp::bitwise_and: return "bitwise_and";
    case BinaryOp::bitwise_or: return "bitwise_or";
    case BinaryOp::bitwise_xor: return "bitwise_xor";
  }
  return "unknown";
}

BinaryOp parse_op(std::string_view name) {
  for (BinaryOp op : kAllOps)
    if (name == op_name(op)) return op;
  if (name == "sub") return BinaryOp::sub;
  if (name == "mul") return BinaryOp::mul;
  if (name == "div") return BinaryOp::div;
  if (name == "min") return BinaryOp::min;
  if (name == "max") return BinaryOp::max;
  EWISE_EXPECTS(false, "unknown operation '", name,
                "' (expected one of NumPy's names: add, subtract, multiply, divide, minimum, "
                "maximum, floor_divide, remainder, power, fmin, fmax, equal, not_equal, less, "
                "less_equal, greater, greater_equal, logical_and, logical_or, logical_xor, "
                "bitwise_and, bitwise_or, bitwise_xor; or sub, mul, div, min, max)");
  return BinaryOp::add;
}

OpFamily op_family(BinaryOp op) {
  switch (op) {
    case BinaryOp::divide: return OpFamily::divide;
    case BinaryOp::equal:
    case BinaryOp::not_equal:
    case BinaryOp::less:
    case BinaryOp::less_equal:
    case BinaryOp::greater:
    case BinaryOp::greater_equal: return OpFamily::comparison;
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
    case BinaryOp::logical_xor: return OpFamily::logical;
    case BinaryOp::bitwise_and:
    case BinaryOp::bitwise_or:
    case BinaryOp::bitwise_xor: return OpFamily::bitwise;
    case BinaryOp::add:
    case BinaryOp::subtract:
    case BinaryOp::multiply:
    case BinaryOp::minimum:
    case BinaryOp::maximum:
    case BinaryOp::floor_divide:
    case BinaryOp::remainder:
    case BinaryOp::power:
    case BinaryOp::fmin:
    case BinaryOp::fmax: return OpFamily::arithmetic;
  }
  detail::throw_unknown_op(op);
}

void detail::throw_unknown_op(BinaryOp op) {
  throw_invalid(__FILE__, __LINE__, concat("unknown binary op ", static_cast<int>(op)));
}

}  // namespace ewise
