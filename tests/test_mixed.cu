// GPU tests of mixed dtypes, scalar operands and NumPy's operations (ewise/promotion.hpp,
// ewise/ops.hpp): every op x every dtype pair x scalar form against the CPU reference bit for
// bit (power with an f64 result: within 2 ulp, ops.hpp), over random broadcast shapes and
// layouts (transposed, strided, reversed, misaligned by one element), tile edges, empty tensors,
// NaN, ±0 and ±inf inputs, in-place use with an operand of another dtype, outputs of another
// dtype (same_kind casts), both promotion rules, one kernel launch per call, refusals before
// anything is launched, and a u8/bool tensor of more than 2^31 elements (Large.*, run alone).
//
// Every check poisons the output's whole buffer, runs the call on the device and the reference
// on host mirrors of the same buffers, and compares the whole buffers: the view's elements bit
// for bit and every element outside it still poisoned. A call the reference refuses must be
// refused on the device too (InvalidArgument), with the buffer untouched.
//
// Environment: EWISE_SEED replays a run.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "element.hpp"
#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"
#include "testing/layouts.hpp"
#include "testing/nan_bits.hpp"
#include "testing/values.hpp"

namespace ewise {
namespace {

using test::DeviceOperand;
using test::Layout;

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

/// The dtypes the sweeps take: all, or under the sanitizers one per size and kind.
std::vector<DType> mixed_dtypes() {
  if (test::sanitizer_sizes())
    return {DType::b8, DType::u8, DType::i16, DType::f16, DType::f32, DType::i64};
  return {std::begin(kAllDTypes), std::end(kAllDTypes)};
}

/// The promotion rules the sweeps take: both, or under the sanitizers NumPy's (the rules pick
/// dtypes, not code paths, which the dtypes above cover).
std::vector<Promotion> rules() {
  if (test::sanitizer_sizes()) return {Promotion::numpy};
  return {Promotion::numpy, Promotion::torch};
}

// ---- values ------------------------------------------------------------------------------------

/// A tensor operand: a device view laid out in a buffer of its own, and a host mirror of the
/// whole buffer holding the same random values.
struct Tensor {
  DeviceOperand dev;
  HostTensor host;

  Tensor(DType t, const Dims& shape, const Layout& l, std::mt19937_64& rng)
      : dev(t, shape, l), host(t, Dims{dev.buffer_elements}) {
    test::fill_values(t, host.data(), dev.buffer_elements, rng);
    EWISE_CUDA_CHECK(cudaMemcpy(dev.buf.data(), host.data(), host.bytes(), cudaMemcpyHostToDevice));
  }
  TensorView host_view() { return dev.at(host.data(), Memory::host); }
};

/// An operand of a check: a tensor, or a scalar.
struct Arg {
  Tensor* tensor = nullptr;
  Scalar scalar;

  Arg(Tensor& t) : tensor(&t) {}  // NOLINT
  Arg(const Scalar& s) : scalar(s) {}  // NOLINT
  Operand device() const { return tensor ? Operand(tensor->dev.view) : Operand(scalar); }
  Operand host() const { return tensor ? Operand(tensor->host_view()) : Operand(scalar); }
  OperandType type(Promotion rule) const { return device().type(rule); }
  std::string str() const {
    return tensor ? detail::concat(dtype_name(tensor->dev.view.desc.dtype), tensor->dev.str())
                  : scalar.str();
  }
};

/// The dtype op(a, b) returns under `rule`, or `fallback` where op_types refuses the call.
DType result_or(BinaryOp op, Promotion rule, const Arg& a, const Arg& b, DType fallback) {
  try {
    return op_types(op, rule, a.type(rule), b.type(rule)).result;
  } catch (const InvalidArgument&) {
    return fallback;
  }
}

// ---- comparison --------------------------------------------------------------------------------

/// Element i of a contiguous host buffer of dtype t, as its stored bits.
std::uint64_t bits_at(const HostTensor& h, std::int64_t i) {
  const std::size_t size = dtype_size(h.dtype());
  std::uint64_t v = 0;
  std::memcpy(&v, static_cast<const std::byte*>(h.data()) + i * static_cast<std::int64_t>(size), size);
  return v;
}

/// Whether two floating values of a `size`-byte dtype (bits) are within `ulps` representable
/// values of each other with the same sign, or the same bits (NaN and infinities).
bool within_ulps(std::uint64_t x, std::uint64_t y, std::size_t size, std::uint64_t ulps) {
  if (x == y) return true;
  const int sign = 8 * static_cast<int>(size) - 1;
  if ((x >> sign) != (y >> sign)) return false;
  const std::uint64_t exponent_all_ones = size == 8 ? 0x7FF0000000000000ull
                                          : size == 4 ? 0x7F800000ull
                                                      : 0x7C00ull;  // f16; bf16 is checked below
  const std::uint64_t magnitude = (std::uint64_t{1} << sign) - 1;
  const auto finite = [&](std::uint64_t v) { return (v & magnitude) < exponent_all_ones; };
  const std::uint64_t d = x > y ? x - y : y - x;
  return d <= ulps && finite(x) && finite(y);
}

/// Significand bits of a floating dtype.
int significand_bits(DType t) {
  switch (t) {
    case DType::f16: return 11;
    case DType::bf16: return 8;
    case DType::f32: return 24;
    default: return 53;
  }
}

/// The difference power on floats may show between the backends (ops.hpp: CUDA's pow and libm's
/// differ in the last bit): 2 ulp of an f64 result, 1 ulp of a narrower one, counted in the
/// output's dtype; 0 for other dtypes.
std::uint64_t power_ulps(DType result, DType out) {
  if (!is_floating(result) || !is_floating(out)) return 0;
  return (result == DType::f64 ? 2 : 1) *
         (std::uint64_t{1} << std::max(0, significand_bits(out) - significand_bits(result)));
}

/// "" when got equals want element by element (bits; within `ulps` of the buffer's dtype where
/// nonzero), else the first difference.
std::string compare_buffers(const HostTensor& got, const HostTensor& want, std::uint64_t ulps) {
  const std::size_t size = dtype_size(want.dtype());
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const std::uint64_t g = bits_at(got, i), w = bits_at(want, i);
    if (g == w || (ulps > 0 && within_ulps(g, w, size, ulps))) continue;
    return detail::concat("buffer element ", i, ": got 0x", std::hex, g, ", want 0x", w,
                          verify::is_poison(want.dtype(), static_cast<const std::byte*>(want.data()) +
                                                              i * static_cast<std::int64_t>(dtype_size(want.dtype())))
                              ? " (the poison: outside the view)"
                              : "");
  }
  return "";
}

/// op(a, b) into `out` on the device and in the reference; "" or what went wrong. The output's
/// buffer is poisoned first and compared whole: bit for bit, but for power_ulps unless `exact`.
std::string check(BinaryOp op, const Arg& a, const Arg& b, DeviceOperand& out,
                  const DenseOptions& o = {}, bool exact = false) {
  const std::string what = detail::concat(op_name(op), "(", a.str(), ", ", b.str(), ") into ",
                                          dtype_name(out.view.desc.dtype), out.str(), " ",
                                          promotion_name(o.promotion), " kernel ",
                                          kernel_name(o.kernel));
  const DType od = out.view.desc.dtype;
  HostTensor want(od, Dims{out.buffer_elements});
  verify::poison(want.view());
  std::string ref_error, gpu_error;
  try {
    reference_binary(op, a.host(), b.host(), out.at(want.data(), Memory::host), o.promotion);
  } catch (const InvalidArgument& e) {
    ref_error = e.what();
  }
  verify::poison(out.whole());
  try {
    binary(op, a.device(), b.device(), out.view, o);
  } catch (const InvalidArgument& e) {
    gpu_error = e.what();
  }
  const cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaSuccess) return what + ": " + cudaGetErrorString(sync);
  if (ref_error.empty() != gpu_error.empty())
    return what + ": the reference " + (ref_error.empty() ? "accepted" : "refused (" + ref_error + ")") +
           ", the device " + (gpu_error.empty() ? "accepted" : "refused (" + gpu_error + ")");
  const HostTensor got = to_host(out.whole());
  const std::uint64_t ulps =
      ref_error.empty() && op == BinaryOp::power && !exact
          ? power_ulps(op_types(op, o.promotion, a.type(o.promotion), b.type(o.promotion)).result,
                       od)
          : 0;
  const std::string diff = compare_buffers(got, want, ulps);
  return diff.empty() ? "" : what + ": " + diff;
}

