// fuzz/api_call.cpp — a decoded call's names and description (api_call.hpp); decoding is in
// api_decode.cpp, running in api_run.cpp.
#include "api_call.hpp"

#include <cstring>
#include <sstream>

namespace ewise::fuzz {

const char* api_op_name(ApiOp op) {
  static const char* const names[kApiOpCount] = {
      "multiply_coo", "multiply_dense", "multiply_values", "multiply_values_into_a",
      "coalesce",     "coo_to_dense",   "dense_to_coo",    "csr_row_offsets",
      "check_indices", "binary",        "combine_coo",     "combine_dense",
      "combine_dense_out", "accumulate"};
  const int i = static_cast<int>(op);
  return i < kApiOpCount ? names[i] : "unknown";
}

bool has_dense_operand(ApiOp op) {
  return op == ApiOp::multiply_dense || op == ApiOp::multiply_values ||
         op == ApiOp::multiply_values_into_a || op == ApiOp::dense_to_coo ||
         op == ApiOp::combine_dense || op == ApiOp::combine_dense_out || op == ApiOp::accumulate;
}

bool is_union(ApiOp op) {
  return op == ApiOp::combine_coo || op == ApiOp::combine_dense ||
         op == ApiOp::combine_dense_out || op == ApiOp::accumulate;
}

CooView CooBytes::view() const {
  const auto p = [&](const std::vector<std::uint8_t>& v) -> const void* {
    return null_arrays || v.empty() ? nullptr : v.data();
  };
  return {p(rows), p(cols), p(vals), desc, Memory::host};
}

std::int64_t ApiCall::arena_elems() const {
  return static_cast<std::int64_t>(arena.size() / dtype_size(dtype));
}

namespace {

std::string hex_values(const std::vector<std::uint8_t>& bytes, std::size_t elem, std::size_t limit) {
  std::ostringstream os;
  const std::size_t n = bytes.size() / elem;
  for (std::size_t k = 0; k < n && k < limit; ++k) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + k * elem, elem);
    os << (k ? " " : "") << std::hex << v << std::dec;
  }
  if (n > limit) os << " ...(" << n << ")";
  return os.str();
}

std::string indices(const std::vector<std::uint8_t>& bytes, IndexType t, std::size_t limit) {
  std::ostringstream os;
  const std::size_t elem = index_size(t), n = bytes.size() / elem;
  for (std::size_t k = 0; k < n && k < limit; ++k) {
    std::int64_t v = 0;
    if (t == IndexType::i32) {
      std::int32_t v32;
      std::memcpy(&v32, bytes.data() + k * 4, 4);
      v = v32;
    } else {
      std::memcpy(&v, bytes.data() + k * 8, 8);
    }
    os << (k ? " " : "") << v;
  }
  if (n > limit) os << " ...(" << n << ")";
  return os.str();
}

void describe(std::ostringstream& os, const char* name, const CooBytes& m) {
  os << "  " << name << ": " << m.desc.str() << (m.null_arrays ? " (null arrays)" : "")
     << "\n    rows " << indices(m.rows, m.desc.index, 64) << "\n    cols "
     << indices(m.cols, m.desc.index, 64) << "\n    vals (hex bits) "
     << hex_values(m.vals, dtype_size(m.desc.dtype), 64) << "\n";
}

}  // namespace

std::string ApiCall::str() const {
  std::ostringstream os;
  os << api_op_name(op) << " dtype " << dtype_name(dtype);
  const bool sparse_call = op != ApiOp::binary;
  if (op == ApiOp::binary) {
    os << " op " << op_name(binop) << " promotion " << promotion_name(dense.promotion)
       << " kernel " << kernel_name(dense.kernel) << " threads "
       << dense.threads << " sliding_factor " << dense.sliding_factor << " blocks "
       << dense.blocks << (out_poisoned ? " (out apart, poisoned)" : "") << "\n";
    os << "  x at " << x.offset << ": " << x.desc.str() << "\n  y "
       << (y_scalar ? scalar.str() : "at " + std::to_string(y.offset) + ": " + y.desc.str())
       << "\n  out at " << out.offset << ": " << out.desc.str() << "\n";
  } else {
    os << " algorithm " << coo_algorithm_name(sparse.algorithm) << " ("
       << static_cast<int>(sparse.algorithm) << ") validate_indices " << sparse.validate_indices
       << " drop_zeros " << sparse.drop_zeros << " promotion " << promotion_name(sparse.promotion)
       << "\n";
    if (is_union(op))
      os << "  op " << op_name(binop) << " fill_a " << sparse.fill_a << " fill_b " << sparse.fill_b
         << "\n";
    if (op != ApiOp::dense_to_coo) describe(os, "a", a);
    if (op == ApiOp::multiply_coo || op == ApiOp::combine_coo) describe(os, "b", b);
    if (has_dense_operand(op))
      os << "  dense at " << x.offset << ": " << x.desc.str() << "\n";
    if (op == ApiOp::combine_dense_out)
      os << "  out at " << out.offset << ": " << out.desc.str()
         << (out_poisoned ? " (apart, poisoned)" : "") << "\n";
    if (op == ApiOp::dense_to_coo) os << "  index " << index_name(dense_to_coo_index) << "\n";
    if (op == ApiOp::multiply_values)
      os << "  out_vals " << dtype_name(out_vals_dtype) << "(" << out_vals_len << ")\n";
  }
  if (!sparse_call || has_dense_operand(op))
    os << "  arena (hex bits) " << hex_values(arena, dtype_size(dtype), 256) << "\n";
  return os.str();
}

}  // namespace ewise::fuzz
