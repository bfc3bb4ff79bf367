// Host tests of the promotion rules (ewise/promotion.hpp) against NumPy 2's and PyTorch's tables,
// of the casts an output allows, of scalar operands, and of the operations' semantics on edge
// values through the CPU reference (ewise/reference.hpp), bit for bit.
//
// The frameworks' tables are fuzz/promotion_tables.hpp (shared with the api fuzz oracle).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/tensor.hpp"
#include "promotion_tables.hpp"
#include "testing/expect_invalid.hpp"

namespace ewise {
namespace {

using test::expect_invalid;
using namespace tables;

// ---- the tables --------------------------------------------------------------------------------

constexpr OperandType tensor(DType t) { return {t, Weight::tensor}; }
constexpr OperandType zero_dim(DType t) { return {t, Weight::zero_dim}; }
constexpr OperandType weak(DType t) { return {t, Weight::weak}; }

std::string pair_str(DType a, DType b) {
  return std::string(dtype_name(a)) + " with " + dtype_name(b);
}

// ---- NumPy 2 --------------------------------------------------------------------------------

TEST(Promotion, NumpyArraysEveryPair) {
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 13; ++j) {
      const DType a = kNumpyOrder[i], b = kNumpyOrder[j], want = parse_dtype(kNumpyAdd[i][j]);
      EXPECT_EQ(result_type(Promotion::numpy, tensor(a), tensor(b)), want) << pair_str(a, b);
      // NumPy 2 ranks 0-d arrays and NumPy scalars with arrays (NEP 50: only Python scalars are
      // weak).
      EXPECT_EQ(result_type(Promotion::numpy, zero_dim(a), tensor(b)), want) << pair_str(a, b);
      EXPECT_EQ(result_type(Promotion::numpy, tensor(a), zero_dim(b)), want) << pair_str(a, b);
      EXPECT_EQ(result_type(Promotion::numpy, Scalar::of_int(a, 1).type(), tensor(b)), want)
          << pair_str(a, b);
    }
}

TEST(Promotion, NumpyPythonScalarsAreWeak) {
  for (int j = 0; j < 13; ++j) {
    const DType t = kNumpyOrder[j];
    EXPECT_EQ(result_type(Promotion::numpy, tensor(t), weak(DType::i64)),
              parse_dtype(kNumpyWeakInt[j]))
        << dtype_name(t) << " + int";
    EXPECT_EQ(result_type(Promotion::numpy, weak(DType::f64), tensor(t)),
              parse_dtype(kNumpyWeakFloat[j]))
        << "float + " << dtype_name(t);
    EXPECT_EQ(result_type(Promotion::numpy, tensor(t), Scalar::weak_bool(true).type()),
              parse_dtype(kNumpyWeakBool[j]))
        << dtype_name(t) << " + bool";
    EXPECT_EQ(Scalar::weak_int(-3).type().weight, Weight::weak);
  }
  // Two Python scalars: no tensor to take a dtype from.
  expect_invalid([] { result_type(Promotion::numpy, weak(DType::i64), weak(DType::f64)); },
                 {"two Python scalars"});
  // A Python scalar's dtype is bool, i64 or f64.
  expect_invalid([] { result_type(Promotion::numpy, weak(DType::i8), tensor(DType::f32)); },
                 {"i8"});
}

TEST(Promotion, NumpyOpTypes) {
  const auto types = [](BinaryOp op, DType a, DType b) {
    return op_types(op, Promotion::numpy, tensor(a), tensor(b));
  };
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 13; ++j) {
      const DType a = kNumpyOrder[i], b = kNumpyOrder[j], common = parse_dtype(kNumpyAdd[i][j]);
      const std::string what = pair_str(a, b);
      const bool floating = is_floating(common), boolean = common == DType::b8;
      for (BinaryOp op : kAllOps) {
        const std::string ctx = std::string(op_name(op)) + " " + what;
        switch (op_family(op)) {
          case OpFamily::divide: {
            const DType want = floating ? common : DType::f64;  // true division
            const OpTypes t = types(op, a, b);
            EXPECT_EQ(t.compute, want) << ctx;
            EXPECT_EQ(t.result, want) << ctx;
            break;
          }
          case OpFamily::comparison: {
            const OpTypes t = types(op, a, b);
            EXPECT_EQ(t.compute, common) << ctx;
            EXPECT_EQ(t.result, DType::b8) << ctx;
            break;
          }
          case OpFamily::logical: {
            const OpTypes t = types(op, a, b);
            EXPECT_EQ(t.compute, DType::b8) << ctx;
            EXPECT_EQ(t.result, DType::b8) << ctx;
            break;
          }
          case OpFamily::bitwise:
            if (floating) {
              expect_invalid([&] { types(op, a, b); },
                             {op_name(op), dtype_name(a), dtype_name(b)}, ctx);
            } else {
              EXPECT_EQ(types(op, a, b).result, common) << ctx;
            }
            break;
          case OpFamily::arithmetic:
            if (boolean && op == BinaryOp::subtract) {
              expect_invalid([&] { types(op, a, b); }, {"subtract", "bool"}, ctx);
            } else if (boolean && (op == BinaryOp::floor_divide ||
                                   op == BinaryOp::remainder || op == BinaryOp::power)) {
              EXPECT_EQ(types(op, a, b).result, DType::i8) << ctx;  // NumPy's next loop
              EXPECT_EQ(types(op, a, b).compute, DType::i8) << ctx;
            } else {
              EXPECT_EQ(types(op, a, b).result, common) << ctx;
              EXPECT_EQ(types(op, a, b).compute, common) << ctx;
            }
            break;
        }
      }
    }
}

