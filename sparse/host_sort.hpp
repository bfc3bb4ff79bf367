// sparse/host_sort.hpp — a COO operand's entries for the CPU backend (sparse/reference.cpp):
// each coordinate once, its values summed in storage order in the compute type. In key order
// (summed: read in one pass where the keys already increase, else after a stable radix sort), or
// grouped by row alone for the forms that gather from or scatter into a dense matrix
// (for_each_summed_parallel: one counting pass, no sort).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
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

/// A matrix's entries grouped by row (for_each_summed_parallel): row r's coordinates at
/// [begin[r], end[r]) of entries, each once, in the storage order of its first entry, its
/// value its entries' values summed in storage order; the rows split into bands of about equal
/// entries, band p the rows [bands[p], bands[p + 1]). A column and its value side by side (the
/// scatter writes one stream a row, not two), left uninitialised (new[], not std::vector's
/// zeroing): every slot read is written first.
template <class C, class I>
struct RowGroups {
  struct Entry {
    I col;
    C val;
  };
  std::vector<std::size_t> begin, end;
  std::unique_ptr<Entry[]> entries;
  std::vector<std::int64_t> bands;
};

/// m's entries grouped by row, as SciPy's coo_tocsr does: each part of the entries counts its
/// rows, row r's slots start after all smaller rows' and after row r's entries in the parts
/// before (so a row's entries keep their storage order), and each part scatters its own entries.
/// Then each band of rows, on its own thread, sums a row's duplicates in place: where[c] is the
/// slot a column last took, current if it lies among the row's kept slots and holds c (so stale
/// entries from other rows need no clearing). Needs parts * nrows counters and ncols slots a
/// part: for_each_summed_parallel calls it where both are at most nnz.
template <class E, class I>
RowGroups<typename E::compute, I> grouped_by_row(const CooView& m) {
  using C = typename E::compute;
  const auto n = static_cast<std::size_t>(m.desc.nnz), nr = static_cast<std::size_t>(m.desc.nrows);
  const I* const rows = static_cast<const I*>(m.rows);
  const I* const cols = static_cast<const I*>(m.cols);
  RowGroups<C, I> g;
  g.entries.reset(new typename RowGroups<C, I>::Entry[n]);
  const int parts = detail::parts_for(static_cast<std::int64_t>(n));
  std::vector<std::size_t> next(nr * static_cast<std::size_t>(parts));  // [part][row]
  detail::run_parts(parts, [&](int p) {
    std::size_t* count = next.data() + p * nr;
    const auto [lo, hi] = part_bounds(n, p, parts);
    for (std::size_t k = lo; k < hi; ++k) ++count[static_cast<std::size_t>(rows[k])];
  });
  g.begin.resize(nr + 1);
  std::size_t at = 0;
  for (std::size_t r = 0; r < nr; ++r) {
    g.begin[r] = at;
    for (int p = 0; p < parts; ++p) at += std::exchange(next[p * nr + r], at);
  }
  g.begin[nr] = n;
  detail::run_parts(parts, [&](int p) {
    std::size_t* slot = next.data() + p * nr;
    const auto [lo, hi] = part_bounds(n, p, parts);
    for (std::size_t k = lo; k < hi; ++k) {
      const std::size_t to = slot[static_cast<std::size_t>(rows[k])]++;
      g.entries[to] = {cols[k], E::load(m.vals, static_cast<std::int64_t>(k))};
    }
  });
  g.bands.resize(static_cast<std::size_t>(parts) + 1);
  for (int p = 0; p < parts; ++p)
    g.bands[p] = std::lower_bound(g.begin.begin(), g.begin.end(), n * p / parts) -
                 g.begin.begin();
  g.bands[parts] = static_cast<std::int64_t>(nr);
  g.end.resize(nr);
  detail::run_parts(parts, [&](int p) {
    std::vector<std::size_t> where(static_cast<std::size_t>(m.desc.ncols));
    for (std::int64_t r = g.bands[p]; r < g.bands[p + 1]; ++r) {
      const std::size_t first = g.begin[r];
      std::size_t kept = first;
      for (std::size_t j = first; j < g.begin[r + 1]; ++j) {
        const auto e = g.entries[j];
        const std::size_t s = where[static_cast<std::size_t>(e.col)];
        if (s >= first && s < kept && g.entries[s].col == e.col) {
          g.entries[s].val = ops::Add{}(g.entries[s].val, e.val);
        } else {
          where[static_cast<std::size_t>(e.col)] = kept;
          g.entries[kept++] = e;
        }
      }
      g.end[r] = kept;
    }
  });
  return g;
}

