// tests/testing/layouts.hpp — operands of any layout for the dense tests: how a view sits
// in a buffer of its own (transposed, strided, reversed, misaligned), the buffer offsets it
// reaches, and random broadcast shapes around vector widths and tile edges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

namespace ewise::test {

/// How a view sits in its buffer: dims stored in `perm` order (outermost first), every `step`th
/// element along each dim, some dims reversed, and the first element `offset` elements in (an
/// offset of 1 misaligns the data).
struct Layout {
  std::vector<int> perm;
  std::vector<int> step;
  std::vector<bool> reverse;
  int offset = 0;

  static Layout contiguous(int rank, int offset = 0) {
    Layout l;
    for (int d = 0; d < rank; ++d) {
      l.perm.push_back(d);
      l.step.push_back(1);
      l.reverse.push_back(false);
    }
    l.offset = offset;
    return l;
  }
  static Layout transposed(int rank) {  // the dims stored in reverse order
    Layout l = contiguous(rank);
    std::reverse(l.perm.begin(), l.perm.end());
    return l;
  }
  static Layout random(int rank, std::mt19937_64& rng) {
    Layout l = contiguous(rank);
    std::uniform_real_distribution<double> u(0, 1);
    if (u(rng) < 0.4) return l;
    if (u(rng) < 0.5) std::shuffle(l.perm.begin(), l.perm.end(), rng);
    for (int d = 0; d < rank; ++d) {
      if (u(rng) < 0.2) l.step[d] = 2;
      if (u(rng) < 0.2) l.reverse[d] = true;
    }
    l.offset = u(rng) < 0.3 ? 1 : 0;
    return l;
  }
};

/// Where a view of `shape` laid out as `layout` sits in a buffer of its own: its strides, the
/// element offset of its first element, and the buffer's elements.
struct Placement {
  Dims strides;
  std::int64_t base = 0;
  std::int64_t buffer_elements = 0;
};
inline Placement place(const Dims& shape, const Layout& l) {
  const int rank = shape.size();
  Dims storage_stride = Dims::of_rank(rank, 0);
  std::int64_t total = 1;
  for (int j = rank - 1; j >= 0; --j) {
    const int d = l.perm[j];
    storage_stride[d] = total;
    total *= std::max<std::int64_t>(shape[d], 1) * l.step[d];
  }
  Placement p;
  p.strides = Dims::of_rank(rank, 0);
  p.base = l.offset;
  for (int d = 0; d < rank; ++d) {
    p.strides[d] = storage_stride[d] * l.step[d] * (l.reverse[d] ? -1 : 1);
    if (l.reverse[d] && shape[d] > 0) p.base += (shape[d] - 1) * storage_stride[d] * l.step[d];
  }
  p.buffer_elements = total + l.offset;
  return p;
}

/// A device view of `shape` laid out as `layout` in a buffer of its own.
struct DeviceOperand {
  DeviceBuffer buf;
  std::int64_t buffer_elements = 0;
  TensorView view;
  std::int64_t base = 0;  ///< element offset of the view's first element in the buffer

  DeviceOperand(DType t, const Dims& shape, const Layout& l) {
    const Placement p = place(shape, l);
    base = p.base;
    buffer_elements = p.buffer_elements;
    buf = DeviceBuffer(static_cast<std::size_t>(buffer_elements) * dtype_size(t));
    view.desc = TensorDesc::strided(t, shape, p.strides);
    view = at(buf.data(), Memory::device);
  }
  /// The whole buffer as a 1-d view.
  TensorView whole() {
    return TensorView{buf.data(), TensorDesc::contiguous(view.desc.dtype, {buffer_elements}),
                      Memory::device};
  }
  /// The same view over another buffer of buffer_elements elements (a host mirror).
  TensorView at(void* buffer, Memory memory) const {
    return TensorView{static_cast<std::byte*>(buffer) +
                          base * static_cast<std::int64_t>(dtype_size(view.desc.dtype)),
                      view.desc, memory};
  }
  std::string str() const {
    return detail::concat(view.desc.shape.str(), " strides ", view.desc.strides.str(), " +", base);
  }
};

/// Calls f(offset) for the buffer offset of every element of a view with the given strides.
template <class F>
void for_each_offset(const Dims& shape, const Dims& strides, std::int64_t base, F&& f) {
  const int rank = shape.size();
  for (int d = 0; d < rank; ++d)
    if (shape[d] == 0) return;
  std::vector<std::int64_t> c(static_cast<std::size_t>(rank), 0);
  while (true) {
    std::int64_t off = base;
    for (int d = 0; d < rank; ++d) off += c[static_cast<std::size_t>(d)] * strides[d];
    f(off);
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++c[static_cast<std::size_t>(d)] < shape[d]) break;
      c[static_cast<std::size_t>(d)] = 0;
    }
    if (d < 0) return;
  }
}

/// A random output shape of rank 0..8 (mostly <= 5) of at most `max_numel` elements, with
/// extents around vector widths and tile edges; a and b take each dim or 1, and may be of lower
/// rank. About 3% of the shapes are empty.
inline void random_shapes(std::mt19937_64& rng, Dims* as, Dims* bs,
                          std::int64_t max_numel = 40000) {
  static const std::int64_t kExtents[] = {1,  1,  2,  3,  4,  5,  7,  8,  9,   15,
                                          16, 17, 31, 32, 33, 63, 64, 65, 100, 257};
  std::uniform_real_distribution<double> u(0, 1);
  const int rank = u(rng) < 0.1 ? 6 + static_cast<int>(rng() % 3) : static_cast<int>(rng() % 6);
  Dims shape;
  std::int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    std::int64_t e = rank > 5 ? 1 + static_cast<std::int64_t>(rng() % 3)
                              : kExtents[rng() % (sizeof kExtents / sizeof kExtents[0])];
    while (total * e > max_numel) e = std::max<std::int64_t>(1, e / 4);
    total *= e;
    shape.push_back(e);
  }
  if (rank > 0 && u(rng) < 0.03) shape[static_cast<int>(rng() % rank)] = 0;  // empty
  const auto operand = [&] {
    const int r = u(rng) < 0.3 ? static_cast<int>(rng() % (rank + 1)) : rank;
    Dims s;
    for (int d = rank - r; d < rank; ++d) s.push_back(u(rng) < 0.35 ? 1 : shape[d]);
    return s;
  };
  *as = operand();
  *bs = operand();
}

}  // namespace ewise::test
