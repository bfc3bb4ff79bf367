// sparse/bitmap_merge.cu — COO ⊙ COO by bitmap_merge (filter_merge.cuh) with a bit per cell of
// the matrix as its set: for small shapes, where the bitmap stays in L2.
#include <cstddef>
#include <cstdint>

#include "filter_merge.cuh"
#include "multiply.cuh"
#include "select.hpp"

namespace ewise::sparse_detail {
namespace {

/// A bit per cell of the matrix: bit row * ncols + col.
struct BitmapSet {
  std::uint32_t* bits;
  /// Bytes of the set for `entries` keys of shape d; cleared with `fill`.
  static std::size_t bytes(const CooDesc& d, std::int64_t) {
    return static_cast<std::size_t>(bitmap_bytes(d));
  }
  static constexpr int fill = 0;
  static BitmapSet over(void* p, std::size_t) { return {static_cast<std::uint32_t*>(p)}; }
  __device__ void insert(std::uint64_t key) const { atomicOr(bits + (key >> 5), 1u << (key & 31)); }
  __device__ bool contains(std::uint64_t key) const { return (bits[key >> 5] >> (key & 31)) & 1u; }
};

}  // namespace

DeviceCoo bitmap_merge_pipeline(const CooView& a, const CooView& b, bool validate,
                                Status& status, cudaStream_t stream) {
  return filter_merge<BitmapSet>(a, b, validate, status, stream);
}

}  // namespace ewise::sparse_detail
