// sparse/host_sort.hpp — a COO operand's entries in key order for the CPU backend
// (sparse/reference.cpp): each coordinate once, its values summed in storage order in the compute
// type; read in one pass where the keys already increase, else after a stable radix sort.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "ewise/coo.hpp"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "thread_pool.hpp"

namespace ewise::sparse_detail {

/// A matrix's entries, each coordinate once, in (row, col) order: keys row * ncols + col
/// (nrows * ncols fits int64: CooDesc::validate), increasing, and their values.
template <class C>
struct Summed {
  std::vector<std::int64_t> keys;
  std::vector<C> vals;
};

/// Calls f(i, row, col) for entries i in [lo, hi) of increasing keys (row * ncols + col): one
/// division a row the keys enter, not one an entry.
template <class F>
void for_each_coord(const std::vector<std::int64_t>& keys, std::int64_t ncols, F&& f,
                    std::size_t lo = 0, std::size_t hi = SIZE_MAX) {
  hi = std::min(hi, keys.size());
  std::int64_t row = lo < hi ? keys[lo] / ncols : 0, row_begin = row * ncols;
  for (std::size_t i = lo; i < hi; ++i) {
    if (keys[i] >= row_begin + ncols) {
      row = keys[i] / ncols;
      row_begin = row * ncols;
    }
    f(i, row, keys[i] - row_begin);
  }
}

/// The bounds [first, second) of part p of n elements split into `parts` nearly equal parts.
inline std::pair<std::size_t, std::size_t> part_bounds(std::size_t n, int p, int parts) {
  return {n * p / parts, n * (p + 1) / parts};
}

/// Sorts the entries (keys[i], vals[i]) by key (each of key_bits bits: internal.hpp's key_bits),
/// stably: a least-significant-digit radix sort over the key's bits alone, each value moved with
/// its key, in as few passes as digits of at most 11 bits take, the bits split evenly among them
/// (a 4096² matrix: three passes of 8 bits, whose 256 buckets the scatter writes with better
/// locality than 11 bits' 2048: the product of two shuffled 4096² 10% operands from 119 to 93
/// ms). A pass whose digit all share is skipped. Each pass is split over the CPU backend's
/// threads (thread_pool.hpp): every part counts its digits, a part's bucket d starts after all
/// smaller digits and after digit d of the parts before it (so the sort stays stable), and every
/// part scatters its own entries.
template <class C>
void sort_by_key(std::vector<std::int64_t>& keys, std::vector<C>& vals, const int key_bits) {
  const std::size_t n = keys.size();
  if (n < 2) return;
  constexpr int kMaxDigitBits = 11;
  const int passes = (key_bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digit_bits = passes == 0 ? 0 : (key_bits + passes - 1) / passes;
  const std::uint64_t digit_mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  const int parts = detail::parts_for(static_cast<std::int64_t>(n));
  std::vector<std::int64_t> other_keys(n);
  std::vector<C> other_vals(n);
  std::vector<std::size_t> start(buckets * static_cast<std::size_t>(parts));  // [part][digit]
  for (int shift = 0; shift < key_bits; shift += digit_bits) {
    const auto digit = [&](std::int64_t key) {
      return static_cast<std::size_t>(static_cast<std::uint64_t>(key) >> shift & digit_mask);
    };
    detail::run_parts(parts, [&](int p) {
      std::size_t* count = start.data() + p * buckets;
      std::fill(count, count + buckets, 0);
      const auto [lo, hi] = part_bounds(n, p, parts);
      for (std::size_t i = lo; i < hi; ++i) ++count[digit(keys[i])];
    });
    const std::size_t first = digit(keys[0]);
    std::size_t sharing = 0;
    for (int p = 0; p < parts; ++p) sharing += start[p * buckets + first];
    if (sharing == n) continue;
    std::size_t at = 0;
    for (std::size_t d = 0; d < buckets; ++d)
      for (int p = 0; p < parts; ++p) at += std::exchange(start[p * buckets + d], at);
    detail::run_parts(parts, [&](int p) {
      std::size_t* next = start.data() + p * buckets;
      const auto [lo, hi] = part_bounds(n, p, parts);
      for (std::size_t i = lo; i < hi; ++i) {
        const std::size_t to = next[digit(keys[i])]++;
        other_keys[to] = keys[i];
        other_vals[to] = vals[i];
      }
    });
    keys.swap(other_keys);
    vals.swap(other_vals);
  }
}

/// for_each_coord over the pool, the entries in parts: for callers whose f(i, ...) touches only
/// entry i's own coordinate (distinct keys: a scatter into a dense matrix, a gather from one).
/// The keys increase, so a part's coordinates are a band of rows: each thread's reads and
/// writes stay in its band (2-core VM, 4096² 10% f32: accumulate of a canonical COO 14.6 ms on
/// one thread, 9.2 over two).
template <class F>
void for_each_coord_parallel(const std::vector<std::int64_t>& keys, std::int64_t ncols,
                             const F& f) {
  const int parts = detail::parts_for(static_cast<std::int64_t>(keys.size()));
  detail::run_parts(parts, [&](int p) {
    const auto bounds = part_bounds(keys.size(), p, parts);
    for_each_coord(keys, ncols, f, bounds.first, bounds.second);
  });
}

/// Each coordinate's values summed in storage order, in the compute type: in one pass where the
/// keys already increase (a canonical operand), else after a stable sort by key (sort_by_key,
/// which keeps each coordinate's values in storage order).
template <class E>
Summed<typename E::compute> summed(const CooView& m) {
  using C = typename E::compute;
  const std::int64_t n = m.desc.nnz, nc = m.desc.ncols;
  Summed<C> out;
  out.keys.resize(static_cast<std::size_t>(n));
  out.vals.resize(static_cast<std::size_t>(n));
  // Keys and values read in parts over the pool; each part says whether its keys increase, and
  // the keys increase where every part's do and each part's first exceeds the last before it.
  const int parts = detail::parts_for(n);
  std::vector<char> part_increasing(static_cast<std::size_t>(parts), 1);
  detail::run_parts(parts, [&](int p) {
    // Plain variables, not structured bindings: the lambda below captures them (C++17).
    const auto bounds = part_bounds(static_cast<std::size_t>(n), p, parts);
    const std::size_t lo = bounds.first, hi = bounds.second;
    const auto read = [&](auto index) {  // the index type switched once, not once an entry
      using I = decltype(index);
      const I* rows = static_cast<const I*>(m.rows);
      const I* cols = static_cast<const I*>(m.cols);
      bool increasing = true;
      for (std::size_t k = lo; k < hi; ++k) {
        out.keys[k] = static_cast<std::int64_t>(rows[k]) * nc + cols[k];
        increasing = increasing && (k == lo || out.keys[k - 1] < out.keys[k]);
      }
      part_increasing[p] = increasing;
    };
    if (m.desc.index == IndexType::i32) read(std::int32_t{});
    else read(std::int64_t{});
    for (std::size_t k = lo; k < hi; ++k)
      out.vals[k] = E::load(m.vals, static_cast<std::int64_t>(k));
  });
  bool increasing = true;
  for (int p = 0; p < parts; ++p) {
    const std::size_t lo = part_bounds(static_cast<std::size_t>(n), p, parts).first;
    increasing = increasing && part_increasing[p] &&
                 (p == 0 || lo == 0 || out.keys[lo - 1] < out.keys[lo]);
  }
  if (increasing) return out;
  sort_by_key(out.keys, out.vals, key_bits(m.desc));
  // each coordinate's values summed in place, in their (storage) order
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.keys.size(); ++i) {
    if (kept > 0 && out.keys[kept - 1] == out.keys[i]) {
      out.vals[kept - 1] = ops::Add{}(out.vals[kept - 1], out.vals[i]);
    } else {
      out.keys[kept] = out.keys[i];
      out.vals[kept] = out.vals[i];
      ++kept;
    }
  }
  out.keys.resize(kept);
  out.vals.resize(kept);
  return out;
}

}  // namespace ewise::sparse_detail
