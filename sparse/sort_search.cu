// sparse/sort_search.cu — COO ⊙ COO by sort_search: one operand (S) radix-sorted by key (used as
// it is when canonical), every entry of the other (Q) binary-searches it once; and the search
// pipeline it shares with linear_search (search.cuh).
#include "compaction.cuh"
#include "internal.hpp"
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

/// Compaction ops over Q's entries: entry i is flagged when it matched.
struct MatchFlag {
  const std::int64_t* matchpos;  ///< >= 0: entry i matched
  __device__ bool flag(std::int64_t i) const { return matchpos[i] >= 0; }
};
/// Writes the positions of matched entries.
struct WriteMatchPositions : MatchFlag {
  std::int64_t* out;
  __device__ void write(std::int64_t i, std::int64_t slot) const { out[slot] = i; }
};
/// For a non-canonical Q: the key and storage index of every matched entry, to be sorted.
struct WriteMatchItems : MatchFlag {
  KeySeq qkeys;
  WordArray keys, idx;
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    keys.set(slot, qkeys[i]);
    idx.set(slot, static_cast<std::uint64_t>(i));
  }
};

}  // namespace

DeviceCoo search_matches(const CooDesc& like, const CooView& Q, const EntrySeq& s, FindMatches find,
                         Status& status, cudaStream_t stream) {
  const std::int64_t nq = Q.desc.nnz;
  Workspace match({static_cast<std::size_t>(nq) * sizeof(std::int64_t)}, stream);
  auto* matchpos = match.get<std::int64_t>(0);
  Compaction found(nq, stream);
  const EntrySeq q = storage_order(Q);
  find(q.keys, nq, s.keys, s.n, matchpos, found.counts(), stream);
  const std::int64_t m = found.scan_total(status, 0);
  if (m == 0) return DeviceCoo(result_desc(like, 0), stream);

  if (Q.desc.canonical) {  // matched entries in storage order are already canonical
    Workspace heads({static_cast<std::size_t>(m) * sizeof(std::int64_t)}, stream);
    found.write(WriteMatchPositions{{matchpos}, heads.get<std::int64_t>(0)});
    DeviceCoo out(result_desc(like, m), stream);
    finalize(FinalizeArgs::products(q, s, heads.get<std::int64_t>(0), m, matchpos, MatchIndex::position)
                 .to_coo(out),
             like.dtype, stream);
    return out;
  }

  // Q not canonical: sort the matched entries by key (stably: duplicates stay in storage
  // order), then one output per run of equal keys.
  const bool wk = wide_keys(like), wi = static_cast<std::uint64_t>(nq) > 0xFFFFFFFFull;
  SortScratch sort(m, wk, wi ? 8 : 4, key_bits(like), stream);
  found.write(WriteMatchItems{{matchpos}, q.keys, WordArray{sort.keys_in(), wk}, WordArray{sort.vals_in(), wi}});
  sort.sort();
  EntrySeq matched = q;  // Q's entries in the order of their sorted keys
  matched.keys = KeySeq{{sort.keys(), wk}, {}, {}, q.keys.ncols};
  matched.perm = {sort.vals(), wi};
  matched.n = m;
  matched.unique = false;
  matched.sorted = true;
  const RunHeads heads(matched.keys, m, status.total_slot(1), stream);
  status.read();
  const std::int64_t u = status.total(1);
  DeviceCoo out(result_desc(like, u), stream);
  finalize(FinalizeArgs::products(matched, s, heads.positions(), u, matchpos, MatchIndex::storage)
               .to_coo(out),
           like.dtype, stream);
  return out;
}

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
