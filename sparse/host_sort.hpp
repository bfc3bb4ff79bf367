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

/// Calls f(i, row, col) for entry i of increasing keys (row * ncols + col): one division a row
/// the keys enter, not one an entry.
template <class F>
void for_each_coord(const std::vector<std::int64_t>& keys, std::int64_t ncols, F&& f) {
  std::int64_t row = 0, row_begin = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] >= row_begin + ncols) {
      row = keys[i] / ncols;
      row_begin = row * ncols;
    }
    f(i, row, keys[i] - row_begin);
  }
}

/// Sorts the entries (keys[i], vals[i]) by key (each of key_bits bits: internal.hpp's key_bits),
/// stably: a
/// least-significant-digit radix sort over the key's bits alone, each value moved with its key,
/// in as few passes as digits of at most 11 bits take, the bits split evenly among them (a
/// 4096² matrix: three passes of 8 bits, whose 256 buckets the scatter writes with better
/// locality than 11 bits' 2048: the product of two shuffled 4096² 10% operands from 119 to 93
/// ms). A pass whose digit all share is skipped. With a comparison sort of positions and the
/// values gathered after it, that product took 810 ms (SciPy 175).
template <class C>
void sort_by_key(std::vector<std::int64_t>& keys, std::vector<C>& vals, const int key_bits) {
  const std::size_t n = keys.size();
  constexpr int kMaxDigitBits = 11;
  const int passes = (key_bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digit_bits = passes == 0 ? 0 : (key_bits + passes - 1) / passes;
  const std::uint64_t digit_mask = (std::uint64_t{1} << digit_bits) - 1;
  std::vector<std::int64_t> other_keys(n);
  std::vector<C> other_vals(n);
  std::vector<std::size_t> start(std::size_t{1} << digit_bits);
  for (int shift = 0; shift < key_bits; shift += digit_bits) {
    const auto digit = [&](std::int64_t key) {
      return static_cast<std::size_t>(static_cast<std::uint64_t>(key) >> shift & digit_mask);
    };
    std::fill(start.begin(), start.end(), 0);
    for (const std::int64_t key : keys) ++start[digit(key)];
    if (start[digit(keys[0])] == n) continue;
    std::size_t at = 0;
    for (std::size_t& first : start) at += std::exchange(first, at);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t to = start[digit(keys[i])]++;
      other_keys[to] = keys[i];
      other_vals[to] = vals[i];
    }
    keys.swap(other_keys);
    vals.swap(other_vals);
  }
}

/// Each coordinate's values summed in storage order, in the compute type: in one pass where the
/// keys already increase (a canonical operand), else after a stable sort by key (sort_by_key,
/// which keeps each coordinate's values in storage order).
template <class E>
Summed<typename E::compute> summed(const CooView& m) {
  using C = typename E::compute;
  const std::int64_t n = m.desc.nnz, nc = m.desc.ncols;
  std::vector<std::int64_t> keys(static_cast<std::size_t>(n));
  bool increasing = true;
  const auto read = [&](auto index) {  // the index type switched once, not once an entry
    using I = decltype(index);
    const I* rows = static_cast<const I*>(m.rows);
    const I* cols = static_cast<const I*>(m.cols);
    for (std::int64_t k = 0; k < n; ++k) {
      keys[k] = static_cast<std::int64_t>(rows[k]) * nc + cols[k];
      increasing = increasing && (k == 0 || keys[k - 1] < keys[k]);
    }
  };
  if (m.desc.index == IndexType::i32) read(std::int32_t{});
  else read(std::int64_t{});
  Summed<C> out;
  out.keys = std::move(keys);
  out.vals.resize(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) out.vals[k] = E::load(m.vals, k);
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

/// summed() of both operands of a binary operation, side by side on the CPU backend's pool
/// (thread_pool.hpp) where they are large enough to split.
template <class E>
std::pair<Summed<typename E::compute>, Summed<typename E::compute>> summed_both(
    const CooView& a, const CooView& b) {
  std::pair<Summed<typename E::compute>, Summed<typename E::compute>> both;
  if (detail::parts_for(a.desc.nnz + b.desc.nnz) == 1) {
    both.first = summed<E>(a);
    both.second = summed<E>(b);
  } else {
    detail::run_parts(2, [&](int p) {
      if (p == 0) both.first = summed<E>(a);
      else both.second = summed<E>(b);
    });
  }
  return both;
}

}  // namespace ewise::sparse_detail