/// Shapes of the pair sweep: same shape, row and column vectors, a 0-d operand, an outer
/// product, rank 3, tile edges.
struct ShapePair {
  Dims a, b;
};
const ShapePair kShapes[] = {
    {{33, 17}, {33, 17}}, {{37, 65}, {65}},     {{64, 1}, {64, 9}}, {{}, {129}},
    {{31, 1}, {1, 33}},   {{3, 5, 7}, {5, 1}},  {{1025}, {1025}},   {{2, 1, 17}, {4, 1}},
};

// ---- every op, every dtype pair, both rules ---------------------------------------------------

TEST(MixedGpu, EveryOpEveryDtypePair) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::vector<DType> dtypes = mixed_dtypes();
  int calls = 0;
  for (BinaryOp op : kAllOps)
    for (DType ta : dtypes)
      for (DType tb : dtypes) {
        const ShapePair& s = kShapes[static_cast<std::size_t>(calls) % std::size(kShapes)];
        Tensor a(ta, s.a, Layout::random(s.a.size(), rng), rng);
        Tensor b(tb, s.b, Layout::random(s.b.size(), rng), rng);
        const Dims shape = broadcast_shapes(s.a, s.b);
        for (Promotion rule : rules()) {
          DenseOptions o;
          o.promotion = rule;
          const DType od = result_or(op, rule, a, b, ta);
          DeviceOperand out(od, shape, Layout::random(shape.size(), rng));
          EXPECT_EQ(check(op, a, b, out, o), "");
          ++calls;
        }
        if (HasFailure()) return;  // one failing pair is enough to debug
      }
  std::cout << "[ calls    ] " << calls << " calls\n";
}

// ---- scalars -------------------------------------------------------------------------------

/// Scalar operands: Python bool, int and float (weak) of several values, and a typed scalar of
/// every dtype.
std::vector<Scalar> scalar_forms(std::mt19937_64& rng) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::int64_t ints[] = {3, -2, 0, 1, 100, 7};
  const double floats[] = {2.5, -0.0, kInf, std::nan(""), 1e-3, -7.25, 0.1};
  std::vector<Scalar> s = {Scalar::weak_bool(rng() % 2 == 0),
                           Scalar::weak_int(ints[rng() % std::size(ints)]),
                           Scalar::weak_float(floats[rng() % std::size(floats)])};
  for (DType t : mixed_dtypes()) {
    const std::int64_t v = t == DType::b8 ? 1 : dtype_kind(t) == DTypeKind::unsigned_int ? 5 : -3;
    s.push_back(is_floating(t) ? Scalar::of(t, floats[rng() % std::size(floats)])
                               : Scalar::of_int(t, v));
  }
  return s;
}

TEST(MixedGpu, ScalarFormsOnEitherSide) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  int k = 0;
  for (BinaryOp op : kAllOps)
    for (DType t : mixed_dtypes()) {
      const Dims shape = k % 4 == 0   ? Dims{37, 5}
                         : k % 4 == 1 ? Dims{129}
                         : k % 4 == 2 ? Dims{4099}  // whole tiles of the flat kernel, a tail
                                      : Dims{};
      Tensor x(t, shape, Layout::random(shape.size(), rng), rng);
      for (const Scalar& s : scalar_forms(rng))
        for (Promotion rule : rules()) {
          DenseOptions o;
          o.promotion = rule;
          for (bool scalar_left : {false, true}) {
            const Arg a = scalar_left ? Arg(s) : Arg(x), b = scalar_left ? Arg(x) : Arg(s);
            DeviceOperand out(result_or(op, rule, a, b, t), shape,
                              Layout::random(shape.size(), rng));
            EXPECT_EQ(check(op, a, b, out, o), "");
          }
        }
      ++k;
      if (HasFailure()) return;
    }
}

// A scalar gives what the same value as a broadcast 0-d tensor of its dtype gives (NumPy's rule
// ranks a typed scalar as a 0-d array; a weak one is converted to the compute dtype first).
TEST(MixedGpu, TypedScalarEqualsAZeroDimTensor) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (BinaryOp op : {BinaryOp::add, BinaryOp::multiply, BinaryOp::divide, BinaryOp::less,
                      BinaryOp::power, BinaryOp::remainder})
    for (DType t : mixed_dtypes())
      for (DType st : {DType::f32, DType::i8, DType::u8, DType::f64, DType::bf16}) {
        Tensor x(t, {67, 33}, Layout::random(2, rng), rng);
        Tensor zero_d(st, {}, Layout::contiguous(0), rng);
        const HostTensor v = to_host(zero_d.dev.view);
        const Scalar s = is_floating(st) ? Scalar::of(st, detail::load_double(st, static_cast<const std::byte*>(v.data())))
                         : dtype_kind(st) == DTypeKind::unsigned_int
                             ? Scalar::of_uint(st, static_cast<std::uint64_t>(detail::load_int(st, static_cast<const std::byte*>(v.data()))))
                             : Scalar::of_int(st, detail::load_int(st, static_cast<const std::byte*>(v.data())));
        const DType od = result_or(op, Promotion::numpy, x, s, t);
        DeviceOperand with_scalar(od, {67, 33}, Layout::contiguous(2));
        DeviceOperand with_tensor(od, {67, 33}, Layout::contiguous(2));
        EXPECT_EQ(check(op, x, s, with_scalar), "");
        EXPECT_EQ(check(op, x, zero_d, with_tensor), "");
        const HostTensor g1 = to_host(with_scalar.view), g2 = to_host(with_tensor.view);
        EXPECT_EQ(std::memcmp(g1.data(), g2.data(), g1.bytes()), 0)
            << op_name(op) << " " << dtype_name(t) << " with " << s.str();
      }
}

