// ewise/half.hpp — host conversions between float and the 16-bit float formats, bit-exact with
// the GPU's: round to nearest, ties to even; NaN stays NaN; overflow goes to infinity.
#pragma once

#include <cstdint>
#include <cstring>

namespace ewise {

float f16_bits_to_float(std::uint16_t bits) noexcept;
std::uint16_t float_to_f16_bits(float x) noexcept;

/// bf16 is float's top half: inline, so that loops over it vectorize (the CPU backend's).
inline float bf16_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
inline std::uint16_t float_to_bf16_bits(float x) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;  // NaN: the canonical one, as the GPU's
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}
/// double to f16 rounded once, as NumPy casts (and CUDA's __double2half): through float
/// rounded to odd, which the second rounding cannot spoil (24 >= 2 * 11 + 2).
std::uint16_t double_to_f16_bits(double x) noexcept;
/// double to bf16 through float, each rounded to nearest, as ml_dtypes (NumPy's bfloat16) and
/// PyTorch convert: 1 + 2^-8 + 2^-30 is 1 (float rounds it onto a bf16 tie), not 1 + 2^-7.
std::uint16_t double_to_bf16_bits(double x) noexcept;

}  // namespace ewise