/// Elements of the dense matrix a run of rows of for_each_summed_parallel spans at most (2^16
/// f32: a run's rows of dense and of the result, 512 KiB, stay in the 2-core VM's 2 MiB L2; not
/// tuned further).
inline constexpr std::int64_t kRunElements = std::int64_t{1} << 16;

/// Calls use(each), where each(run) calls run(r0, r1, visit) for consecutive runs of rows
/// [r0, r1) over the pool's threads (a band of rows a thread, in runs of at most kRunElements
/// elements of the dense matrix, or one row), and visit(f) calls f(row, col, v) once for every
/// coordinate of m in those rows, v a C& holding its values summed in storage order (summed's
/// values, bit for bit), which f may replace for a later visit to see. For the forms that
/// scatter into or gather from a dense matrix, which need rows but no order within one: a run's
/// reads and writes of the matrix stay in cache. grouped_by_row where its counters and column
/// slots are at most nnz (2-core VM, 4096² 10% shuffled f32 + dense: 48-57 ms after the radix
/// sort of the whole key, 22-24 so; SciPy 25-28), else (a few entries in a large matrix, or
/// canonical ones) in key order (summed). The bands split the work of the entries and of the
/// dense rows evenly.
template <class E, class Use>
void for_each_summed_parallel(const CooView& m, Use&& use) {
  const std::int64_t nr = m.desc.nrows, nc = m.desc.ncols;
  const std::int64_t run_rows =
      std::max<std::int64_t>(1, kRunElements / std::max<std::int64_t>(nc, 1));
  // first(r): the entries before row r; entries(r0, r1, f): f(j, r, c) for entry j of rows
  // [r0, r1) at (r, c); value(j): its summed value.
  const auto runs = [&](const auto& first, const auto& entries, const auto& value) {
    const std::int64_t work = first(nr) + nr * nc;
    const int parts = detail::parts_for(work);
    use([&](const auto& run) {
      detail::run_parts(parts, [&](int p) {
        // The band's rows: from the first whose work before it reaches p / parts of the total.
        const auto band_start = [&](int q) {
          std::int64_t lo = 0, hi = nr;
          const std::int64_t want = work / parts * q;
          while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (first(mid) + mid * nc < want) lo = mid + 1;
            else hi = mid;
          }
          return q == parts ? nr : lo;
        };
        const std::int64_t end = band_start(p + 1);
        for (std::int64_t r0 = band_start(p); r0 < end; r0 += run_rows) {
          const std::int64_t r1 = std::min(end, r0 + run_rows);
          run(r0, r1, [&](const auto& f) {
            entries(r0, r1, [&](std::size_t j, std::int64_t r, std::int64_t c) {
              f(r, c, value(j));
            });
          });
        }
      });
    });
  };
  // Entries whose first ones are in key order are likely canonical, which summed reads in one
  // pass (a 4096² 1% accumulate on one thread: 1.1 ms so, 1.8 grouped by row; checking all the
  // keys first, not these, added 0.2 ms).
  constexpr std::int64_t kProbe = 1024;
  if (m.desc.canonical || keys_increase(m, 0, std::min(m.desc.nnz, kProbe)) ||
      std::max(nr, nc) > m.desc.nnz) {
    auto sa = summed<E>(m);
    const auto first = [&](std::int64_t r) {
      return static_cast<std::int64_t>(
          std::lower_bound(sa.keys.begin(), sa.keys.end(), r * nc) - sa.keys.begin());
    };
    runs(first,
         [&](std::int64_t r0, std::int64_t r1, const auto& f) {
           for_each_coord(sa.keys, nc, f, static_cast<std::size_t>(first(r0)),
                          static_cast<std::size_t>(first(r1)));
         },
         [&](std::size_t j) -> auto& { return sa.vals[j]; });
    return;
  }
  const auto by_rows = [&](auto index) {
    auto g = grouped_by_row<E, decltype(index)>(m);
    runs([&](std::int64_t r) { return static_cast<std::int64_t>(g.begin[r]); },
         [&](std::int64_t r0, std::int64_t r1, const auto& f) {
           for (std::int64_t r = r0; r < r1; ++r)
             for (std::size_t j = g.begin[r]; j < g.end[r]; ++j) f(j, r, g.entries[j].col);
         },
         [&](std::size_t j) -> auto& { return g.entries[j].val; });
  };
  if (m.desc.index == IndexType::i32) by_rows(std::int32_t{});
  else by_rows(std::int64_t{});
}

}  // namespace ewise::sparse_detail
