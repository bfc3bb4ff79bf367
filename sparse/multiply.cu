// sparse/multiply.cu — COO ⊙ COO on the GPU: sort_search, merge, bitmap_merge, linear_search.
//
// Every algorithm ends the same way: a list of "heads" (positions in a sequence of Q's entries,
// in increasing key order, each the first of its run of equal keys and matched in S at
// matchpos), then finalize() sums both operands' duplicates, multiplies and writes the result.
#include <type_traits>
#include <utility>

#include "ewise/ops.hpp"
#include "kernels.cuh"

namespace ewise::sparse_detail {
namespace {

// ---- sort_search and linear_search: every Q entry (storage order) looks itself up in S ------

/// matchpos[i] = position in S of Q entry i's key (the first of its run), or -1; counts[tile]
/// = matches in the tile. Binary search runs all of a thread's kItems searches in lockstep (the
/// step sizes do not depend on the data), so their loads overlap. `linear`: the write-up's
/// unoptimized scan of all of S instead.
template <class QK, class SK>
__global__ void __launch_bounds__(kBlock)
    find_matches_kernel(QK q, std::int64_t nq, SK s, std::int64_t ns, bool linear,
                        std::int64_t* matchpos, std::int64_t* counts) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kTile + threadIdx.x;
  std::uint64_t key[kItems];
  std::int64_t lo[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = base + k * kBlock;
    key[k] = i < nq ? q[i] : 0;
    lo[k] = 0;
  }
  if (linear) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      lo[k] = ns;
      for (std::int64_t p = 0; p < ns; ++p)
        if (s[p] == key[k]) {
          lo[k] = p;
          break;
        }
    }
  } else {
    // Branch-free lower bound: the answer lies in [lo, lo + len] (S is non-empty).
    for (std::int64_t len = ns; len > 1;) {
      const std::int64_t half = len >> 1;
#pragma unroll
      for (int k = 0; k < kItems; ++k) lo[k] = s[lo[k] + half] < key[k] ? lo[k] + half : lo[k];
      len -= half;
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) lo[k] += s[lo[k]] < key[k] ? 1 : 0;
  }
  unsigned found = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::int64_t i = base + k * kBlock;
    if (i >= nq) continue;
    const bool hit = lo[k] < ns && s[lo[k]] == key[k];
    matchpos[i] = hit ? lo[k] : -1;
    found += hit ? 1u : 0u;
  }
  store_block_sum(found, counts + blockIdx.x);
}

/// For a non-canonical Q: the key and storage index of every matched entry, to be sorted.
struct WriteMatchItems : MatchFlag {
  KeySeq qkeys;
  WordArray keys, idx;
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    keys.set(slot, qkeys[i]);
    idx.set(slot, static_cast<std::uint64_t>(i));
  }
};

