// ewise/detail/fast_divmod.hpp — division by a run-time constant without a hardware divide.
//
// FastDivmod<U> (U = uint32_t or uint64_t) precomputes, on the host, a magic multiplier m and a
// shift s for a divisor d (Granlund & Montgomery, "Division by invariant integers using
// multiplication", 1994, round-up method): with N the width of U,
//   s = ceil(log2 d),   m = floor(2^N * (2^s - d) / d) + 1,   n / d = (mulhi(n, m) + n) >> s.
// The identity holds for every n < 2^N; the sum mulhi(n, m) + n is formed in U, so n must stay
// below 2^(N-1) (int32/int64 ranges: indices and extents are non-negative int32/int64 values).
// Divisors 1 .. 2^(N-1). Host-compilable: the host test checks it against / and %.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ewise/error.hpp"

#if defined(__CUDACC__)
#define EWISE_DIVMOD_HD __host__ __device__ __forceinline__
#else
#define EWISE_DIVMOD_HD inline
#endif

namespace ewise::detail {

template <class U>
EWISE_DIVMOD_HD U mulhi(U a, U b) {
  static_assert(std::is_same_v<U, std::uint32_t> || std::is_same_v<U, std::uint64_t>,
                "mulhi: uint32_t or uint64_t");
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(U) == 4)
    return __umulhi(a, b);
  else
    return __umul64hi(a, b);
#else
  if constexpr (sizeof(U) == 4) {
    return static_cast<U>((static_cast<std::uint64_t>(a) * b) >> 32);
  } else {
    static_assert(sizeof(unsigned __int128) == 16, "the host compiler needs unsigned __int128");
    return static_cast<U>((static_cast<unsigned __int128>(a) * b) >> 64);
  }
#endif
}

template <class U>
struct FastDivmod {
  static_assert(std::is_same_v<U, std::uint32_t> || std::is_same_v<U, std::uint64_t>,
                "FastDivmod: uint32_t or uint64_t");
  static constexpr int kBits = 8 * sizeof(U);
  /// Largest divisor and largest numerator: 2^(N-1) and 2^(N-1) - 1.
  static constexpr U kMaxDivisor = U{1} << (kBits - 1);
  static constexpr U kMaxNumerator = kMaxDivisor - 1;

  U divisor = 1;
  U multiplier = 1;
  unsigned shift = 0;

  FastDivmod() = default;

  /// Host only: precomputes the magic numbers. Throws InvalidArgument outside 1 .. 2^(N-1).
  explicit FastDivmod(std::uint64_t d) {
    EWISE_EXPECTS(d >= 1 && d <= kMaxDivisor, "FastDivmod: divisor ", d, " outside 1..",
                  static_cast<std::uint64_t>(kMaxDivisor));
    divisor = static_cast<U>(d);
    shift = 0;
    while ((std::uint64_t{1} << shift) < d) ++shift;
    if constexpr (kBits == 32) {
      const std::uint64_t m =
          ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1;
      multiplier = static_cast<U>(m);
    } else {
      using W = unsigned __int128;
      const W m = ((W{1} << 64) * ((W{1} << shift) - d)) / d + 1;
      multiplier = static_cast<U>(m);
    }
  }

  EWISE_DIVMOD_HD U div(U n) const { return (mulhi(n, multiplier) + n) >> shift; }
  EWISE_DIVMOD_HD void divmod(U n, U& q, U& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

}  // namespace ewise::detail
