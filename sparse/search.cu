// sparse/search.cu — search_matches (search.cuh): the search pipeline of sort_search and
// linear_search once each entry of Q has found its match in S.
#include <cstdint>

#include "compaction.cuh"
#include "finalize.cuh"
#include "internal.hpp"
#include "search.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

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

}  // namespace ewise::sparse_detail
