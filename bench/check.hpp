// bench/check.hpp — verification of benchmark cases against the CPU reference before timing.
//
// Dense cases: outputs of at most kFullCheckLimit elements are compared in full with
// ewise::reference_binary. Larger outputs are checked on a random sample of kSampleSize
// output elements plus the first and the last (their operands gathered on the device, the
// reference computed on the CPU with reference_binary), and the whole output is scanned on the
// device for elements still holding the poison pattern, so an unwritten element anywhere fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise::bench {

/// A result did not match the reference.
class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::int64_t kFullCheckLimit = std::int64_t{1} << 20;
inline constexpr std::int64_t kSampleSize = std::int64_t{1} << 16;

/// Checks out = a op b (device views; out contiguous and poisoned before the run that wrote it).
/// Returns how it was checked ("full 4096" or "sample 65538 + poison scan of 268435456");
/// throws VerifyError with the comparison report on a mismatch.
std::string verify_dense(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                         const ConstTensorView& out, std::uint64_t seed, cudaStream_t stream,
                         Promotion rule = Promotion::numpy);

/// Number of elements of a contiguous device view that hold the poison pattern (bitwise).
std::int64_t count_poisoned(const ConstTensorView& v, cudaStream_t stream);

}  // namespace ewise::bench