// ---- layouts, edges, empty tensors -------------------------------------------------------------

/// The pairs the converting kernel has fast paths for, and others.
constexpr std::pair<DType, DType> kHotPairs[] = {
    {DType::bf16, DType::f32}, {DType::f32, DType::f16}, {DType::f32, DType::f64},
    {DType::i32, DType::f32},  {DType::i64, DType::f64}, {DType::b8, DType::f32},
    {DType::f16, DType::b8},   {DType::u8, DType::i8},   {DType::i16, DType::u16},
    {DType::u64, DType::i64},  {DType::f16, DType::bf16}, {DType::u32, DType::f16},
    {DType::i8, DType::b8}};  // (the flat kernel's widths: 1-byte operands and out, W = 1)

TEST(MixedGpu, RandomBroadcastLayouts) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const int cases = test::sanitizer_sizes() ? 40 : 300;
  for (int i = 0; i < cases; ++i) {
    Dims as, bs;
    test::random_shapes(rng, &as, &bs);
    auto [ta, tb] = kHotPairs[static_cast<std::size_t>(i) % std::size(kHotPairs)];
    if (i % 2) std::swap(ta, tb);
    const BinaryOp op = kAllOps[rng() % std::size(kAllOps)];
    Tensor a(ta, as, Layout::random(as.size(), rng), rng);
    Tensor b(tb, bs, Layout::random(bs.size(), rng), rng);
    const Dims shape = broadcast_shapes(as, bs);
    DenseOptions o;
    o.promotion = i % 3 == 2 ? Promotion::torch : Promotion::numpy;
    o.kernel = i % 4 == 3 ? Kernel::general : Kernel::automatic;
    DeviceOperand out(result_or(op, o.promotion, a, b, ta), shape,
                      Layout::random(shape.size(), rng));
    EXPECT_EQ(check(op, a, b, out, o), "") << "case " << i;
    if (HasFailure()) return;
  }
}

TEST(MixedGpu, TileEdgesAndMisalignment) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::vector<std::int64_t> lengths =
      test::sanitizer_sizes() ? std::vector<std::int64_t>{1, 33, 1025}
                              : std::vector<std::int64_t>{1,    2,    3,    7,    8,    9,   15,
                                                          16,   17,   31,   32,   33,   127, 128,
                                                          129,  1023, 1024, 1025, 2047, 2048,
                                                          2049, 4099, 8195, 20483};
  int k = 0;
  for (const auto& [ta, tb] : kHotPairs)
    for (std::int64_t n : lengths)
      for (int offsets = 0; offsets < 4; ++offsets) {  // none, a +1, b +1, out +1
        const BinaryOp op = kAllOps[static_cast<std::size_t>(k++) % std::size(kAllOps)];
        Tensor a(ta, {n}, Layout::contiguous(1, offsets == 1), rng);
        Tensor b(tb, {n}, Layout::contiguous(1, offsets == 2), rng);
        DeviceOperand out(result_or(op, Promotion::numpy, a, b, ta), {n},
                          Layout::contiguous(1, offsets == 3));
        EXPECT_EQ(check(op, a, b, out), "");
        // Rows at tile edges against a row vector, a column vector and a transposed matrix.
        const std::int64_t m = 1 + (n * 7) % 67;
        Tensor mat(ta, {m, n}, offsets == 0 ? Layout::transposed(2) : Layout::contiguous(2, offsets == 1), rng);
        Tensor row(tb, {1, n}, Layout::contiguous(2, offsets == 2), rng);
        Tensor col(tb, {m, 1}, Layout::contiguous(2), rng);
        for (Tensor* v : {&row, &col}) {
          DeviceOperand out2(result_or(op, Promotion::numpy, mat, *v, ta), {m, n},
                             Layout::contiguous(2, offsets == 3));
          EXPECT_EQ(check(op, mat, *v, out2), "");
          EXPECT_EQ(check(op, *v, mat, out2), "");
        }
        if (HasFailure()) return;
      }
}

TEST(MixedGpu, EmptyTensorsWriteNothing) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (const auto& [as, bs] : {std::pair<Dims, Dims>{{0, 33}, {1, 33}}, {{33, 0}, {33, 1}},
                               {{0}, {1}}, {{4, 0, 3}, {4, 1, 3}}}) {
    for (const auto& [ta, tb] : kHotPairs) {
      Tensor a(ta, as, Layout::contiguous(as.size()), rng);
      Tensor b(tb, bs, Layout::contiguous(bs.size()), rng);
      DeviceOperand out(result_or(BinaryOp::add, Promotion::numpy, a, b, ta), as,
                        Layout::contiguous(as.size()));
      EXPECT_EQ(check(BinaryOp::add, a, b, out), "");
      EXPECT_EQ(check(BinaryOp::multiply, a, Scalar::weak_float(0.5), out), "");
    }
  }
}

// ---- in place and outputs of another dtype ---------------------------------------------------

