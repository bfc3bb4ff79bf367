// fuzz/entries.hpp — the fuzz entry functions (fuzz/entries_*.cpp), shared by the libFuzzer
// targets (fuzz/target.cpp) and the corpus regression test (tests/test_fuzz_corpus.cpp, normal
// g++ build).
//
// Each entry takes arbitrary bytes and either
//   * returns Outcome::accepted after checking the result's invariants (below), or
//   * returns Outcome::rejected when ewise threw ewise::Error (the clean failure), or
//   * throws Violation when a result breaks an invariant (a bug: the caller aborts / fails).
// Any other exception escapes (std::bad_alloc, std::length_error, ...) and is a bug too.
//
// npy   — parse_npy on the bytes. Accepted: rank <= 8, bytes == numel * itemsize <= input size,
//         the data equals the input's last bytes in C order or their Fortran-order gather; the
//         tensor survives write_npy -> read_npy (C order and Fortran order, version 3) bit for
//         bit with the same dtype and shape.
// mtx   — parse_mtx on the bytes as text, with a progress callback. Accepted: dtype f64 or i64,
//         index type i32 exactly when nrows and ncols are <= 2^31, every index in range,
//         entries sorted by absolute index, `canonical` exactly when there are no duplicates,
//         nnz <= input size, progress monotone and bounded by the input size, and the matrix
//         survives write_mtx -> read_mtx bit for bit (NaN payloads aside).
// plan  — the bytes decode three tensor descriptors (dtype, shapes, strides, including huge,
//         zero and negative values) and data addresses (disjoint, in place, or overlapping);
//         plan_binary on host views. Accepted: the plan's offsets equal an independent
//         computation from the descriptors on sampled indices (all indices of small plans),
//         lie within each operand's offset range, the coalesced plan gives identical offsets
//         with no higher rank, an output declared non-overlapping has distinct offsets and does
//         not share a byte with an input unless exactly in place. Plans small enough are then
//         executed by reference_binary on real buffers (any op, the operands' dtypes mixed one
//         time in four): every output element equals the operation applied to the inputs'
//         elements and nothing outside the output is written, or the call's dtypes are refused
//         (check_types) and nothing is written.
//         Then the dense planner (detail::plan_dense, dense/plan*.cpp) on the same operands, for
//         one of three devices' properties, with `automatic` and with a kernel named by the
//         layout byte's high bits: automatic always plans them, a named kernel is accepted
//         exactly when kernel_supports allows it, and every plan visits the same (out, a, b)
//         offsets as plan_binary's plan (all of them for small plans, the offset ranges
//         always), takes the 32-bit path only when indices and offsets fit, has kernel fields
//         consistent with its plan, and threads and grids within their limits.
// api   — the bytes decode one public call on host views (api_call.hpp): multiply COO ⊙ COO
//         (every CooAlgorithm value and an unknown one), COO ⊙ dense, multiply_values into a
//         poisoned buffer or in place over a.vals, coalesce, coo_to_dense, dense_to_coo,
//         coo_to_csr_row_offsets, check_indices (validate_indices and drop_zeros decoded;
//         validate_indices false only on valid indices), or binary with every BinaryOp, NumPy's
//         or PyTorch's promotion and a named or automatic kernel and tunables over views of one
//         arena (shapes up to rank 4, broadcasts, transposed / reversed / padded / zero / small
//         strides, outputs apart, exactly in place or overlapping; x and y of any two of the
//         thirteen dtypes or y a Python int, float or bool or a typed scalar, out of the
//         result's dtype or any other); the six sparse dtypes, i32 /
//         i64 indices, NaN / ±0 / ±inf / extreme values, duplicates, any order, out-of-range and
//         negative indices, lying canonical flags, empty matrices, nrows * ncols near or over
//         int64. An oracle (api_oracle.hpp) written from the headers' text and the frameworks'
//         promotion tables (promotion_tables.hpp; std::map of (row, col) summing duplicates in
//         storage order in the compute type, f32 for f16/bf16, rounded once; the operations of
//         ops.hpp; every NaN written as the canonical NaN; drop_zeros on the rounded value;
//         views' validity, broadcasting and overlap rules; the dtypes an operation takes, the
//         casts an output allows (same_kind), a scalar's weight and its value in the compute
//         type, a Python int out of range refused; a named kernel accepted exactly when it is
//         general or the call runs the same-dtype kernels and kernel_supports allows it) decides
//         valid or invalid. Accepted: the call was valid and
//         every result is bit-identical to the oracle's (descriptor, canonical flag, indices,
//         value bits), and nothing outside the output changed. Rejected: the call was invalid,
//         ewise threw InvalidArgument and wrote nothing (out_vals still poisoned, a.vals and
//         the arena unchanged). Any other exception is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ewise::fuzz {

enum class Outcome { accepted, rejected };

/// A broken invariant: a bug in the code under test.
class Violation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

Outcome npy_entry(const std::uint8_t* data, std::size_t size);
Outcome mtx_entry(const std::uint8_t* data, std::size_t size);
Outcome plan_entry(const std::uint8_t* data, std::size_t size);
Outcome api_entry(const std::uint8_t* data, std::size_t size);

}  // namespace ewise::fuzz
