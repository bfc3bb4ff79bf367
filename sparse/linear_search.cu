// sparse/linear_search.cu — COO ⊙ COO by linear_search, the HammerBlade write-up's first,
// unoptimized kernel: every entry of a scans all of b (its keys in storage order), then the
// search pipeline of sort_search (search.cuh).
#include "multiply.cuh"
#include "search.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// The first position of S holding each key, or ns: a scan of all of S per key.
struct LinearScan {
  template <class SK>
  __device__ __forceinline__ void operator()(const SK& s, std::int64_t ns,
                                             const std::uint64_t (&key)[kItems],
                                             std::int64_t (&lo)[kItems]) const {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      lo[k] = ns;
      for (std::int64_t p = 0; p < ns; ++p)
        if (s[p] == key[k]) {
          lo[k] = p;
          break;
        }
    }
  }
};

void find_linear_matches(const KeySeq& q, std::int64_t nq, const KeySeq& s, std::int64_t ns,
                         std::int64_t* matchpos, std::int64_t* counts, cudaStream_t stream) {
  launch_find_matches<LinearScan>("sparse linear_search", q, nq, s, ns, matchpos, counts, stream);
}

}  // namespace

DeviceCoo linear_search_pipeline(const CooView& a, const CooView& b, bool validate,
                                 Status& status, cudaStream_t stream) {
  status.check(a, "a", validate);
  status.check(b, "b", validate);
  const SortedSeq s = storage_keys(b, stream);
  return search_matches(a.desc, a, s.seq, find_linear_matches, status, stream);
}

}  // namespace ewise::sparse_detail
