// dense/cpu_power.hpp — the CPU backend's f32 power in SIMD (cpu_power.cpp).
#pragma once

#include <cstdint>

#include "ewise/ops.hpp"

namespace ewise::detail {

/// z[j] = ops::Pow{}(x[j], y[j]) for m floats (y null: every exponent y0, a scalar or a
/// broadcast one), four at a time in AVX2 with FMA, bit for bit Pow's values, a NaN as the
/// canonical one; z may be x or y (in place). Returns false, having written nothing, where the
/// CPU (or the build's target) has no AVX2 and FMA.
bool power_f32_simd(const float* x, const float* y, float y0, float* z, std::int64_t m);

/// z[j] = f(x[j], n) for m floats (PowSmallInt: a scalar integer exponent), as power_f32_simd.
bool power_int_simd(const ops::detail::PowSmallInt& f, const float* x, float* z, std::int64_t m);

/// z[j] = x[j] ** -0.5 for m floats (PowRsqrt), as power_f32_simd.
bool power_rsqrt_simd(const float* x, float* z, std::int64_t m);

}  // namespace ewise::detail