// out aliasing an operand whose dtype it shares, the other operand narrower or wider:
// x_bf16 += y_f32 and the like; the result is cast to out's dtype when same_kind allows, and
// refused, leaving x untouched, when it does not (i64 += f64).
TEST(MixedGpu, InPlaceWithAnOperandOfAnotherDtype) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  struct Case {
    BinaryOp op;
    DType self, other;
    bool self_is_a;
  };
  const Case cases[] = {
      {BinaryOp::add, DType::bf16, DType::f32, true},       {BinaryOp::multiply, DType::f32, DType::f64, true},
      {BinaryOp::subtract, DType::i32, DType::i8, true},    {BinaryOp::add, DType::i16, DType::u8, false},
      {BinaryOp::add, DType::u8, DType::b8, true},          {BinaryOp::divide, DType::f64, DType::i64, true},
      {BinaryOp::subtract, DType::f16, DType::bf16, false}, {BinaryOp::maximum, DType::f16, DType::f64, true},
      {BinaryOp::floor_divide, DType::i64, DType::u32, true}, {BinaryOp::power, DType::f32, DType::i16, false},
      {BinaryOp::add, DType::i64, DType::f64, true},        {BinaryOp::add, DType::u8, DType::i8, true},
      {BinaryOp::less, DType::f32, DType::f32, true},       {BinaryOp::bitwise_or, DType::i8, DType::b8, false},
  };
  const struct {
    Dims self, other;
    Layout layout;
  } patterns[] = {{{300, 67}, {300, 67}, Layout::contiguous(2)},
                  {{300, 64}, {1, 64}, Layout::contiguous(2, 1)},
                  {{64, 48}, {64, 1}, Layout::transposed(2)}};
  for (const Case& c : cases)
    for (const auto& p : patterns) {
      Tensor self(c.self, p.self, p.layout, rng);
      Tensor other(c.other, p.other, Layout::random(p.other.size(), rng), rng);
      const std::string what = detail::concat(op_name(c.op), " ", dtype_name(c.self), " with ",
                                              dtype_name(c.other), c.self_is_a ? " as a" : " as b",
                                              " in place, ", self.dev.str());
      HostTensor want(c.self, Dims{self.dev.buffer_elements});
      std::memcpy(want.data(), self.host.data(), want.bytes());
      const TensorView want_view = self.dev.at(want.data(), Memory::host);
      bool ref_ok = true, gpu_ok = true;
      try {
        if (c.self_is_a) reference_binary(c.op, want_view, other.host_view(), want_view);
        else reference_binary(c.op, other.host_view(), want_view, want_view);
      } catch (const InvalidArgument&) {
        ref_ok = false;
      }
      try {
        if (c.self_is_a) binary(c.op, self.dev.view, other.dev.view, self.dev.view);
        else binary(c.op, other.dev.view, self.dev.view, self.dev.view);
      } catch (const InvalidArgument&) {
        gpu_ok = false;
      }
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
      EXPECT_EQ(ref_ok, gpu_ok) << what;
      EXPECT_EQ(ref_ok, can_cast_same_kind(op_types(c.op, Promotion::numpy, {c.self},
                                                    {c.other}).result, c.self))
          << what;
      const std::uint64_t ulps =
          ref_ok && c.op == BinaryOp::power
              ? power_ulps(op_types(c.op, Promotion::numpy, {c.self}, {c.other}).result, c.self)
              : 0;
      EXPECT_EQ(compare_buffers(to_host(self.dev.whole()), want, ulps), "") << what;
    }
}

/// n pairs (a, b) of dtype t (f32 or f64) at the edges of fmod's fast path (ops.hpp): a a
/// multiple k of b nudged by up to 3 ulps either way, k log-uniform up to 2^(digits + 2)
/// (quotients that round to or across an integer, and past the 2^digits limit); a and b within
/// a factor of 2; random bits (every exponent, subnormals, infinities, NaNs); ±0, ±inf.
void fill_remainder_edges(DType t, void* a, void* b, std::int64_t n, std::mt19937_64& rng) {
  const int digits = t == DType::f32 ? 24 : 53;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto store = [&](void* p, std::int64_t i, double v) {
    detail::store_double(t, static_cast<std::byte*>(p) + i * static_cast<std::int64_t>(dtype_size(t)), v);
  };
  const auto round = [&](double v) { return t == DType::f32 ? double(float(v)) : v; };
  const auto nudge = [&](double v, int ulps) {
    for (; ulps > 0; --ulps) v = t == DType::f32 ? std::nextafter(float(v), 2 * float(v) + 1) : std::nextafter(v, 2 * v + 1);
    for (; ulps < 0; ++ulps) v = t == DType::f32 ? std::nextafter(float(v), -2 * float(v) - 1) : std::nextafter(v, -2 * v - 1);
    return v;
  };
  const auto sign = [&] { return rng() & 1 ? -1.0 : 1.0; };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double special[] = {0.0, -0.0, kInf, -kInf, 1.0, -1.5};
  for (std::int64_t i = 0; i < n; ++i) {
    double x, y;
    switch (rng() % 4) {
      case 0: {
        y = round(sign() * std::ldexp(1.0 + unit(rng), static_cast<int>(rng() % 41) - 20));
        const double k = std::floor(std::exp2(unit(rng) * (digits + 2)));
        x = nudge(round(k * y), static_cast<int>(rng() % 7) - 3);
        break;
      }
      case 1:
        y = round(sign() * std::ldexp(1.0 + unit(rng), static_cast<int>(rng() % 11) - 5));
        x = nudge(round(y * (0.5 + 1.5 * unit(rng))), static_cast<int>(rng() % 7) - 3);
        break;
      case 2: {
        const std::uint64_t bx = rng(), by = rng();
        if (t == DType::f32) {
          float fx, fy;
          const auto ux = static_cast<std::uint32_t>(bx), uy = static_cast<std::uint32_t>(by);
          std::memcpy(&fx, &ux, 4);
          std::memcpy(&fy, &uy, 4);
          x = fx;
          y = fy;
        } else {
          std::memcpy(&x, &bx, 8);
          std::memcpy(&y, &by, 8);
        }
        break;
      }
      default:
        x = special[rng() % 6];
        y = rng() % 2 ? special[rng() % 6] : round(sign() * std::ldexp(1.0, static_cast<int>(rng() % 200) - 100));
    }
    store(a, i, x);
    store(b, i, y);
  }
}

// floor_divide and remainder on floats bit for bit against the reference, whose fmod is the
// host math library's, where the device's takes the fused multiply-add path (ops.hpp).
TEST(MixedGpu, FloatRemaindersAtTheEdgesOfTheFastFmod) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t n = test::sanitizer_sizes() ? 4096 : 1 << 18;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor a(t, {n}, Layout::contiguous(1), rng), b(t, {n}, Layout::contiguous(1), rng);
    fill_remainder_edges(t, a.host.data(), b.host.data(), a.dev.buffer_elements, rng);
    EWISE_CUDA_CHECK(cudaMemcpy(a.dev.buf.data(), a.host.data(), a.host.bytes(), cudaMemcpyHostToDevice));
    EWISE_CUDA_CHECK(cudaMemcpy(b.dev.buf.data(), b.host.data(), b.host.bytes(), cudaMemcpyHostToDevice));
    for (BinaryOp op : {BinaryOp::floor_divide, BinaryOp::remainder}) {
      DeviceOperand out(t, {n}, Layout::contiguous(1));
      EXPECT_EQ(check(op, a, b, out), "");
    }
  }
}

