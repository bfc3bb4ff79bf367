// tests/testing/nan_bits.hpp — NaN bit patterns for the tests of ops.hpp's NaN rule (every NaN
// ewise writes is the canonical one, whatever NaN went in).
#pragma once

#include <cstdint>
#include <cstring>
#include <random>

#include "element.hpp"
#include "ewise/tensor.hpp"

namespace ewise::test {

/// The canonical NaN of a floating dtype, as stored bits (ops.hpp; test_half.cpp pins the 16-bit
/// value).
using detail::canonical_nan_bits;

/// A random NaN of a floating dtype as stored bits: random sign, random nonzero payload (quiet or
/// signalling), never the canonical pattern.
inline std::uint64_t random_nan_bits(DType t, std::mt19937_64& rng) {
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  const int man = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : t == DType::f32 ? 23 : 52;
  const std::uint64_t exp = ((std::uint64_t{1} << (bits - 1 - man)) - 1) << man;
  const std::uint64_t payload_mask = (std::uint64_t{1} << man) - 1;
  while (true) {
    const std::uint64_t payload = rng() & payload_mask;
    const std::uint64_t sign = (rng() & 1) << (bits - 1);
    const std::uint64_t v = sign | exp | payload;
    if (payload != 0 && v != canonical_nan_bits(t)) return v;
  }
}

/// Whether the element of dtype t at p is NaN.
inline bool is_nan_bits(DType t, const void* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, dtype_size(t));
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  const int man = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : t == DType::f32 ? 23 : 52;
  const std::uint64_t exp = ((std::uint64_t{1} << (bits - 1 - man)) - 1) << man;
  return (v & exp) == exp && (v & ((std::uint64_t{1} << man) - 1)) != 0;
}

/// Overwrites about `fraction` of the elements of a contiguous host buffer of n floating elements
/// with random non-canonical NaNs, and as many with +-inf and +-0 (so that inf - inf, 0 / 0 and
/// inf * 0 make NaN too).
inline void sprinkle_nans(DType t, void* data, std::int64_t n, double fraction, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  const std::size_t size = dtype_size(t);
  const int bits = static_cast<int>(size) * 8;
  const int man = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : t == DType::f32 ? 23 : 52;
  const std::uint64_t inf = ((std::uint64_t{1} << (bits - 1 - man)) - 1) << man;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = u(rng);
    std::uint64_t v;
    if (x < fraction) v = random_nan_bits(t, rng);
    else if (x < 1.5 * fraction) v = inf | ((rng() & 1) << (bits - 1));
    else if (x < 2 * fraction) v = (rng() & 1) << (bits - 1);
    else continue;
    std::memcpy(static_cast<std::byte*>(data) + i * static_cast<std::int64_t>(size), &v, size);
  }
}

}  // namespace ewise::test
