// sparse/keys.cuh — how the sparse kernels read a matrix: index arrays whose width is known at
// run time, and the keys (absolute indices row * ncols + col) of its entries, stored or
// computed, with typed accessors for the hot kernels.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ewise/coo.hpp"
#include "ewise/ops.hpp"  // EWISE_HD
#include "internal.hpp"   // key_bits, wide_keys

namespace ewise::sparse_detail {

/// A device array of integers whose width is known at run time: Narrow or Wide elements,
/// read (and written) as Wide. The branch on `wide` is uniform across a kernel.
template <class Narrow, class Wide>
struct VarArray {
  const void* p = nullptr;
  bool wide = false;

  EWISE_HD Wide operator[](std::int64_t k) const {
    return wide ? static_cast<const Wide*>(p)[k] : static_cast<Wide>(static_cast<const Narrow*>(p)[k]);
  }
  /// Only for arrays made from writable memory.
  EWISE_HD void set(std::int64_t k, Wide v) const {
    if (wide) const_cast<Wide*>(static_cast<const Wide*>(p))[k] = v;
    else const_cast<Narrow*>(static_cast<const Narrow*>(p))[k] = static_cast<Narrow>(v);
  }
};
using IndexArray = VarArray<std::int32_t, std::int64_t>;  ///< row or column indices
using WordArray = VarArray<std::uint32_t, std::uint64_t>;  ///< sort keys and permutations

inline IndexArray index_array(const void* p, IndexType t) { return {p, t == IndexType::i64}; }

/// A rank-2 strided tensor: element (r, c) at data[r * row_stride + c * col_stride].
template <class T>
struct Strided2 {
  T* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
  __device__ __forceinline__ T& at(std::int64_t r, std::int64_t c) const {
    return data[r * row_stride + c * col_stride];
  }
};

/// Absolute indices of a sequence of entries: stored (sorted keys) or computed from indices.
struct KeySeq {
  WordArray keys;  ///< when keys.p is null, key(k) = rows[k] * ncols + cols[k]
  IndexArray rows, cols;
  std::uint64_t ncols = 0;

  EWISE_HD std::uint64_t operator[](std::int64_t k) const {
    return keys.p ? keys[k]
                  : static_cast<std::uint64_t>(rows[k]) * ncols + static_cast<std::uint64_t>(cols[k]);
  }
};

/// Keys of a matrix's entries in storage order, computed from its indices.
inline KeySeq implicit_keys(const CooView& m) {
  return {{}, index_array(m.rows, m.desc.index), index_array(m.cols, m.desc.index),
          static_cast<std::uint64_t>(m.desc.ncols)};
}

/// Row and column of an absolute index (32-bit division when the key and ncols fit).
template <class K>
__device__ __forceinline__ void split_key(K key, std::uint64_t ncols, std::uint64_t* r, std::uint64_t* c) {
  if (sizeof(K) == 4 && ncols <= 0xFFFFFFFFull) {
    const auto k32 = static_cast<std::uint32_t>(key), n32 = static_cast<std::uint32_t>(ncols);
    const std::uint32_t q = k32 / n32;
    *r = q;
    *c = k32 - q * n32;
  } else {
    *r = static_cast<std::uint64_t>(key) / ncols;
    *c = static_cast<std::uint64_t>(key) - *r * ncols;
  }
}

// ---- typed key access for the hot kernels ---------------------------------------------------

// Besides operator[], each accessor splits a lookup into load(i) (the memory reads, so that a
// kernel can issue several before using any) and key(raw); in_range(raw) is false for an entry
// outside the shape (stored keys were range-checked when they were made).
template <class K>
struct StoredKeys {
  const K* k;
  using Raw = K;
  __device__ __forceinline__ std::uint64_t operator[](std::int64_t i) const { return k[i]; }
  __device__ __forceinline__ Raw load(std::int64_t i) const { return k[i]; }
  __device__ __forceinline__ std::uint64_t key(Raw x) const { return x; }
  __device__ __forceinline__ bool in_range(Raw, std::int64_t, std::int64_t) const { return true; }
};
template <class I>
struct ImplicitKeys {
  const I* r;
  const I* c;
  std::uint64_t ncols;
  /// Not zeroed: stage_merge_tile holds one per item for each operand and writes only the one
  /// its position takes; zeroing both costs instructions and registers in the staging, and
  /// spills with i64 indices (sm_90 figures in docs/benchmarks.md).
  struct Raw {
    I r, c;
  };
  __device__ __forceinline__ std::uint64_t operator[](std::int64_t i) const {
    return static_cast<std::uint64_t>(r[i]) * ncols + static_cast<std::uint64_t>(c[i]);
  }
  __device__ __forceinline__ Raw load(std::int64_t i) const { return {r[i], c[i]}; }
  __device__ __forceinline__ std::uint64_t key(Raw x) const {
    return static_cast<std::uint64_t>(x.r) * ncols + static_cast<std::uint64_t>(x.c);
  }
  /// 0 <= x.r < nrows and 0 <= x.c < nc (nrows, nc >= 0), each as one unsigned compare of I's
  /// width: a negative index is 2^(bits - 1) or more as unsigned, which no bound reaches.
  __device__ __forceinline__ bool in_range(Raw x, std::int64_t nrows, std::int64_t nc) const {
    using W = std::make_unsigned_t<I>;
    constexpr std::uint64_t kIndices = std::uint64_t{std::numeric_limits<I>::max()} + 1;
    const auto bound = [](std::int64_t n) {
      return static_cast<W>(std::min(static_cast<std::uint64_t>(n), kIndices));
    };
    return static_cast<W>(x.r) < bound(nrows) && static_cast<W>(x.c) < bound(nc);
  }
};

/// Calls f(typed accessor) for a KeySeq whose stored keys are K, or computed from indices of
/// type I.
template <class I, class K, class F>
void with_key_types(const KeySeq& s, F&& f) {
  if (s.keys.p) f(StoredKeys<K>{static_cast<const K*>(s.keys.p)});
  else f(ImplicitKeys<I>{static_cast<const I*>(s.rows.p), static_cast<const I*>(s.cols.p), s.ncols});
}

/// Calls f(typed accessor) for a KeySeq: stored 32/64-bit keys, or computed from 32/64-bit
/// indices.
template <class F>
void with_typed_keys(const KeySeq& s, F&& f) {
  if (s.keys.p) {
    if (s.keys.wide) f(StoredKeys<std::uint64_t>{static_cast<const std::uint64_t*>(s.keys.p)});
    else f(StoredKeys<std::uint32_t>{static_cast<const std::uint32_t*>(s.keys.p)});
  } else if (s.rows.wide) {
    f(ImplicitKeys<std::int64_t>{static_cast<const std::int64_t*>(s.rows.p),
                                 static_cast<const std::int64_t*>(s.cols.p), s.ncols});
  } else {
    f(ImplicitKeys<std::int32_t>{static_cast<const std::int32_t*>(s.rows.p),
                                 static_cast<const std::int32_t*>(s.cols.p), s.ncols});
  }
}

}  // namespace ewise::sparse_detail
