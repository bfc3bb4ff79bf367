// Host tests of the CPU backend of binary() (dense/cpu.cpp) against the CPU reference
// (ewise/reference.hpp), bit for bit: every op x every dtype pair x both rules over random
// broadcast shapes and layouts (transposed, strided, reversed, misaligned), scalar operands on
// either side, outputs of another dtype, in-place use, rows across the chunk size, held
// operands, empty tensors; values with ±0, ±inf, NaNs of any payload and integer extremes. Each
// check poisons the output's whole buffer and compares the whole buffers, so an element written
// outside the view shows. Environment: EWISE_SEED replays a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"
#include "testing/layouts.hpp"
#include "testing/values.hpp"

namespace ewise {
namespace {

using test::Layout;

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

/// A host view of `shape` laid out as `layout` in a buffer of its own, of random values.
struct HostOperand {
  std::vector<std::byte> buf;
  test::Placement place;
  TensorView view;

  HostOperand(DType t, const Dims& shape, const Layout& l, std::mt19937_64& rng)
      : place(test::place(shape, l)) {
    buf.resize(static_cast<std::size_t>(place.buffer_elements) * dtype_size(t));
    test::fill_values(t, buf.data(), place.buffer_elements, rng);
    view = TensorView{buf.data() + place.base * static_cast<std::int64_t>(dtype_size(t)),
                      TensorDesc::strided(t, shape, place.strides), Memory::host};
  }
  TensorView whole() {
    return TensorView{buf.data(), TensorDesc::contiguous(view.desc.dtype, {place.buffer_elements}),
                      Memory::host};
  }
};

/// An operand of a check: a host tensor, or a scalar.
struct Arg {
  HostOperand* tensor = nullptr;
  Scalar scalar;
  Arg(HostOperand& t) : tensor(&t) {}     // NOLINT
  Arg(const Scalar& s) : scalar(s) {}     // NOLINT
  Operand operand() const { return tensor ? Operand(tensor->view) : Operand(scalar); }
  std::string str() const {
    return tensor ? detail::concat(dtype_name(tensor->view.desc.dtype), tensor->view.desc.shape.str(),
                                   " strides ", tensor->view.desc.strides.str())
                  : scalar.str();
  }
};

/// op(a, b) into out by the CPU backend and by the reference (into a copy of out's buffer, both
/// poisoned first); "" when the whole buffers are equal bit for bit and both accepted or both
/// refused the call, else what differs.
std::string check(BinaryOp op, const Arg& a, const Arg& b, HostOperand& out, Promotion rule) {
  const std::string what = detail::concat(op_name(op), "(", a.str(), ", ", b.str(), ") into ",
                                          dtype_name(out.view.desc.dtype), out.view.desc.shape.str(),
                                          " strides ", out.view.desc.strides.str(), " ",
                                          promotion_name(rule));
  std::vector<std::byte> want(out.buf.size());
  TensorView want_view = out.view;
  want_view.data = want.data() + (static_cast<std::byte*>(out.view.data) - out.buf.data());
  verify::poison(TensorView{want.data(), out.whole().desc, Memory::host});
  std::string ref_error, cpu_error;
  try {
    reference_binary(op, a.operand(), b.operand(), want_view, rule);
  } catch (const InvalidArgument& e) {
    ref_error = e.what();
  }
  verify::poison(out.whole());
  DenseOptions options;
  options.promotion = rule;
  try {
    binary(op, a.operand(), b.operand(), out.view, options, nullptr);
  } catch (const InvalidArgument& e) {
    cpu_error = e.what();
  }
  if (ref_error.empty() != cpu_error.empty())
    return what + ": the reference " + (ref_error.empty() ? "accepted" : "refused (" + ref_error + ")") +
           ", the CPU backend " + (cpu_error.empty() ? "accepted" : "refused (" + cpu_error + ")");
  const std::size_t size = dtype_size(out.view.desc.dtype);
  for (std::size_t i = 0; i < want.size(); i += size)
    if (std::memcmp(want.data() + i, out.buf.data() + i, size) != 0) {
      std::uint64_t g = 0, w = 0;
      std::memcpy(&g, out.buf.data() + i, size);
      std::memcpy(&w, want.data() + i, size);
      return detail::concat(what, ": buffer element ", i / size, ": got 0x", std::hex, g,
                            ", want 0x", w);
    }
  return "";
}

/// The dtype op(a, b) returns under `rule`, or `fallback` where op_types refuses the call.
DType result_or(BinaryOp op, Promotion rule, OperandType a, OperandType b, DType fallback) {
  try {
    return op_types(op, rule, a, b).result;
  } catch (const InvalidArgument&) {
    return fallback;
  }
}

OperandType type_of(const Arg& x, Promotion rule) { return x.operand().type(rule); }

TEST(CpuDense, EveryOpEveryDtypePairMatchesTheReference) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (BinaryOp op : kAllOps)
    for (DType ta : kAllDTypes)
      for (DType tb : kAllDTypes) {
        Dims as, bs;
        test::random_shapes(rng, &as, &bs, 600);
        const Promotion rule = rng() % 2 ? Promotion::numpy : Promotion::torch;
        HostOperand a(ta, as, Layout::random(as.size(), rng), rng);
        HostOperand b(tb, bs, Layout::random(bs.size(), rng), rng);
        Dims shape;
        try {
          shape = broadcast_shapes(as, bs);
        } catch (const InvalidArgument&) {
          continue;
        }
        const DType od = result_or(op, rule, type_of(a, rule), type_of(b, rule), ta);
        HostOperand out(od, shape, Layout::random(shape.size(), rng), rng);
        ASSERT_EQ(check(op, a, b, out, rule), "");
      }
}

// A scalar on either side, weak (a Python scalar) or typed, of every dtype a scalar takes.
TEST(CpuDense, ScalarFormsOnEitherSide) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const Scalar scalars[] = {Scalar::weak_float(0.5),  Scalar::weak_float(-3.0e38),
                            Scalar::weak_int(3),      Scalar::weak_int(-300),
                            Scalar::weak_bool(true),  Scalar::of(DType::f32, -0.0),
                            Scalar::of_int(DType::i8, -7), Scalar::of_uint(DType::u64, 1u << 31)};
  for (BinaryOp op : kAllOps)
    for (DType t : kAllDTypes)
      for (const Scalar& s : scalars)
        for (Promotion rule : {Promotion::numpy, Promotion::torch}) {
          const Dims shape{static_cast<std::int64_t>(1 + rng() % 700)};
          HostOperand x(t, shape, Layout::random(1, rng), rng);
          const DType od = result_or(op, rule, type_of(x, rule), s.type(), t);
          HostOperand out(od, shape, Layout::random(1, rng), rng);
          ASSERT_EQ(check(op, x, s, out, rule), "");
          ASSERT_EQ(check(op, s, x, out, rule), "");
        }
}

