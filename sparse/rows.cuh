// sparse/rows.cuh — what the row-sparse GPU operations share: rows.cu's accumulate and
// rows_union.cu's combine and coalesce. The index check, the sort's input (the row indices and
// storage positions), the layout of runs of equal rows, and the words read back.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "keys.cuh"

namespace ewise::sparse_detail {

/// The index check of a row-sparse operand, per stored row k: a row index outside [0, nrows)
/// → words[0] = min(k); for a view marked canonical, a row index not above the one before →
/// words[1] = min(k). Null words: no check.
struct RowCheck {
  IndexArray rows;
  std::int64_t nrows = 0;
  bool canonical = false;
  unsigned long long* words = nullptr;

  __device__ void operator()(std::int64_t k) const {
    if (words == nullptr) return;
    const std::int64_t r = rows[k];
    if (r < 0 || r >= nrows) atomicMin(words, static_cast<unsigned long long>(k));
    else if (canonical && k > 0 && rows[k - 1] >= r)
      atomicMin(words + 1, static_cast<unsigned long long>(k));
  }
};

/// The sort's input from `offset` on (combine's b follows a): keys[offset + k] = rows[k],
/// pos[offset + k] = offset + k for k < n, each row checked on the way (rows.cu's
/// row_keys_kernel, on `stream`).
void launch_row_keys(const RowCheck& check, std::int64_t n, std::int64_t offset, WordArray keys,
                     WordArray pos, cudaStream_t stream);

/// Runs of stored rows, each applied to one row of the table. Canonical (heads null): run s is
/// stored row s, at row rows[s]. Sorted: run s is positions [heads[s], heads[s + 1]) (the last
/// ends at n) of the sorted row indices `keys`, position j holding stored row pos[j].
struct RunLayout {
  IndexArray rows;
  WordArray keys, pos;
  const std::int64_t* heads = nullptr;
  std::int64_t runs = 0, n = 0;
};

/// Columns a thread of rows_kernel takes: their sums share each run lookup and position load,
/// and a quarter as many threads run (the embedding case's short runs, H200: 41 us, against 71
/// with one column a thread, whose dependent loads were a round trip each).
inline constexpr int kRowCols = 4;

/// Throws for a failed RowCheck of operand `what` (its two words read back), naming the first
/// bad stored row (rows.cu).
void throw_row_check(const std::int64_t (&check)[2], const RowSparseView& a, const char* what,
                     cudaStream_t stream);

/// The words of type W at device_words, read back (synchronizes).
template <class W>
W read_back(const unsigned long long* device_words, cudaStream_t stream) {
  W w{};
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&w, device_words, sizeof w, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return w;
}

}  // namespace ewise::sparse_detail
