// bench/coo_draw.cuh — the draws the structure kinds (coo_kinds.cu) are made of, each a
// function of (seed, counter) alone (src/random.hpp's counter-based hashes): f32 values, uniform
// and normal reals, fixed bijections of [0, 2^bits) that scramble ids, and Zipf-distributed ids.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "random.hpp"

namespace ewise::bench {

/// Salts keep the streams of one seed apart.
inline constexpr std::uint64_t kValueSalt = 0x5EED7A1E00000011ull;
inline constexpr std::uint64_t kKeepSalt = 0x5EED0CEE90000012ull;
inline constexpr std::uint64_t kFreshSalt = 0x5EEDF2E540000013ull;
inline constexpr std::uint64_t kRowSalt = 0x5EEDB0A000000014ull;
inline constexpr std::uint64_t kPermSalt = 0x5EEDBE2A00000015ull;
inline constexpr std::uint64_t kLengthSalt = 0x5EED1E7900000016ull;
inline constexpr std::uint64_t kPartnerSalt = 0x5EEDBA2700000017ull;

inline constexpr double kZipf = 1.07;  // words' and embedding rows' popularity law

__host__ __device__ inline float value_at(std::uint64_t seed, std::uint64_t i) {
  detail::RandomSpec s;
  s.seed = seed;
  return static_cast<float>(detail::draw_real(
      s, i, [](double y) { return static_cast<double>(static_cast<float>(y)); }));
}

// Uniform in [0, 1) and in (0, 1] from 64 random bits.
__device__ inline double uniform0(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }
__device__ inline double uniform1(std::uint64_t bits) {
  return static_cast<double>((bits >> 11) + 1) * 0x1p-53;
}

// A standard normal from (seed, i) (Box-Muller).
__device__ inline double normal_at(std::uint64_t seed, std::uint64_t i) {
  const double u1 = uniform1(detail::random_bits(seed, i, 0));
  const double u2 = uniform0(detail::random_bits(seed, i, 1));
  return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
}

// A bijection of [0, 2^bits): multiply by odd constants and xor-shift right, each invertible
// on `bits` bits.
struct Scramble {
  std::uint64_t mask = 0, m1 = 1, a1 = 0, m2 = 1;
  unsigned s1 = 1, s2 = 1;

  __host__ __device__ std::uint64_t operator()(std::uint64_t x) const {
    x = (x * m1 + a1) & mask;
    x ^= x >> s1;
    x = (x * m2) & mask;
    x ^= x >> s2;
    return x;
  }
};

inline Scramble make_scramble(unsigned bits, std::uint64_t seed) {
  Scramble s;
  s.mask = bits >= 64 ? ~0ull : (std::uint64_t{1} << bits) - 1;
  s.m1 = detail::splitmix64(seed) | 1u;
  s.a1 = detail::splitmix64(seed + 1);
  s.m2 = detail::splitmix64(seed + 2) | 1u;
  s.s1 = bits / 2 > 0 ? bits / 2 : 1;
  s.s2 = bits / 3 > 0 ? bits / 3 : 1;
  return s;
}

inline unsigned log2_exact(std::int64_t n, const char* what) {
  unsigned b = 0;
  while ((std::int64_t{1} << b) < n) ++b;
  EWISE_EXPECTS((std::int64_t{1} << b) == n, what, " ", n, " is not a power of two");
  return b;
}


// The cumulative distribution of a Zipf law over n ranks: cdf[i] = P(rank <= i), cdf[n - 1] = 1.
inline DeviceBuffer zipf_cdf(std::int64_t n, double exponent, cudaStream_t stream) {
  std::vector<double> cdf(static_cast<std::size_t>(n));
  double sum = 0;
  for (std::size_t i = 0; i < cdf.size(); ++i) cdf[i] = sum += std::pow(double(i + 1), -exponent);
  for (double& x : cdf) x /= sum;
  cdf.back() = 1.0;
  DeviceBuffer d_cdf(cdf.size() * sizeof(double), stream);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(d_cdf.data(), cdf.data(), d_cdf.size(), cudaMemcpyHostToDevice,
                                   stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vector is freed on return
  return d_cdf;
}

// The rank a uniform u in [0, 1) falls on: the first whose cdf exceeds u.
__device__ inline std::int64_t zipf_rank(const double* cdf, std::int64_t n, double u) {
  std::int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Ids drawn from a Zipf law over n popularity ranks: the rank a uniform u falls on, scrambled.
struct ZipfIds {
  const double* cdf = nullptr;  // zipf_cdf over the n ranks
  std::int64_t n = 0;
  Scramble id;                  // popularity rank -> id

  __device__ std::uint64_t operator()(double u) const {
    return id(static_cast<std::uint64_t>(zipf_rank(cdf, n, u)));
  }
};

/// A Zipf law (exponent kZipf) over n popularity ranks (a power of two), its CDF on the device,
/// and its ids scrambled by `seed`; `ids` reads `cdf`, so the law must outlive the kernels.
struct ZipfLaw {
  DeviceBuffer cdf;
  ZipfIds ids;

  ZipfLaw(std::int64_t n, std::uint64_t seed, cudaStream_t stream)
      : cdf(zipf_cdf(n, kZipf, stream)),
        ids{static_cast<const double*>(cdf.data()), n,
            make_scramble(log2_exact(n, "vocabulary"), seed)} {}
};

}  // namespace ewise::bench