// Power by a scalar exponent with its own functor (compute.hpp's with_scalar_power: the square,
// the root and its reciprocal (SIMD lanes, cpu_power.cpp), integer exponents by chunks of 8 and
// their tails) against the reference's Pow, over float and 16-bit bases and an integer base
// under PyTorch's rule (f32 compute), strided and contiguous, with the values' zeros,
// subnormals, infinities and NaNs.
TEST(CpuDense, PowerByScalarExponents) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const double exponents[] = {2, 0.5, -0.5, 3, -2, -1, 1, 5, -3, 16, -16, 0.7};
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32})
    for (double e : exponents)
      for (int i = 0; i < 4; ++i) {
        const Promotion rule = t == DType::i32 || i % 2 ? Promotion::torch : Promotion::numpy;
        const Scalar s = e == static_cast<int>(e) ? Scalar::weak_int(static_cast<std::int64_t>(e))
                                                   : Scalar::weak_float(e);
        const Dims shape{static_cast<std::int64_t>(1 + rng() % 700)};
        const Layout layout = i < 2 ? Layout::contiguous(1) : Layout::random(1, rng);
        HostOperand x(t, shape, layout, rng);
        const DType od = result_or(BinaryOp::power, rule, type_of(x, rule), s.type(), t);
        HostOperand out(od, shape, layout, rng);
        ASSERT_EQ(check(BinaryOp::power, x, s, out, rule), "");
      }
}

