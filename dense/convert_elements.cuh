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

/// Calls f(TypeTag<T>{}) with the device storage type T of dtype t, which has at most MaxBytes
/// bytes: a flat kernel instantiation for narrow dtypes dispatches among those alone.
template <int MaxBytes = 8, class G>
EWISE_DEVICE void with_storage(DType t, G&& g) {
  constexpr bool b2 = MaxBytes >= 2, b4 = MaxBytes >= 4, b8 = MaxBytes >= 8;
  switch (t) {
    case DType::b8: return g(TypeTag<bool>{});
    case DType::i8: return g(TypeTag<std::int8_t>{});
    case DType::u8: return g(TypeTag<std::uint8_t>{});
    case DType::f16: if constexpr (b2) return g(TypeTag<__half>{}); else break;
    case DType::bf16: if constexpr (b2) return g(TypeTag<__nv_bfloat16>{}); else break;
    case DType::i16: if constexpr (b2) return g(TypeTag<std::int16_t>{}); else break;
    case DType::u16: if constexpr (b2) return g(TypeTag<std::uint16_t>{}); else break;
    case DType::f32: if constexpr (b4) return g(TypeTag<float>{}); else break;
    case DType::i32: if constexpr (b4) return g(TypeTag<std::int32_t>{}); else break;
    case DType::u32: if constexpr (b4) return g(TypeTag<std::uint32_t>{}); else break;
    case DType::f64: if constexpr (b8) return g(TypeTag<double>{}); else break;
    case DType::i64: if constexpr (b8) return g(TypeTag<std::int64_t>{}); else break;
    case DType::u64: if constexpr (b8) return g(TypeTag<std::uint64_t>{}); else break;
  }
  // No other dtype reaches a kernel (check_types; the planner picks the instantiation by the
  // widest dtype); without this the compiler keeps the previous values of what g assigns alive
  // for an unknown one (in a loop: each iteration's registers twice, and 540 bytes of spills a
  // thread).
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

/// x (bool, an integer, float or double) as device storage type T: floats rounded to
/// nearest-even (once, but bf16 from a double or an integer through float: ewise/half.hpp), a
/// NaN as the canonical NaN, integers wrapped. The conversions of a float to f16 and bf16 give
/// the canonical NaN (0x7FFF) themselves, for each of the 2^24 - 2 NaNs (all checked on an H200:
/// CastsGpu.FloatToHalfGivesTheCanonicalNaN), so a float's NaN takes no test of its own (its test
/// and select ran f16 ** -2 at 0.084 ms against 0.078 without: H200 test kernel).
template <class T, class X>
EWISE_DEVICE T cast_to(X x) {
  constexpr bool from_float = std::is_same_v<X, float>;
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    if constexpr (std::is_floating_point_v<X> && !from_float) {
      if (x != x) return from_bits<T>(0x7FFF);  // the canonical NaN of both formats
    }
    // f16 rounded once (NumPy's cast); bf16 through float, as ml_dtypes and PyTorch convert
    // (ewise/half.hpp)
    if constexpr (std::is_same_v<T, __half>)
      return from_float ? __float2half_rn(static_cast<float>(x)) : __double2half(static_cast<double>(x));
    else
      return __float2bfloat16_rn(static_cast<float>(x));
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

/// A lane's NG groups of G elements of `width` bytes (at most W = 16 / G) from p, aligned to
/// G * width bytes: group g at p + g * 32 * G * width (a warp's groups are interleaved, see
/// convert_flat_kernel); the width switched once for all of them.
template <int G, int NG>
EWISE_DEVICE void load_groups(int width, const char* p, RawGroup (&r)[NG]) {
  const auto each = [&](auto bytes) {
    constexpr int B = decltype(bytes)::value;  // a group's bytes
#pragma unroll
    for (int g = 0; g < NG; ++g) load_bytes<B>(p + g * 32 * B, r[g]);
  };
  switch (width) {
    case 1: return each(std::integral_constant<int, G>{});
    case 2: if constexpr (2 * G <= 16) return each(std::integral_constant<int, 2 * G>{}); else break;
    case 4: if constexpr (4 * G <= 16) return each(std::integral_constant<int, 4 * G>{}); else break;
    case 8: if constexpr (8 * G <= 16) return each(std::integral_constant<int, 8 * G>{}); else break;
  }
  __builtin_unreachable();  // a wider dtype runs an instantiation of wider groups
}

/// The lane's NG groups' words stored at p, as load_groups reads them.
template <int G, int NG>
EWISE_DEVICE void store_groups(int width, char* p, const std::uint32_t (&w)[NG][4]) {
  const auto each = [&](auto bytes) {
    constexpr int B = decltype(bytes)::value;
#pragma unroll
    for (int g = 0; g < NG; ++g) store_bytes<B>(p + g * 32 * B, w[g]);
  };
  switch (width) {
    case 1: return each(std::integral_constant<int, G>{});
    case 2: if constexpr (2 * G <= 16) return each(std::integral_constant<int, 2 * G>{}); else break;
    case 4: if constexpr (4 * G <= 16) return each(std::integral_constant<int, 4 * G>{}); else break;
    case 8: if constexpr (8 * G <= 16) return each(std::integral_constant<int, 8 * G>{}); else break;
  }
  __builtin_unreachable();  // as in load_groups
}

/// Element e of a group of storage type T.
template <class T>
EWISE_DEVICE T group_element(const RawGroup& r, int e) {
  constexpr int s = sizeof(T);
  if constexpr (s == 8)
    return from_bits<T>(r.w[2 * e] | static_cast<std::uint64_t>(r.w[2 * e + 1]) << 32);
  else return from_bits<T>(r.w[e * s / 4] >> (8 * (e * s % 4)));
}

/// The lane's elements k0 .. k0 + S - 1 (element k: group k / G, index k % G) of dtype t, as C:
/// the dtype switched once for the S elements.
template <int G, int S, int NG, class C>
EWISE_DEVICE void convert_chunk(DType t, const RawGroup (&r)[NG], int k0, C (&x)[S]) {
  with_storage<16 / G>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
#pragma unroll
    for (int s = 0; s < S; ++s)
      x[s] = convert_to<C>(to_compute(group_element<T>(r[(k0 + s) / G], (k0 + s) % G)));
  });
}

/// Results k0 .. k0 + S - 1 cast to dtype t and packed into the lane's groups' words w.
template <int G, int S, int NG, class V>
EWISE_DEVICE void pack_chunk(DType t, const V (&v)[S], int k0, std::uint32_t (&w)[NG][4]) {
  with_storage<16 / G>(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int s = sizeof(T);
#pragma unroll
    for (int j = 0; j < S; ++j) {
      const std::uint64_t b = to_bits(cast_to<T>(v[j]));
      const int g = (k0 + j) / G, at = (k0 + j) % G;
      if constexpr (s == 8) {
        w[g][2 * at] = static_cast<std::uint32_t>(b);
        w[g][2 * at + 1] = static_cast<std::uint32_t>(b >> 32);
      } else {
        w[g][at * s / 4] |= static_cast<std::uint32_t>(b) << (8 * (at * s % 4));
      }
    }
  });
}

/// x rounded to 16-bit float dtype t (f16 or bf16); other C pass unchanged.
template <class C>
EWISE_DEVICE C round16(DType t, C x) {
  if constexpr (std::is_same_v<C, float>)
    return t == DType::f16 ? __half2float(__float2half_rn(x)) : __bfloat162float(__float2bfloat16_rn(x));
  else return x;
}

}  // namespace ewise::detail
