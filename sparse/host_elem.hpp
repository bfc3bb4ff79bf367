// sparse/host_elem.hpp — how the sparse CPU backend reads and writes the values of each sparse
// dtype (storage bits, compute type, rounding once, canonical NaN), and a dense operand's
// factor: reference.cpp and rows.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "checks.hpp"
#include "element.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

/// How the CPU backend reads and writes one dtype: storage bits, compute type, rounding.
template <DType Dtype, class Storage, class Compute, Compute (*Load)(Storage),
          Storage (*Store)(Compute)>
struct Elem {
  using compute = Compute;
  static Compute load(const void* base, std::int64_t k) {
    Storage s;
    std::memcpy(&s, static_cast<const std::byte*>(base) + k * std::int64_t{sizeof(Storage)},
                sizeof s);
    return Load(s);
  }
  static void store(void* base, std::int64_t k, Compute v) {
    Storage s = Store(v);
    if constexpr (std::is_floating_point_v<Compute>) {  // every stored value is computed (ops.hpp)
      // a select, not a branch, so that loops of stores vectorize
      const std::uint64_t bits = detail::canonical_nan_bits(Dtype);
      Storage nan;
      std::memcpy(&nan, &bits, sizeof nan);
      s = v != v ? nan : s;
    }
    std::memcpy(static_cast<std::byte*>(base) + k * std::int64_t{sizeof(Storage)}, &s, sizeof s);
  }
};

template <class T>
T same(T x) { return x; }
inline float f16_load(std::uint16_t b) { return f16_bits_to_float(b); }
inline std::uint16_t f16_store(float x) { return float_to_f16_bits(x); }
inline float bf16_load(std::uint16_t b) { return bf16_bits_to_float(b); }
inline std::uint16_t bf16_store(float x) { return float_to_bf16_bits(x); }

/// A dense or scalar operand's factor at (r, c), in E's compute type.
template <class E>
typename E::compute factor_at(const DenseOperand& d, std::int64_t r, std::int64_t c) {
  if (!d.scalar) return E::load(d.data, r * d.row_stride + c * d.col_stride);
  typename E::compute v;
  std::memcpy(&v, &d.value, sizeof v);
  return v;
}

template <class F>
decltype(auto) with_elem(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f(Elem<DType::f16, std::uint16_t, float, f16_load, f16_store>{});
    case DType::bf16: return f(Elem<DType::bf16, std::uint16_t, float, bf16_load, bf16_store>{});
    case DType::f32: return f(Elem<DType::f32, float, float, same<float>, same<float>>{});
    case DType::f64: return f(Elem<DType::f64, double, double, same<double>, same<double>>{});
    case DType::i32:
      return f(Elem<DType::i32, std::int32_t, std::int32_t, same<std::int32_t>, same<std::int32_t>>{});
    case DType::i64:
      return f(Elem<DType::i64, std::int64_t, std::int64_t, same<std::int64_t>, same<std::int64_t>>{});
    default: break;
  }
  EWISE_EXPECTS(false, dtype_name(t), " is not a sparse dtype");
  return f(Elem<DType::f32, float, float, same<float>, same<float>>{});
}

}  // namespace ewise::sparse_detail