TEST(Promotion, SameKindCasts) {
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 13; ++j) {
      const char c = kNumpySameKind[i][j];
      EXPECT_EQ(can_cast_same_kind(kNumpyOrder[i], kNumpyOrder[j]), c != '.')
          << dtype_name(kNumpyOrder[i]) << " to " << dtype_name(kNumpyOrder[j]);
    }
}

// ---- PyTorch ----------------------------------------------------------------------------------

TEST(Promotion, TorchTensorsEveryPair) {
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j) {
      const DType a = kTorchOrder[i], b = kTorchOrder[j];
      EXPECT_EQ(result_type(Promotion::torch, tensor(a), tensor(b)),
                parse_dtype(kTorchPromote[i][j]))
          << pair_str(a, b);
    }
  // u16, u32 and u64: with themselves; with a floating dtype, that dtype; refused otherwise.
  const auto promoted = [](DType a, DType b) -> std::string {
    try {
      return dtype_name(result_type(Promotion::torch, tensor(a), tensor(b)));
    } catch (const InvalidArgument& e) {
      return std::string("refused: ") + e.what();
    }
  };
  for (DType u : {DType::u16, DType::u32, DType::u64})
    for (DType t : kAllDTypes) {
      if (t == u || is_floating(t)) {
        EXPECT_EQ(promoted(u, t), dtype_name(t)) << pair_str(u, t);
        EXPECT_EQ(promoted(t, u), dtype_name(t)) << pair_str(t, u);
      } else {
        expect_invalid([&] { result_type(Promotion::torch, tensor(u), tensor(t)); },
                       {dtype_name(u), dtype_name(t)}, pair_str(u, t));
      }
    }
}

TEST(Promotion, TorchZeroDimAndScalarsCountOnlyOfAHigherKind) {
  const auto rt = [](OperandType a, OperandType b) {
    return result_type(Promotion::torch, a, b);
  };
  // torch's documented examples (tensor_attributes.rst, "Type promotion").
  EXPECT_EQ(rt(tensor(DType::i32), weak(DType::i64)), DType::i32);       // int_tensor + 5
  EXPECT_EQ(rt(tensor(DType::i32), zero_dim(DType::i64)), DType::i32);   // + long_zerodim
  EXPECT_EQ(rt(tensor(DType::i64), tensor(DType::i32)), DType::i64);
  EXPECT_EQ(rt(tensor(DType::b8), tensor(DType::i64)), DType::i64);
  EXPECT_EQ(rt(tensor(DType::b8), tensor(DType::u8)), DType::u8);
  EXPECT_EQ(rt(tensor(DType::i64), tensor(DType::f32)), DType::f32);
  // A Python float is the default dtype f32 when it counts; a 0-d tensor its own dtype.
  EXPECT_EQ(rt(tensor(DType::i32), weak(DType::f64)), DType::f32);
  EXPECT_EQ(rt(tensor(DType::u8), weak(DType::f64)), DType::f32);
  EXPECT_EQ(rt(tensor(DType::f16), weak(DType::f64)), DType::f16);
  EXPECT_EQ(rt(tensor(DType::bf16), weak(DType::f64)), DType::bf16);
  EXPECT_EQ(rt(tensor(DType::i32), zero_dim(DType::f64)), DType::f64);
  EXPECT_EQ(rt(tensor(DType::f16), zero_dim(DType::f64)), DType::f16);
  EXPECT_EQ(rt(tensor(DType::u8), zero_dim(DType::i64)), DType::u8);
  EXPECT_EQ(rt(tensor(DType::i8), weak(DType::i64)), DType::i8);
  EXPECT_EQ(rt(tensor(DType::u16), weak(DType::i64)), DType::u16);
  // bool tensors take an integer scalar's kind: Python int as i64, a 0-d tensor as itself.
  EXPECT_EQ(rt(tensor(DType::b8), weak(DType::i64)), DType::i64);
  EXPECT_EQ(rt(tensor(DType::b8), zero_dim(DType::i16)), DType::i16);
  EXPECT_EQ(rt(tensor(DType::b8), weak(DType::f64)), DType::f32);
  EXPECT_EQ(rt(tensor(DType::i32), Scalar::weak_bool(true).type()), DType::i32);
  // Without a tensor with dims, 0-d tensors promote among themselves, above Python scalars.
  EXPECT_EQ(rt(zero_dim(DType::i16), zero_dim(DType::u8)), DType::i16);
  EXPECT_EQ(rt(zero_dim(DType::i16), weak(DType::f64)), DType::f32);
  EXPECT_EQ(rt(zero_dim(DType::f16), weak(DType::i64)), DType::f16);
  // op_types: divide on integers gives the default dtype f32.
  const OpTypes d = op_types(BinaryOp::divide, Promotion::torch, tensor(DType::i64),
                             tensor(DType::i64));
  EXPECT_EQ(d.compute, DType::f32);
  EXPECT_EQ(d.result, DType::f32);
  EXPECT_EQ(op_types(BinaryOp::divide, Promotion::torch, tensor(DType::f16), weak(DType::i64))
                .result,
            DType::f16);
}

// ---- Scalar ---------------------------------------------------------------------------------

