#include "ewise/half.hpp"

#include <cmath>
#include <cstring>

namespace ewise {
namespace {

std::uint32_t float_bits(float x) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float bits_float(std::uint32_t u) noexcept {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// x rounded to float toward zero, with the last bit set when that was inexact (round to odd).
float round_to_odd(double x) noexcept {
  if (x != x) return static_cast<float>(x);
  float f = static_cast<float>(x);  // nearest
  if (static_cast<double>(f) == x) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x))  // rounded away from zero: step back
    f = std::nextafter(f, 0.0f);
  return bits_float(float_bits(f) | 1u);
}

}  // namespace

std::uint16_t double_to_f16_bits(double x) noexcept { return float_to_f16_bits(round_to_odd(x)); }
std::uint16_t double_to_bf16_bits(double x) noexcept {
  return float_to_bf16_bits(static_cast<float>(x));
}

float f16_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (man << 13));  // inf / NaN
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
  // zero or subnormal: man * 2^-24, exact in float
  const float mag = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -mag : mag;
}

std::uint16_t float_to_f16_bits(float x) noexcept {
  const std::uint32_t u = float_bits(x);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return 0x7FFF;  // NaN: the canonical one, as the GPU's conversion
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to inf
  const int exp = static_cast<int>(abs >> 23) - 127;
  if (exp >= -14) {  // normal f16
    std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    std::uint32_t rest = mant & 0x1FFFu;  // 13 bits dropped
    std::uint32_t out = (static_cast<std::uint32_t>(exp + 15) << 10) | ((mant >> 13) & 0x3FFu);
    if (rest > 0x1000u || (rest == 0x1000u && (out & 1u))) ++out;  // carry may bump the exponent
    return static_cast<std::uint16_t>(sign | out);
  }
  if (exp < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // subnormal f16: value = mant * 2^(exp-23); result units are 2^-24
  const std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
  const int shift = -exp - 1;  // 14..24: bits dropped
  const std::uint32_t out = mant >> shift;
  const std::uint32_t rest = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t rounded = (rest > half || (rest == half && (out & 1u))) ? out + 1 : out;
  return static_cast<std::uint16_t>(sign | rounded);
}

}  // namespace ewise