DeviceCoo search_pipeline(const CooView& a, const CooView& b, bool linear, bool validate,
                          Status& status, cudaStream_t stream) {
  const bool s_is_a = !linear && sort_search_sorts_a(a.desc, b.desc);
  const CooView& S = s_is_a ? a : b;
  const CooView& Q = s_is_a ? b : a;
  const char* s_name = s_is_a ? "a" : "b";
  const std::int64_t nq = Q.desc.nnz;
  status.check(Q, s_is_a ? "b" : "a", validate);
  const bool sorts = !linear && !S.desc.canonical;  // the sort's first pass checks S
  if (!sorts) status.check(S, s_name, validate);
  const SortedSeq s = linear ? storage_keys(S, stream)
                             : sort_entries(S, sorts ? status.fused(S, s_name, validate) : EntryCheck{}, stream);

  Workspace match({static_cast<std::size_t>(nq) * sizeof(std::int64_t)}, stream);
  auto* matchpos = match.get<std::int64_t>(0);
  Compaction found(nq, stream);
  const KeySeq qkeys = implicit_keys(Q);
  with_typed_keys(qkeys, [&](auto qk) {
    with_typed_keys(s.keys, [&](auto sk) {
      detail::launch(linear ? "sparse linear_search" : "sparse sort_search find_matches",
                     find_matches_kernel<decltype(qk), decltype(sk)>,
                     dim3(static_cast<unsigned>(found.tiles())), dim3(kBlock), 0, stream, qk, nq, sk,
                     s.n, linear, matchpos, found.counts());
    });
  });
  const std::int64_t m = found.scan_total(status, 0);
  DeviceCoo out(result_desc(a.desc, 0), stream);

  FinalizeArgs f;
  f.ncols = static_cast<std::uint64_t>(Q.desc.ncols);
  f.qrows = index_array(Q.rows, Q.desc.index);
  f.qcols = index_array(Q.cols, Q.desc.index);
  f.qvals = Q.vals;
  f.factor = Factor::sparse;
  f.matchpos = matchpos;
  f.skeys = s.keys;
  f.sperm = s.perm;
  f.ns = s.n;
  f.s_unique = s.unique;
  f.s_sorted = s.sorted;
  f.svals = S.vals;
  if (m == 0) return out;

  if (Q.desc.canonical) {  // matched entries in storage order are already canonical
    Workspace heads({static_cast<std::size_t>(m) * sizeof(std::int64_t)}, stream);
    found.write(WriteMatchPositions{{matchpos}, heads.get<std::int64_t>(0)});
    out = DeviceCoo(result_desc(a.desc, m), stream);
    f.nout = m;
    f.heads = heads.get<std::int64_t>(0);
    f.qkeys = qkeys;
    f.nq = nq;
    f.q_unique = true;
    set_output(f, out);
    finalize(f, a.desc.dtype, stream);
    return out;
  }

  // Q not canonical: sort the matched entries by key (stably: duplicates stay in storage
  // order), then one output per run of equal keys.
  const bool wk = wide_keys(a.desc), wi = static_cast<std::uint64_t>(nq) > 0xFFFFFFFFull;
  const int bits = key_bits(a.desc);
  const auto kb = static_cast<std::size_t>(m) * (wk ? 8 : 4), ib = static_cast<std::size_t>(m) * (wi ? 8 : 4);
  Workspace items({kb, kb, ib, ib, sort_pairs_temp_bytes(m, wk, wi ? 8 : 4, bits)}, stream);
  SortBuffers buf;
  buf.keys[0] = items.get(0);
  buf.keys[1] = items.get(1);
  buf.vals[0] = items.get(2);
  buf.vals[1] = items.get(3);
  found.write(WriteMatchItems{{matchpos}, qkeys, WordArray{buf.keys[0], wk}, WordArray{buf.vals[0], wi}});
  sort_pairs(items.get(4), items.bytes(4), buf, m, wk, wi ? 8 : 4, bits, stream);
  const KeySeq sorted_keys{{buf.keys[buf.selector], wk}, {}, {}, f.ncols};

  Compaction runs(m, stream);
  runs.count(RunHeads{sorted_keys, nullptr});
  const std::int64_t u = runs.scan_total(status, 1);
  Workspace heads({static_cast<std::size_t>(u) * sizeof(std::int64_t)}, stream);
  runs.write(RunHeads{sorted_keys, heads.get<std::int64_t>(0)});
  out = DeviceCoo(result_desc(a.desc, u), stream);
  f.nout = u;
  f.heads = heads.get<std::int64_t>(0);
  f.qkeys = sorted_keys;
  f.qperm = {buf.vals[buf.selector], wi};
  f.nq = m;
  f.q_unique = false;
  f.match_index = MatchIndex::storage;
  set_output(f, out);
  finalize(f, a.desc.dtype, stream);
  return out;
}

// ---- merge: both operands in sorted order, merge-path tiles of equal size -------------------

