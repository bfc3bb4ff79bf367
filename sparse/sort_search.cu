// sparse/sort_search.cu — COO ⊙ COO by sort_search: one operand (S) radix-sorted by key (used as
// it is when canonical), every entry of the other (Q) binary-searches it once; then the search
// pipeline it shares with linear_search (search.cuh).
#include "multiply.cuh"
#include "search.cuh"
#include "select.hpp"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// Branch-free lower bound of each key in S (sorted, non-empty): a thread's kItems searches
/// run in lockstep (the step sizes do not depend on the data), so their loads overlap.
struct BinarySearch {
  template <class SK>
  __device__ __forceinline__ void operator()(const SK& s, std::int64_t ns,
                                             const std::uint64_t (&key)[kItems],
                                             std::int64_t (&lo)[kItems]) const {
#pragma unroll
    for (int k = 0; k < kItems; ++k) lo[k] = 0;
    // The answer lies in [lo, lo + len].
    for (std::int64_t len = ns; len > 1;) {
      const std::int64_t half = len >> 1;
#pragma unroll
      for (int k = 0; k < kItems; ++k) lo[k] = s[lo[k] + half] < key[k] ? lo[k] + half : lo[k];
      len -= half;
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) lo[k] += s[lo[k]] < key[k] ? 1 : 0;
  }
};

void find_sorted_matches(const KeySeq& q, std::int64_t nq, const KeySeq& s, std::int64_t ns,
                         std::int64_t* matchpos, std::int64_t* counts, cudaStream_t stream) {
  launch_find_matches<BinarySearch>("sparse sort_search find_matches", q, nq, s, ns, matchpos,
                                    counts, stream);
}

}  // namespace

DeviceCoo sort_search_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                               cudaStream_t stream) {
  const bool s_is_a = sort_search_sorts_a(a.desc, b.desc);
  const CooView& S = s_is_a ? a : b;
  const CooView& Q = s_is_a ? b : a;
  const char* s_name = s_is_a ? "a" : "b";
  status.check(Q, s_is_a ? "b" : "a", validate);
  const bool sorts = !S.desc.canonical;  // the sort's first pass checks S
  if (!sorts) status.check(S, s_name, validate);
  const SortedSeq s = sort_entries(S, sorts ? status.fused(S, s_name, validate) : EntryCheck{}, stream);
  return search_matches(a.desc, Q, s.seq, find_sorted_matches, status, stream);
}

}  // namespace ewise::sparse_detail
