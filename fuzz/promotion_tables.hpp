// fuzz/promotion_tables.hpp — NumPy 2's and PyTorch's dtype tables, written down from the
// frameworks themselves (not from ewise's code), for the api oracle (api_oracle_types.cpp) and
// tests/test_promotion.cpp.
//
// NumPy's were printed by NumPy 2.4 with ml_dtypes: numpy.add on arrays of every pair of dtypes,
// numpy.add of an array and a Python scalar, np.can_cast(A, B, casting="same_kind").
// PyTorch's is c10::promoteTypes' lookup table, and its rule for u16, u32 and u64: promoted with
// a floating dtype to that dtype, with any other dtype refused.
#pragma once

#include <cstddef>
#include <iterator>

#include "ewise/tensor.hpp"

namespace ewise::tables {

/// The dtypes in the order of NumPy's tables.
inline constexpr DType kNumpyOrder[] = {DType::b8,  DType::i8,  DType::u8,  DType::i16, DType::u16,
                                        DType::i32, DType::u32, DType::i64, DType::u64, DType::f16,
                                        DType::f32, DType::f64, DType::bf16};

/// numpy.add(ones(1, A), ones(1, B)).dtype, rows A and columns B in kNumpyOrder.
inline constexpr const char* kNumpyAdd[13][13] = {
    {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16"},
    {"i8", "i8", "i16", "i16", "i32", "i32", "i64", "i64", "f64", "f16", "f32", "f64", "bf16"},
    {"u8", "i16", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16"},
    {"i16", "i16", "i16", "i16", "i32", "i32", "i64", "i64", "f64", "f32", "f32", "f64", "f32"},
    {"u16", "i32", "u16", "i32", "u16", "i32", "u32", "i64", "u64", "f32", "f32", "f64", "f32"},
    {"i32", "i32", "i32", "i32", "i32", "i32", "i64", "i64", "f64", "f64", "f64", "f64", "f64"},
    {"u32", "i64", "u32", "i64", "u32", "i64", "u32", "i64", "u64", "f64", "f64", "f64", "f64"},
    {"i64", "i64", "i64", "i64", "i64", "i64", "i64", "i64", "f64", "f64", "f64", "f64", "f64"},
    {"u64", "f64", "u64", "f64", "u64", "f64", "u64", "f64", "u64", "f64", "f64", "f64", "f64"},
    {"f16", "f16", "f16", "f32", "f32", "f64", "f64", "f64", "f64", "f16", "f32", "f64", "f32"},
    {"f32", "f32", "f32", "f32", "f32", "f64", "f64", "f64", "f64", "f32", "f32", "f64", "f32"},
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
    {"bf16", "bf16", "bf16", "f32", "f32", "f64", "f64", "f64", "f64", "f32", "f32", "f64", "bf16"},
};

/// numpy.add(array of the dtype in kNumpyOrder, Python scalar).dtype for a Python int 1, a
/// float 1.5 and a bool True.
inline constexpr const char* kNumpyWeakInt[13] = {"i64", "i8",  "u8",  "i16", "u16", "i32", "u32",
                                                  "i64", "u64", "f16", "f32", "f64", "bf16"};
inline constexpr const char* kNumpyWeakFloat[13] = {"f64", "f64", "f64", "f64", "f64", "f64", "f64",
                                                    "f64", "f64", "f16", "f32", "f64", "f32"};
inline constexpr const char* kNumpyWeakBool[13] = {"bool", "i8",  "u8",  "i16", "u16", "i32", "u32",
                                                   "i64",  "u64", "f16", "f32", "f64", "bf16"};

/// np.can_cast(A, B, casting="same_kind"), rows A, columns B in kNumpyOrder: '1' yes, '.' no.
/// ml_dtypes refuses bf16 -> f16, which ewise allows (a float to a float): marked 'x'.
inline constexpr const char* kNumpySameKind[13] = {
    "1111111111111", ".1.1.1.1.1111", ".111111111111", ".1.1.1.1.1111", ".111111111111",
    ".1.1.1.1.1111", ".111111111111", ".1.1.1.1.1111", ".111111111111", ".........1111",
    ".........1111", ".........1111", ".........x111"};

/// torch.promote_types for the dtypes its lookup table holds, in this order.
inline constexpr DType kTorchOrder[] = {DType::b8,  DType::u8,  DType::i8,  DType::i16, DType::i32,
                                        DType::i64, DType::f16, DType::f32, DType::f64, DType::bf16};
inline constexpr const char* kTorchPromote[10][10] = {
    {"bool", "u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bf16"},
    {"u8", "u8", "i16", "i16", "i32", "i64", "f16", "f32", "f64", "bf16"},
    {"i8", "i16", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bf16"},
    {"i16", "i16", "i16", "i16", "i32", "i64", "f16", "f32", "f64", "bf16"},
    {"i32", "i32", "i32", "i32", "i32", "i64", "f16", "f32", "f64", "bf16"},
    {"i64", "i64", "i64", "i64", "i64", "i64", "f16", "f32", "f64", "bf16"},
    {"f16", "f16", "f16", "f16", "f16", "f16", "f16", "f32", "f64", "f32"},
    {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64", "f32"},
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
    {"bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "f32", "f32", "f64", "bf16"},
};

/// The index of t in an order table (-1 when absent).
template <std::size_t N>
constexpr int index_in(const DType (&order)[N], DType t) {
  for (std::size_t i = 0; i < N; ++i)
    if (order[i] == t) return static_cast<int>(i);
  return -1;
}

}  // namespace ewise::tables