TEST(Scalar, ConstructionAndRange) {
  const Scalar f = Scalar::weak_float(2.5);
  EXPECT_TRUE(f.weak());
  EXPECT_EQ(f.dtype(), DType::f64);
  EXPECT_EQ(f.as_double(), 2.5);
  EXPECT_EQ(f.str(), "2.5 (Python float)");
  const Scalar i = Scalar::weak_int(-7);
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(i.as_int(), -7);
  EXPECT_EQ(i.type().weight, Weight::weak);
  EXPECT_EQ(Scalar::weak_bool(true).dtype(), DType::b8);
  EXPECT_EQ(Scalar::weak_bool(true).as_int(), 1);
  const Scalar t = Scalar::of_int(DType::i32, 3);
  EXPECT_FALSE(t.weak());
  EXPECT_EQ(t.type().weight, Weight::zero_dim);
  EXPECT_EQ(t.str(), "3 (i32)");
  // Floats are rounded to the dtype once, to nearest-even.
  EXPECT_EQ(Scalar::of(DType::f32, 0.1).as_double(), static_cast<double>(0.1f));
  EXPECT_EQ(Scalar::of(DType::f16, 1.0 + 0x1p-11).as_double(), 1.0);  // a tie: to even
  EXPECT_EQ(Scalar::of(DType::f16, 1.0 + 0x1p-11 + 0x1p-30).as_double(), 1.0 + 0x1p-10);
  EXPECT_EQ(Scalar::of(DType::bf16, 65504.0).as_double(), 65536.0);
  EXPECT_EQ(Scalar::of(DType::f16, 1e6).as_double(), INFINITY);
  // Integer dtypes hold their whole range exactly, and nothing else.
  EXPECT_EQ(Scalar::of_uint(DType::u64, UINT64_MAX).as_uint(), UINT64_MAX);
  EXPECT_EQ(Scalar::of_int(DType::i64, INT64_MIN).as_int(), INT64_MIN);
  EXPECT_EQ(Scalar::of_int(DType::i8, -128).as_int(), -128);
  EXPECT_EQ(Scalar::of(DType::u8, 255.0).as_uint(), 255u);
  EXPECT_EQ(Scalar::of_int(DType::b8, 1).as_int(), 1);
  expect_invalid([] { Scalar::of_int(DType::i8, 128); }, {"128", "i8"});
  expect_invalid([] { Scalar::of_int(DType::i8, -129); }, {"-129", "i8"});
  expect_invalid([] { Scalar::of_int(DType::u8, 256); }, {"256", "u8"});
  expect_invalid([] { Scalar::of_int(DType::u32, -1); }, {"-1", "u32"});
  expect_invalid([] { Scalar::of_int(DType::b8, 2); }, {"2", "bool"});
  expect_invalid([] { Scalar::of_uint(DType::i64, std::uint64_t{1} << 63); }, {"i64"});
  expect_invalid([] { Scalar::of_uint(DType::u16, 65536); }, {"65536", "u16"});
  expect_invalid([] { Scalar::of(DType::i32, 2.5); }, {"i32", "integral"});
  expect_invalid([] { Scalar::of(DType::i64, NAN); }, {"i64"});
  expect_invalid([] { Scalar::of(DType::i64, 9223372036854775808.0); }, {"i64"});
  expect_invalid([] { Scalar::of(DType::u64, -1.0); }, {"u64"});
}

// ---- operations on edge values, through the CPU reference -----------------------------------

/// One element of any dtype, as its stored bits (little-endian, in the low bytes).
struct Elem {
  DType dtype;
  std::uint64_t bits = 0;
};

template <class T>
std::uint64_t bits_of(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}
Elem f64(double v) { return {DType::f64, bits_of(v)}; }
Elem f32(float v) { return {DType::f32, bits_of(v)}; }
Elem f16(float v) { return {DType::f16, float_to_f16_bits(v)}; }
Elem bf16(float v) { return {DType::bf16, float_to_bf16_bits(v)}; }
Elem b8(bool v) { return {DType::b8, v}; }
Elem i8(std::int8_t v) { return {DType::i8, bits_of(v)}; }
Elem u8(std::uint8_t v) { return {DType::u8, v}; }
Elem i16(std::int16_t v) { return {DType::i16, bits_of(v)}; }
Elem u16(std::uint16_t v) { return {DType::u16, v}; }
Elem i32(std::int32_t v) { return {DType::i32, bits_of(v)}; }
Elem u32(std::uint32_t v) { return {DType::u32, v}; }
Elem i64(std::int64_t v) { return {DType::i64, bits_of(v)}; }
Elem u64(std::uint64_t v) { return {DType::u64, v}; }

std::string elem_str(const Elem& e) {
  return detail::concat(dtype_name(e.dtype), " 0x", std::hex, e.bits);
}

/// op(a, b) of rank-0 host views into an output of dtype `out` (the result dtype by default).
Elem run(BinaryOp op, const Operand& a, const Operand& b, DType out,
         Promotion rule = Promotion::numpy) {
  Elem r{out, 0};
  reference_binary(op, a, b, TensorView{&r.bits, TensorDesc::contiguous(out, {}), Memory::host},
                   rule);
  return r;
}
ConstTensorView view(const Elem& e) {
  return {&e.bits, TensorDesc::contiguous(e.dtype, {}), Memory::host};
}
Elem run(BinaryOp op, const Elem& a, const Elem& b, Promotion rule = Promotion::numpy) {
  const DType out = op_types(op, rule, tensor(a.dtype), tensor(b.dtype)).result;
  return run(op, view(a), view(b), out, rule);
}

::testing::AssertionResult same_elem(const Elem& got, const Elem& want) {
  if (got.dtype == want.dtype && got.bits == want.bits) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << elem_str(got) << ", want " << elem_str(want);
}
/// Bit for bit, dtype included; streams more context like EXPECT_TRUE.
#define EXPECT_ELEM(got, want) EXPECT_TRUE(same_elem((got), (want))) << #got

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The canonical NaN of a floating dtype (ops.hpp).
Elem nan_of(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return {t, 0x7FFF};
    case DType::f32: return {t, 0x7FFFFFFF};
    default: return {t, 0x7FFFFFFFFFFFFFFF};
  }
}