/// n pairs (a, b) for power, a stored as dtype ta and b as tb (f32, f16 or bf16): every path of
/// pow_f32_fast and its refusals: bases over the float range and near 1 (with exponents taking
/// |b log2 a| up to and past 126, the series' limit), negative bases with integer exponents
/// (odd, even, up to and past 2^22) and others, zeros, subnormals, infinities, NaNs, exponents
/// 0, 2 and subnormal, bases of few significant bits to small integers (exact powers, some on a
/// float rounding midpoint); in a 16-bit dtype each rounded to it, past its range infinite.
void fill_power_edges(DType ta, void* a, DType tb, void* b, std::int64_t n,
                      std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-140f, -0x1p-149f, 1.0f,
                            -1.0f, 2.0f, 0x1.fffffep127f, 0x1p-126f};
  const auto store = [&](DType d, void* p, std::int64_t i, float v) {
    const auto at = i * static_cast<std::int64_t>(dtype_size(d));
    detail::store_double(d, static_cast<std::byte*>(p) + at, v);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = unit(rng), v = unit(rng);
    float x = static_cast<float>(std::exp2(u * 40 - 20)), y = static_cast<float>(v * 8 - 4);
    switch (rng() % 8) {
      case 0: x = static_cast<float>(1 + (u - 0.5) * 1e-3);
              y = static_cast<float>((v - 0.5) * 260 / std::fabs(std::log2(static_cast<double>(x)))); break;
      case 1: x = -x; y = std::floor(y * 4); break;
      case 2: x = -x; y = static_cast<float>(std::ldexp(1.0 + (rng() % 8), 19 + static_cast<int>(rng() % 6))); break;
      case 3: x = specials[rng() % std::size(specials)]; break;
      case 4: y = specials[rng() % std::size(specials)]; break;
      case 5: x = static_cast<float>(std::exp2(u * 250 - 125)); break;
      case 6: {  // a base of 2 to 13 significant bits, an integer exponent: exact powers, some
                 // on a float rounding midpoint (docs/reliability.md, bug 18)
        const int bits = 2 + static_cast<int>(rng() % 12);
        const auto k = static_cast<float>((1 << (bits - 1)) + 1 + 2 * (rng() % (1u << (bits - 2))));
        x = std::ldexp(k, static_cast<int>(rng() % 40) - 20 - bits);
        y = static_cast<float>(1 + rng() % 8);
        break;
      }
      default: break;
    }
    store(ta, a, i, x);
    store(tb, b, i, y);
  }
}

// Power of f32, f16 and bf16 tensors: the power kernel (power.cuh) at its tiles' edges, with a
// head where a, b and out sit alike off a 16-byte boundary, with a tensor, a scalar (integer
// exponents among them) and a broadcast one-element exponent; the converting kernel where the
// operands sit differently or the result is another dtype; every path of the series and of the
// integer powers against the reference. Then each pair of two float dtypes into their f32
// result, a of one and b of the other: the power kernel where every operand sits at its piece's
// boundary after out's head (a 16-bit operand's pieces 8 bytes), the converting kernel where
// one does not; a tensor, a broadcast one-element and a 0-d exponent (held: the power kernel
// for an f32 one over a 16-bit a), and f32 scalars over a 16-bit a (each scalar functor).
TEST(MixedGpu, PowerKernelAtTileEdges) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::vector<std::int64_t> lengths =
      test::sanitizer_sizes() ? std::vector<std::int64_t>{1, 129, 513}
                              : std::vector<std::int64_t>{1, 7, 127, 128, 129, 255, 256, 257,
                                                          511, 512, 513, 4097, 100003};
  const Scalar scalars[] = {Scalar::weak_float(0.7), Scalar::of(DType::f32, -2.5),
                            Scalar::weak_int(3),     Scalar::weak_int(-2),
                            Scalar::weak_int(5),     Scalar::weak_float(-16.0),
                            Scalar::weak_int(2),     Scalar::weak_int(-1),
                            Scalar::weak_int(-3),    Scalar::weak_float(0.5),
                            Scalar::weak_float(-0.5)};
  // a's and b's buffers filled by fill_power_edges (each in its dtype) and copied to the device
  const auto power_edges_to_device = [&rng](Tensor& a, Tensor& b) {
    fill_power_edges(a.host.dtype(), a.host.data(), b.host.dtype(), b.host.data(),
                     std::min(a.dev.buffer_elements, b.dev.buffer_elements), rng);
    for (Tensor* x : {&a, &b})
      EWISE_CUDA_CHECK(cudaMemcpy(x->dev.buf.data(), x->host.data(), x->host.bytes(),
                                  cudaMemcpyHostToDevice));
  };
  // element offsets of a, b, out: alike, a head; a off, b alike; a and out off, b not
  const int offsets[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {1, 0, 0}, {1, 0, 1}};
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t n : lengths)
      for (const auto& o : offsets) {
        Tensor a(t, {n}, Layout::contiguous(1, o[0]), rng);
        Tensor b(t, {n}, Layout::contiguous(1, o[1]), rng);
        power_edges_to_device(a, b);
        DeviceOperand out(t, {n}, Layout::contiguous(1, o[2]));
        EXPECT_EQ(check(BinaryOp::power, a, b, out), "");
        for (const Scalar& s : scalars) EXPECT_EQ(check(BinaryOp::power, a, Arg(s), out), "");
        Tensor one(t, {1}, Layout::contiguous(1), rng);
        EXPECT_EQ(check(BinaryOp::power, a, one, out), "");
        if (HasFailure()) return;
      }
  // element offsets of a, b, out: alike, a head; a or b 4 in (a 16-bit one 8 bytes past a
  // 16-byte boundary, on its piece's); a off, b alike; a and out off, b not; b 2 in (off its
  // piece: 4 bytes of a 16-bit one, 8 of an f32)
  const int mixed_offsets[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {4, 0, 0},
                                  {0, 4, 0}, {1, 0, 0}, {1, 0, 1}, {0, 2, 0}};
  const DType floats[] = {DType::f32, DType::f16, DType::bf16};
  for (DType ta : floats)
    for (DType tb : floats) {
      if (ta == tb) continue;
      for (std::int64_t n : lengths)
        for (const auto& o : mixed_offsets) {
          Tensor a(ta, {n}, Layout::contiguous(1, o[0]), rng);
          Tensor b(tb, {n}, Layout::contiguous(1, o[1]), rng);
          power_edges_to_device(a, b);
          ASSERT_EQ(result_or(BinaryOp::power, Promotion::numpy, a, b, ta), DType::f32);
          DeviceOperand out(DType::f32, {n}, Layout::contiguous(1, o[2]));
          EXPECT_EQ(check(BinaryOp::power, a, b, out), "");
          Tensor one(tb, {1}, Layout::contiguous(1), rng);
          Tensor zero_d(tb, {}, Layout::contiguous(0), rng);
          EXPECT_EQ(check(BinaryOp::power, a, one, out), "");
          EXPECT_EQ(check(BinaryOp::power, a, zero_d, out), "");
          if (ta != DType::f32 && tb == DType::f32) {
            for (const Scalar& s : scalars) {
              const Scalar typed = Scalar::of(DType::f32, s.as_double());
              EXPECT_EQ(check(BinaryOp::power, a, Arg(typed), out), "");
            }
            if (ta == DType::bf16)  // f32 under NumPy's rule (ml_dtypes')
              EXPECT_EQ(check(BinaryOp::power, a, Arg(Scalar::weak_float(0.7)), out), "");
          }
          if (HasFailure()) return;
        }
    }
}

