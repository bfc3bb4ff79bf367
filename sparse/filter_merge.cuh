// sparse/filter_merge.cuh — the pipeline of bitmap_merge (bitmap_merge.cu) and hash_merge
// (hash_merge.cu), COO ⊙ COO for unsorted input: a set of one operand's coordinates drops the
// other's entries that cannot match, both ways, and merge runs on what is left, so only
// matching entries are ever sorted. Each algorithm brings its set: a Set has
//   static std::size_t bytes(const CooDesc& shape, std::int64_t entries);  // device bytes
//   static constexpr int fill;                    // the byte an empty set is cleared with
//   static Set over(void* memory, std::size_t bytes);
//   __device__ void insert(std::uint64_t key) const;
//   __device__ bool contains(std::uint64_t key) const;
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "compaction.cuh"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "multiply.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {

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

}  // namespace ewise::sparse_detail