// f32 ** f32 (the SIMD series of dense/cpu_power.cpp where the CPU has AVX2 and FMA, four
// lanes at a time, and ops::Pow for what it refuses) against the reference's Pow: random float
// bits, typical bases and exponents, negative bases to integers, bases near 1 to large
// exponents, the whole range of bases, and the specials; a length that leaves a tail; the
// exponent a tensor, one element broadcast, or a scalar.
TEST(CpuDense, FloatPowerOfTensors) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-140f, 1.0f, -1.0f, 0.5f};
  const Dims shape{100003};
  HostOperand a(DType::f32, shape, Layout::contiguous(1), rng);
  HostOperand b(DType::f32, shape, Layout::contiguous(1), rng);
  float* x = reinterpret_cast<float*>(a.view.data);
  float* y = reinterpret_cast<float*>(b.view.data);
  for (std::int64_t i = 0; i < shape[0]; ++i) {
    const double p = u(rng), q = u(rng);
    switch (rng() % 7) {
      case 0: {
        const auto bits = static_cast<std::uint32_t>(rng()), bits2 = static_cast<std::uint32_t>(rng());
        std::memcpy(&x[i], &bits, sizeof bits);
        std::memcpy(&y[i], &bits2, sizeof bits2);
        break;
      }
      case 1: x[i] = static_cast<float>(std::exp2(p * 60 - 30)), y[i] = static_cast<float>(q * 8 - 4); break;
      case 2: x[i] = -static_cast<float>(std::exp2(p * 20 - 10)), y[i] = std::floor(static_cast<float>(q * 40 - 20)); break;
      case 3: x[i] = static_cast<float>(1 + (p - 0.5) * 1e-3), y[i] = static_cast<float>((q - 0.5) * 2e5); break;
      case 4: x[i] = static_cast<float>(std::exp2(p * 250 - 125)), y[i] = static_cast<float>(q - 0.5); break;
      case 5: x[i] = specials[rng() % std::size(specials)], y[i] = static_cast<float>(q * 8 - 4); break;
      default: x[i] = static_cast<float>(p * 4), y[i] = specials[rng() % std::size(specials)]; break;
    }
  }
  HostOperand out(DType::f32, shape, Layout::contiguous(1), rng);
  ASSERT_EQ(check(BinaryOp::power, a, b, out, Promotion::numpy), "");
  // an exponent held along the rows: a one-element tensor broadcast, and a Python float
  HostOperand held(DType::f32, Dims{1}, Layout::contiguous(1), rng);
  for (float e : {0.7f, -1.3f, 2.5f}) {
    std::memcpy(held.view.data, &e, sizeof e);
    ASSERT_EQ(check(BinaryOp::power, a, held, out, Promotion::numpy), "") << e;
    ASSERT_EQ(check(BinaryOp::power, a, Scalar::weak_float(e), out, Promotion::numpy), "") << e;
  }
  // in place, into either operand, by a scalar integer exponent (PowSmallInt) and by a held
  // float one (the series), against the reference's answer from untouched copies
  for (int into = 0; into < 4; ++into) {
    HostOperand x(DType::f32, shape, Layout::contiguous(1), rng), y = x, want = x;
    x.buf = a.buf, y.buf = b.buf;
    x.view.data = x.buf.data(), y.view.data = y.buf.data(), want.view.data = want.buf.data();
    const Operand exponent = into == 2   ? Operand(Scalar::weak_int(-3))
                             : into == 3 ? Operand(Scalar::weak_float(0.7))
                                         : Operand(y.view);
    reference_binary(BinaryOp::power, x.view, exponent, want.view);
    binary(BinaryOp::power, x.view, exponent, into == 1 ? y.view : x.view);
    const auto& got = into == 1 ? y.buf : x.buf;
    ASSERT_EQ(std::memcmp(got.data(), want.buf.data(), got.size()), 0) << "in place " << into;
  }
}