// Every value of bf16 and of f16 to scalar exponents and to tensors of every value, against the
// reference bit for bit (the functors of these exponents are exact on both backends,
// pow_f32.hpp): the power kernel's 16-bit paths over their whole domain (PowRsqrtNarrow's and
// PowNarrow's approximations are the device's own).
TEST(MixedGpu, PowerOfEvery16BitValue) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(test_seed());
  const std::int64_t n = 1 << 16;
  for (DType t : {DType::f16, DType::bf16}) {
    Tensor a(t, {n}, Layout::contiguous(1), rng);
    auto* bits = static_cast<std::uint16_t*>(a.host.data());
    for (std::int64_t i = 0; i < a.dev.buffer_elements; ++i) bits[i] = static_cast<std::uint16_t>(i);
    EWISE_CUDA_CHECK(cudaMemcpy(a.dev.buf.data(), a.host.data(), a.host.bytes(), cudaMemcpyHostToDevice));
    DeviceOperand out(t, {n}, Layout::contiguous(1));
    for (double e : {-0.5, 0.5, 2.0, 3.0, -2.0, -1.0})
      EXPECT_EQ(check(BinaryOp::power, a, Arg(Scalar::weak_float(e)), out, {}, true), "");
    // General exponents (power.cuh's PowNarrow): scalars, under PyTorch's rule for a bf16
    // result, and tensors pairing every value with every value k apart (k odd: a permutation).
    DenseOptions torch_rule;
    torch_rule.promotion = Promotion::torch;
    for (double e : {0.7, -1.3, 2.5, 7.1, -11.9, 0.0625, 1e-3})
      EXPECT_EQ(check(BinaryOp::power, a, Arg(Scalar::weak_float(e)), out, torch_rule, true), "");
    Tensor b(t, {n}, Layout::contiguous(1), rng);
    auto* b_bits = static_cast<std::uint16_t*>(b.host.data());
    for (std::uint32_t k : {1u, 40503u, 8191u, 257u}) {
      for (std::int64_t i = 0; i < n; ++i) b_bits[i] = static_cast<std::uint16_t>(i * k + 12345);
      EWISE_CUDA_CHECK(
          cudaMemcpy(b.dev.buf.data(), b.host.data(), b.host.bytes(), cudaMemcpyHostToDevice));
      EXPECT_EQ(check(BinaryOp::power, a, b, out, {}, true), "") << "k = " << k;
    }
  }
}

// A result stored in an output of another dtype that same_kind allows: rounded once from the
// result (an f64 sum into f16), a 16-bit result rounded to its dtype before it widens, integers
// wrapped in the result dtype before they widen, bool into numbers.
TEST(MixedGpu, OutputsOfAnotherDtype) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType t : mixed_dtypes())
    for (DType od : kAllDTypes)
      for (BinaryOp op : {BinaryOp::add, BinaryOp::multiply, BinaryOp::greater, BinaryOp::divide,
                          BinaryOp::remainder}) {
        Tensor a(t, {65, 33}, Layout::random(2, rng), rng);
        Tensor b(t, {33}, Layout::contiguous(1), rng);
        DeviceOperand out(od, {65, 33}, Layout::random(2, rng));
        EXPECT_EQ(check(op, a, b, out), "");  // refused where same_kind refuses, on both sides
        if (HasFailure()) return;
      }
}

// ---- one launch, refusals before any launch ----------------------------------------------------

/// The CUDA graph nodes `call` records on a capturing stream: its launches and copies; with
/// `kernels`, the name of each launch's kernel (as the compiler mangled it) appended to it.
std::size_t captured_nodes(const std::function<void(cudaStream_t)>& call, bool* threw,
                           std::vector<std::string>* kernels = nullptr) {
  cudaStream_t s;
  EWISE_CUDA_CHECK(cudaStreamCreate(&s));
  EWISE_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  *threw = false;
  try {
    call(s);
  } catch (const InvalidArgument&) {
    *threw = true;
  }
  cudaGraph_t graph = nullptr;
  EWISE_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  std::size_t nodes = 0;
  EWISE_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  std::vector<cudaGraphNode_t> list(nodes);
  if (nodes > 0) EWISE_CUDA_CHECK(cudaGraphGetNodes(graph, list.data(), &nodes));
  for (cudaGraphNode_t n : list) {
    cudaGraphNodeType type;
    EWISE_CUDA_CHECK(cudaGraphNodeGetType(n, &type));
    EXPECT_EQ(type, cudaGraphNodeTypeKernel) << "a node that is not a kernel launch";
    if (kernels == nullptr || type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams params{};
    EWISE_CUDA_CHECK(cudaGraphKernelNodeGetParams(n, &params));
    const char* name = nullptr;
    EWISE_CUDA_CHECK(cudaFuncGetName(&name, params.func));
    kernels->emplace_back(name);
  }
  EWISE_CUDA_CHECK(cudaGraphDestroy(graph));
  EWISE_CUDA_CHECK(cudaStreamDestroy(s));
  return nodes;
}

TEST(MixedGpu, OneKernelLaunchPerCall) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(test_seed());
  Tensor x(DType::bf16, {512, 256}, Layout::contiguous(2), rng);
  Tensor y(DType::f32, {256}, Layout::contiguous(1), rng);
  Tensor m(DType::b8, {512, 256}, Layout::transposed(2), rng);
  DeviceOperand f32_out(DType::f32, {512, 256}, Layout::contiguous(2));
  const std::pair<const char*, std::function<void(cudaStream_t)>> calls[] = {
      {"bf16 + f32", [&](cudaStream_t s) { binary(BinaryOp::add, x.dev.view, y.dev.view, f32_out.view, {}, s); }},
      {"x_bf16 += f32", [&](cudaStream_t s) { binary(BinaryOp::add, x.dev.view, y.dev.view, x.dev.view, {}, s); }},
      {"x * 0.5", [&](cudaStream_t s) { binary(BinaryOp::multiply, x.dev.view, Scalar::weak_float(0.5), x.dev.view, {}, s); }},
      {"mask * -1e9", [&](cudaStream_t s) { binary(BinaryOp::multiply, m.dev.view, Scalar::weak_float(-1e9), f32_out.view, {}, s); }},
      {"1 - mask (torch)", [&](cudaStream_t s) {
         DenseOptions o;
         o.promotion = Promotion::torch;
         binary(BinaryOp::subtract, Scalar::weak_int(1), m.dev.view, f32_out.view, o, s);
       }},
  };
  for (const auto& [what, call] : calls) {
    bool threw = false;
    EXPECT_EQ(captured_nodes(call, &threw), 1u) << what;
    EXPECT_FALSE(threw) << what;
  }
}

