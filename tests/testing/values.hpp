// tests/testing/values.hpp — random element values of any dtype for the tests that compare a
// backend with the CPU reference (test_mixed.cu, test_cpu_dense.cpp): the values where the
// semantics have edges (±0, ±inf, NaNs of any sign and payload, integer extremes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "element.hpp"
#include "ewise/tensor.hpp"
#include "testing/nan_bits.hpp"

namespace ewise::test {

/// n random elements of dtype t at `data`: floats mostly small multiples of 1/4 (so that
/// quotients, remainders and powers are exact or interesting), else ±0, ±inf, large values and
/// NaNs of random sign and payload; integers mostly in [-8, 8] (wrapped for unsigned dtypes),
/// else 0, ±1, the extremes, 2^(bits-1) and random bits; bool 0 or 1.
inline void fill_values(DType t, void* data, std::int64_t n, std::mt19937_64& rng) {
  const std::size_t size = dtype_size(t);
  const int bits = 8 * static_cast<int>(size);
  for (std::int64_t i = 0; i < n; ++i) {
    std::byte* p = static_cast<std::byte*>(data) + i * static_cast<std::int64_t>(size);
    const unsigned sel = static_cast<unsigned>(rng() % 16);
    if (t == DType::b8) {
      detail::store_int(t, p, static_cast<std::int64_t>(rng() & 1));
    } else if (is_floating(t)) {
      if (sel == 15) {
        const std::uint64_t nan = test::random_nan_bits(t, rng);
        std::memcpy(p, &nan, size);
        continue;
      }
      constexpr double kInf = std::numeric_limits<double>::infinity();
      const double special[] = {0.0, -0.0, kInf, -kInf, 65504.0, -3.0e38};
      const double v = sel < 9 ? static_cast<double>(static_cast<std::int64_t>(rng() % 65) - 32) / 4
                               : special[sel - 9];
      detail::store_double(t, p, v);
    } else {
      const bool is_signed = dtype_kind(t) == DTypeKind::signed_int;
      const std::uint64_t top = std::uint64_t{1} << (bits - 1);
      // top: the signed minimum, or 2^(bits-1) unsigned (u64 2^63 and i64 2^63 - 1 are one
      // f64: the exact comparisons of CallTypes::exact).
      const std::uint64_t special[] = {0, 1, ~std::uint64_t{0}, top,
                                       is_signed ? top - 1 : ~std::uint64_t{0}, rng()};
      const std::uint64_t v =
          sel < 10 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(rng() % 17) - 8)
                   : special[sel - 10];
      std::memcpy(p, &v, size);  // little-endian: the low bytes, wrapped to the width
    }
  }
}

}  // namespace ewise::test
