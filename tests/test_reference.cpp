// Host tests of the CPU reference backend and of the documented operation semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"
#include "testing/nan_bits.hpp"

namespace ewise {
namespace {

// The device functors in ewise/ops.hpp are host functions too: the same rules on the host.
// (Every operation's semantics on edge values, through the reference: test_promotion.cpp.)
TEST(OpsFunctors, EdgeCasesOnTheHost) {
  EXPECT_EQ(ops::FloorDiv{}(std::int32_t{7}, std::int32_t{0}), 0);
  EXPECT_EQ(ops::FloorDiv{}(std::numeric_limits<std::int32_t>::min(), std::int32_t{-1}),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(ops::FloorDiv{}(std::int64_t{-7}, std::int64_t{2}), -4);
  EXPECT_EQ(ops::Remainder{}(std::int8_t{-7}, std::int8_t{2}), 1);
  EXPECT_EQ(ops::Add{}(std::numeric_limits<std::int64_t>::max(), std::int64_t{1}),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(ops::Mul{}(std::uint8_t{16}, std::uint8_t{16}), 0);
  EXPECT_EQ(ops::Div{}(1.0, 0.0), INFINITY);
  EXPECT_TRUE(std::isnan(ops::Min{}(1.0f, std::nanf(""))));
  EXPECT_TRUE(std::isnan(ops::Max{}(std::nan(""), 1.0)));
  EXPECT_EQ(ops::FMin{}(std::nan(""), 1.0), 1.0);
  EXPECT_TRUE(std::signbit(ops::Min{}(-0.0f, 0.0f)));
  EXPECT_EQ(ops::Max{}(std::int64_t{-3}, std::int64_t{5}), 5);
  EXPECT_EQ(ops::Pow{}(std::int32_t{2}, std::int32_t{-1}), 0);
  EXPECT_FALSE(ops::Equal{}(std::nan(""), std::nan("")));
  EXPECT_TRUE(ops::LogicalXor{}(true, false));
}

// f32 power (ops.hpp: f64 pow's value, rounded to float) is evaluated by a fast series where the
// rounding is certain (detail/pow_f32.hpp): it gives f64 pow's float bit for bit, on values that
// reach every branch: typical data, integer and half-integer exponents of negative bases, zero
// and subnormal bases, results that overflow, underflow or are subnormal, bases near 1 with
// large exponents, squares at float's rounding midpoints, and random bit patterns.
TEST(OpsFunctors, FloatPowerIsDoublePowRounded) {
  std::mt19937_64 g(20261127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 40);
  const auto bits = [&] {
    const auto r = static_cast<std::uint32_t>(g());
    float f;
    std::memcpy(&f, &r, sizeof f);
    return f;
  };
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 2.0f, 0.5f,
                            -3.0f, 0x1p-149f, -0x1p-140f, 0x1p127f, 3.0f, -2.5f};
  const auto float_bits = [](float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  for (int i = 0; i < 1500000; ++i) {
    float a = 0, b = 0;
    switch (i % 8) {
      case 0: a = normal(g), b = normal(g); break;
      case 1: a = normal(g), b = static_cast<float>(exponent(g)); break;
      case 2: a = normal(g), b = 0.5f * static_cast<float>(exponent(g)); break;
      case 3: a = std::ldexp(normal(g), 4 * exponent(g)), b = 3 * normal(g); break;
      case 4: a = 1.0f + 1e-3f * normal(g), b = 3e4f * normal(g); break;
      case 5: a = static_cast<float>(g() % 8192 + 4096), b = 2.0f; break;  // 25-bit squares
      case 6: a = specials[g() % std::size(specials)], b = specials[g() % std::size(specials)]; break;
      default: a = bits(), b = bits(); break;
    }
    const float got = ops::Pow{}(a, b);
    const float want = (b == 0.0f || a == 1.0f)
                           ? 1.0f
                           : static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << a << " ** " << b;
    } else {
      ASSERT_EQ(float_bits(got), float_bits(want))
          << std::hexfloat << a << " ** " << b << ": " << got << ", f64 pow " << want;
    }
    // the scalar integer exponents' functor (the kernel's for x ** 3, x ** -2): the same values
    if (b == std::trunc(b) && std::fabs(b) <= 16 && b != 0 && b != 2) {
      const float small = ops::detail::PowSmallInt{static_cast<int>(b)}(a, b);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(small)) << a << " ** " << b;
      } else {
        ASSERT_EQ(float_bits(small), float_bits(want))
            << std::hexfloat << "PowSmallInt: " << a << " ** " << b << ": " << small;
      }
    }
  }
}

// Bases of few significant bits (odd k of 2 to 13 bits, scaled by powers of two) to integer
// exponents: their powers are exact in f64 and often lie on a float rounding midpoint, where the
// device's f64 pow rounded the other way (docs/reliability.md, bug 18). ops::Pow, PowSmallInt
// and pow_by_f64 (the rare path both take on both backends) give the exact power's float, which
// the host's f64 pow gives; the GPU runs the same functors (MixedGpu.PowerKernelAtTileEdges'
// bases of few bits).
TEST(OpsFunctors, IntegerPowersOfFewBitBases) {
  const auto float_bits = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  for (int bits = 2; bits <= 13; ++bits)
    for (int k = (1 << (bits - 1)) + 1; k < (1 << bits); k += 2)
      for (int e : {-140, -60, -20, -1, 0, 3, 30})
        for (int n = 1; n <= 20; ++n) {
          const float a = std::ldexp(static_cast<float>(k), e - bits) * (k % 4 == 1 ? -1.0f : 1.0f);
          const auto want = static_cast<float>(std::pow(static_cast<double>(a), n));
          const auto b = static_cast<float>(n);
          ASSERT_EQ(float_bits(ops::detail::pow_by_f64(a, b)), float_bits(want))
              << std::hexfloat << "pow_by_f64: " << a << " ** " << n;
          ASSERT_EQ(float_bits(ops::Pow{}(a, b)), float_bits(want))
              << std::hexfloat << "Pow: " << a << " ** " << n;
          if (n <= 16 && n != 2)
            ASSERT_EQ(float_bits(ops::detail::PowSmallInt{n}(a, b)), float_bits(want))
                << std::hexfloat << "PowSmallInt: " << a << " ** " << n;
        }
}

// The scalar integer exponents' functors by chunks, as the kernels call them: every element
// they accept (all, for PowSmallIntExact) is the exact power's float (f64 pow's), bit for bit,
// and so is the functor's value for an element alone; over bases of f32, bf16 and f16 values
// (whose few significand bits make exact products and exact midpoints), zeros, subnormals,
// infinities and NaN, with each functor where the dispatch (compute.hpp's with_scalar_power)
// picks it.
TEST(OpsFunctors, SmallIntegerPowersByChunks) {
  const auto float_bits = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  std::mt19937_64 g(16);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-140f, -0x1p-149f,
                            0x1p-126f, 0x1.fffffep127f, -1.0f};
  for (int i = 0; i < 40000; ++i) {
    int n = 1 + static_cast<int>(g() % 16);
    if (g() % 2 == 0) n = -n;
    if (n == 2) continue;
    const int kind = static_cast<int>(g() % 3);  // the base's dtype: f32, bf16, f16
    const int bits = kind == 1 ? 8 : kind == 2 ? 11 : 24;
    float a[8];
    for (float& x : a) {
      // from 2^-50 to 2^50: cubes and fourth powers past float's range both ways
      x = static_cast<float>(std::exp2(u(g) * 100 - 50)) * (g() % 2 == 0 ? -1.0f : 1.0f);
      if (g() % 8 == 0) x = specials[g() % std::size(specials)];
      if (g() % 4 == 0) x = static_cast<float>(static_cast<int>(g() % 4096) - 2048) / 64.0f;
      if (kind == 1) x = bf16_bits_to_float(float_to_bf16_bits(x));
      if (kind == 2) x = f16_bits_to_float(float_to_f16_bits(x));
    }
    const auto check = [&](const auto& f, const char* name) {
      float r[8];
      const unsigned refused = f.chunk(a, r);
      for (int s = 0; s < 8; ++s) {
        const auto want = static_cast<float>(std::pow(static_cast<double>(a[s]), n));
        const float alone = f(a[s], static_cast<float>(n));
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(alone)) << name << ": " << a[s] << " ** " << n;
          continue;
        }
        ASSERT_EQ(float_bits(alone), float_bits(want))
            << std::hexfloat << name << ": " << a[s] << " ** " << n << ": " << alone;
        if (!(refused >> s & 1u))
          ASSERT_EQ(float_bits(r[s]), float_bits(want))
              << std::hexfloat << name << " by chunk: " << a[s] << " ** " << n << ": " << r[s];
      }
    };
    const int m = n < 0 ? -n : n;
    if (m * bits <= 24) {
      check(ops::detail::PowSmallIntExact{n}, "PowSmallIntExact");
      float r[8];
      ASSERT_EQ(ops::detail::PowSmallIntExact{n}.chunk(a, r), 0u) << "PowSmallIntExact refused";
    }
    check(ops::detail::PowSmallInt{n, n > 0 && n * bits <= 53}, "PowSmallInt");
    if (HasFatalFailure()) return;
  }
}

