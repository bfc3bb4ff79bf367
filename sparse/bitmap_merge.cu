// sparse/bitmap_merge.cu — COO ⊙ COO by bitmap_merge and hash_merge, for unsorted input: a set
// of one operand's coordinates drops the other's entries that cannot match, both ways, and merge
// runs on what is left, so only matching entries are ever sorted. The set is a bitmap of every
// cell (bitmap_merge: small shapes, where it stays in L2) or a hash set of the keys stored
// (hash_merge: any shape, 16 to 32 bytes per entry of b).
#include <cuda/std/bit>

#include <algorithm>
#include <cstddef>

#include "compaction.cuh"
#include "internal.hpp"
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

/// Inserts row * ncols + col of every entry in range (and runs its index check).
template <class Set>
__global__ void insert_kernel(EntryCheck check, IndexArray rows, IndexArray cols, std::int64_t n,
                              std::int64_t nrows, std::int64_t ncols, Set set) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    if (r < 0 || r >= nrows || c < 0 || c >= ncols) continue;
    set.insert(static_cast<std::uint64_t>(r * ncols + c));
  }
}

/// Marks the entries whose coordinate is in the set (runs their index check): the count pass
/// asks the set once per entry and keeps the answer in `marks` for the write pass.
template <class Set>
struct MarkBySet {
  EntryCheck check;
  IndexArray rows, cols;
  std::int64_t nrows, ncols;
  Set set;
  std::uint8_t* marks;
  __device__ bool flag(std::int64_t i) const {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    const bool hit = in && set.contains(static_cast<std::uint64_t>(r * ncols + c));
    marks[i] = hit ? 1 : 0;
    return hit;
  }
};

/// Copies the marked entries in storage order. Word: the values' bits (a copy needs no dtype).
template <class Word>
struct CopyMarked {
  const std::uint8_t* marks;
  IndexArray rows, cols;
  const Word* vals;
  IndexArray out_rows, out_cols;
  Word* out_vals;
  __device__ bool flag(std::int64_t i) const { return marks[i] != 0; }
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    out_rows.set(slot, rows[i]);
    out_cols.set(slot, cols[i]);
    out_vals[slot] = vals[i];
  }
};

/// The entries of m whose coordinate is in the set, as a new matrix (same order, so a canonical
/// m gives a canonical result). Synchronizes (reads the status).
template <class Set>
DeviceCoo keep_marked(const CooView& m, const EntryCheck& check, const Set& set,
                      std::uint8_t* marks, Status& status, int slot, cudaStream_t stream) {
  const CooDesc& d = m.desc;
  const IndexArray rows = index_array(m.rows, d.index), cols = index_array(m.cols, d.index);
  Compaction filter(d.nnz, stream);
  filter.count(MarkBySet<Set>{check, rows, cols, d.nrows, d.ncols, set, marks});
  CooDesc kept = d;
  kept.nnz = filter.scan_total(status, slot);
  DeviceCoo out(kept, stream);
  with_word(d.dtype, [&](auto word) {
    using W = decltype(word);
    filter.write(CopyMarked<W>{marks, rows, cols, static_cast<const W*>(m.vals),
                               index_array(out.rows(), d.index), index_array(out.cols(), d.index),
                               static_cast<W*>(out.vals())});
  });
  return out;
}

/// One set at a time (so that a bitmap can stay in L2): b's coordinates keep a's matching
/// entries (a'), then a''s coordinates keep b's; merge runs on a' and b'.
template <class Set>
DeviceCoo filter_merge(const CooView& a, const CooView& b, bool validate, Status& status,
                       cudaStream_t stream) {
  const CooDesc& d = a.desc;
  // The set sized for b's entries holds a''s keys too: a' has no key that b does not have.
  const auto marks_bytes = static_cast<std::size_t>(std::max(a.desc.nnz, b.desc.nnz));
  Workspace ws({Set::bytes(d, b.desc.nnz), marks_bytes}, stream);
  auto* marks = ws.get<std::uint8_t>(1);
  const auto fill_set = [&](const CooView& m, const EntryCheck& check) {
    const std::size_t used = Set::bytes(d, std::min(m.desc.nnz, b.desc.nnz));
    const Set set = Set::over(ws.get<std::byte>(0), used);
    EWISE_CUDA_CHECK(cudaMemsetAsync(ws.get<std::byte>(0), Set::fill, used, stream));
    detail::launch("sparse filter insert", insert_kernel<Set>, dim3(blocks_for(m.desc.nnz)),
                   dim3(kBlock), 0, stream, check, index_array(m.rows, d.index),
                   index_array(m.cols, d.index), m.desc.nnz, d.nrows, d.ncols, set);
    return set;
  };
  const EntryCheck check_a = status.fused(a, "a", validate), check_b = status.fused(b, "b", validate);
  const DeviceCoo kept_a = keep_marked(a, check_a, fill_set(b, check_b), marks, status, 0, stream);
  if (kept_a.nnz() == 0) return DeviceCoo(result_desc(d, 0), stream);
  const DeviceCoo kept_b =
      keep_marked(b, EntryCheck{}, fill_set(kept_a, EntryCheck{}), marks, status, 1, stream);
  return merge_pipeline(kept_a, kept_b, false, status, stream);
}

}  // namespace

DeviceCoo bitmap_merge_pipeline(const CooView& a, const CooView& b, bool validate,
                                Status& status, cudaStream_t stream) {
  return filter_merge<BitmapSet>(a, b, validate, status, stream);
}

DeviceCoo hash_merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                              cudaStream_t stream) {
  return filter_merge<HashSet>(a, b, validate, status, stream);
}

}  // namespace ewise::sparse_detail
