// ewise/half.hpp — host conversions between float and the 16-bit float formats, bit-exact with
// the GPU's: round to nearest, ties to even; NaN stays NaN; overflow goes to infinity.
#pragma once

#include <cstdint>

namespace ewise {

float f16_bits_to_float(std::uint16_t bits) noexcept;
std::uint16_t float_to_f16_bits(float x) noexcept;
float bf16_bits_to_float(std::uint16_t bits) noexcept;
std::uint16_t float_to_bf16_bits(float x) noexcept;
/// double to the 16-bit formats, rounded once (as CUDA's __double2half, __double2bfloat16):
/// through float rounded to odd, which the second rounding cannot spoil (24 >= 2 * 11 + 2).
std::uint16_t double_to_f16_bits(double x) noexcept;
std::uint16_t double_to_bf16_bits(double x) noexcept;

}  // namespace ewise