// x ** 0.5's and x ** -0.5's functors (PowSqrt, the root; PowRsqrt, its reciprocal) are Pow's
// value bit for bit: over random float bits (every exponent, both signs, subnormals, NaNs) and the
// specials where sqrt and pow differ (-0, -inf). All 2^32 floats were compared once for each
// (benchmarks.md, "Power on floats").
TEST(OpsFunctors, SquareRootsArePowersOfOneHalf) {
  const auto compare = [](float e, auto f) {
    std::mt19937 g(12);
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 0x1p-149f,
                              0x1p-126f, 4.0f, 0x1.fffffep127f};
    for (int i = 0; i < 2000000; ++i) {
      float a;
      if (i < static_cast<int>(std::size(specials))) {
        a = specials[i];
      } else {
        const std::uint32_t bits = g();
        std::memcpy(&a, &bits, sizeof a);
      }
      const float want = ops::Pow{}(a, e), got = f(a, e);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << std::hexfloat << a << " ** " << e;
        continue;
      }
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hexfloat << a << " ** " << e;
      ASSERT_EQ(got, want) << std::hexfloat << a << " ** " << e;
    }
  };
  compare(0.5f, ops::detail::PowSqrt{});
  if (HasFatalFailure()) return;
  compare(-0.5f, ops::detail::PowRsqrt{});
}

