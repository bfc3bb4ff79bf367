// Host tests of the f16/bf16 conversions: exhaustive round trips and every rounding tie.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <random>

#include "ewise/half.hpp"
#include "testing/nan_bits.hpp"

namespace ewise {
namespace {

TEST(Half, F16RoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = f16_bits_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {  // every NaN converts to the canonical one (ops.hpp)
      EXPECT_EQ(float_to_f16_bits(f), 0x7FFF) << std::hex << h;
      continue;
    }
    EXPECT_EQ(float_to_f16_bits(f), h) << std::hex << h;
  }
}

// Any f32 NaN (sign, payload) converts to the canonical 16-bit NaN, as the GPU's conversion.
TEST(Half, EveryNaNConvertsToTheCanonicalNaN) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 100000; ++k) {
    const std::uint32_t bits = static_cast<std::uint32_t>(test::random_nan_bits(DType::f32, rng));
    float f;
    std::memcpy(&f, &bits, 4);
    ASSERT_EQ(float_to_f16_bits(f), 0x7FFF) << std::hex << bits;
    ASSERT_EQ(float_to_bf16_bits(f), 0x7FFF) << std::hex << bits;
  }
}

// double to the 16-bit formats: f16 rounded once (NumPy's cast), bf16 through float (ml_dtypes'
// and PyTorch's), where the two differ: a value just above a 16-bit tie that float rounds onto it.
TEST(Half, DoubleToF16OnceAndToBf16ThroughFloat) {
  EXPECT_EQ(double_to_f16_bits(1 + 0x1p-11 + 0x1p-40), 0x3C01);   // 1 + 2^-10
  EXPECT_EQ(double_to_bf16_bits(1 + 0x1p-8 + 0x1p-30), 0x3F80);   // 1: float's tie, to even
  EXPECT_EQ(double_to_bf16_bits(1 + 0x1p-8 + 0x1p-20), 0x3F81);   // float keeps it off the tie
  EXPECT_EQ(double_to_bf16_bits(-(1 + 0x1p-7 + 0x1p-8 + 0x1p-30)), 0xBF82);  // odd: tie up
  EXPECT_EQ(double_to_bf16_bits(std::nan("")), 0x7FFF);
}

TEST(Half, F16KnownValues) {
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7C00);  // ties to even -> overflow to inf
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000);  // tie with zero -> even (zero)
  EXPECT_EQ(float_to_f16_bits(0x1.8p-25f), 0x0001);
  EXPECT_EQ(f16_bits_to_float(0x0001), 0x1p-24f);
}

// Between each pair of neighbouring finite f16 values: the midpoint rounds to the even one,
// anything off the midpoint to the nearer one.
TEST(Half, F16RoundsToNearestEvenEverywhere) {
  for (std::uint32_t h = 0; h < 0x7BFFu; ++h) {
    const float lo = f16_bits_to_float(static_cast<std::uint16_t>(h));
    const float hi = f16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;  // exact in float
    const std::uint32_t even = (h % 2 == 0) ? h : h + 1;
    ASSERT_EQ(float_to_f16_bits(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_f16_bits(std::nextafter(mid, lo)), h) << std::hex << h;
    ASSERT_EQ(float_to_f16_bits(std::nextafter(mid, hi)), h + 1) << std::hex << h;
    ASSERT_EQ(float_to_f16_bits(-mid), even | 0x8000u) << std::hex << h;
  }
}

TEST(Half, Bf16RoundsToNearestEvenEverywhere) {
  for (std::uint32_t h = 0; h < 0x7F7Fu; h += 7) {
    const float lo = bf16_bits_to_float(static_cast<std::uint16_t>(h));
    const float hi = bf16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float mid = lo + (hi - lo) / 2;
    const std::uint32_t even = (h % 2 == 0) ? h : h + 1;
    ASSERT_EQ(float_to_bf16_bits(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_bf16_bits(std::nextafter(mid, lo)), h) << std::hex << h;
    ASSERT_EQ(float_to_bf16_bits(std::nextafter(mid, hi)), h + 1) << std::hex << h;
  }
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
  EXPECT_EQ(float_to_bf16_bits(INFINITY), 0x7F80);
}

}  // namespace
}  // namespace ewise