TEST(OpSemantics, IntegersWrap) {
  using L8 = std::numeric_limits<std::int8_t>;
  using L64 = std::numeric_limits<std::int64_t>;
  EXPECT_ELEM(run(BinaryOp::add, i8(L8::max()), i8(1)), i8(L8::min()));
  EXPECT_ELEM(run(BinaryOp::add, u8(255), u8(1)), u8(0));
  EXPECT_ELEM(run(BinaryOp::subtract, u32(0), u32(1)), u32(UINT32_MAX));
  EXPECT_ELEM(run(BinaryOp::subtract, i16(-32768), i16(1)), i16(32767));
  EXPECT_ELEM(run(BinaryOp::multiply, i32(65536), i32(65536)), i32(0));
  EXPECT_ELEM(run(BinaryOp::multiply, u16(300), u16(300)), u16(static_cast<std::uint16_t>(90000)));
  EXPECT_ELEM(run(BinaryOp::add, i64(L64::max()), i64(1)), i64(L64::min()));
  EXPECT_ELEM(run(BinaryOp::add, u64(UINT64_MAX), u64(2)), u64(1));
  // Mixed: i8 + u8 computes in i16, so no wrap at 8 bits.
  EXPECT_ELEM(run(BinaryOp::add, i8(127), u8(255)), i16(382));
  // bool: add is or, multiply is and.
  EXPECT_ELEM(run(BinaryOp::add, b8(true), b8(true)), b8(true));
  EXPECT_ELEM(run(BinaryOp::multiply, b8(true), b8(false)), b8(false));
}

TEST(OpSemantics, IntegerFloorDivideAndRemainder) {
  EXPECT_ELEM(run(BinaryOp::floor_divide, i32(-7), i32(2)), i32(-4));
  EXPECT_ELEM(run(BinaryOp::floor_divide, i32(7), i32(-2)), i32(-4));
  EXPECT_ELEM(run(BinaryOp::floor_divide, i32(-7), i32(-2)), i32(3));
  EXPECT_ELEM(run(BinaryOp::floor_divide, i32(-8), i32(2)), i32(-4));
  EXPECT_ELEM(run(BinaryOp::remainder, i32(-7), i32(2)), i32(1));
  EXPECT_ELEM(run(BinaryOp::remainder, i32(7), i32(-2)), i32(-1));
  EXPECT_ELEM(run(BinaryOp::remainder, i32(-7), i32(-2)), i32(-1));
  EXPECT_ELEM(run(BinaryOp::remainder, i64(-8), i64(2)), i64(0));
  // x // 0 and x % 0 are 0 (NumPy warns and gives 0).
  EXPECT_ELEM(run(BinaryOp::floor_divide, i32(7), i32(0)), i32(0));
  EXPECT_ELEM(run(BinaryOp::floor_divide, u8(7), u8(0)), u8(0));
  EXPECT_ELEM(run(BinaryOp::remainder, i64(-7), i64(0)), i64(0));
  EXPECT_ELEM(run(BinaryOp::remainder, u16(7), u16(0)), u16(0));
  // MIN // -1 wraps to MIN; MIN % -1 is 0.
  EXPECT_ELEM(run(BinaryOp::floor_divide, i8(-128), i8(-1)), i8(-128));
  EXPECT_ELEM(run(BinaryOp::floor_divide, i64(INT64_MIN), i64(-1)), i64(INT64_MIN));
  EXPECT_ELEM(run(BinaryOp::remainder, i32(INT32_MIN), i32(-1)), i32(0));
  EXPECT_ELEM(run(BinaryOp::remainder, i16(-32768), i16(-1)), i16(0));
  // Unsigned.
  EXPECT_ELEM(run(BinaryOp::floor_divide, u64(UINT64_MAX), u64(2)), u64(UINT64_MAX / 2));
  EXPECT_ELEM(run(BinaryOp::remainder, u32(UINT32_MAX), u32(10)), u32(UINT32_MAX % 10));
  // Mixed signed and unsigned: in the common type (i16 for i8 and u8).
  EXPECT_ELEM(run(BinaryOp::floor_divide, i8(-7), u8(200)), i16(-1));
  EXPECT_ELEM(run(BinaryOp::remainder, i8(-7), u8(200)), i16(193));
  // bool computes in i8 (NumPy has no bool loop for these).
  EXPECT_ELEM(run(BinaryOp::floor_divide, b8(true), b8(true)), i8(1));
  EXPECT_ELEM(run(BinaryOp::floor_divide, b8(true), b8(false)), i8(0));
  EXPECT_ELEM(run(BinaryOp::remainder, b8(true), b8(false)), i8(0));
}

TEST(OpSemantics, FloatFloorDivideAndRemainder) {
  // npy_divmod: the floored quotient and a remainder with the divisor's sign.
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(-7.5), f64(2)), f64(-4));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(7.5), f64(-2)), f64(-4));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(-7.5), f64(2)), f64(0.5));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(7.5), f64(-2)), f64(-0.5));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f32(1), f32(0.1f)), f32(9));  // 0.1f > 1/10
  // x // 0 is x / 0; x % 0 is NaN.
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(1), f64(0)), f64(kInf));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(-1), f64(0)), f64(-kInf));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(0), f64(0)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(1), f64(0)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::remainder, f32(-1), f32(-0.0f)), nan_of(DType::f32));
  // Signed zeros: a zero remainder takes the divisor's sign; a zero quotient the true quotient's.
  EXPECT_ELEM(run(BinaryOp::remainder, f64(4), f64(-2)), f64(-0.0));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(-4), f64(2)), f64(0.0));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(-0.0), f64(1)), f64(0.0));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(-0.0), f64(1)), f64(-0.0));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(0.0), f64(-1)), f64(-0.0));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(1), f64(-kInf)), f64(-1));
  // Infinities and NaN.
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(kInf), f64(2)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(kInf), f64(2)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(2), f64(kInf)), f64(2));
  EXPECT_ELEM(run(BinaryOp::remainder, f64(-2), f64(kInf)), f64(kInf));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f64(-2), f64(kInf)), f64(-1));
  EXPECT_ELEM(run(BinaryOp::floor_divide, f32(kNaN), f32(2)), nan_of(DType::f32));
  EXPECT_ELEM(run(BinaryOp::remainder, f16(3), f16(kNaN)), nan_of(DType::f16));
  // 16-bit: computed in f32 and rounded once.
  EXPECT_ELEM(run(BinaryOp::remainder, f16(-7.5f), f16(2)), f16(0.5f));
  EXPECT_ELEM(run(BinaryOp::floor_divide, bf16(-7.5f), bf16(2)), bf16(-4));
}