// PowRsqrtNarrow's fast path, where it takes an element, rounds to the 16-bit format as
// PowRsqrt's value does: every bf16 and f16 value, and random float bits (its guard holds for any
// float). On the host its approximation is 1 / sqrtf; MixedGpu.PowerOfEvery16BitValue runs the
// device's.
TEST(OpsFunctors, NarrowReciprocalRootsRoundAsTheRoot) {
  std::mt19937 g(13);
  const auto check = [](auto f, auto round, float a) {
    float r = 0;
    if (!f.fast(a, -0.5f, r)) return 0;
    const float want = ops::detail::PowRsqrt{}(a, -0.5f);
    EXPECT_EQ(round(r), round(want)) << std::hexfloat << a;
    return 1;
  };
  int taken = 0;
  for (std::uint32_t i = 0; i < 1u << 16 && !HasFailure(); ++i) {
    const auto u = static_cast<std::uint16_t>(i);
    taken += check(ops::detail::PowRsqrtNarrow<16>{}, float_to_bf16_bits, bf16_bits_to_float(u));
    taken += check(ops::detail::PowRsqrtNarrow<13>{}, float_to_f16_bits, f16_bits_to_float(u));
  }
  EXPECT_GT(taken, 60000) << "the fast path took too few of the positive values";
  for (int i = 0; i < 2000000 && !HasFailure(); ++i) {
    const std::uint32_t bits = g();
    float a;
    std::memcpy(&a, &bits, sizeof a);
    check(ops::detail::PowRsqrtNarrow<16>{}, float_to_bf16_bits, a);
    check(ops::detail::PowRsqrtNarrow<13>{}, float_to_f16_bits, a);
  }
}

