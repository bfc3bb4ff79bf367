// src/random.hpp — the harness's counter-based generator, shared by host and device code:
// element i of a tensor drawn with seed s depends only on (s, i), so generation parallelizes.
#pragma once

#include <cmath>
#include <cstdint>

#include "ewise/ops.hpp"  // EWISE_HD

namespace ewise::detail {

struct RandomSpec {
  std::uint64_t seed = 0;
  double lo = -4.0, hi = 4.0;
  double min_magnitude = 0.0625;
  bool allow_zero = false;
};

EWISE_HD std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

EWISE_HD std::uint64_t random_bits(std::uint64_t seed, std::uint64_t i, unsigned attempt) {
  return splitmix64(seed ^ splitmix64(i * 64u + attempt));
}

inline constexpr unsigned kMaxAttempts = 64;

/// A real in [lo, hi], passed through `round` (rounding to the dtype), |x| >= min_magnitude
/// unless zeros are allowed. After kMaxAttempts rejections (never seen in practice) returns hi.
template <class Round>
EWISE_HD double draw_real(const RandomSpec& s, std::uint64_t i, Round round) {
  for (unsigned k = 0; k < kMaxAttempts; ++k) {
    const double u = static_cast<double>(random_bits(s.seed, i, k) >> 11) * 0x1p-53;
    const double x = round(s.lo + (s.hi - s.lo) * u);
    if (s.allow_zero || x >= s.min_magnitude || x <= -s.min_magnitude) return x;
  }
  return round(s.hi);
}

/// A whole number in [ceil(lo), floor(hi)], non-zero unless zeros are allowed.
EWISE_HD std::int64_t draw_int(const RandomSpec& s, std::uint64_t i) {
  const auto lo = static_cast<std::int64_t>(ceil(s.lo));
  const auto hi = static_cast<std::int64_t>(floor(s.hi));
  const auto range = static_cast<std::uint64_t>(hi - lo) + 1u;
  for (unsigned k = 0; k < kMaxAttempts; ++k) {
    const auto x = lo + static_cast<std::int64_t>(random_bits(s.seed, i, k) % range);
    if (s.allow_zero || x != 0) return x;
  }
  return hi;
}

/// Shape and strides of a view in a form device code can take by value.
struct StridedLayout {
  int rank = 0;
  std::int64_t shape[8] = {};
  std::int64_t strides[8] = {};

  /// Element offset of the view's row-major linear index i.
  EWISE_HD std::int64_t offset(std::int64_t i) const {
    std::int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (i % shape[d]) * strides[d];
      i /= shape[d];
    }
    return off;
  }
};

}  // namespace ewise::detail
