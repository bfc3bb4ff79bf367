// src/checked.hpp — overflow-checked int64 arithmetic for sizes and offsets.
#pragma once

#include <cstdint>

namespace ewise::detail {

/// 128-bit integers (a GCC/Clang extension) for sums of int64 values that may pass int64.
__extension__ typedef __int128 int128;

/// a * b, or false when it overflows int64.
inline bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
inline bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

}  // namespace ewise::detail
