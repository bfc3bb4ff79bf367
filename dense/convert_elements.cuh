// dense/convert_elements.cuh — the converting kernel's element access (convert.cuh): device
// storage types by dtype, elements and 16-byte groups loaded and stored by width alone, their
// conversions to the compute type C and the casts into an output dtype (NumPy's casts, as
// src/element.hpp makes them on the host).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/types.cuh"

namespace ewise::detail {

/// Calls f(TypeTag<T>{}) with the device storage type T of dtype t.
template <class G>
EWISE_DEVICE void with_storage(DType t, G&& g) {
  switch (t) {
    case DType::f16: return g(TypeTag<__half>{});
    case DType::bf16: return g(TypeTag<__nv_bfloat16>{});
    case DType::f32: return g(TypeTag<float>{});
    case DType::f64: return g(TypeTag<double>{});
    case DType::i32: return g(TypeTag<std::int32_t>{});
    case DType::i64: return g(TypeTag<std::int64_t>{});
    case DType::b8: return g(TypeTag<bool>{});
    case DType::i8: return g(TypeTag<std::int8_t>{});
    case DType::u8: return g(TypeTag<std::uint8_t>{});
    case DType::i16: return g(TypeTag<std::int16_t>{});
    case DType::u16: return g(TypeTag<std::uint16_t>{});
    case DType::u32: return g(TypeTag<std::uint32_t>{});
    case DType::u64: return g(TypeTag<std::uint64_t>{});
  }
  // No other dtype reaches a kernel (check_types); without this the compiler keeps the previous
  // values of what g assigns alive for an unknown one (in a loop: each iteration's registers
  // twice, and 540 bytes of spills a thread).
  __builtin_unreachable();
}

// ---- bits: loads and stores by width alone, so that every load of an iteration is issued
// before any value is converted (a conversion inside the dtype switch of a load waits for that
// load's data and kept the next load from starting).

/// The unsigned integer of N bytes.
template <int N>
using Bits = std::conditional_t<N == 1, std::uint8_t,
             std::conditional_t<N == 2, std::uint16_t,
             std::conditional_t<N == 4, std::uint32_t, std::uint64_t>>>;

/// The value of storage type T whose bits are the low bytes of `bits` (a bool: nonzero).
template <class T>
EWISE_DEVICE T from_bits(std::uint64_t bits) {
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<std::uint8_t>(bits) != 0;
  } else {
    const auto b = static_cast<Bits<sizeof(T)>>(bits);
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
}

/// The bits of v, storage type T.
template <class T>
EWISE_DEVICE Bits<sizeof(T)> to_bits(T v) {
  Bits<sizeof(T)> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// The bits of element `off` of `base`, whose elements have `width` bytes.
template <class Offset>
EWISE_DEVICE std::uint64_t load_bits(int width, const void* base, Offset off) {
  switch (width) {
    case 1: return static_cast<const std::uint8_t*>(base)[off];
    case 2: return static_cast<const std::uint16_t*>(base)[off];
    case 4: return static_cast<const std::uint32_t*>(base)[off];
    case 8: return static_cast<const std::uint64_t*>(base)[off];
  }
  __builtin_unreachable();  // the widths of the dtypes
}

/// x as C: to bool, nonzero; otherwise C's conversion (integers wrap; integers to floating
/// round to nearest). Floating to integer is never asked (op_types, same_kind).
template <class C, class X>
EWISE_DEVICE C convert_to(X x) {
  if constexpr (std::is_same_v<C, bool>) {
    return x != X(0);
  } else if constexpr (std::is_same_v<C, ExactInt> && !std::is_integral_v<X>) {
    __builtin_unreachable();  // ExactInt takes integers only (CallTypes::exact)
  } else {
    return static_cast<C>(x);
  }
}

/// The element of dtype t with these bits, as C.
template <class C>
EWISE_DEVICE C bits_as(DType t, std::uint64_t bits) {
  C x{};
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    x = convert_to<C>(to_compute(from_bits<T>(bits)));
  });
  return x;
}

/// x (bool, an integer, float or double) as device storage type T: floats rounded once to
/// nearest-even, a NaN as the canonical NaN, integers wrapped.
template <class T, class X>
EWISE_DEVICE T cast_to(X x) {
  constexpr bool from_float = std::is_same_v<X, float>;
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    if constexpr (std::is_floating_point_v<X>) {
      if (x != x) return from_bits<T>(0x7FFF);  // the canonical NaN of both formats
    }
    if constexpr (std::is_same_v<T, __half>)
      return from_float ? __float2half_rn(static_cast<float>(x)) : __double2half(static_cast<double>(x));
    else
      return from_float ? __float2bfloat16_rn(static_cast<float>(x))
                        : __double2bfloat16(static_cast<double>(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return canonical_nan(static_cast<T>(x));
  } else {
    return convert_to<T>(x);
  }
}

/// x cast to dtype t (cast_to) and stored at element `off` of `base`.
template <class X, class Offset>
EWISE_DEVICE void store_cast(DType t, void* base, Offset off, X x) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_cast<T*>(base)[off] = cast_to<T>(x);
  });
}