TEST(OpSemantics, TrueDivide) {
  EXPECT_ELEM(run(BinaryOp::divide, i32(7), i32(2)), f64(3.5));
  EXPECT_ELEM(run(BinaryOp::divide, i32(1), i32(0)), f64(kInf));
  EXPECT_ELEM(run(BinaryOp::divide, i64(-1), i64(0)), f64(-kInf));
  EXPECT_ELEM(run(BinaryOp::divide, u8(0), u8(0)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::divide, b8(true), b8(false)), f64(kInf));
  EXPECT_ELEM(run(BinaryOp::divide, i64((std::int64_t{1} << 53) + 1), i64(1)),
              f64(9007199254740992.0));  // the operand rounds to f64 first
  EXPECT_ELEM(run(BinaryOp::divide, i8(1), f16(3)), f16(1.0f / 3));
  EXPECT_ELEM(run(BinaryOp::divide, f16(1), f32(3)), f32(1.0f / 3));
  // PyTorch's rule: integers divide into the default dtype f32.
  EXPECT_ELEM(run(BinaryOp::divide, i32(1), i32(3), Promotion::torch), f32(1.0f / 3));
}

TEST(OpSemantics, Power) {
  EXPECT_ELEM(run(BinaryOp::power, i32(2), i32(10)), i32(1024));
  EXPECT_ELEM(run(BinaryOp::power, i8(2), i8(7)), i8(-128));  // wraps
  EXPECT_ELEM(run(BinaryOp::power, u8(3), u8(5)), u8(243));
  EXPECT_ELEM(run(BinaryOp::power, u8(3), u8(6)), u8(static_cast<std::uint8_t>(729)));
  EXPECT_ELEM(run(BinaryOp::power, i64(3), i64(40)),
              i64(static_cast<std::int64_t>(12157665459056928801ull)));
  EXPECT_ELEM(run(BinaryOp::power, i32(0), i32(0)), i32(1));
  // Negative integer exponents (an error in NumPy): PyTorch's answers.
  EXPECT_ELEM(run(BinaryOp::power, i32(2), i32(-1)), i32(0));
  EXPECT_ELEM(run(BinaryOp::power, i32(1), i32(-5)), i32(1));
  EXPECT_ELEM(run(BinaryOp::power, i32(-1), i32(-3)), i32(-1));
  EXPECT_ELEM(run(BinaryOp::power, i16(-1), i16(-2)), i16(1));
  EXPECT_ELEM(run(BinaryOp::power, i64(0), i64(-1)), i64(0));
  // bool computes in i8.
  EXPECT_ELEM(run(BinaryOp::power, b8(false), b8(false)), i8(1));
  // Floats: pow in f64, rounded once.
  EXPECT_ELEM(run(BinaryOp::power, f64(2), f64(-2)), f64(0.25));
  EXPECT_ELEM(run(BinaryOp::power, f32(2), f32(0.5f)), f32(static_cast<float>(std::sqrt(2.0))));
  EXPECT_ELEM(run(BinaryOp::power, f64(kNaN), f64(0)), f64(1));
  EXPECT_ELEM(run(BinaryOp::power, f64(1), f64(kNaN)), f64(1));
  EXPECT_ELEM(run(BinaryOp::power, f64(-8), f64(1.0 / 3)), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::power, f16(2), f16(16)), f16(65536.0f));  // overflows f16: inf
  EXPECT_ELEM(run(BinaryOp::power, i32(2), f32(0.5f)), f64(std::sqrt(2.0)));
}

TEST(OpSemantics, MinimumMaximumFminFmax) {
  const DType t = DType::f64;
  for (BinaryOp op : {BinaryOp::minimum, BinaryOp::maximum}) {
    EXPECT_ELEM(run(op, f64(kNaN), f64(1)), nan_of(t)) << op_name(op);
    EXPECT_ELEM(run(op, f64(1), f64(-kNaN)), nan_of(t)) << op_name(op);
    EXPECT_ELEM(run(op, f32(kNaN), f32(kNaN)), nan_of(DType::f32)) << op_name(op);
    // Operands that compare equal give a.
    EXPECT_ELEM(run(op, f64(-0.0), f64(0.0)), f64(-0.0)) << op_name(op);
    EXPECT_ELEM(run(op, f64(0.0), f64(-0.0)), f64(0.0)) << op_name(op);
  }
  EXPECT_ELEM(run(BinaryOp::minimum, f64(-2), f64(3)), f64(-2));
  EXPECT_ELEM(run(BinaryOp::maximum, f64(-2), f64(3)), f64(3));
  EXPECT_ELEM(run(BinaryOp::minimum, i8(-1), u8(255)), i16(-1));
  EXPECT_ELEM(run(BinaryOp::maximum, b8(false), b8(true)), b8(true));
  for (BinaryOp op : {BinaryOp::fmin, BinaryOp::fmax}) {
    EXPECT_ELEM(run(op, f64(kNaN), f64(1)), f64(1)) << op_name(op);
    EXPECT_ELEM(run(op, f64(1), f64(kNaN)), f64(1)) << op_name(op);
    EXPECT_ELEM(run(op, f16(kNaN), f16(kNaN)), nan_of(DType::f16)) << op_name(op);
    EXPECT_ELEM(run(op, f64(-0.0), f64(0.0)), f64(-0.0)) << op_name(op);
    EXPECT_ELEM(run(op, f64(0.0), f64(-0.0)), f64(0.0)) << op_name(op);
  }
  EXPECT_ELEM(run(BinaryOp::fmin, f32(-kInf), f32(kNaN)), f32(-kInf));
  EXPECT_ELEM(run(BinaryOp::fmax, f32(2), f32(3)), f32(3));
}