// The series' certainty rests on its error bound (2^-43.9 measured, against far_from_midpoint's
// band of 2^-41): measured against long double pow over the ranges each reduction step meets
// (typical bases and exponents, bases near 1 with large exponents, the whole range of bases,
// bases across the reduced range with exponents taking |t| to 126; the last two give the worst,
// from the log's series where |t| is largest).
TEST(OpsFunctors, FloatPowerSeriesWithinItsBound) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double worst = 0;
  for (int i = 0; i < 1000000; ++i) {
    float a = 0, b = 0;
    switch (i % 5) {
      case 0: a = static_cast<float>(std::exp2(u(g) * 60 - 30)), b = static_cast<float>(u(g) * 6 - 3); break;
      case 1: a = static_cast<float>(1 + (u(g) - 0.5) * 1e-2), b = static_cast<float>((u(g) - 0.5) * 2e5); break;
      case 2: a = static_cast<float>(std::exp2(u(g) * 250 - 125)), b = static_cast<float>(u(g) - 0.5); break;
      case 3: {
        a = static_cast<float>(0.7 + 0.75 * u(g));
        b = static_cast<float>((u(g) - 0.5) * 260 / std::fabs(std::log2(static_cast<double>(a))));
        break;
      }
      default: a = static_cast<float>(1 + (u(g) - 0.5) * 1e-5), b = static_cast<float>((u(g) - 0.5) * 2e7); break;
    }
    double t = 0;
    int s = 0;
    const double v = ops::detail::pow_series(a, b, t, s, ops::detail::pow_tables());
    if (!(std::fabs(t) < 126.0)) continue;
    const long double exact = std::pow(static_cast<long double>(a), static_cast<long double>(b));
    const long double got = std::ldexp(static_cast<long double>(v), s);
    worst = std::max(worst, static_cast<double>(std::fabs((got - exact) / exact)));
  }
  EXPECT_LT(worst, 0x1p-43) << "log2 of the worst error: " << std::log2(worst);
  EXPECT_GT(worst, 0.0);  // (the comparison ran)
}

TEST(ReferenceBinary, BroadcastOuterProductByHand) {
  const float a[3] = {1, 2, 3};        // (3,1)
  const float b[4] = {10, 20, 30, 40};  // (4,)
  float out[12];
  reference_binary(BinaryOp::add, ConstTensorView(a, TensorDesc::contiguous(DType::f32, {3, 1}), Memory::host),
                   ConstTensorView(b, TensorDesc::contiguous(DType::f32, {4}), Memory::host),
                   {out, TensorDesc::contiguous(DType::f32, {3, 4}), Memory::host});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[i * 4 + j], a[i] + b[j]);
}

TEST(ReferenceBinary, StridedNegativeAndInPlace) {
  // a is a reversed view, out is a transposed view
  const double a_mem[6] = {1, 2, 3, 4, 5, 6};
  const ConstTensorView a(a_mem + 5, TensorDesc::strided(DType::f64, {2, 3}, {-3, -1}), Memory::host);
  const double b_mem[3] = {1, 10, 100};
  const ConstTensorView b(b_mem, TensorDesc::contiguous(DType::f64, {3}), Memory::host);
  double out_mem[6];
  const TensorView out{out_mem, TensorDesc::strided(DType::f64, {2, 3}, {1, 2}), Memory::host};
  reference_binary(BinaryOp::mul, a, b, out);
  // a = [[6,5,4],[3,2,1]]; out(i,j) lives at out_mem[i + 2j]
  const double want[2][3] = {{6, 50, 400}, {3, 20, 100}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out_mem[i + 2 * j], want[i][j]);
  // in place: x = x - b
  double x[3] = {5, 5, 5};
  const TensorView xv{x, TensorDesc::contiguous(DType::f64, {3}), Memory::host};
  reference_binary(BinaryOp::sub, xv, b, xv);
  EXPECT_EQ(x[0], 4);
  EXPECT_EQ(x[1], -5);
  EXPECT_EQ(x[2], -95);
}