// Power calls over contiguous operands of one float dtype run power.cuh's kernel (a tensor
// exponent too: a const functor type once sent those to the converting kernel, correct but
// 1.25 times slower); an exponent at another 16-byte phase than out, the converting kernel.
// PyTorch's rule, under which bf16 ** 0.7 is bf16 (NumPy's takes it to f32: ml_dtypes'). Then
// mixed float dtypes into their f32 result under NumPy's rule: a tensor exponent of another
// dtype, an f32 0-d one, an f32 scalar and a Python float over a 16-bit base in the power kernel
// (the converting kernel ran them at 1.26 times its time); x ** 2 in the converting kernel's
// short shape (as f32 ** 2); an exponent off its piece's boundary, the converting kernel (its
// flat form where its groups of 16 / 8 elements sit alike).
TEST(MixedGpu, PowerCallsRunThePowerKernel) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(test_seed());
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    Tensor a(t, {64, 96}, Layout::contiguous(2), rng);
    Tensor b(t, {64, 96}, Layout::contiguous(2), rng);
    Tensor shifted(t, {64, 96}, Layout::contiguous(2, 1), rng);
    Tensor held(t, {}, Layout::contiguous(0), rng);
    DeviceOperand out(t, {64, 96}, Layout::contiguous(2));
    const auto power = [&](const ConstTensorView& x, const auto& y) {
      return [&out, x, y](cudaStream_t s) {
        DenseOptions o;
        o.promotion = Promotion::torch;
        binary(BinaryOp::power, x, y, out.view, o, s);
      };
    };
    const struct {
      const char* what;
      std::function<void(cudaStream_t)> call;
      const char* kernel;
    } calls[] = {{"a ** b", power(a.dev.view, ConstTensorView(b.dev.view)), "power_kernel"},
                 {"a ** 0-d", power(a.dev.view, ConstTensorView(held.dev.view)), "power_kernel"},
                 {"a ** 0.7", power(a.dev.view, Scalar::weak_float(0.7)), "power_kernel"},
                 {"a ** 3", power(a.dev.view, Scalar::weak_int(3)), "power_kernel"},
                 {"a ** shifted b", power(a.dev.view, ConstTensorView(shifted.dev.view)),
                  "convert_strided_kernel"}};
    for (const auto& c : calls) {
      bool threw = false;
      std::vector<std::string> kernels;
      EXPECT_EQ(captured_nodes(c.call, &threw, &kernels), 1u) << c.what;
      EXPECT_FALSE(threw) << c.what;
      ASSERT_EQ(kernels.size(), 1u) << c.what;
      EXPECT_NE(kernels[0].find(c.kernel), std::string::npos)
          << dtype_name(t) << " " << c.what << " ran " << kernels[0];
    }
  }
  Tensor x32(DType::f32, {64, 96}, Layout::contiguous(2), rng);
  Tensor x16(DType::f16, {64, 96}, Layout::contiguous(2), rng);
  Tensor xb(DType::bf16, {64, 96}, Layout::contiguous(2), rng);
  Tensor shifted32(DType::f32, {64, 96}, Layout::contiguous(2, 1), rng);
  Tensor shifted16(DType::f16, {64, 96}, Layout::contiguous(2, 2), rng);
  Tensor held32(DType::f32, {}, Layout::contiguous(0), rng);
  DeviceOperand out(DType::f32, {64, 96}, Layout::contiguous(2));
  const auto power = [&](const Arg& x, const Arg& y) {
    return [&out, x = x.device(), y = y.device()](cudaStream_t s) {
      binary(BinaryOp::power, x, y, out.view, {}, s);
    };
  };
  const struct {
    const char* what;
    std::function<void(cudaStream_t)> call;
    const char* kernel;
  } mixed[] = {{"bf16 ** f32", power(xb, x32), "power_kernel"},
               {"f16 ** f32", power(x16, x32), "power_kernel"},
               {"f32 ** bf16", power(x32, xb), "power_kernel"},
               {"f32 ** f16", power(x32, x16), "power_kernel"},
               {"bf16 ** f16", power(xb, x16), "power_kernel"},
               {"f16 ** bf16", power(x16, xb), "power_kernel"},
               {"bf16 ** f32 0-d", power(xb, held32), "power_kernel"},
               {"f16 ** f32 0-d", power(x16, held32), "power_kernel"},
               {"bf16 ** f32 scalar 0.7", power(xb, Scalar::of(DType::f32, 0.7)), "power_kernel"},
               {"bf16 ** 0.7", power(xb, Scalar::weak_float(0.7)), "power_kernel"},
               {"bf16 ** f32 scalar 3", power(xb, Scalar::of(DType::f32, 3)), "power_kernel"},
               {"f16 ** f32 scalar 5", power(x16, Scalar::of(DType::f32, 5)), "power_kernel"},
               {"bf16 ** 2.0", power(xb, Scalar::weak_float(2)), "convert_flat_kernel"},
               {"bf16 ** shifted f32", power(xb, shifted32), "convert_strided_kernel"},
               // 4 bytes off an 8-byte piece: the flat converting kernel's groups of two
               {"f32 ** shifted f16", power(x32, shifted16), "convert_flat_kernel"}};
  for (const auto& c : mixed) {
    bool threw = false;
    std::vector<std::string> kernels;
    EXPECT_EQ(captured_nodes(c.call, &threw, &kernels), 1u) << c.what;
    EXPECT_FALSE(threw) << c.what;
    ASSERT_EQ(kernels.size(), 1u) << c.what;
    EXPECT_NE(kernels[0].find(c.kernel), std::string::npos) << c.what << " ran " << kernels[0];
  }
}

