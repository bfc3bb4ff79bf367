// fuzz/api_call.hpp — one public API call decoded from bytes, and running it on host or device
// views. Shared by the `api` fuzz entry (entries_api.cpp: the call on host views against an
// independent oracle, api_oracle.hpp) and the GPU differential program (tools/fuzz_gpu.cu: the
// same call on device views against the host views). Host code; the device runner only needs
// the CUDA runtime (copies) and the library.
//
// A decoded call owns its operands as host bytes: up to two COO matrices (rows, cols, vals
// arrays of the decoded element count, or null), and one dense arena (elements of the call's
// dtype) holding every dense operand at a decoded element offset with its own descriptor (and
// dtype: binary's operands and output may each have another). The
// decoder produces, among valid calls: duplicates, unsorted entries, empty matrices, huge
// nrows * ncols with few entries, NaN / ±0 / ±inf / extreme values, broadcasts, transposed,
// reversed and padded strides, in-place outputs; and invalid ones: out-of-range or negative
// indices, canonical flags that lie, overflowing shapes, index types too small, mismatched
// operands, unknown algorithms and tunables, partially overlapping outputs, union calls with ops
// other than add, sub, min and max, fills an integer dtype cannot hold, drop_zeros on the dense
// union forms.
// validate_indices is false only on calls whose indices and canonical flags are valid.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/dense.hpp"
#include "ewise/ops.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::fuzz {

/// The operation a decoded call makes.
enum class ApiOp : std::uint8_t {
  multiply_coo,          ///< multiply(a, b)
  multiply_dense,        ///< multiply(a, x)
  multiply_values,       ///< multiply_values(a, x, out_vals): a separate, poisoned buffer
  multiply_values_into_a,///< multiply_values(a, x, a.vals): in place
  coalesce,              ///< coalesce(a)
  coo_to_dense,          ///< coo_to_dense(a)
  dense_to_coo,          ///< dense_to_coo(x, index)
  csr_row_offsets,       ///< coo_to_csr_row_offsets(a)
  check_indices,         ///< check_indices(a)
  binary,                ///< binary(binop, x, y, out) over the arena
  combine_coo,           ///< combine(binop, a, b)
  combine_dense,         ///< combine(binop, a, x): a new dense result
  combine_dense_out,     ///< combine(binop, a, x, out): out in the arena (x itself, or apart)
  accumulate,            ///< accumulate(binop, x, a): x in place
};
inline constexpr int kApiOpCount = 14;
const char* api_op_name(ApiOp op);
/// The call reads (or, accumulate, writes) a dense operand x in the arena.
bool has_dense_operand(ApiOp op);
/// The call is one of the union's: combine or accumulate.
bool is_union(ApiOp op);

/// A COO operand as host bytes. `null_arrays`: the view's arrays are null (the arrays are
/// empty then), whatever nnz says.
struct CooBytes {
  CooDesc desc;
  std::vector<std::uint8_t> rows, cols, vals;
  bool null_arrays = false;
  /// The view over these bytes (host memory).
  CooView view() const;
};

/// A dense operand: a descriptor at an element offset into the arena.
struct ArenaView {
  std::int64_t offset = 0;  ///< in elements of the arena's dtype
  TensorDesc desc;
};

struct ApiCall {
  ApiOp op = ApiOp::check_indices;
  /// The arena's element: the widest of its views' dtypes (each view has its own): binary,
  /// x's, y's and out's; sparse calls, a's values' (the call's first dtype) and the dense
  /// operand's and out's.
  DType dtype = DType::f32;
  CooBytes a, b;
  SparseOptions sparse;      ///< algorithm, validate_indices, drop_zeros, fill_a, fill_b
  IndexType dense_to_coo_index = IndexType::i32;
  std::vector<std::uint8_t> arena;  ///< dense operands' storage, poison included
  ArenaView x, y, out;       ///< x: the dense operand of sparse calls; binary: out = x op y;
                             ///< combine_dense_out: out
  /// binary: y is this scalar (a Python scalar, or a typed one of y's dtype), not the arena view
  /// (y's descriptor then has rank 0 and the scalar's dtype).
  bool y_scalar = false;
  Scalar scalar;
  BinaryOp binop = BinaryOp::add;  ///< binary's op, and the union calls'
  DenseOptions dense;        ///< kernel and tunables of binary
  bool out_poisoned = false; ///< binary, combine_dense_out: out lies apart from the inputs and
                             ///< was poisoned
  std::int64_t out_vals_len = 0;  ///< multiply_values: out_vals' length (a.nnz unless wrong)
  DType out_vals_dtype = DType::f32;

  std::int64_t arena_elems() const;
  std::string str() const;  ///< the call, one line per operand, values included when short
};

/// Decodes any bytes into a call (never throws; api_decode.cpp).
ApiCall decode_api_call(const std::uint8_t* data, std::size_t size);

/// What a call left behind, in host memory.
struct ApiResult {
  bool rejected = false;        ///< ewise threw InvalidArgument
  std::string error;            ///< its message
  bool has_coo = false;
  HostCoo coo;                  ///< the returned matrix (sparse results)
  bool has_tensor = false;
  HostTensor tensor;            ///< the returned tensor (coo_to_dense, csr_row_offsets,
                                ///< combine_dense)
  std::vector<std::uint8_t> arena;     ///< the dense arena after the call
  std::vector<std::uint8_t> out_vals;  ///< multiply_values: out_vals (a.vals in place) after
};

/// Runs the call (api_run.cpp) on views in `memory`: host views (the CPU backend) or copies of every operand
/// in device memory (stream `stream`; outputs poisoned first with verify::poison), results
/// copied back. Catches only ewise::InvalidArgument (-> rejected); anything else escapes.
ApiResult run_api_call(const ApiCall& call, Memory memory, cudaStream_t stream = nullptr);

/// The one documented host/device difference of binary (dense.hpp, kernel_supports): a named
/// tiled kernel refused on device views whose device's shared memory cannot hold its tiles.
bool tiled_shared_memory_refusal(const ApiCall& call, const ApiResult& result);

}  // namespace ewise::fuzz