TEST(OpSemantics, ComparisonsAndNaN) {
  const Elem nan = f64(kNaN), one = f64(1);
  EXPECT_ELEM(run(BinaryOp::equal, nan, nan), b8(false));
  EXPECT_ELEM(run(BinaryOp::not_equal, nan, nan), b8(true));
  for (BinaryOp op : {BinaryOp::less, BinaryOp::less_equal, BinaryOp::greater,
                      BinaryOp::greater_equal}) {
    EXPECT_ELEM(run(op, nan, one), b8(false)) << op_name(op);
    EXPECT_ELEM(run(op, one, nan), b8(false)) << op_name(op);
  }
  EXPECT_ELEM(run(BinaryOp::equal, f64(-0.0), f64(0.0)), b8(true));
  EXPECT_ELEM(run(BinaryOp::less_equal, f16(1), f32(1)), b8(true));
  // In the common type: i64 2^53 + 1 and f64 2^53 compare in f64, where they are equal.
  EXPECT_ELEM(run(BinaryOp::equal, i64((std::int64_t{1} << 53) + 1), f64(9007199254740992.0)),
              b8(true));
  // A signed integer with u64 compares exactly, as NumPy 2 does (in their common dtype f64,
  // 2^63 - 1 and 2^63 would be equal); PyTorch has no u64 with a signed integer. i8 with u8
  // compares in i16.
  const std::uint64_t two63 = std::uint64_t{1} << 63;
  EXPECT_ELEM(run(BinaryOp::greater, u64(UINT64_MAX), i64(-1)), b8(true));
  EXPECT_ELEM(run(BinaryOp::equal, i64(INT64_MAX), u64(two63)), b8(false));
  EXPECT_ELEM(run(BinaryOp::less, i64(INT64_MAX), u64(two63)), b8(true));
  EXPECT_ELEM(run(BinaryOp::greater_equal, u64(two63), i64(INT64_MAX)), b8(true));
  EXPECT_ELEM(run(BinaryOp::not_equal, u64((std::uint64_t{1} << 53) + 1),
                  i64(std::int64_t{1} << 53)),
              b8(true));
  EXPECT_ELEM(run(BinaryOp::less_equal, i64(INT64_MIN), u64(0)), b8(true));
  EXPECT_ELEM(run(BinaryOp::equal, i32(-1), u64(UINT64_MAX)), b8(false));
  EXPECT_ELEM(run(BinaryOp::less, i8(-1), u8(255)), b8(true));
  EXPECT_ELEM(run(BinaryOp::greater, b8(true), b8(false)), b8(true));
  // A typed scalar (a NumPy scalar from C++) compares exactly too, on either side: the same
  // result as the 0-d tensor of its dtype, whether or not the tensor's kind holds its value.
  EXPECT_ELEM(run(BinaryOp::less, view(i64(INT64_MAX)), Scalar::of_uint(DType::u64, two63), DType::b8),
              b8(true));
  EXPECT_ELEM(run(BinaryOp::equal, Scalar::of_int(DType::i64, -1), view(u64(UINT64_MAX)), DType::b8),
              b8(false));
  const BinaryOp comparisons[] = {BinaryOp::equal, BinaryOp::not_equal, BinaryOp::less,
                                  BinaryOp::less_equal, BinaryOp::greater, BinaryOp::greater_equal};
  const Elem signed_values[] = {i64(INT64_MIN), i64(-1), i64(0), i64(1), i64(INT64_MAX), i32(-5), i8(7)};
  const Elem unsigned_values[] = {u64(0), u64(1), u64(INT64_MAX), u64(two63), u64(UINT64_MAX)};
  for (const BinaryOp op : comparisons)
    for (const Elem& x : signed_values)
      for (const Elem& u : unsigned_values) {
        const Scalar su = Scalar::of_uint(DType::u64, u.bits);
        const Scalar sx = x.dtype == DType::i64 ? Scalar::of_int(DType::i64, static_cast<std::int64_t>(x.bits))
                                                : Scalar::of_int(x.dtype, x.dtype == DType::i32 ? -5 : 7);
        EXPECT_ELEM(run(op, view(x), su, DType::b8), run(op, x, u)) << op_name(op) << " " << elem_str(x) << " " << elem_str(u);
        EXPECT_ELEM(run(op, su, view(x), DType::b8), run(op, u, x)) << op_name(op) << " " << elem_str(x) << " " << elem_str(u);
        EXPECT_ELEM(run(op, view(u), sx, DType::b8), run(op, u, x)) << op_name(op) << " " << elem_str(x) << " " << elem_str(u);
        EXPECT_ELEM(run(op, sx, view(u), DType::b8), run(op, x, u)) << op_name(op) << " " << elem_str(x) << " " << elem_str(u);
      }
}

