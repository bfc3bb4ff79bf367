// sparse/compressed_tile.cuh — the single pass (single_pass.cuh) over two compressed operands
// of one format read as they are stored, their major indices never spelled out: the merge's
// split found in the offsets and then in one slice's indices, each tile's major indices found
// from the offsets in shared memory, the tile's keys staged from them, the offsets' checks.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "keys.cuh"
#include "merge_path.cuh"
#include "offsets.cuh"
#include "policy.hpp"

namespace ewise::sparse_detail {

/// The offsets of Q and S, nmajor slices each, and the words of their checks (null: none):
/// offsets decreasing at m → bad[0] = m; offsets[0] != 0 or offsets[nmajor] != nnz → bad[1] = 0
/// (device_expand_offsets' first two words; its range and order words, bad + 2, are the
/// operand's EntryCheck in the staging).
template <class I>
struct CompressedMajors {
  const I* q_offsets = nullptr;
  const I* s_offsets = nullptr;
  std::int64_t nmajor = 0;
  unsigned long long* q_bad = nullptr;
  unsigned long long* s_bad = nullptr;
};

/// offsets[m] clamped into [0, n]: entry positions read from the offsets stay inside the
/// operand's arrays whatever the offsets hold.
template <class I>
__device__ __forceinline__ std::int64_t offset_at(const I* offsets, std::int64_t m,
                                                  std::int64_t n) {
  return std::clamp<std::int64_t>(offsets[m], 0, n);
}

/// The split of the merge at diag as warp_merge_split finds it for keys (major, minor), and the
/// major index of merged entry diag (nmajor at the end of the merge).
struct CompressedSplit {
  std::int64_t q_before, major;
};

/// The split at diag (<= nq + ns) of two compressed operands (qc, sc their minor indices), by
/// the 32 lanes of a warp together: the last major m whose two slices start at or before diag
/// (warp_partition_point over the offsets), then the split of slice m's two runs of indices at
/// the rest of diag (another over the indices); about as many rounds of loads as
/// warp_merge_split takes. Whatever the operands hold, the split lies in
/// [max(0, diag - ns), min(diag, nq)] and the major in [0, nmajor].
template <class I>
__device__ CompressedSplit warp_compressed_split(const CompressedMajors<I>& c, const I* qc,
                                                 std::int64_t nq, const I* sc, std::int64_t ns,
                                                 std::int64_t diag) {
  const std::int64_t m = warp_partition_point(1, c.nmajor + 1, [&](std::int64_t r) {
                           return offset_at(c.q_offsets, r, nq) + offset_at(c.s_offsets, r, ns) <=
                                  diag;
                         }) - 1;
  const std::int64_t q0 = offset_at(c.q_offsets, m, nq), s0 = offset_at(c.s_offsets, m, ns);
  const bool last = m == c.nmajor;
  const std::int64_t q1 = last ? q0 : std::max(q0, offset_at(c.q_offsets, m + 1, nq));
  const std::int64_t s1 = last ? s0 : std::max(s0, offset_at(c.s_offsets, m + 1, ns));
  const std::int64_t d = diag - q0 - s0;  // merged entries of slice m before diag
  const std::int64_t i = warp_partition_point(
      std::max<std::int64_t>(0, d - (s1 - s0)), std::min(d, q1 - q0),
      [&](std::int64_t j) { return qc[q0 + j] <= sc[s0 + d - 1 - j]; });
  return {std::clamp(q0 + i, std::max<std::int64_t>(0, diag - ns), std::min(diag, nq)), m};
}

/// The span of major indices up to which tile_majors counts offsets in registers.
inline constexpr int kFewMajors = 4;

/// The largest of two values (the scan operator of tile_majors).
struct MaxOf {
  template <class U>
  __device__ U operator()(U a, U b) const {
    return a < b ? b : a;
  }
};

/// The major index of each entry of tile t into majors (shared memory, in the staging's layout:
/// the Q part, then the S part), block-wide, from m0 and m1, the major indices of the tile's
/// first merged entry and of the entry after its last (warp_compressed_split). For valid offsets
/// each entry gets its major index; for any offsets, some index in [m0, max(m0, m1)]. Three
/// ways, by the span m1 - m0:
/// - up to kFewMajors (long slices, as in a mask): each thread loads the span's offsets once
///   and counts those at or before each of its entries; no barrier (each thread reads back only
///   its own entries before the staging's barrier);
/// - up to a tile's entries: the start of each slice m in (m0, m1] that lies in the tile is
///   marked with m (an atomic max: of slices that start at one entry, the last, the one that is
///   not empty), and an inclusive max scan carries each mark over the entries after it; the S
///   part's values carry the top bit, so that one scan keeps the parts apart;
/// - longer (slices mostly empty, as in a power-law graph's tail, whose tiles span up to
///   millions of slices: marking them made its product 3.79 ms instead of 0.50): each entry's
///   major found by binary lifting over [m0, m1], its steps in lockstep over the thread's
///   entries so that their loads overlap.
/// The last two end with a barrier.
template <class I, class U, int kPerThread, class Scan>
__device__ void tile_majors(const CompressedMajors<I>& c, const MergeTile<kPerThread>& t,
                            std::int64_t nq, std::int64_t ns, std::int64_t m0, std::int64_t m1,
                            U* majors, typename Scan::TempStorage& scan) {
  constexpr U kS = U{1} << (8 * sizeof(U) - 1);
  if (m1 - m0 <= kFewMajors) {  // uniform across the block
    I qo[kFewMajors], so[kFewMajors];
#pragma unroll
    for (int j = 0; j < kFewMajors; ++j) {
      const bool in = m0 + 1 + j <= m1;
      qo[j] = in ? c.q_offsets[m0 + 1 + j] : std::numeric_limits<I>::max();
      so[j] = in ? c.s_offsets[m0 + 1 + j] : std::numeric_limits<I>::max();
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int e = k * kBlock + static_cast<int>(threadIdx.x);
      if (e >= t.len) continue;
      const bool in_q = e < t.nQ;
      // the entry's position, of the offsets' type: it lies below the operand's nnz, which
      // that type holds, and 32-bit compares take half the instructions of 64-bit ones
      const I p = static_cast<I>(in_q ? t.q0 + e : t.s0 + (e - t.nQ));
      U m = static_cast<U>(m0);
#pragma unroll
      for (int j = 0; j < kFewMajors; ++j) m += (in_q ? qo[j] : so[j]) <= p;
      majors[e] = m;
    }
    return;
  }
  const bool lift = m1 - m0 > MergeTile<kPerThread>::kEntries;  // uniform across the block
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < t.len) majors[e] = static_cast<U>(m0) | (e < t.nQ || lift ? U{0} : kS);
  }
  if (lift) {
    std::int64_t step = 1;
    while (step <= (m1 - m0) / 2) step *= 2;
    for (; step > 0; step /= 2) {
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const int e = k * kBlock + static_cast<int>(threadIdx.x);
        if (e >= t.len) continue;
        const bool in_q = e < t.nQ;
        const std::int64_t m = static_cast<std::int64_t>(majors[e]) + step;
        if (m <= m1 && (in_q ? c.q_offsets[m] <= t.q0 + e : c.s_offsets[m] <= t.s0 + e - t.nQ))
          majors[e] = static_cast<U>(m);
      }
    }
    __syncthreads();
    return;
  }
  __syncthreads();
  for (std::int64_t m = m0 + 1 + threadIdx.x; m <= m1; m += kBlock) {
    const std::int64_t q = offset_at(c.q_offsets, m, nq) - t.q0;
    const std::int64_t s = offset_at(c.s_offsets, m, ns) - t.s0;
    if (q >= 0 && q < t.nQ) atomicMax(&majors[q], static_cast<U>(m));
    if (s >= 0 && s < t.nS) atomicMax(&majors[t.nQ + s], static_cast<U>(m) | kS);
  }
  __syncthreads();
  // the scan: each thread kPerThread consecutive entries, then the threads' maxima
  const int first = static_cast<int>(threadIdx.x) * kPerThread;
  U v[kPerThread], run = 0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    run = MaxOf{}(run, first + k < t.len ? majors[first + k] : U{0});
    v[k] = run;
  }
  U before;
  Scan(scan).ExclusiveScan(run, before, U{0}, MaxOf{});
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
    if (first + k < t.len) majors[first + k] = MaxOf{}(before, v[k]) & ~kS;
  __syncthreads();
}

