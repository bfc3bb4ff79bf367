// fuzz/api_decode.hpp — what the api decoder's files share (api_decode.cpp: the call;
// api_decode_values.cpp: its values and COO entries; api_decode_dense.cpp: its dense operands'
// strides and places in the arena).
#pragma once

#include <cstdint>
#include <vector>

#include "api_call.hpp"
#include "byte_reader.hpp"

namespace ewise::fuzz::decode {

/// The fuzz input as a stream of bytes plus a generator seeded from it for the bulk of values
/// and coordinates.
class Input : public ByteReader {
 public:
  using ByteReader::ByteReader;
  void seed(std::uint64_t s) { state_ = s; }
  std::uint64_t rand() { return splitmix64(state_); }
  std::int64_t below(std::int64_t n) { return n <= 0 ? 0 : static_cast<std::int64_t>(rand() % std::uint64_t(n)); }

 private:
  std::uint64_t state_ = 0;
};

inline constexpr std::int64_t kZone = 1 << 14;  // elements of the arena a dense operand may span

/// Row-major strides of `shape` (saturating: huge extents only come with an empty shape).
Dims row_major(const Dims& shape);
/// Strides for an input: contiguous, reversed, permuted, padded, broadcast (zeros) or small.
Dims input_strides(const Dims& shape, Input& in);
/// Strides for an output: a permutation of padded row-major strides with any signs (so never
/// self-overlapping), or rarely one zero stride (self-overlapping when its extent is > 1).
Dims output_strides(const Dims& shape, Input& in);
/// The number of arena elements a small view needs (0 for an empty one); -1 when too many.
std::int64_t needed(const TensorDesc& d, std::int64_t cap);
/// Places a view in the zone [zone, zone + size) of the arena (the zone must hold it).
std::int64_t place(const TensorDesc& d, std::int64_t zone, std::int64_t size, Input& in);
/// True when every element the view reaches lies in the arena's [0, total) elements.
bool inside(const ArenaView& v, std::int64_t total);
/// The dense operand of a sparse call, broadcasting (or not) to nrows x ncols.
TensorDesc sparse_dense_desc(const CooDesc& a, DType dtype, Input& in);


// ---- values and entries (api_decode_values.cpp)

struct Coord {
  std::int64_t r, c;
};
/// An index in [0, n): 0, n - 1, n / 2 or any (n > 0).
std::int64_t in_range(std::int64_t n, Input& in);
/// n elements of dtype t: special values (±0, ±1, ±inf, NaNs, extremes, subnormals), small
/// multiples of 1/4, or raw bits.
std::vector<std::uint8_t> values(DType t, std::int64_t n, Input& in);
/// Values of the view's own dtype at every element it reaches in an arena of `arena_elem`-byte
/// elements.
void write_view_values(std::vector<std::uint8_t>& arena, const ArenaView& v, std::size_t arena_elem,
                       Input& in);
/// A scalar operand of `kind` 0: a Python int, 1: a Python float, 2: a Python bool, 3: a typed
/// scalar of dtype t.
Scalar decode_scalar(int kind, DType t, Input& in);
/// m's entries from the pool, fresh or out of range, in one of four orders, the canonical flag
/// honest or a lie; whether every index is in range and the flag honest.
bool decode_entries(CooBytes& m, const std::vector<Coord>& pool, Input& in);

}  // namespace ewise::fuzz::decode
