// sparse/run_sums.cuh — the sums of runs of equal keys in a sequence, in sequence order in the
// compute type: a run's first entries by one thread, a long run's rest by its whole warp
// (finish_long_runs), so that a run of thousands of duplicates is not one thread's serial walk.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "policy.hpp"
#include "sort.cuh"

namespace ewise::sparse_detail {

/// How many entries past its head a thread sums alone before a run counts as long and is handed
/// to finish_long_runs: each of these adds waits on a dependent global load. A 16.8M-entry
/// embedding gradient (runs of up to ~18k duplicates) took 11.6 ms to coalesce on an H100 when
/// one thread walked every run.
inline constexpr int kShortRun = 8;

/// finish_long_runs' step: the positions its warp loads at once, kRunLoads a lane.
inline constexpr int kRunLoads = 4;
inline constexpr int kRunStep = 32 * kRunLoads;

/// 16 bytes of staged values: the unit of finish_long_runs' shared-memory reads.
template <class C>
struct alignas(16) StagedWord {
  static_assert(sizeof(C) == 4 || sizeof(C) == 8, "compute types are 4 or 8 bytes");
  static constexpr int kValues = 16 / static_cast<int>(sizeof(C));
  C v[kValues];
};

/// `sum` plus the first `count` of the kRunStep values staged at `staged`, in order: the serial
/// chain of dependent adds, a chunk of kChunkWords StagedWords at a time. Each chunk's
/// shared-memory reads are issued before the previous chunk's adds, in the block ahead of the
/// branch between a whole chunk (plain adds) and the last, partial one (adds up to `count`):
/// within one block the compiler moves such reads down to their first use, where every chunk
/// would wait out their latency (about 30 cycles, some 8 dependent float adds).
template <int kChunkWords, class C>
__device__ __forceinline__ C add_staged(C sum, const StagedWord<C>* staged, int count) {
  constexpr int kPer = StagedWord<C>::kValues, kChunk = kChunkWords * kPer;
  constexpr int kWords = kRunStep / kPer;
  static_assert(kWords % kChunkWords == 0, "a step is whole chunks");
  StagedWord<C> cur[kChunkWords], nxt[kChunkWords];
#pragma unroll
  for (int w = 0; w < kChunkWords; ++w) cur[w] = staged[w];
  for (int c = 0; c < count; c += kChunk) {
    const int next = (c + kChunk) / kPer % kWords;  // after the last chunk the first: not added
#pragma unroll
    for (int w = 0; w < kChunkWords; ++w) nxt[w] = staged[next + w];
    if (c + kChunk <= count) {
#pragma unroll
      for (int w = 0; w < kChunkWords; ++w)
#pragma unroll
        for (int e = 0; e < kPer; ++e) sum = ops::Add{}(sum, cur[w].v[e]);
    } else {
#pragma unroll
      for (int w = 0; w < kChunkWords; ++w)
#pragma unroll
        for (int e = 0; e < kPer; ++e)
          if (c + w * kPer + e < count) sum = ops::Add{}(sum, cur[w].v[e]);
    }
#pragma unroll
    for (int w = 0; w < kChunkWords; ++w) cur[w] = nxt[w];
  }
  return sum;
}

/// Returns `acc` plus the values at sequence positions [next, end of the run of `key`) in
/// position order, for every lane of the warp whose `pending` is set (one lane's run after
/// another; other lanes get `acc` back): bit for bit the one-thread serial sum. The sequence is
/// sorted (key_at), val_at gives a position's value in the compute type C. All 32 lanes call
/// it, in blocks of kBlock threads (the shared staging holds one step per warp).
///
/// The warp takes a run kRunStep positions a step. A step's loads are issued together and
/// unconditionally (positions past the sequence read its last entry and are left out): the
/// values, and the keys of every position, or once a step is known to be wholly in the run only
/// the key at its last position (the sorted order makes the rest equal). The ballot of the keys
/// counts the step's positions in the run, a prefix of it. The warp stages the values in its
/// shared memory, issues the next step's loads when the run goes on, and every lane then adds
/// the staged values in order to the same running sum (add_staged, kChunkWords StagedWords read
/// ahead, 16 bytes of registers each). So the chain of dependent adds waits on neither the
/// global loads, which overlap the previous step's adds, nor a shuffle or read per add.
template <int kChunkWords, class C, class K, class KeyAt, class ValAt>
__device__ __forceinline__ C finish_long_runs(bool pending, K key, std::int64_t next,
                                              std::int64_t n, C acc, KeyAt key_at,
                                              ValAt val_at) {
  using Stored = decltype(key_at(next));
  __shared__ StagedWord<C> staging[kWarps][kRunStep / StagedWord<C>::kValues];
  StagedWord<C>* const words = staging[threadIdx.x >> 5];
  C* const slots = reinterpret_cast<C*>(words);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const auto clamp = [n](std::int64_t p) { return p < n ? p : n - 1; };
  unsigned want = __ballot_sync(0xffffffffu, pending);
  while (want != 0) {
    const int src = __ffs(want) - 1;
    want &= want - 1;
    const K k = __shfl_sync(0xffffffffu, key, src);
    std::int64_t j = __shfl_sync(0xffffffffu, next, src);
    C sum = __shfl_sync(0xffffffffu, acc, src);
    Stored kx[kRunLoads];
    C x[kRunLoads];
    const auto load_keys = [&](std::int64_t from) {
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) kx[u] = key_at(clamp(from + 32 * u + lane));
    };
    const auto load_values = [&](std::int64_t from) {
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) x[u] = val_at(clamp(from + 32 * u + lane));
    };
    load_keys(j);
    load_values(j);
    bool whole = false;  // the step at j is wholly in the run
    for (;;) {
      int count = kRunStep;
      if (!whole) {
        count = 0;
#pragma unroll
        for (int u = 0; u < kRunLoads; ++u)
          count += __popc(__ballot_sync(0xffffffffu, j + 32 * u + lane < n && kx[u] == k));
      }
      __syncwarp();  // every lane is done reading the last staging
#pragma unroll
      for (int u = 0; u < kRunLoads; ++u) slots[32 * u + lane] = x[u];
      const bool more = count == kRunStep && j + kRunStep < n;
      Stored last{};
      if (more) {  // the next step's loads, in flight during this step's adds
        last = key_at(clamp(j + 2 * kRunStep - 1));
        load_values(j + kRunStep);
      }
      __syncwarp();
      sum = add_staged<kChunkWords>(sum, words, count);
      if (!more) break;
      j += kRunStep;
      whole = j + kRunStep <= n && last == k;
      if (!whole) load_keys(j);  // the step where the run ends: one more round trip a run
    }
    if (lane == src) acc = sum;
  }
  return acc;
}