/// The keys of one operand's entries in a tile whose major indices tile_majors found: entry i's
/// major from majors[i - base] for i in [base, base + count), else (the entries next to the
/// tile) found near `hint` in the offsets; its minor index from the operand's indices (c).
template <class I, class U>
struct TileKeys : ImplicitKeys<I> {
  const I* offsets;
  const U* majors;
  std::int64_t nmajor, base, hint;
  int count;

  __device__ __forceinline__ typename ImplicitKeys<I>::Raw load(std::int64_t i) const {
    const std::int64_t e = i - base;
    const I m = e >= 0 && e < count ? static_cast<I>(majors[e])
                                    : static_cast<I>(major_near(offsets, nmajor, hint, i));
    return {m, this->c[i]};
  }
};

/// The offsets' checks of CompressedMajors for the majors that part `part` of `parts` takes
/// (m = part * kBlock + threadIdx.x, then every parts * kBlock): together, all of [0, nmajor].
template <class I>
__device__ void check_offsets(const CompressedMajors<I>& c, std::int64_t nq, std::int64_t ns,
                              std::int64_t part, std::int64_t parts) {
  if (c.q_bad == nullptr) return;
  const auto check = [&](const I* offsets, std::int64_t m, std::int64_t n,
                         unsigned long long* bad) {
    const I o = offsets[m];
    if (m < c.nmajor && o > offsets[m + 1]) atomicMin(bad, static_cast<unsigned long long>(m));
    if ((m == 0 && o != 0) || (m == c.nmajor && o != n)) atomicMin(bad + 1, 0ull);
  };
  for (std::int64_t m = part * kBlock + threadIdx.x; m <= c.nmajor; m += parts * kBlock) {
    check(c.q_offsets, m, nq, c.q_bad);
    check(c.s_offsets, m, ns, c.s_bad);
  }
}

}  // namespace ewise::sparse_detail