TEST(ReferenceBinary, HalfResultsRoundOnceToNearestEven) {
  // 1 + 2^-11 is exactly halfway between 1 and the next f16 (1 + 2^-10): ties to even -> 1.
  const std::uint16_t one = float_to_f16_bits(1.0f), tiny = float_to_f16_bits(0x1p-11f);
  const std::uint16_t three_tiny = float_to_f16_bits(3 * 0x1p-11f);
  std::uint16_t out[2];
  const std::uint16_t a[2] = {one, one}, b[2] = {tiny, three_tiny};
  reference_binary(BinaryOp::add, ConstTensorView(a, TensorDesc::contiguous(DType::f16, {2}), Memory::host),
                   ConstTensorView(b, TensorDesc::contiguous(DType::f16, {2}), Memory::host),
                   {out, TensorDesc::contiguous(DType::f16, {2}), Memory::host});
  EXPECT_EQ(f16_bits_to_float(out[0]), 1.0f);
  EXPECT_EQ(f16_bits_to_float(out[1]), 1.0f + 0x1p-9f);  // 1 + 3*2^-11 rounds up to 1 + 2^-9
}

// ops.hpp's NaN rule in the reference: NaN operands of any sign and payload, and NaNs made from
// infinities and zeros, leave as the canonical NaN in every floating dtype and op; a result is NaN
// exactly where an operand is (or where the operation makes one).
TEST(ReferenceBinary, NaNResultsAreTheCanonicalNaN) {
  std::mt19937_64 rng(11);
  const std::int64_t n = 4096;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    HostTensor a = verify::random_tensor(t, Dims{n}, 1), b = verify::random_tensor(t, Dims{n}, 2);
    test::sprinkle_nans(t, a.data(), n, 0.1, rng);
    test::sprinkle_nans(t, b.data(), n, 0.1, rng);
    const std::uint64_t canonical = test::canonical_nan_bits(t);
    const std::size_t size = dtype_size(t);
    // The operations whose result is NaN wherever an operand is (power: pow(NaN, 0) is 1;
    // fmin, fmax ignore NaN; the others give bool or refuse floats).
    for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide,
                        BinaryOp::minimum, BinaryOp::maximum, BinaryOp::floor_divide,
                        BinaryOp::remainder}) {
      HostTensor out(t, Dims{n});
      reference_binary(op, a.view(), b.view(), out.view());
      std::int64_t nans = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const auto* pa = static_cast<const std::byte*>(a.data()) + i * static_cast<std::int64_t>(size);
        const auto* pb = static_cast<const std::byte*>(b.data()) + i * static_cast<std::int64_t>(size);
        const auto* po = static_cast<const std::byte*>(out.data()) + i * static_cast<std::int64_t>(size);
        if (test::is_nan_bits(t, pa) || test::is_nan_bits(t, pb)) {
          ASSERT_TRUE(test::is_nan_bits(t, po)) << dtype_name(t) << " " << op_name(op) << " at " << i;
        }
        if (!test::is_nan_bits(t, po)) continue;
        ++nans;
        std::uint64_t bits = 0;
        std::memcpy(&bits, po, size);
        ASSERT_EQ(bits, canonical) << dtype_name(t) << " " << op_name(op) << " at " << i;
      }
      EXPECT_GT(nans, n / 10) << dtype_name(t) << " " << op_name(op);
    }
  }
}

