// fuzz/api_decode_values.cpp — the values and COO entries of a decoded api call (api_decode.hpp):
// elements of any dtype at their edges, a view's values in the arena, scalar operands, and a
// matrix's entries (in range or not, in any order, the canonical flag honest or a lie).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

#include "api_decode.hpp"
#include "api_oracle.hpp"
#include "element.hpp"
#include "internal.hpp"
#include "ewise/verify.hpp"

namespace ewise::fuzz::decode {
namespace {

constexpr std::int64_t kI32Max = INT32_MAX, kI32Min = INT32_MIN;
void put_bits(std::vector<std::uint8_t>& buf, std::int64_t k, std::size_t elem, std::uint64_t bits) {
  std::memcpy(buf.data() + static_cast<std::size_t>(k) * elem, &bits, elem);  // little endian
}

/// One element of dtype t: a special value (±0, ±1, ±inf, NaNs with any sign and payload,
/// extremes, the smallest subnormal), a small multiple of 1/4, or raw bits.
void write_value(std::vector<std::uint8_t>& buf, std::int64_t k, DType t, Input& in) {
  const std::size_t elem = dtype_size(t);
  const std::uint8_t sel = in.u8();
  const std::uint64_t r = in.rand();
  if (t == DType::b8) return put_bits(buf, k, 1, r & 1);  // a bool is 0 or 1
  if (sel >= 192) return put_bits(buf, k, elem, r);  // raw bits
  if (!is_floating(t)) {
    // The extremes of the width (stored in the low bytes: -1 is an unsigned dtype's maximum).
    const std::uint64_t top = std::uint64_t{1} << (8 * elem - 1);
    const bool is_signed = dtype_kind(t) == DTypeKind::signed_int;
    const std::int64_t specials[] = {0, 1, -1, is_signed ? static_cast<std::int64_t>(~(top - 1)) : 0,
                                     static_cast<std::int64_t>(top - 1), 2, -2, 7};
    const std::int64_t v = sel < 96 ? static_cast<std::int64_t>(r % 17) - 8 : specials[sel % 8];
    return put_bits(buf, k, elem, static_cast<std::uint64_t>(v));
  }
  double v = static_cast<double>(static_cast<std::int64_t>(r % 65) - 32) / 4;
  if (sel >= 96) {
    switch (sel % 12) {
      case 0: v = 0.0; break;
      case 1: v = -0.0; break;
      case 2: v = 1.0; break;
      case 3: v = -1.0; break;
      case 4: v = 1.0 / 0.0; break;
      case 5: v = -1.0 / 0.0; break;
      case 6: v = 65504.0; break;             // f16 max: overflows when doubled
      case 7: v = 3.0e38; break;              // near f32 max
      case 8: v = 1.0e-45; break;             // below most types' smallest normal
      default: {                              // a NaN: any sign, any nonzero payload
        const int bits = static_cast<int>(elem) * 8;
        const int mant = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : t == DType::f32 ? 23 : 52;
        const std::uint64_t exp_mask = ((std::uint64_t{1} << (bits - 1 - mant)) - 1) << mant;
        std::uint64_t payload = r & ((std::uint64_t{1} << mant) - 1);
        if (payload == 0) payload = 1;
        const std::uint64_t sign = (r >> 63) << (bits - 1);
        return put_bits(buf, k, elem, sign | exp_mask | payload);
      }
    }
  }
  switch (t) {
    case DType::f16: return put_bits(buf, k, 2, float_to_f16_bits(static_cast<float>(v)));
    case DType::bf16: return put_bits(buf, k, 2, float_to_bf16_bits(static_cast<float>(v)));
    case DType::f32: {
      const float f = static_cast<float>(v);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      return put_bits(buf, k, 4, b);
    }
    default: {
      std::uint64_t b;
      std::memcpy(&b, &v, 8);
      return put_bits(buf, k, 8, b);
    }
  }
}

/// An index that is out of range for `extent` and representable in `index`.
std::int64_t bad_index(std::int64_t extent, IndexType index, Input& in) {
  const bool i32 = index == IndexType::i32;
  switch (in.u8() % 5) {
    case 0: return -1;
    case 1:
      if (extent >= 0 && (!i32 || extent <= kI32Max)) return extent;
      return i32 ? kI32Min : INT64_MIN;
    case 2: return i32 ? kI32Min : INT64_MIN;
    case 3:
      if (!i32 && extent < INT64_MAX) return INT64_MAX;
      if (i32 && extent <= kI32Max) return kI32Max;
      return -2;
    default: return -1 - in.below(1000);
  }
}

void store_index(std::vector<std::uint8_t>& buf, IndexType t, std::int64_t k, std::int64_t v) {
  if (t == IndexType::i32) {
    const auto v32 = static_cast<std::int32_t>(v);
    std::memcpy(buf.data() + k * 4, &v32, 4);
  } else {
    std::memcpy(buf.data() + k * 8, &v, 8);
  }
}

}  // namespace

std::int64_t in_range(std::int64_t n, Input& in) {
  switch (in.u8() % 4) {
    case 0: return 0;
    case 1: return n - 1;
    case 2: return n / 2;
    default: return in.below(n);
  }
}

std::vector<std::uint8_t> values(DType t, std::int64_t n, Input& in) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(n) * dtype_size(t));
  for (std::int64_t k = 0; k < n; ++k) write_value(buf, k, t, in);
  return buf;
}