// Outputs of every dtype same_kind allows (a rounding from a 16-bit result first), refused
// where it does not, on both sides alike.
TEST(CpuDense, OutputsOfAnotherDtype) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType t : kAllDTypes)
    for (DType od : kAllDTypes)
      for (BinaryOp op : {BinaryOp::add, BinaryOp::multiply, BinaryOp::greater, BinaryOp::divide,
                          BinaryOp::remainder}) {
        HostOperand a(t, {37, 19}, Layout::random(2, rng), rng);
        HostOperand b(t, {19}, Layout::contiguous(1), rng);
        HostOperand out(od, {37, 19}, Layout::random(2, rng), rng);
        ASSERT_EQ(check(op, a, b, out, Promotion::numpy), "");
      }
}

// Rows longer than a chunk, contiguous, strided and held on each side: the typed loops'
// branches and the chunked path's chunk edges.
TEST(CpuDense, LongRowsAndHeldOperands) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t lengths[] = {255, 256, 257, 1000, 4099};
  for (std::int64_t n : lengths)
    for (DType ta : {DType::f32, DType::f16, DType::i64, DType::u8, DType::b8})
      for (DType tb : {DType::f32, DType::bf16, DType::i32, DType::u8})
        for (BinaryOp op : {BinaryOp::add, BinaryOp::maximum, BinaryOp::less, BinaryOp::power}) {
          const Dims shapes[][2] = {{{n}, {n}}, {{n}, {1}}, {{1}, {n}}, {{3, n}, {n}}, {{n, 2}, {n, 1}}};
          for (const auto& s : shapes) {
            HostOperand a(ta, s[0], Layout::random(s[0].size(), rng), rng);
            HostOperand b(tb, s[1], Layout::random(s[1].size(), rng), rng);
            const Dims shape = broadcast_shapes(s[0], s[1]);
            const DType od = result_or(op, Promotion::numpy, type_of(a, Promotion::numpy),
                                       type_of(b, Promotion::numpy), ta);
            HostOperand out(od, shape, Layout::random(shape.size(), rng), rng);
            ASSERT_EQ(check(op, a, b, out, Promotion::numpy), "");
          }
        }
}

// Calls large enough to be split over the CPU backend's threads (parts of at least 2^18
// elements, each starting and ending inside a row): broadcasts of every rank and layout, the
// typed and chunked paths, in place. ctest also runs this with EWISE_NUM_THREADS=1 and =5
// (tests/CMakeLists.txt).
TEST(CpuDense, CallsSplitOverThreads) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const Dims shapes[][2] = {{{(1 << 19) + 3}, {(1 << 19) + 3}}, {{523, 1021}, {1021}},
                            {{521, 1}, {1, 1021}},               {{3, 401, 457}, {401, 1}},
                            {{2, 1, 37, 1, 33}, {1, 19, 1, 13, 33}}, {{1 << 19}, {1}}};
  const std::pair<DType, DType> dtypes[] = {{DType::f32, DType::f32}, {DType::f16, DType::f16},
                                            {DType::i32, DType::f32}};
  for (const auto& s : shapes)
    for (const auto& [ta, tb] : dtypes) {
      const BinaryOp op = rng() % 2 ? BinaryOp::add : BinaryOp::maximum;
      const Dims shape = broadcast_shapes(s[0], s[1]);
      HostOperand a(ta, s[0], Layout::random(s[0].size(), rng), rng);
      HostOperand b(tb, s[1], Layout::random(s[1].size(), rng), rng);
      const DType od = result_or(op, Promotion::numpy, type_of(a, Promotion::numpy),
                                 type_of(b, Promotion::numpy), ta);
      HostOperand out(od, shape, Layout::random(shape.size(), rng), rng);
      ASSERT_EQ(check(op, a, b, out, Promotion::numpy), "");
      if (s[0] == shape && od == ta) {  // in place into a
        HostOperand want(od, shape, Layout::contiguous(shape.size()), rng);
        reference_binary(op, a.view, b.view, want.view);
        binary(op, a.view, b.view, a.view);
        HostOperand got(od, shape, Layout::contiguous(shape.size()), rng);
        reference_binary(BinaryOp::maximum, a.view, a.view, got.view);  // a copy of a's values
        ASSERT_EQ(std::memcmp(got.buf.data(), want.buf.data(), got.buf.size()), 0)
            << dtype_name(ta) << " " << shape.str();
      }
    }
}

