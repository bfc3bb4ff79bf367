// fuzz/api_oracle.hpp — the api entry's oracle (entries.hpp): what a decoded call
// (api_call.hpp) must do, written from the documented semantics (ewise/sparse.hpp,
// ewise/ops.hpp, ewise/dense.hpp) independently of the CPU backend; it shares only the 16-bit
// float conversions (ewise/half.hpp) with the library. The validity rules, from the headers'
// text, are in api_oracle_rules.cpp; the expected results in api_oracle.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "api_call.hpp"

namespace ewise::fuzz {

using Bytes = std::vector<std::uint8_t>;
using i128 = __int128;

struct Expected {
  bool valid = false;
  bool has_coo = false;
  CooDesc coo;
  Bytes rows, cols, vals;
  bool has_tensor = false;
  DType tensor_dtype = DType::f32;
  Dims tensor_shape;
  Bytes tensor;
  Bytes arena;     ///< the arena after the call (unchanged unless binary, combine_dense_out or
                   ///< accumulate writes it)
  Bytes out_vals;  ///< multiply_values: out_vals after (rejected: as before)
};

/// What the call must do: valid or not, and then its results bit for bit.
Expected api_oracle(const ApiCall& c);

// ---- validity, from the headers' text -------------------------------------------------------

bool coo_desc_ok(const CooDesc& d);
/// Index k of an i32 or i64 index array.
std::int64_t index_at(const Bytes& b, IndexType t, std::int64_t k);
/// A view ewise must accept: valid descriptor, arrays present, every index in range, entries
/// strictly increasing by (row, col) when marked canonical.
bool coo_ok(const CooBytes& m);
/// TensorDesc validity: extents >= 0, numel and every byte offset within int64.
bool tensor_desc_ok(const TensorDesc& d);
/// `shape` broadcasts to `to` (NumPy rules, right-aligned).
bool broadcasts_to(const Dims& shape, const Dims& to);
/// The NumPy broadcast of two shapes; false when they do not broadcast.
bool broadcast(const Dims& a, const Dims& b, Dims& out);
std::int64_t numel_of(const Dims& s);
bool options_ok(const DenseOptions& o);
/// An output layout ewise accepts (a valid descriptor): no two coordinates at one element, as
/// ewise's conservative test sees it (api_oracle_rules.cpp).
bool out_layout_ok(const TensorDesc& out);
/// An input and an output in the arena (`arena_elem` bytes an arena element) that ewise lets
/// go together: the same view exactly (dtype included), or no byte in common.
bool overlap_ok(const ArenaView& out, const ArenaView& in, std::size_t arena_elem);
/// binary's checks on shapes, layouts and options: every rule of dense.hpp but the dtypes' and
/// the named kernel's.
bool binary_ok(const ApiCall& c);

// ---- binary's dtypes and values (api_oracle_binary.cpp) -------------------------------------

/// The bits of the canonical NaN of a floating dtype, the one every NaN ewise writes has.
std::uint64_t expected_nan_bits(DType t);

/// What binary computes in and returns, from the frameworks' tables (promotion_tables.hpp) and
/// ops.hpp's rules; valid is false where ewise refuses the operation or the scalar (NumPy's
/// rule: a Python int the integer compute dtype cannot hold). For a scalar y, its value in the
/// compute type's C (the low bytes).
struct BinaryTypes {
  bool valid = false;
  DType compute = DType::f32, result = DType::f32;
  std::uint64_t scalar_bits = 0;
  /// A signed integer tensor compared with a u64 tensor under NumPy's rule: compared exactly
  /// (ops.hpp), not in the compute dtype f64.
  bool exact = false;
  /// An operand rounded to a 16-bit compute dtype after loading: one of another dtype (both
  /// frameworks cast the operands to the compute dtype first; PyTorch's multiply reads a 0-d
  /// or scalar second operand as it is: src/call_types.cpp).
  bool x_round = false, y_round = false;
};
/// The dtypes of op(x, y) for operands of these dtypes and parts in promotion (x is never a
/// Python scalar; scalar_bits is not set). The one model of the promotion rules: binary's and
/// the sparse calls' (sparse_result_dtype) both come from it.
BinaryTypes op_dtypes(BinaryOp op, Promotion rule, OperandType x, OperandType y);
BinaryTypes binary_types(const ApiCall& c);
/// The result dtype of a sparse call with two value operands (sparse.hpp: op_types(op, a, b)
/// under SparseOptions::promotion, accumulate's dense first; a rank-0 dense operand as a 0-d
/// tensor); of the other calls, a's dtype. False where the rule refuses the dtypes or gives no
/// sparse dtype.
bool sparse_result_dtype(const ApiCall& c, DType& out);
/// Contiguous elements of from_dtype cast to dtype `to` as every ewise output is cast (integers
/// wrap, floats rounded to nearest-even, a NaN as the canonical NaN).
Bytes convert_elements(const Bytes& from, DType from_dtype, DType to);
/// NumPy's casting='same_kind' (its table; bf16 to f16 allowed).
bool same_kind(DType from, DType to);
/// The call runs the same-dtype kernels, which a named kernel may ask for (dense.hpp): x, y, out,
/// the result and the compute dtype one of the six original dtypes, the op one of the first six.
bool runs_typed_kernels(const ApiCall& c, const BinaryTypes& t);
/// binary's results written into `arena` (a copy of the call's): each operand converted to the
/// compute type, the ops.hpp functor, the result rounded to its dtype, then cast to out's.
void expect_binary(const ApiCall& c, const BinaryTypes& t, Bytes& arena);
/// The union's operations (sparse.hpp): add, sub, min, max.
bool union_op_ok(BinaryOp op);

/// Calls f(coord) for every coordinate of `shape`, row-major.
template <class F>
void for_each_coord(const Dims& shape, F&& f) {
  std::int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i) n *= shape[i];
  Dims c = Dims::of_rank(shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    f(c);
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
}

}  // namespace ewise::fuzz