/// Values of a view's own dtype at every element it reaches in an arena of `arena_elem`-byte
/// elements (wider than or as wide as the view's). A broadcast dim (stride 0, any extent: a huge
/// one too) reaches one element.
void write_view_values(std::vector<std::uint8_t>& arena, const ArenaView& v, std::size_t arena_elem,
                       Input& in) {
  const auto elem = static_cast<std::int64_t>(dtype_size(v.desc.dtype));
  Dims reached = v.desc.shape;
  for (int d = 0; d < reached.size(); ++d)
    if (v.desc.strides[d] == 0 && reached[d] > 1) reached[d] = 1;
  for_each_coord(reached, [&](const Dims& coord) {
    const std::int64_t byte = v.offset * static_cast<std::int64_t>(arena_elem) + offset_at(v.desc, coord) * elem;
    write_value(arena, byte / elem, v.desc.dtype, in);
  });
}

/// A scalar operand of `kind` 0: a Python int, 1: a Python float, 2: a Python bool, 3: a typed
/// scalar of dtype t; values at the edges (out of small dtypes' range, ±0, ±inf, NaN) or any.
Scalar decode_scalar(int kind, DType t, Input& in) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::int64_t kInts[] = {0, 1, -1, 2, 7, 127, 128, 255, 256, -129, 300, 65536,
                                           -2147483649, INT64_MIN, INT64_MAX, 3};
  static constexpr double kFloats[] = {0.5, -0.0, kInf, -kInf, std::numeric_limits<double>::quiet_NaN(),
                                       1e-3, 65504.0, 1e10, 2.5, -7.25, 0.0, 3.0, 1e-8, 1e300, -1.0, 0.1};
  const std::uint8_t v = in.u8();
  switch (kind) {
    case 0: return Scalar::weak_int(kInts[v % 16]);
    case 1: return Scalar::weak_float(kFloats[v % 16]);
    case 2: return Scalar::weak_bool(v % 2 == 1);
    default: {
      std::vector<std::uint8_t> bits(8, 0);
      write_value(bits, 0, t, in);
      const std::byte* p = reinterpret_cast<const std::byte*>(bits.data());
      if (is_floating(t)) return Scalar::of(t, detail::load_double(t, p));
      if (dtype_kind(t) == DTypeKind::unsigned_int) {
        std::uint64_t u = 0;
        std::memcpy(&u, bits.data(), dtype_size(t));
        return Scalar::of_uint(t, u);
      }
      return Scalar::of_int(t, detail::load_int(t, p));
    }
  }
}

/// Entries for a matrix of `desc`'s shape: from a shared pool of coordinates (duplicates and
/// matches with the other operand), fresh ones, out-of-range ones; in one of four orders; the
/// canonical flag honest or a lie. Returns whether every index is in range and the flag honest.
bool decode_entries(CooBytes& m, const std::vector<Coord>& pool, Input& in) {
  const CooDesc& d = m.desc;
  const std::uint8_t n = in.u8();
  const std::int64_t count = n < 200 ? n % 24 : n % 97;
  const bool have_range = d.nrows > 0 && d.ncols > 0;
  std::vector<Coord> e;
  for (std::int64_t k = 0; k < count; ++k) {
    const std::uint8_t s = in.u8() % 16;
    if (have_range && s < 12 && !pool.empty()) e.push_back(pool[s % pool.size()]);
    else if (have_range && s < 14) e.push_back({in_range(d.nrows, in), in_range(d.ncols, in)});
    else if (s == 15 && have_range) e.push_back({in_range(d.nrows, in), bad_index(d.ncols, d.index, in)});
    else e.push_back({bad_index(d.nrows, d.index, in), have_range ? in_range(d.ncols, in) : 0});
  }
  const auto less = [](const Coord& x, const Coord& y) { return x.r != y.r ? x.r < y.r : x.c < y.c; };
  switch (in.u8() % 4) {
    case 0: break;  // as generated
    case 1: std::stable_sort(e.begin(), e.end(), less); break;
    case 2:         // sorted without duplicates: canonical
      std::stable_sort(e.begin(), e.end(), less);
      e.erase(std::unique(e.begin(), e.end(), [](const Coord& x, const Coord& y) { return x.r == y.r && x.c == y.c; }),
              e.end());
      break;
    default:
      std::stable_sort(e.begin(), e.end(), less);
      std::reverse(e.begin(), e.end());
      break;
  }
  bool ranged = true, increasing = true;
  for (std::size_t k = 0; k < e.size(); ++k) {
    ranged = ranged && e[k].r >= 0 && e[k].r < d.nrows && e[k].c >= 0 && e[k].c < d.ncols;
    if (k > 0 && !less(e[k - 1], e[k])) increasing = false;
  }
  const std::int64_t nnz = static_cast<std::int64_t>(e.size());
  const std::size_t isz = index_size(d.index);
  m.rows.assign(static_cast<std::size_t>(nnz) * isz, 0);
  m.cols.assign(static_cast<std::size_t>(nnz) * isz, 0);
  for (std::int64_t k = 0; k < nnz; ++k) {
    store_index(m.rows, d.index, k, e[static_cast<std::size_t>(k)].r);
    store_index(m.cols, d.index, k, e[static_cast<std::size_t>(k)].c);
  }
  m.vals = values(d.dtype, nnz, in);
  m.desc.nnz = nnz;
  m.desc.canonical = in.u8() % 4 == 0 ? !increasing : increasing;  // a lie one time in four
  return ranged && m.desc.canonical == increasing;
}

}  // namespace ewise::fuzz::decode