/// The values of the run of s's entries with key `key` that starts at position p, summed in
/// sequence order in the compute type (s not sorted: every later position with that key).
template <class T>
__device__ detail::compute_t<T> run_sum(const EntrySeq& s, std::int64_t p, std::uint64_t key) {
  const auto* v = static_cast<const T*>(s.vals);
  detail::compute_t<T> acc = detail::to_compute(v[s.storage(p)]);
  if (!s.unique)
    for (std::int64_t pp = p + 1; pp < s.n; ++pp) {
      if (s.keys[pp] == key) acc = ops::Add{}(acc, detail::to_compute(v[s.storage(pp)]));
      else if (s.sorted) break;
    }
  return acc;
}

/// run_sum of sorted s's run at position p when `has`, else `fill`, for kernels whose whole
/// warp calls it: long runs are finished by the warp (finish_long_runs).
template <class T>
__device__ detail::compute_t<T> warp_run_sum(const EntrySeq& s, bool has, std::int64_t p,
                                             std::uint64_t key, detail::compute_t<T> fill) {
  using C = detail::compute_t<T>;
  const auto* v = static_cast<const T*>(s.vals);
  C acc = fill;
  bool pending = false;
  std::int64_t j = p + 1;
  if (has) {
    acc = detail::to_compute(v[s.storage(p)]);
    if (!s.unique) {
      const std::int64_t stop = j + kShortRun;
      for (; j < s.n && j < stop && s.keys[j] == key; ++j)
        acc = ops::Add{}(acc, detail::to_compute(v[s.storage(j)]));
      pending = j == stop && j < s.n && s.keys[j] == key;
    }
  }
  // One StagedWord read ahead: the union's write pass has no registers for more (40 a thread).
  return finish_long_runs<1>(
      pending, key, j, s.n, acc, [keys = s.keys](std::int64_t i) { return keys[i]; },
      [perm = s.perm, v](std::int64_t i) {
        return detail::to_compute(v[perm.p ? static_cast<std::int64_t>(perm[i]) : i]);
      });
}

}  // namespace ewise::sparse_detail
