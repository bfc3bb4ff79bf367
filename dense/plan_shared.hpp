// dense/plan_shared.hpp — what the dense planner's files share: plan.cpp (names, checks,
// check_dense), plan_accepts.cpp (what each kernel accepts, the automatic choice) and
// plan_launch.cpp (one launch rule per kernel family). Host code, no CUDA call.
#pragma once

#include <cstdint>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"

namespace ewise::detail::planner {

inline bool aligned(const void* ptr, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<std::uintptr_t>(bytes) == 0;
}

/// x / y rounded up, for x >= 0 and y > 0 (no overflow near the int64 limit).
inline std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return x / y + (x % y != 0); }

inline std::int64_t element_bytes(const DenseCall& c) {
  return static_cast<std::int64_t>(dtype_size(c.dtype));
}

/// Whether x is a multiple of v, a power of two (the elements in 16 bytes): a mask, where `%`
/// by a value known only at run time is a division.
inline bool multiple_of(std::int64_t x, std::int64_t v) { return (x & (v - 1)) == 0; }

/// The plan's shape and strides, for error messages.
std::string describe(const BroadcastPlan& p);

/// The vector of a rank-2 matrix-vector plan: the input with exactly one zero stride (b tried
/// first) and its direction, or why neither input qualifies. `contiguous` (continuous,
/// alternate, baseline) also requires out and the other input row-major contiguous.
struct VectorOperand {
  int operand = 0;  ///< 1 = a, 2 = b; 0: none (see why)
  bool row_vector = false;
  std::string why;
};

VectorOperand find_vector(const BroadcastPlan& p, bool contiguous);

/// Why `kernel` cannot run the sorted, coalesced plan p (numel > 0), or "" when it can.
std::string kernel_rejects(Kernel kernel, const BroadcastPlan& p);

/// Elements per access of row_vectorized on call c (inner strides 0 or 1): 16 bytes' worth
/// when rows are whole vectors and every stride-1 operand's rows start 16-byte aligned (a
/// broadcast, stride-0, operand is read as scalars), else 1.
int row_vector_width(const DenseCall& c);

/// How the vectorized kernel reads input k (1 = a, 2 = b) of call c: as 16-byte vectors when
/// it is laid out like the output at the same offset within 16 bytes, held when every stride is
/// 0, else gathered element by element.
VectorAccess vector_access(const DenseCall& c, int k);

/// The kernel `automatic` runs for call c's sorted, coalesced plan (numel > 0).
Kernel select(const DenseCall& c);

}  // namespace ewise::detail::planner
