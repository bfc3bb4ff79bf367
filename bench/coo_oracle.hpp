// bench/coo_oracle.hpp — the device oracle of the structures and union suites: canonical
// forms, products and sums of the kinds of coo_kinds.hpp computed without ewise's sparse code
// (coo_oracle.cu), and the bit-for-bit comparisons of ewise's results with them (coo_check.cu).
//
// The oracle (OracleCoo and the functions below) is independent of the generators and of
// ewise's sparse code: a stable radix sort of 64-bit absolute indices, duplicates summed one
// after another in storage order by one thread per run (ewise's documented order), a binary
// search of one canonical operand's keys for each entry of the other, the dense factor read
// per entry; for the union, both canonical operands' keys sorted together and each key's values
// added (a missing one counting as +0), and for the dense forms the dense written element by
// element then each entry's key. Its results are compared with ewise's bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::bench {

/// A canonical f32 matrix as 64-bit absolute indices (row * ncols + col) and values.
struct OracleCoo {
  std::int64_t nrows = 0, ncols = 0, nnz = 0;
  DeviceBuffer keys, vals;
};

/// The canonical form of a (i32 indices, f32 values): sorted, duplicates summed in storage order.
OracleCoo oracle_coalesce(const CooView& a, cudaStream_t stream);
/// a ⊙ b of canonical oracle matrices: the common keys, values multiplied.
OracleCoo oracle_intersect(const OracleCoo& a, const OracleCoo& b, cudaStream_t stream);
/// a ⊙ dense of a canonical oracle matrix (dense: a device f32 tensor broadcasting to a's shape).
OracleCoo oracle_scale(const OracleCoo& a, const ConstTensorView& dense, cudaStream_t stream);
/// a + b over the structural union of canonical oracle matrices (combine(BinaryOp::add, a, b)
/// with fills 0): every key of either, value x + y, a missing operand counting as +0.
OracleCoo oracle_union(const OracleCoo& a, const OracleCoo& b, cudaStream_t stream);
/// The dense result of adding a canonical oracle matrix to `dense` (a contiguous device f32
/// (nrows, ncols) tensor): in_place, accumulate(add, dense, a): dense + a at a's keys, dense
/// elsewhere; else combine(add, a, dense): a + dense at a's keys, +0 + dense elsewhere.
DeviceTensor oracle_add_dense(const OracleCoo& a, const ConstTensorView& dense, bool in_place,
                              cudaStream_t stream);
/// The oracle matrix as a canonical i32/f32 DeviceCoo (how the suite makes canonical inputs).
DeviceCoo oracle_to_coo(const OracleCoo& a, cudaStream_t stream);

/// Checks that got (a canonical-claiming result) equals want bit for bit: nnz, every
/// coordinate and every value. Returns a description; throws VerifyError naming the first
/// difference.
std::string check_equal(const CooView& got, const OracleCoo& want, cudaStream_t stream);
/// Checks out_vals[k] == a.vals[k] * dense[a.rows[k], a.cols[k]] bit for bit for every entry k
/// of a (multiply_values). Throws VerifyError.
std::string check_values(const CooView& a, const ConstTensorView& dense,
                         const ConstTensorView& out_vals, cudaStream_t stream);
/// Checks that two contiguous device f32 tensors of one shape are equal bit for bit, every
/// element. Returns a description; throws VerifyError naming the first difference.
std::string check_dense_equal(const ConstTensorView& got, const ConstTensorView& want,
                              cudaStream_t stream);

}  // namespace ewise::bench
