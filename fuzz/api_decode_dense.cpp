// fuzz/api_decode_dense.cpp — the dense operands of a decoded api call (api_decode.hpp):
// strides of inputs and outputs, the arena elements a view needs, and its place in the arena.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "api_decode.hpp"

namespace ewise::fuzz::decode {
namespace {

std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t p;
  return __builtin_mul_overflow(a, b, &p) ? INT64_MAX / 4 : p;
}

/// min and max element offsets of a (valid, small) descriptor; false when it has no elements.
bool span_of(const TensorDesc& d, std::int64_t& lo, std::int64_t& hi) {
  lo = hi = 0;
  for (int i = 0; i < d.rank(); ++i)
    if (d.shape[i] == 0) return false;  // before any product: empty views may have huge ones
  for (int i = 0; i < d.rank(); ++i) {
    const std::int64_t reach = (d.shape[i] - 1) * d.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  return true;
}

}  // namespace

Dims row_major(const Dims& shape) {
  Dims s = Dims::of_rank(shape.size(), 1);
  std::int64_t step = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    s[d] = step;
    // Saturating: huge extents only come with an empty shape, whose strides do not matter.
    if (__builtin_mul_overflow(step, std::max<std::int64_t>(shape[d], 1), &step)) step = INT64_MAX / 4;
  }
  return s;
}

Dims input_strides(const Dims& shape, Input& in) {
  Dims s = row_major(shape);
  const int r = shape.size();
  switch (in.u8() % 7) {
    case 0:
    case 1: break;
    case 2:
      for (int d = 0; d < r; ++d) s[d] = -s[d];
      break;
    case 3:
      for (int d = r - 1; d > 0; --d) std::swap(s[d], s[static_cast<int>(in.below(d + 1))]);
      break;
    case 4:
      for (int d = 0; d < r; ++d)  // saturated strides only come with empty shapes
        s[d] = std::min(sat_mul(s[d], 1 + in.u8() % 3), INT64_MAX / 4) + (d + 1 < r ? in.u8() % 2 : 0);
      break;
    case 5:
      for (int d = 0; d < r; ++d)
        if (in.u8() % 2) s[d] = 0;
      break;
    default:
      for (int d = 0; d < r; ++d) s[d] = static_cast<std::int64_t>(in.u8() % 7) - 3;
      break;
  }
  return s;
}

Dims output_strides(const Dims& shape, Input& in) {
  const int r = shape.size();
  Dims s = row_major(shape);
  const std::uint8_t mode = in.u8();
  if (mode % 2) {  // padded
    std::int64_t step = 1;
    for (int d = r - 1; d >= 0; --d) {
      s[d] = step;
      const std::int64_t extent = std::max<std::int64_t>(shape[d], 1);
      step = sat_mul(step, extent + (extent < INT64_MAX ? in.u8() % 2 : 0));
    }
  }
  if (mode & 2)
    for (int d = r - 1; d > 0; --d) std::swap(s[d], s[static_cast<int>(in.below(d + 1))]);
  if (mode & 4)
    for (int d = 0; d < r; ++d)
      if (in.u8() % 2) s[d] = -s[d];
  if (mode >= 240 && r > 0) s[static_cast<int>(in.below(r))] = 0;
  return s;
}

std::int64_t needed(const TensorDesc& d, std::int64_t cap) {
  for (int i = 0; i < d.rank(); ++i)
    if (d.shape[i] == 0) return 0;
  std::int64_t reach = 1;
  for (int i = 0; i < d.rank(); ++i) {
    std::int64_t span = 0;
    if (d.shape[i] == 1 || d.strides[i] == 0) continue;
    if (d.shape[i] > cap || __builtin_mul_overflow(d.shape[i] - 1, std::llabs(d.strides[i]), &span) ||
        __builtin_add_overflow(reach, span, &reach) || reach > cap)
      return -1;
  }
  return reach;
}

std::int64_t place(const TensorDesc& d, std::int64_t zone, std::int64_t size, Input& in) {
  std::int64_t lo, hi;
  if (!span_of(d, lo, hi)) return zone + in.below(size + 1);
  return zone - lo + in.below(size - (hi - lo + 1) + 1);
}

bool inside(const ArenaView& v, std::int64_t total) {
  std::int64_t lo, hi;
  if (!span_of(v.desc, lo, hi)) return true;
  return v.offset + lo >= 0 && v.offset + hi < total;
}

TensorDesc sparse_dense_desc(const CooDesc& a, DType dtype, Input& in) {
  const std::int64_t r = a.nrows, c = a.ncols;
  Dims shape;
  switch (in.u8() % 9) {
    case 0:
    case 1: shape = Dims{r, c}; break;
    case 2: shape = Dims{1, c}; break;
    case 3: shape = Dims{c}; break;
    case 4: shape = Dims{r, 1}; break;
    case 5: shape = Dims{}; break;
    case 6: shape = Dims{1, 1}; break;
    case 7: shape = Dims{r + (r < INT64_MAX ? 1 : -1), c}; break;  // does not broadcast
    default: shape = in.u8() % 2 ? Dims{1, r, c} : Dims{r}; break;
  }
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) shape[i] = 1;
  TensorDesc d{dtype, shape, input_strides(shape, in)};
  if (needed(d, kZone) < 0) d = TensorDesc{dtype, Dims{}, Dims{}};  // too large: a scalar
  return d;
}

}  // namespace ewise::fuzz::decode
