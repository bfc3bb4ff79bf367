// sparse/hash_merge.cu — COO ⊙ COO by hash_merge (filter_merge.cuh) with a hash set of the
// coordinates stored as its set: any shape, 16 to 32 bytes per entry of b.
#include <cuda/std/bit>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "filter_merge.cuh"
#include "multiply.cuh"

namespace ewise::sparse_detail {
namespace {

/// The keys stored, in an open-addressing table with linear probing: a power of two of at least
/// twice as many slots as keys inserted (so a probe ends at an empty slot soon), empty slots all
/// ones (no key is: keys are below nrows * ncols <= INT64_MAX).
struct HashSet {
  unsigned long long* slots;
  std::uint64_t mask;  ///< slots - 1
  static constexpr unsigned long long kEmpty = ~0ull;
  static std::size_t bytes(const CooDesc&, std::int64_t entries) {
    const auto slots = static_cast<std::uint64_t>(std::max<std::int64_t>(2 * entries, 2));
    return ::cuda::std::bit_ceil(slots) * sizeof(unsigned long long);
  }
  static constexpr int fill = 0xFF;
  static HashSet over(void* p, std::size_t bytes) {
    return {static_cast<unsigned long long*>(p), bytes / sizeof(unsigned long long) - 1};
  }
  /// MurmurHash3's 64-bit finalizer: neighbouring keys (one row's columns) land far apart.
  __device__ static std::uint64_t slot_of(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    k ^= k >> 33;
    k *= 0xC4CEB9FE1A85EC53ull;
    return k ^ (k >> 33);
  }
  __device__ void insert(std::uint64_t key) const {
    for (std::uint64_t i = slot_of(key) & mask;; i = (i + 1) & mask) {
      const unsigned long long prev = atomicCAS(slots + i, kEmpty, key);
      if (prev == kEmpty || prev == key) return;
    }
  }
  __device__ bool contains(std::uint64_t key) const {
    for (std::uint64_t i = slot_of(key) & mask;; i = (i + 1) & mask) {
      const unsigned long long s = slots[i];
      if (s == key) return true;
      if (s == kEmpty) return false;
    }
  }
};

}  // namespace

DeviceCoo hash_merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                              cudaStream_t stream) {
  return filter_merge<HashSet>(a, b, validate, status, stream);
}

}  // namespace ewise::sparse_detail
