// src/element.hpp — host helpers: read/write one element of any dtype as double or int64, and
// walk the offsets of a strided tensor in row-major order.
#pragma once

#include <cstdint>
#include <cstring>

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

/// The element's value as double (exact for every dtype but i64 beyond 2^53).
inline double load_double(DType t, const std::byte* p) {
  switch (t) {
    case DType::f16: return f16_bits_to_float(load_raw<std::uint16_t>(p));
    case DType::bf16: return bf16_bits_to_float(load_raw<std::uint16_t>(p));
    case DType::f32: return load_raw<float>(p);
    case DType::f64: return load_raw<double>(p);
    case DType::i32: return load_raw<std::int32_t>(p);
    case DType::i64: return static_cast<double>(load_raw<std::int64_t>(p));
  }
  return 0;
}

/// Integer dtypes only: the element's value.
inline std::int64_t load_int(DType t, const std::byte* p) {
  return t == DType::i32 ? load_raw<std::int32_t>(p) : load_raw<std::int64_t>(p);
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

/// Stores v rounded once to nearest-even in the dtype (via float for f16/bf16, which is exact
/// for results of a single basic operation, see reference.cpp), a NaN as the canonical NaN.
/// Integers: v must be integral.
inline void store_double(DType t, std::byte* p, double v) {
  if (is_floating(t) && v != v) {
    const std::uint64_t bits = canonical_nan_bits(t);
    std::memcpy(p, &bits, dtype_size(t));  // little-endian: the low bytes
    return;
  }
  switch (t) {
    case DType::f16: store_raw(p, float_to_f16_bits(static_cast<float>(v))); return;
    case DType::bf16: store_raw(p, float_to_bf16_bits(static_cast<float>(v))); return;
    case DType::f32: store_raw(p, static_cast<float>(v)); return;
    case DType::f64: store_raw(p, v); return;
    case DType::i32: store_raw(p, static_cast<std::int32_t>(v)); return;
    case DType::i64: store_raw(p, static_cast<std::int64_t>(v)); return;
  }
}

/// Integer dtypes only: stores v wrapped to the dtype's width.
inline void store_int(DType t, std::byte* p, std::int64_t v) {
  if (t == DType::i32)
    store_raw(p, static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
  else
    store_raw(p, v);
}

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