/// q_split[t] = how many Q entries lie among the first t * kTile entries of the merge of Q and
/// S, where on equal keys Q's entries come first.
template <class QK, class SK>
__global__ void merge_partition_kernel(QK q, std::int64_t nq, SK s, std::int64_t ns,
                                       std::int64_t tiles, std::int64_t* q_split) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t > tiles) return;
  const std::int64_t diag = std::min(t * kTile, nq + ns);
  std::int64_t lo = std::max<std::int64_t>(0, diag - ns), hi = std::min(diag, nq);
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (q[mid] <= s[diag - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  q_split[t] = lo;
}

/// A match of merge tile t: Q position q_split[t] + (m & 0xFFFF), S position
/// t * kTile - q_split[t] + (m >> 16) (both parts of a tile are at most kTile <= 0xFFFF long).
using TileMatch = std::uint32_t;
static_assert(kTile <= 0xFFFF, "tile positions must fit 16 bits");

/// Tile t merges kTile entries, Q[q0, q1) and S[s0, s1), staged in shared memory as KT keys
/// with Q[q0 - 1] before and S[s1] after them: every load is issued before any is used. Each
/// thread merges kItems consecutive positions of the tile (merge-path search in shared memory,
/// then a serial merge). When Q[i] is taken, the S entry the merge stands at is its lower bound
/// in S (on equal keys Q comes first), so Q[i] matches when that entry has its key; of a run of
/// equal Q keys only the first (the head) matches. The tile's matches, in order, go to
/// staging[q0 ...] (Q positions are distinct, so at most q1 - q0 of them) and their number to
/// counts[t]; the last tile also zeroes counts[tiles], so the exclusive scan ends with the
/// total. Runs the index checks of the entries the tile holds (range; for a canonical operand
/// also the order, on neighbouring keys). A split that cannot come from sorted operands (a
/// broken canonical promise) sets *bad_split and the tile does nothing.
template <class QK, class SK, class KT>
__global__ void __launch_bounds__(kBlock)
    merge_match_kernel(QK q, std::int64_t nq, bool q_unique, SK s, std::int64_t ns, std::int64_t tiles,
                       const std::int64_t* q_split, EntryCheck qcheck, EntryCheck scheck,
                       TileMatch* staging, std::int64_t* counts, std::int64_t* bad_split) {
  __shared__ KT sm[kTile + 2];
  __shared__ unsigned warp_found[kWarps];
  const std::int64_t t = blockIdx.x;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (t == tiles - 1 && threadIdx.x == 0) counts[tiles] = 0;
  const std::int64_t diag0 = t * kTile, diag1 = std::min(diag0 + kTile, nq + ns);
  const int len = static_cast<int>(diag1 - diag0);
  const std::int64_t q0 = q_split[t], q1 = q_split[t + 1];
  if (q1 < q0 || q1 - q0 > len) {  // uniform across the block
    if (threadIdx.x == 0) {
      counts[t] = 0;
      *bad_split = 1;
    }
    return;
  }
  const int nQ = static_cast<int>(q1 - q0), nS = len - nQ;
  const std::int64_t s0 = diag0 - q0, s1 = diag1 - q1;
  const bool has_prev = q0 > 0, has_next = s1 < ns;

  // Stage: sm[0] = Q[q0 - 1], sm[1 + e] = tile entry e (Q part, then S part), sm[1 + len] = S[s1].
  typename QK::Raw qr[kItems];
  typename SK::Raw sr[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) qr[k] = q.load(q0 + e);
    else if (e < len) sr[k] = s.load(s0 + (e - nQ));
  }
  typename QK::Raw qprev{};
  typename SK::Raw snext{};
  if (threadIdx.x == 0 && has_prev) qprev = q.load(q0 - 1);
  if (threadIdx.x == 0 && has_next) snext = s.load(s1);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int e = k * kBlock + static_cast<int>(threadIdx.x);
    if (e < nQ) {
      if (qcheck.words && !q.in_range(qr[k], qcheck.nrows, qcheck.ncols))
        atomicMin(qcheck.words, static_cast<unsigned long long>(q0 + e));
      sm[1 + e] = static_cast<KT>(q.key(qr[k]));
    } else if (e < len) {
      if (scheck.words && !s.in_range(sr[k], scheck.nrows, scheck.ncols))
        atomicMin(scheck.words, static_cast<unsigned long long>(s0 + (e - nQ)));
      sm[1 + e] = static_cast<KT>(s.key(sr[k]));
    }
  }
  if (threadIdx.x == 0) {
    sm[0] = has_prev ? static_cast<KT>(q.key(qprev)) : KT{0};
    sm[1 + len] = has_next ? static_cast<KT>(s.key(snext)) : KT{0};
  }
  __syncthreads();
  // Canonical promises: Q entry j must come after Q entry j - 1; S entry i + 1 after S entry i.
  // Keys order entries as (row, col) does when both are in range, and an entry out of range
  // is reported before any order failure of its matrix.
  const bool q_order = qcheck.words && qcheck.canonical, s_order = scheck.words && scheck.canonical;
  if (q_order || s_order) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int e = k * kBlock + static_cast<int>(threadIdx.x);
      if (e < nQ) {
        if (q_order && q0 + e > 0 && sm[e] >= sm[1 + e])
          atomicMin(qcheck.words + 1, static_cast<unsigned long long>(q0 + e));
      } else if (e < len) {
        const std::int64_t next = s0 + (e - nQ) + 1;
        if (s_order && next < ns && sm[1 + e] >= sm[2 + e])
          atomicMin(scheck.words + 1, static_cast<unsigned long long>(next));
      }
    }
  }

  const KT* Q = sm + 1;
  const KT* S = sm + 1 + nQ;
  const int d0 = std::min(static_cast<int>(threadIdx.x) * kItems, len);
  int lo = std::max(0, d0 - nS), hi = std::min(d0, nQ);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (Q[mid] <= S[d0 - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  int i = lo, j = d0 - lo;
  TileMatch found[kItems];
  unsigned mask = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    found[k] = 0;
    if (d0 + k >= len) continue;
    if (i < nQ && (j >= nS || Q[i] <= S[j])) {
      const KT key = Q[i];
      const bool head = q_unique || q0 + i == 0 || Q[i - 1] != key;
      if (head && (j < nS || has_next) && S[j] == key) {
        found[k] = static_cast<TileMatch>(i) | static_cast<TileMatch>(j) << 16;
        mask |= 1u << k;
      }
      ++i;
    } else {
      ++j;
    }
  }
  // Block-wide exclusive scan of the per-thread match counts.
  const unsigned c = __popc(mask);
  unsigned incl = c;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned v = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= static_cast<unsigned>(d)) incl += v;
  }
  if (lane == 31) warp_found[warp] = incl;
  __syncthreads();
  unsigned before = incl - c, total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    before += static_cast<unsigned>(w) < warp ? warp_found[w] : 0u;
    total += warp_found[w];
  }
  // At most nQ matches from sorted operands; the bound keeps broken input inside the buffer.
  const unsigned cap = static_cast<unsigned>(nQ);
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((mask >> k) & 1u) {
      const unsigned slot = before + __popc(mask & ((1u << k) - 1u));
      if (slot < cap) staging[q0 + slot] = found[k];
    }
  if (threadIdx.x == 0) counts[t] = std::min(total, cap);
}

