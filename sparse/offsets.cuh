// sparse/offsets.cuh — a compressed operand's major index of an entry, found in its offsets
// (offsets[m] = the first entry of slice m): by bisection, or near a major index already known.
// Whatever the offsets hold, every load stays inside the range each function names.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace ewise::sparse_detail {

/// The last m in [lo, hi] with offsets[m] <= k, for offsets[lo] <= k or lo = 0, by bisection;
/// every load stays in [lo, hi].
template <class I>
__device__ __forceinline__ std::int64_t last_at_or_before(const I* offsets, std::int64_t lo,
                                                          std::int64_t hi, std::int64_t k) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (offsets[mid] <= k)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// The major index of entry k < offsets[nmajor]: the last m in [0, nmajor) with offsets[m] <= k
/// (nmajor > 0). Every load stays in [0, nmajor), whatever the offsets hold.
template <class I>
__device__ __forceinline__ std::int64_t major_of(const I* offsets, std::int64_t nmajor,
                                                 std::int64_t k) {
  return last_at_or_before(offsets, 0, nmajor - 1, k);
}

/// The major index of entry k, given m, a major index whose slice starts at or before k: the
/// last m' >= m with offsets[m'] <= k, found by galloping from m (a gap of g empty slices
/// costs about 2 log g loads; the next slice, the common case, one). Every load stays in
/// [0, nmajor], whatever the offsets hold.
template <class I>
__device__ __forceinline__ std::int64_t advance_major(const I* offsets, std::int64_t nmajor,
                                                      std::int64_t m, std::int64_t k) {
  if (m + 1 >= nmajor || offsets[m + 1] > k) return m;
  std::int64_t lo = m + 1, step = 1;  // offsets[lo] <= k
  while (lo + step < nmajor && offsets[lo + step] <= k) {
    lo += step;
    step *= 2;
  }
  return last_at_or_before(offsets, lo, std::min(lo + step, nmajor) - 1, k);
}

/// The major index of entry k (the last m in [0, nmajor) with offsets[m] <= k, or 0), found by
/// galloping from `hint` in [0, nmajor) either way: one or two loads when k lies in the hint's
/// slice or the next. Every load stays in [0, nmajor), whatever the offsets hold.
template <class I>
__device__ __forceinline__ std::int64_t major_near(const I* offsets, std::int64_t nmajor,
                                                   std::int64_t hint, std::int64_t k) {
  if (offsets[hint] <= k) return advance_major(offsets, nmajor, hint, k);
  std::int64_t hi = hint, step = 1;  // offsets[hi] > k
  while (hi - step > 0 && offsets[hi - step] > k) {
    hi -= step;
    step *= 2;
  }
  return last_at_or_before(offsets, std::max<std::int64_t>(hi - step, 0), hi - 1, k);
}

}  // namespace ewise::sparse_detail
