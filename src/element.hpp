// src/element.hpp — host helpers: read/write one element of any dtype as double or int64, and
// walk the offsets of a strided tensor in row-major order.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ewise/half.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

inline const std::byte* element_at(const void* base, DType t, std::int64_t offset) {
  return static_cast<const std::byte*>(base) + offset * static_cast<std::int64_t>(dtype_size(t));
}
inline std::byte* element_at(void* base, DType t, std::int64_t offset) {
  return static_cast<std::byte*>(base) + offset * static_cast<std::int64_t>(dtype_size(t));
}

template <class T>
T load_raw(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store_raw(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

/// Calls f(T{}) with the host storage type T of `t` (std::uint16_t bits for f16 and bf16).
template <class F>
decltype(auto) with_storage(DType t, F&& f) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::u16: return f(std::uint16_t{});
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::i32: return f(std::int32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::b8: return f(bool{});
    case DType::i8: return f(std::int8_t{});
    case DType::u8: return f(std::uint8_t{});
    case DType::i16: return f(std::int16_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::u64: return f(std::uint64_t{});
  }
  throw_unknown_dtype(t);
}

/// The element's value in the host compute type C (bool, an integer type, float or double), by
/// NumPy's casts: to bool, nonzero (NaN is true); between integers, wrapped; integers to
/// floating, to nearest; 16-bit floats widened exactly. Floating to integer is never asked.
template <class C>
C load_as(DType t, const std::byte* p) {
  if (t == DType::f16 || t == DType::bf16) {
    const auto bits = load_raw<std::uint16_t>(p);
    const float x = t == DType::f16 ? f16_bits_to_float(bits) : bf16_bits_to_float(bits);
    if constexpr (std::is_same_v<C, bool>) return x != 0;
    else return static_cast<C>(x);
  }
  return with_storage(t, [&](auto tag) -> C {
    using T = decltype(tag);
    // A bool element is read as its byte, nonzero true (as NumPy reads one): loading a byte
    // other than 0 or 1 as a bool is undefined behaviour.
    T x;
    if constexpr (std::is_same_v<T, bool>) x = load_raw<std::uint8_t>(p) != 0;
    else x = load_raw<T>(p);
    if constexpr (std::is_same_v<C, bool>) return x != T(0);
    else return static_cast<C>(x);
  });
}

/// The canonical NaN's bits in a floating dtype (ops.hpp): positive, every payload bit set.
inline std::uint64_t canonical_nan_bits(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return 0x7FFF;
    case DType::f32: return 0x7FFFFFFF;
    default: return 0x7FFFFFFFFFFFFFFF;
  }
}

/// x (bool, an integer, float or double) cast to dtype `t` and stored: NumPy's casts, floats
/// rounded to nearest-even (once, but bf16 from a double or an integer through float, as
/// ml_dtypes: ewise/half.hpp), a NaN as the canonical NaN, integers wrapped.
template <class X>
void store_cast(DType t, std::byte* p, X x) {
  if constexpr (std::is_floating_point_v<X>) {
    if (x != x && is_floating(t)) {
      const std::uint64_t bits = canonical_nan_bits(t);
      std::memcpy(p, &bits, dtype_size(t));  // little-endian: the low bytes
      return;
    }
  }
  if (t == DType::f16 || t == DType::bf16) {
    const bool f16 = t == DType::f16;
    std::uint16_t bits;
    if constexpr (std::is_same_v<X, float>)
      bits = f16 ? float_to_f16_bits(x) : float_to_bf16_bits(x);
    else  // (an integer to float directly, as ml_dtypes: not through double)
      bits = f16 ? double_to_f16_bits(static_cast<double>(x))
                 : float_to_bf16_bits(static_cast<float>(x));
    store_raw(p, bits);
    return;
  }
  with_storage(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) store_raw(p, static_cast<bool>(x != X(0)));
    else store_raw(p, static_cast<T>(x));
  });
}

/// v rounded to floating dtype t (and back to double).
inline double round_to(DType t, double v) {
  switch (t) {
    case DType::f16: return f16_bits_to_float(double_to_f16_bits(v));
    case DType::bf16: return bf16_bits_to_float(double_to_bf16_bits(v));
    case DType::f32: return static_cast<float>(v);
    default: return v;
  }
}

/// Whether integer or bool dtype t holds v.
inline bool fits(DType t, std::int64_t v) {
  if (t == DType::b8) return v == 0 || v == 1;
  if (t == DType::u64) return v >= 0;
  const int bits = 8 * static_cast<int>(dtype_size(t));
  if (dtype_kind(t) == DTypeKind::unsigned_int) return v >= 0 && v < (std::int64_t{1} << bits);
  if (bits == 64) return true;
  return v >= -(std::int64_t{1} << (bits - 1)) && v < (std::int64_t{1} << (bits - 1));
}

/// The element's value as double (exact for every dtype but 64-bit integers beyond 2^53).
inline double load_double(DType t, const std::byte* p) { return load_as<double>(t, p); }

/// Integer and bool dtypes: the element's value (u64 beyond 2^63 wraps); a bool's byte itself,
/// so that a byte other than 0 or 1 (a poisoned element, verify.cpp) shows as what it is.
inline std::int64_t load_int(DType t, const std::byte* p) {
  if (t == DType::u64) return static_cast<std::int64_t>(load_raw<std::uint64_t>(p));
  if (t == DType::b8) return load_raw<std::uint8_t>(p);
  return load_as<std::int64_t>(t, p);
}

/// Stores v rounded once to nearest-even in the dtype, a NaN as the canonical NaN. Integers: v
/// must be integral.
inline void store_double(DType t, std::byte* p, double v) { store_cast(t, p, v); }

/// Integer and bool dtypes: stores v wrapped to the dtype's width.
inline void store_int(DType t, std::byte* p, std::int64_t v) { store_cast(t, p, v); }

/// Calls f(linear_index, coord) for every coordinate of `shape` in row-major order.
template <class F>
void for_each_coord(const Dims& shape, F&& f) {
  const std::int64_t n = shape.product();
  Dims coord = Dims::of_rank(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, static_cast<const Dims&>(coord));
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
}

inline std::int64_t dot(const Dims& coord, const Dims& strides) {
  std::int64_t off = 0;
  for (int d = 0; d < coord.size(); ++d) off += coord[d] * strides[d];
  return off;
}

}  // namespace ewise::detail