TEST(MixedGpu, RefusedBeforeAnythingIsLaunched) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(test_seed());
  Tensor f(DType::f32, {8, 16}, Layout::contiguous(2), rng);
  Tensor i(DType::i32, {8, 16}, Layout::contiguous(2), rng);
  Tensor flags(DType::b8, {8, 16}, Layout::contiguous(2), rng);
  Tensor h(DType::f16, {16}, Layout::contiguous(1), rng);
  DeviceOperand int_out(DType::i32, {8, 16}, Layout::contiguous(2));
  DeviceOperand bool_out(DType::b8, {8, 16}, Layout::contiguous(2));
  DeviceOperand f32_out(DType::f32, {8, 16}, Layout::contiguous(2));
  TensorView unknown = f.dev.view;  // a dtype value outside the enum
  unknown.desc.dtype = static_cast<DType>(42);
  const struct {
    const char* what;
    std::vector<std::string> parts;
    DeviceOperand* out;
    std::function<void(cudaStream_t)> call;
  } bad[] = {
      {"float into an int out", {"f32", "i32", "same_kind"}, &int_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, f.dev.view, i.dev.view, int_out.view, {}, s); }},
      {"true division into an int out", {"f64", "i32"}, &int_out,
       [&](cudaStream_t s) { binary(BinaryOp::divide, i.dev.view, i.dev.view, int_out.view, {}, s); }},
      {"bool subtract", {"subtract", "bool"}, &bool_out,
       [&](cudaStream_t s) { binary(BinaryOp::subtract, flags.dev.view, flags.dev.view, bool_out.view, {}, s); }},
      {"bitwise on floats", {"bitwise_xor", "f32", "f16"}, &f32_out,
       [&](cudaStream_t s) { binary(BinaryOp::bitwise_xor, f.dev.view, h.dev.view, f32_out.view, {}, s); }},
      {"an unknown dtype", {"42"}, &f32_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, unknown, f.dev.view, f32_out.view, {}, s); }},
      {"two scalars", {"two scalars"}, &f32_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, Scalar::weak_float(1), Scalar::of(DType::f32, 2), f32_out.view, {}, s); }},
      {"a Python int out of range", {"1099511627776", "i32"}, &int_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, i.dev.view, Scalar::weak_int(int64_t{1} << 40), int_out.view, {}, s); }},
      {"a named kernel on mixed dtypes", {"vectorized", "general"}, &f32_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, f.dev.view, h.dev.view, f32_out.view, {Kernel::vectorized}, s); }},
      {"a named kernel on a scalar", {"row_vectorized", "general"}, &f32_out,
       [&](cudaStream_t s) { binary(BinaryOp::add, f.dev.view, Scalar::weak_float(2), f32_out.view, {Kernel::row_vectorized}, s); }},
      {"a named kernel on a new dtype", {"tiled", "general"}, &bool_out,
       [&](cudaStream_t s) { binary(BinaryOp::logical_and, flags.dev.view, flags.dev.view, bool_out.view, {Kernel::tiled}, s); }},
  };
  for (const auto& c : bad) {
    verify::poison(c.out->whole());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::string message;
    bool threw = false;
    const std::size_t nodes = captured_nodes(
        [&](cudaStream_t s) {
          try {
            c.call(s);
          } catch (const InvalidArgument& e) {
            message = e.what();
            throw;
          }
        },
        &threw);
    EXPECT_TRUE(threw) << c.what;
    EXPECT_EQ(nodes, 0u) << c.what << ": launched before refusing";
    for (const std::string& p : c.parts)
      EXPECT_NE(message.find(p), std::string::npos) << c.what << ": '" << message << "' lacks " << p;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << c.what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.what;
    const HostTensor after = to_host(c.out->whole());
    for (std::int64_t k = 0; k < after.numel(); ++k)
      ASSERT_TRUE(verify::is_poison(after.dtype(), static_cast<const std::byte*>(after.data()) +
                                                       k * static_cast<std::int64_t>(dtype_size(after.dtype()))))
          << c.what << ": the output was written at " << k;
  }
}

// ---- allocating form ------------------------------------------------------------------------------

TEST(MixedGpu, AllocatingFormTakesTheResultDtype) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(test_seed());
  Tensor a(DType::i32, {33, 65}, Layout::contiguous(2), rng);
  Tensor b(DType::f32, {65}, Layout::contiguous(1), rng);
  const struct {
    BinaryOp op;
    Arg x, y;
    Promotion rule;
    DType want;
  } cases[] = {{BinaryOp::add, a, b, Promotion::numpy, DType::f64},
               {BinaryOp::add, a, b, Promotion::torch, DType::f32},
               {BinaryOp::divide, a, a, Promotion::numpy, DType::f64},
               {BinaryOp::divide, a, a, Promotion::torch, DType::f32},
               {BinaryOp::multiply, a, Scalar::weak_float(0.5), Promotion::numpy, DType::f64},
               {BinaryOp::multiply, a, Scalar::weak_float(0.5), Promotion::torch, DType::f32},
               {BinaryOp::less, Scalar::weak_int(0), b, Promotion::numpy, DType::b8}};
  for (const auto& c : cases) {
    DenseOptions o;
    o.promotion = c.rule;
    const DeviceTensor got = binary(c.op, c.x.device(), c.y.device(), o);
    EXPECT_EQ(got.dtype(), c.want) << op_name(c.op) << " " << promotion_name(c.rule);
    HostTensor want(c.want, got.shape());
    reference_binary(c.op, c.x.host(), c.y.host(), want.view(), c.rule);
    EXPECT_EQ(compare_buffers(to_host(got.view()), want, 0), "") << op_name(c.op);
  }
}

// ---- more than 2^31 elements ---------------------------------------------------------------------

/// Elements [first, first + count) of a contiguous device tensor of dtype t, as a host tensor.
HostTensor window(const void* data, DType t, std::int64_t first, std::int64_t count) {
  HostTensor h(t, Dims{count});
  EWISE_CUDA_CHECK(cudaMemcpy(h.data(),
                              static_cast<const std::byte*>(data) + first * static_cast<std::int64_t>(dtype_size(t)),
                              h.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

// The converting kernel's 64-bit path: a u8 and a bool tensor of 2^31 + 4101 elements, as a
// tensor pair and with a scalar, checked in windows at the start, across 2^31 and at the end.
TEST(Large, MixedU8BoolOver2To31Elements) {
  EWISE_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 4101;  // the middle window crosses 2^31
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const std::size_t need = 3 * static_cast<std::size_t>(n) + (std::size_t{1} << 30);
  if (free_bytes < need)
    GTEST_SKIP() << "needs " << need << " bytes of free device memory, " << free_bytes << " free";
  const std::uint64_t seed = test_seed();
  DeviceTensor a(DType::u8, {n}), flags(DType::b8, {n}), out(DType::u8, {n});
  verify::fill_random(a.view(), seed, {0, 255, true});
  verify::fill_random(flags.view(), seed + 1, {0, 1, true});
  const std::int64_t windows[] = {0, (std::int64_t{1} << 31) - 2048, n - 4099};
  for (int form = 0; form < 2; ++form) {
    verify::poison(out.view());
    if (form == 0) binary(BinaryOp::add, a.view(), flags.view(), out.view());
    else binary(BinaryOp::subtract, a.view(), Scalar::weak_int(3), out.view());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (std::int64_t first : windows) {
      const HostTensor ha = window(a.data(), DType::u8, first, 4099);
      const HostTensor hf = window(flags.data(), DType::b8, first, 4099);
      HostTensor want(DType::u8, Dims{4099});
      if (form == 0) reference_binary(BinaryOp::add, ha.view(), hf.view(), want.view());
      else reference_binary(BinaryOp::subtract, ha.view(), Scalar::weak_int(3), want.view());
      EXPECT_EQ(compare_buffers(window(out.data(), DType::u8, first, 4099), want, 0), "")
          << (form == 0 ? "u8 + bool" : "u8 - 3") << " at " << first;
    }
  }
}

}  // namespace
}  // namespace ewise