TEST(ReferenceBinary, ValidatesLikeTheGpuPath) {
  float x[4] = {}, y[4] = {}, z[4] = {};
  const auto d4 = TensorDesc::contiguous(DType::f32, {4});
  EXPECT_THROW(reference_binary(BinaryOp::add, ConstTensorView(x, d4, Memory::host), ConstTensorView(y, d4, Memory::host),
                                {z, TensorDesc::contiguous(DType::f32, {2, 2}), Memory::host}),
               InvalidArgument);
  EXPECT_THROW(reference_binary(BinaryOp::add, ConstTensorView(x, d4, Memory::host), ConstTensorView(y, d4, Memory::device),
                                {z, d4, Memory::host}),
               InvalidArgument);
  EXPECT_THROW(reference_binary(BinaryOp::add, ConstTensorView(x, d4, Memory::host), ConstTensorView(y, d4, Memory::host),
                                {z, TensorDesc::strided(DType::f32, {4}, {0}), Memory::host}),
               InvalidArgument);
  // partial overlap: out starts one element into a
  float big[5] = {1, 2, 3, 4, 5};
  EXPECT_THROW(reference_binary(BinaryOp::add, ConstTensorView(big, d4, Memory::host), ConstTensorView(y, d4, Memory::host),
                                {big + 1, d4, Memory::host}),
               InvalidArgument);
  EXPECT_EQ(big[1], 2) << "nothing may be written after a failed check";
}

TEST(ReferenceBinary, EmptyIsANoOp) {
  float dummy = 7;
  reference_binary(BinaryOp::add, ConstTensorView(nullptr, TensorDesc::contiguous(DType::f32, {0, 3}), Memory::host),
                   ConstTensorView(&dummy, TensorDesc::contiguous(DType::f32, {3}), Memory::host),
                   {nullptr, TensorDesc::contiguous(DType::f32, {0, 3}), Memory::host});
  EXPECT_EQ(dummy, 7);
}

TEST(ReferenceBinary, EveryDtypeAndOpAgainstScalarLoop) {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  SCOPED_TRACE("EWISE_SEED=" + std::to_string(seed));
  for (DType t : kAllDTypes)
    for (BinaryOp op : kAllOps) {
      const HostTensor a = verify::random_tensor(t, {5, 1, 3}, seed);
      const HostTensor b = verify::random_tensor(t, {4, 1}, seed + 1);
      DType r;
      try {
        r = op_types(op, Promotion::numpy, {t}, {t}).result;
      } catch (const InvalidArgument&) {  // bool subtract, bitwise on floats: refused here too
        HostTensor out(t, {5, 4, 3});
        EXPECT_THROW(reference_binary(op, a.view(), b.view(), out.view()), InvalidArgument)
            << dtype_name(t) << " " << op_name(op);
        continue;
      }
      HostTensor out(r, {5, 4, 3});
      reference_binary(op, a.view(), b.view(), out.view());
      // element (i,j,k) = a(i,0,k) op b(j,0), computed one element at a time
      HostTensor want(r, {5, 4, 3});
      const std::size_t in = dtype_size(t), res = dtype_size(r);
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 4; ++j)
          for (int k = 0; k < 3; ++k) {
            const ConstTensorView ae(static_cast<const std::byte*>(a.data()) + (i * 3 + k) * in, TensorDesc::contiguous(t, {}), Memory::host);
            const ConstTensorView be(static_cast<const std::byte*>(b.data()) + j * in, TensorDesc::contiguous(t, {}), Memory::host);
            const TensorView we{static_cast<std::byte*>(want.data()) + ((i * 4 + j) * 3 + k) * res, TensorDesc::contiguous(r, {}), Memory::host};
            reference_binary(op, ae, be, we);
          }
      EXPECT_EQ(std::memcmp(out.data(), want.data(), want.bytes()), 0)
          << dtype_name(t) << " " << op_name(op);
    }
}

}  // namespace
}  // namespace ewise