TEST(OpSemantics, LogicalAndBitwise) {
  // Truth: nonzero, NaN included; -0 is false.
  EXPECT_ELEM(run(BinaryOp::logical_and, f64(kNaN), f64(1)), b8(true));
  EXPECT_ELEM(run(BinaryOp::logical_or, f64(0.0), f64(-0.0)), b8(false));
  EXPECT_ELEM(run(BinaryOp::logical_xor, f32(kNaN), f32(0)), b8(true));
  EXPECT_ELEM(run(BinaryOp::logical_and, i32(2), u8(0)), b8(false));
  EXPECT_ELEM(run(BinaryOp::logical_or, i64(INT64_MIN), b8(false)), b8(true));
  EXPECT_ELEM(run(BinaryOp::logical_xor, bf16(0.5f), i8(-1)), b8(false));
  // Bitwise in the common type.
  EXPECT_ELEM(run(BinaryOp::bitwise_and, i8(-1), u8(255)), i16(255));
  EXPECT_ELEM(run(BinaryOp::bitwise_or, i32(0x0F0), i32(0x00F)), i32(0x0FF));
  EXPECT_ELEM(run(BinaryOp::bitwise_xor, u64(UINT64_MAX), u64(1)), u64(UINT64_MAX - 1));
  EXPECT_ELEM(run(BinaryOp::bitwise_xor, b8(true), b8(true)), b8(false));
  EXPECT_ELEM(run(BinaryOp::bitwise_and, b8(true), i16(3)), i16(1));
}

TEST(OpSemantics, NaNOperandsLeaveAsTheCanonicalNaN) {
  // Negative NaNs with payloads, of every floating dtype, mixed with other dtypes.
  const Elem neg_f64{DType::f64, 0xFFF0000000000123ull}, neg_f32{DType::f32, 0xFF800042u},
      neg_f16{DType::f16, 0xFC01u}, neg_bf16{DType::bf16, 0xFF81u};
  for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide,
                      BinaryOp::minimum, BinaryOp::maximum, BinaryOp::floor_divide,
                      BinaryOp::remainder}) {
    EXPECT_ELEM(run(op, neg_f64, f64(2)), nan_of(DType::f64)) << op_name(op);
    EXPECT_ELEM(run(op, f32(2), neg_f32), nan_of(DType::f32)) << op_name(op);
    EXPECT_ELEM(run(op, neg_f16, i8(3)), nan_of(DType::f16)) << op_name(op);
    EXPECT_ELEM(run(op, neg_bf16, f16(3)), nan_of(DType::f32)) << op_name(op);
    EXPECT_ELEM(run(op, neg_f16, f64(3)), nan_of(DType::f64)) << op_name(op);
  }
  EXPECT_ELEM(run(BinaryOp::power, neg_f32, f32(2)), nan_of(DType::f32));
  // A NaN stored into a wider or narrower floating out: still the canonical one.
  EXPECT_ELEM(run(BinaryOp::add, view(neg_f16), view(f16(1)), DType::f64), nan_of(DType::f64));
  EXPECT_ELEM(run(BinaryOp::add, view(neg_f64), view(f64(1)), DType::bf16), nan_of(DType::bf16));
}

// ---- mixed operands and the output's cast ------------------------------------------------

TEST(MixedReference, ResultRoundedOnceIntoANarrowerOut) {
  // f64 1 + (2^-11 + 2^-40) into f16: one rounding of the f64 sum gives 1 + 2^-10; through f32
  // first it would be a tie, rounded to 1.
  EXPECT_ELEM(run(BinaryOp::add, view(f64(1)), view(f64(0x1p-11 + 0x1p-40)), DType::f16),
              f16(1.0f + 0x1p-10f));
  // A 16-bit result cast to a wider out: rounded to the result dtype first (the framework's
  // result, then cast).
  EXPECT_ELEM(run(BinaryOp::add, view(f16(1)), view(f16(0x1p-11f)), DType::f32), f32(1));
  // An integer result into a wider integer out: wrapped in the result dtype, then widened.
  EXPECT_ELEM(run(BinaryOp::add, view(i32(INT32_MAX)), view(i32(1)), DType::i64),
              i64(INT32_MIN));
  // Comparisons store bool into any dtype.
  EXPECT_ELEM(run(BinaryOp::less, view(f32(1)), view(f32(2)), DType::u8), u8(1));
  EXPECT_ELEM(run(BinaryOp::less, view(f32(1)), view(f32(2)), DType::f16), f16(1));
  // In place with a wider operand: bf16 += f32 computes in f32, rounded once to bf16.
  Elem x = bf16(1);
  const Elem y = f32(0x1p-8f + 0x1p-20f);
  reference_binary(BinaryOp::add, view(x), view(y),
                   TensorView{&x.bits, TensorDesc::contiguous(DType::bf16, {}), Memory::host});
  EXPECT_ELEM(x, bf16(1.0f + 0x1p-7f));
}