/// Writes tile t's matches to output slots offsets[t] ...: op.write(Q position, S position, slot).
template <class Op>
__global__ void __launch_bounds__(kBlock)
    merge_write_kernel(const std::int64_t* q_split, const TileMatch* staging, const std::int64_t* offsets, Op op) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t base = offsets[t], n = offsets[t + 1] - base;
  const std::int64_t q0 = q_split[t], s0 = t * kTile - q0;
  for (std::int64_t k = threadIdx.x; k < n; k += kBlock) {
    const TileMatch m = staging[q0 + k];
    op.write(q0 + (m & 0xFFFFu), s0 + (m >> 16), base + k);
  }
}

/// Both operands canonical: the result straight from the match, (row, col, q * s).
template <class T>
struct MergeDirect {
  IndexArray qrows, qcols;
  const T* qv;
  const T* sv;
  IndexArray out_rows, out_cols;
  T* out_vals;
  __device__ void write(std::int64_t j, std::int64_t p, std::int64_t slot) const {
    out_rows.set(slot, qrows[j]);
    out_cols.set(slot, qcols[j]);
    out_vals[slot] = detail::from_compute<T>(ops::Mul{}(detail::to_compute(qv[j]), detail::to_compute(sv[p])));
  }
};

/// Otherwise: finalize sums the duplicates of both runs.
template <class T>
struct MergeFinalize {
  FinalizeArgs f;
  __device__ void write(std::int64_t j, std::int64_t p, std::int64_t slot) const {
    finalize_entry<T>(f, slot, j, p);
  }
};

/// Calls f(q accessor, s accessor, KT{}) for two key sequences over matrices of one shape and
/// index type: stored keys are KT (32-bit unless wide), computed ones come from the indices.
template <class I, class K, class F>
void with_key_kind(const KeySeq& k, F&& f) {
  if (k.keys.p) f(StoredKeys<K>{static_cast<const K*>(k.keys.p)});
  else f(ImplicitKeys<I>{static_cast<const I*>(k.rows.p), static_cast<const I*>(k.cols.p), k.ncols});
}
template <class F>
void with_merge_keys(const KeySeq& q, const KeySeq& s, bool wide, F&& f) {
  const auto go = [&](auto itag, auto ktag) {
    using I = decltype(itag);
    using K = decltype(ktag);
    with_key_kind<I, K>(q, [&](auto qk) { with_key_kind<I, K>(s, [&](auto sk) { f(qk, sk, K{}); }); });
  };
  if (q.rows.wide) {
    if (wide) go(std::int64_t{}, std::uint64_t{});
    else go(std::int64_t{}, std::uint32_t{});
  } else {
    if (wide) go(std::int32_t{}, std::uint64_t{});
    else go(std::int32_t{}, std::uint32_t{});
  }
}