// In place: out is a (its dtype the result's, or wider), and out is b.
TEST(CpuDense, InPlace) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType t : kAllDTypes)
    for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::maximum}) {
      for (int side = 0; side < 2; ++side) {
        HostOperand x(t, {45, 33}, Layout::random(2, rng), rng);
        HostOperand y(t, {33}, Layout::contiguous(1), rng);
        const std::vector<std::byte> before = x.buf;
        // The reference's answer from an untouched copy of x.
        HostOperand want(t, {45, 33}, Layout::contiguous(2), rng);
        std::string ref_error;
        try {
          reference_binary(op, side ? Operand(y.view) : Operand(x.view),
                           side ? Operand(x.view) : Operand(y.view), want.view);
        } catch (const InvalidArgument& e) {
          ref_error = e.what();
        }
        std::string cpu_error;
        try {
          binary(op, side ? Operand(y.view) : Operand(x.view), side ? Operand(x.view) : Operand(y.view),
                 x.view);
        } catch (const InvalidArgument& e) {
          cpu_error = e.what();
        }
        ASSERT_EQ(ref_error.empty(), cpu_error.empty()) << op_name(op) << " " << dtype_name(t);
        if (!ref_error.empty()) {
          ASSERT_EQ(x.buf, before);  // refused: nothing written
          continue;
        }
        HostOperand got(t, {45, 33}, Layout::contiguous(2), rng);
        reference_binary(BinaryOp::maximum, x.view, x.view, got.view);  // a copy of x's values
        ASSERT_EQ(std::memcmp(got.buf.data(), want.buf.data(), got.buf.size()), 0)
            << op_name(op) << " " << dtype_name(t) << " side " << side;
      }
    }
}

// Every f16 and bf16 pattern (subnormals, infinities, NaNs of every payload) through the
// 16-bit loads and stores (F16C where the CPU has it), rows long enough for the vector loops.
TEST(CpuDense, EveryHalfPattern) {
  std::mt19937_64 rng(3);
  for (DType t : {DType::f16, DType::bf16}) {
    HostOperand a(t, {65536}, Layout::contiguous(1), rng);
    for (std::uint32_t i = 0; i < 65536; ++i) {
      const auto bits = static_cast<std::uint16_t>(i);
      std::memcpy(a.buf.data() + 2 * i, &bits, 2);
    }
    for (DType tb : {t, DType::f32})
      for (BinaryOp op : {BinaryOp::add, BinaryOp::multiply, BinaryOp::divide}) {
        HostOperand b(tb, {1}, Layout::contiguous(1), rng);
        for (DType od : {t, DType::f32, DType::f64}) {
          HostOperand out(od, {65536}, Layout::contiguous(1), rng);
          ASSERT_EQ(check(op, a, b, out, Promotion::numpy), "");
          ASSERT_EQ(check(op, b, a, out, Promotion::torch), "");
        }
      }
  }
}

TEST(CpuDense, EmptyTensorsWriteNothing) {
  std::mt19937_64 rng(1);
  for (const Dims& shape : {Dims{0}, Dims{3, 0}, Dims{0, 5, 2}}) {
    HostOperand a(DType::f32, shape, Layout::contiguous(shape.size()), rng);
    HostOperand b(DType::i8, {1}, Layout::contiguous(1), rng);
    HostOperand out(DType::f32, shape, Layout::contiguous(shape.size(), 1), rng);
    ASSERT_EQ(check(BinaryOp::add, a, b, out, Promotion::numpy), "");
  }
}

}  // namespace
}  // namespace ewise