TEST(MixedReference, RefusedCombinationsNameTheDtypes) {
  std::uint64_t out = 0x5A5A5A5A5A5A5A5Aull;
  const auto into = [&](DType t) {
    return TensorView{&out, TensorDesc::contiguous(t, {}), Memory::host};
  };
  // Float into an integer out; signed into unsigned; anything but bool into bool.
  expect_invalid([&] { reference_binary(BinaryOp::add, view(f32(1)), view(i32(1)), into(DType::i32)); },
                 {"f64", "i32", "same_kind"});
  expect_invalid([&] { reference_binary(BinaryOp::divide, view(i32(1)), view(i32(1)), into(DType::i64)); },
                 {"f64", "i64"});
  expect_invalid([&] { reference_binary(BinaryOp::add, view(i8(1)), view(i8(1)), into(DType::u8)); },
                 {"i8", "u8"});
  expect_invalid([&] { reference_binary(BinaryOp::add, view(u8(1)), view(u8(1)), into(DType::b8)); },
                 {"u8", "bool"});
  // bool subtract, bitwise on floats.
  expect_invalid([&] { reference_binary(BinaryOp::subtract, view(b8(true)), view(b8(true)), into(DType::b8)); },
                 {"subtract", "bool"});
  expect_invalid([&] { reference_binary(BinaryOp::bitwise_and, view(f32(1)), view(i32(1)), into(DType::f64)); },
                 {"bitwise_and", "f32", "i32"});
  // An unknown dtype value; an unknown op; two scalars.
  Elem bad{static_cast<DType>(200), 0};
  expect_invalid([&] { reference_binary(BinaryOp::add, view(bad), view(f32(1)), into(DType::f32)); },
                 {"200"});
  expect_invalid([&] { reference_binary(static_cast<BinaryOp>(77), view(f32(1)), view(f32(1)), into(DType::f32)); },
                 {"77"});
  expect_invalid([&] { reference_binary(BinaryOp::add, Scalar::weak_int(1), Scalar::weak_int(2), into(DType::i64)); },
                 {"two scalars"});
  EXPECT_EQ(out, 0x5A5A5A5A5A5A5A5Aull) << "a refused call wrote its output";
}

TEST(MixedReference, Scalars) {
  const auto s = [](BinaryOp op, const Elem& a, const Scalar& b, Promotion rule = Promotion::numpy) {
    const DType out = op_types(op, rule, tensor(a.dtype), b.type()).result;
    return run(op, view(a), b, out, rule);
  };
  EXPECT_ELEM(s(BinaryOp::multiply, f16(3), Scalar::weak_float(0.5)), f16(1.5f));
  EXPECT_ELEM(s(BinaryOp::add, i8(100), Scalar::weak_int(100)), i8(-56));
  EXPECT_ELEM(s(BinaryOp::add, i32(1), Scalar::weak_float(2.5)), f64(3.5));
  EXPECT_ELEM(s(BinaryOp::add, i32(1), Scalar::weak_float(2.5), Promotion::torch), f32(3.5f));
  EXPECT_ELEM(s(BinaryOp::add, b8(true), Scalar::weak_int(2)), i64(3));
  EXPECT_ELEM(s(BinaryOp::multiply, b8(true), Scalar::weak_float(-1e9)), f64(-1e9));
  EXPECT_ELEM(s(BinaryOp::less, u8(3), Scalar::weak_int(7)), b8(true));
  EXPECT_ELEM(s(BinaryOp::add, bf16(1), Scalar::weak_float(0.5)), f32(1.5f));  // ml_dtypes' rule
  EXPECT_ELEM(s(BinaryOp::add, f32(1), Scalar::of(DType::f64, 0.5)), f64(1.5));  // not weak
  EXPECT_ELEM(s(BinaryOp::add, f32(1), Scalar::of(DType::f64, 0.5), Promotion::torch), f32(1.5f));
  // A Python float is converted to the compute dtype first under NumPy's rule (NEP 50), handed
  // to the f32 arithmetic as is under PyTorch's: f16 1 + (2^-11 + 2^-23).
  const Scalar s2 = Scalar::weak_float(0x1p-11 + 0x1p-23);
  EXPECT_ELEM(s(BinaryOp::add, f16(1), s2), f16(1));
  EXPECT_ELEM(s(BinaryOp::add, f16(1), s2, Promotion::torch), f16(1.0f + 0x1p-10f));
  // The scalar on the left.
  EXPECT_ELEM(run(BinaryOp::subtract, Scalar::weak_int(10), view(u8(3)), DType::u8), u8(7));
  EXPECT_ELEM(run(BinaryOp::floor_divide, Scalar::weak_float(-7.5), view(f32(2)), DType::f32),
              f32(-4));
  // A Python integer the compute dtype cannot hold: NumPy refuses; PyTorch's rule wraps it.
  expect_invalid([&] { s(BinaryOp::add, i8(1), Scalar::weak_int(300)); }, {"300", "i8"});
  expect_invalid([&] { s(BinaryOp::add, u8(1), Scalar::weak_int(-1)); }, {"-1", "u8"});
  EXPECT_ELEM(s(BinaryOp::add, i8(1), Scalar::weak_int(300), Promotion::torch), i8(45));
}

TEST(OpNames, NumpyNamesAndAliases) {
  EXPECT_EQ(std::size(kAllOps), 23u);
  for (BinaryOp op : kAllOps) EXPECT_EQ(parse_op(op_name(op)), op) << op_name(op);
  EXPECT_EQ(parse_op("sub"), BinaryOp::subtract);
  EXPECT_EQ(parse_op("mul"), BinaryOp::multiply);
  EXPECT_EQ(parse_op("div"), BinaryOp::divide);
  EXPECT_EQ(parse_op("min"), BinaryOp::minimum);
  EXPECT_EQ(parse_op("max"), BinaryOp::maximum);
  EXPECT_STREQ(op_name(BinaryOp::div), "divide");
  EXPECT_STREQ(op_name(static_cast<BinaryOp>(99)), "unknown");
  expect_invalid([] { parse_op("pow"); }, {"pow"});
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
  EXPECT_EQ(parse_dtype("b8"), DType::b8);
  EXPECT_STREQ(dtype_name(DType::b8), "bool");
  EXPECT_EQ(std::size(kAllDTypes), 13u);
}

}  // namespace
}  // namespace ewise