// ---- groups: the flat kernel's unit, G = 16 / W consecutive elements where W bytes is the
// widest dtype the kernel instantiation takes: a 16-byte vector of the widest operand, fewer
// bytes of a narrower one.

/// The bits of a group: 16 bytes as 32-bit words (fewer used by a narrower dtype).
struct RawGroup {
  std::uint32_t w[4];
};

/// `Bytes` (1, 2, 4, 8 or 16) from p (aligned to them) into r: one load.
template <int Bytes>
EWISE_DEVICE void load_bytes(const void* p, RawGroup& r) {
  if constexpr (Bytes == 16) {
    const uint4 v = *static_cast<const uint4*>(p);
    r.w[0] = v.x;
    r.w[1] = v.y;
    r.w[2] = v.z;
    r.w[3] = v.w;
  } else if constexpr (Bytes == 8) {
    const uint2 v = *static_cast<const uint2*>(p);
    r.w[0] = v.x;
    r.w[1] = v.y;
  } else {
    r.w[0] = *static_cast<const Bits<Bytes>*>(p);
  }
}
template <int Bytes>
EWISE_DEVICE void store_bytes(void* p, const std::uint32_t (&w)[4]) {
  if constexpr (Bytes == 16) *static_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  else if constexpr (Bytes == 8) *static_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  else *static_cast<Bits<Bytes>*>(p) = static_cast<Bits<Bytes>>(w[0]);
}

/// The G elements of `width` bytes (at most W = 16 / G) at p, aligned to G * width bytes.
template <int G>
EWISE_DEVICE void load_group(int width, const void* p, RawGroup& r) {
  switch (width) {
    case 1: return load_bytes<G>(p, r);
    case 2: if constexpr (2 * G <= 16) return load_bytes<2 * G>(p, r); else break;
    case 4: if constexpr (4 * G <= 16) return load_bytes<4 * G>(p, r); else break;
    case 8: if constexpr (8 * G <= 16) return load_bytes<8 * G>(p, r); else break;
  }
  __builtin_unreachable();  // a wider dtype runs an instantiation of wider groups
}

/// Element e of a group of storage type T.
template <class T>
EWISE_DEVICE T group_element(const RawGroup& r, int e) {
  constexpr int s = sizeof(T);
  if constexpr (s == 8)
    return from_bits<T>(r.w[2 * e] | static_cast<std::uint64_t>(r.w[2 * e + 1]) << 32);
  else return from_bits<T>(r.w[e * s / 4] >> (8 * (e * s % 4)));
}

/// Elements e0 .. e0 + S - 1 of a group of dtype t (at most 16 / G bytes), as C: the dtype
/// switched once.
template <int G, int S, class C>
EWISE_DEVICE void convert_elements(DType t, const RawGroup& r, int e0, C (&x)[S]) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) * G <= 16) {
#pragma unroll
      for (int e = 0; e < S; ++e) x[e] = convert_to<C>(to_compute(group_element<T>(r, e0 + e)));
    } else {
      __builtin_unreachable();  // as in load_group
    }
  });
}

/// Results e0 .. e0 + S - 1 of a group cast to dtype t and packed into its words w.
template <int G, int S, class V>
EWISE_DEVICE void pack_elements(DType t, const V (&v)[S], int e0, std::uint32_t (&w)[4]) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int s = sizeof(T);
    if constexpr (s * G <= 16) {
#pragma unroll
      for (int e = 0; e < S; ++e) {
        const std::uint64_t b = to_bits(cast_to<T>(v[e]));
        const int at = e0 + e;
        if constexpr (s == 8) {
          w[2 * at] = static_cast<std::uint32_t>(b);
          w[2 * at + 1] = static_cast<std::uint32_t>(b >> 32);
        } else {
          w[at * s / 4] |= static_cast<std::uint32_t>(b) << (8 * (at * s % 4));
        }
      }
    } else {
      __builtin_unreachable();  // as in load_group
    }
  });
}

/// A group's words stored at p (aligned to G * width bytes) in elements of `width` bytes.
template <int G>
EWISE_DEVICE void store_group(int width, void* p, const std::uint32_t (&w)[4]) {
  switch (width) {
    case 1: return store_bytes<G>(p, w);
    case 2: if constexpr (2 * G <= 16) return store_bytes<2 * G>(p, w); else break;
    case 4: if constexpr (4 * G <= 16) return store_bytes<4 * G>(p, w); else break;
    case 8: if constexpr (8 * G <= 16) return store_bytes<8 * G>(p, w); else break;
  }
  __builtin_unreachable();  // as in load_group
}

/// x rounded to 16-bit float dtype t (f16 or bf16); other C pass unchanged.
template <class C>
EWISE_DEVICE C round16(DType t, C x) {
  if constexpr (std::is_same_v<C, float>)
    return t == DType::f16 ? __half2float(__float2half_rn(x)) : __bfloat162float(__float2bfloat16_rn(x));
  else return x;
}

}  // namespace ewise::detail