DeviceCoo merge_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                         cudaStream_t stream) {
  const bool q_is_a = a.desc.nnz <= b.desc.nnz;  // fewer entries to look up
  const CooView& Q = q_is_a ? a : b;
  const CooView& S = q_is_a ? b : a;
  // Sorted operands are checked by the sort's first pass, canonical ones by the merge.
  const EntryCheck qc = status.fused(Q, q_is_a ? "a" : "b", validate);
  const EntryCheck sc = status.fused(S, q_is_a ? "b" : "a", validate);
  const SortedSeq q = sort_entries(Q, Q.desc.canonical ? EntryCheck{} : qc, stream);
  const SortedSeq s = sort_entries(S, S.desc.canonical ? EntryCheck{} : sc, stream);
  const std::int64_t tiles = tiles_for(q.n + s.n);
  const auto words = static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t);
  // q_split, counts, offsets, scan storage, staging: one allocation.
  Workspace ws({words, words, words, exclusive_sum_temp_bytes(tiles + 1),
                static_cast<std::size_t>(q.n) * sizeof(TileMatch)}, stream);
  auto* q_split = ws.get<std::int64_t>(0);
  auto* counts = ws.get<std::int64_t>(1);
  auto* offsets = ws.get<std::int64_t>(2);
  auto* staging = ws.get<TileMatch>(4);
  constexpr int kBadSplit = 2, kTotal = 0;  // status total slots
  with_merge_keys(q.keys, s.keys, wide_keys(a.desc), [&](auto qk, auto sk, auto ktag) {
    using QK = decltype(qk);
    using SK = decltype(sk);
    detail::launch("sparse merge_partition", merge_partition_kernel<QK, SK>,
                   dim3(static_cast<unsigned>((tiles + 1 + kBlock - 1) / kBlock)), dim3(kBlock), 0,
                   stream, qk, q.n, sk, s.n, tiles, q_split);
    detail::launch("sparse merge_match", merge_match_kernel<QK, SK, decltype(ktag)>,
                   dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, qk, q.n, q.unique, sk,
                   s.n, tiles, q_split, Q.desc.canonical ? qc : EntryCheck{},
                   S.desc.canonical ? sc : EntryCheck{}, staging, counts, status.total_slot(kBadSplit));
  });
  exclusive_sum(ws.get(3), ws.bytes(3), counts, offsets, tiles + 1, stream);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(status.total_slot(kTotal), offsets + tiles, sizeof(std::int64_t),
                                   cudaMemcpyDeviceToDevice, stream));
  status.read();
  if (status.total(kBadSplit) != -1) {
    // Only a canonical operand that is not sorted splits so: its check names the entry.
    status.recheck();
    EWISE_EXPECTS(!validate, "merge: an operand marked canonical is not sorted");
  }
  const std::int64_t m = status.total(kTotal);
  DeviceCoo out(result_desc(a.desc, m), stream);
  if (m == 0) return out;
  const auto write = [&](const auto& op) {
    detail::launch("sparse merge_write", merge_write_kernel<std::decay_t<decltype(op)>>,
                   dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, q_split, staging, offsets, op);
  };
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (Q.desc.canonical && S.desc.canonical) {
      write(MergeDirect<T>{index_array(Q.rows, Q.desc.index), index_array(Q.cols, Q.desc.index),
                           static_cast<const T*>(Q.vals), static_cast<const T*>(S.vals),
                           index_array(out.rows(), out.desc().index),
                           index_array(out.cols(), out.desc().index), static_cast<T*>(out.vals())});
      return;
    }
    FinalizeArgs f;
    f.qkeys = q.keys;
    f.qperm = q.perm;
    f.nq = q.n;
    f.q_unique = q.unique;
    f.qrows = index_array(Q.rows, Q.desc.index);
    f.qcols = index_array(Q.cols, Q.desc.index);
    f.qvals = Q.vals;
    f.ncols = static_cast<std::uint64_t>(Q.desc.ncols);
    f.factor = Factor::sparse;
    f.skeys = s.keys;
    f.sperm = s.perm;
    f.ns = s.n;
    f.s_unique = s.unique;
    f.svals = S.vals;
    set_output(f, out);
    write(MergeFinalize<T>{f});
  });
  return out;
}

// ---- bitmap_merge: drop the entries that cannot match, then merge what is left ----------------

