// sparse/search.cuh — the search pipeline shared by sort_search and linear_search: every entry
// of Q (in storage order) looks its key up in S; the matches are compacted (and, when Q is not
// canonical, sorted by key, one output per run) and finalized. Each algorithm brings its
// lookup: a lockstep binary search of S sorted (sort_search.cu) or a scan of all of S
// (linear_search.cu); the rest of the pipeline is search_matches (search.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compaction.cuh"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/detail/launch.cuh"
#include "keys.cuh"
#include "policy.hpp"
#include "sort.cuh"
#include "status.cuh"

namespace ewise::sparse_detail {

/// matchpos[i] = position in S of Q entry i's key (the first of its run), or -1; the tile's
/// number of matches to counts (store_tile_count). Lookup{}(s, ns, key, lo) sets lo[k], for
/// each of the thread's kItems keys, to the first position of S holding key[k] if there is one
/// (otherwise to a position that does not hold it, or ns).
template <class Lookup, class QK, class SK>
__global__ void __launch_bounds__(kBlock)
    find_matches_kernel(QK q, std::int64_t nq, SK s, std::int64_t ns, std::int64_t* matchpos,
                        std::int64_t* counts) {
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * kTile;
  std::uint64_t key[kItems];
  std::int64_t lo[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    key[k] = i < nq ? q[i] : 0;
  }
  Lookup{}(s, ns, key, lo);
  unsigned found = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = begin + tile_offset(k);
    if (i >= nq) continue;
    const bool hit = lo[k] < ns && s[lo[k]] == key[k];
    matchpos[i] = hit ? lo[k] : -1;
    found += hit ? 1u : 0u;
  }
  store_tile_count(found, counts);
}

/// Launches find_matches_kernel<Lookup> over Q's tiles for the typed keys of q and s.
template <class Lookup>
void launch_find_matches(const char* name, const KeySeq& q, std::int64_t nq, const KeySeq& s,
                         std::int64_t ns, std::int64_t* matchpos, std::int64_t* counts,
                         cudaStream_t stream) {
  with_typed_keys(q, [&](auto qk) {
    with_typed_keys(s, [&](auto sk) {
      detail::launch(name, find_matches_kernel<Lookup, decltype(qk), decltype(sk)>,
                     dim3(static_cast<unsigned>(tiles_for(nq))), dim3(kBlock), 0, stream, qk, nq, sk,
                     ns, matchpos, counts);
    });
  });
}

/// An algorithm's lookup: launch_find_matches with its Lookup.
using FindMatches = void (*)(const KeySeq& q, std::int64_t nq, const KeySeq& s, std::int64_t ns,
                             std::int64_t* matchpos, std::int64_t* counts, cudaStream_t stream);

/// The search once S is ready (sequence s, its index checks launched or fused): Q's entries
/// find their matches, the matched are compacted, sorted and finalized. `like` describes the
/// operands (shape, index type, dtype). Synchronizes once (canonical Q) or twice.
DeviceCoo search_matches(const CooDesc& like, const CooView& Q, const EntrySeq& s, FindMatches find,
                         Status& status, cudaStream_t stream);

}  // namespace ewise::sparse_detail