/// Sets bit row * ncols + col for every entry in range (and runs its index check).
__global__ void set_bits_kernel(EntryCheck check, IndexArray rows, IndexArray cols, std::int64_t n,
                                std::int64_t nrows, std::int64_t ncols, std::uint32_t* bits) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    if (r < 0 || r >= nrows || c < 0 || c >= ncols) continue;
    const auto key = static_cast<std::uint64_t>(r * ncols + c);
    atomicOr(bits + (key >> 5), 1u << (key & 31));
  }
}

/// Marks the entries whose coordinate has its bit set (runs their index check): the count
/// pass tests the bitmap once per entry and keeps the answer in `marks` for the write pass.
struct MarkByBitmap {
  EntryCheck check;
  IndexArray rows, cols;
  std::int64_t nrows, ncols;
  const std::uint32_t* bits;
  std::uint8_t* marks;
  __device__ bool flag(std::int64_t i) const {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    const auto key = in ? static_cast<std::uint64_t>(r * ncols + c) : 0;
    const bool hit = in && ((bits[key >> 5] >> (key & 31)) & 1u);
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

template <class F>
void with_word(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    default: f(std::uint64_t{}); return;
  }
}

/// The entries of m whose coordinate has its bit set, as a new matrix (same order, so a
/// canonical m gives a canonical result). Synchronizes (reads the status).
DeviceCoo keep_marked(const CooView& m, const EntryCheck& check, const std::uint32_t* bits,
                      std::uint8_t* marks, Status& status, int slot, cudaStream_t stream) {
  const CooDesc& d = m.desc;
  const IndexArray rows = index_array(m.rows, d.index), cols = index_array(m.cols, d.index);
  Compaction filter(d.nnz, stream);
  filter.count(MarkByBitmap{check, rows, cols, d.nrows, d.ncols, bits, marks});
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

/// One bitmap at a time (so that it can stay in L2): b's coordinates keep a's matching entries
/// (a'), then a''s coordinates keep b's; merge runs on a' and b'.
DeviceCoo bitmap_pipeline(const CooView& a, const CooView& b, bool validate, Status& status,
                          cudaStream_t stream) {
  const CooDesc& d = a.desc;
  const auto bytes = static_cast<std::size_t>((d.nrows * d.ncols + 31) / 32) * 4;
  Workspace ws({bytes, static_cast<std::size_t>(std::max(a.desc.nnz, b.desc.nnz))}, stream);
  auto* bits = ws.get<std::uint32_t>(0);
  auto* marks = ws.get<std::uint8_t>(1);
  const auto set_bits = [&](const CooView& m, const EntryCheck& check) {
    EWISE_CUDA_CHECK(cudaMemsetAsync(bits, 0, bytes, stream));
    detail::launch("sparse bitmap set_bits", set_bits_kernel, dim3(blocks_for(m.desc.nnz)), dim3(kBlock),
                   0, stream, check, index_array(m.rows, d.index), index_array(m.cols, d.index),
                   m.desc.nnz, d.nrows, d.ncols, bits);
  };
  const EntryCheck check_a = status.fused(a, "a", validate), check_b = status.fused(b, "b", validate);
  set_bits(b, check_b);
  const DeviceCoo kept_a = keep_marked(a, check_a, bits, marks, status, 0, stream);
  if (kept_a.nnz() == 0) return DeviceCoo(result_desc(d, 0), stream);
  set_bits(kept_a, EntryCheck{});
  const DeviceCoo kept_b = keep_marked(b, EntryCheck{}, bits, marks, status, 1, stream);
  return merge_pipeline(kept_a, kept_b, false, status, stream);
}

}  // namespace

DeviceCoo device_multiply(const CooView& a, const CooView& b, CooAlgorithm algorithm,
                          const SparseOptions& options, cudaStream_t stream) {
  Status status(stream);
  const bool validate = options.validate_indices;
  DeviceCoo out;
  if (a.desc.nnz == 0 || b.desc.nnz == 0) {
    status.check(a, "a", validate);
    status.check(b, "b", validate);
    status.read();
    out = DeviceCoo(result_desc(a.desc, 0), stream);
  } else if (algorithm == CooAlgorithm::merge) {
    out = merge_pipeline(a, b, validate, status, stream);
  } else if (algorithm == CooAlgorithm::bitmap_merge) {
    out = bitmap_pipeline(a, b, validate, status, stream);
  } else {
    out = search_pipeline(a, b, algorithm == CooAlgorithm::linear_search, validate, status, stream);
  }
  return options.drop_zeros ? drop_zero_entries(std::move(out), status, stream) : std::move(out);
}

}  // namespace ewise::sparse_detail
