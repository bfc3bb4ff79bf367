// The CPU backend's key order for operands that are not canonical (sparse/host_sort.hpp's radix
// sort, through coalesce): shuffled entries with duplicates over shapes whose key bits split
// into one to four passes, some with digits every entry shares, against an oracle of this file
// (a comparison sort of positions and the sums in storage order), bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ewise/sparse.hpp"

namespace ewise {
namespace {

/// A shuffled operand of `entries` entries over nrows x ncols, about a third of them repeating
/// an earlier coordinate (rows drawn from [0, row_span), so that the high key bits can be
/// shared), with values of T drawn so that sums depend on their order (f32: 2^24 plus small
/// values).
template <class T>
HostCoo shuffled(std::int64_t nrows, std::int64_t ncols, std::int64_t row_span,
                 std::int64_t entries, IndexType index, std::mt19937_64& rng) {
  const DType dtype = std::is_same_v<T, float> ? DType::f32 : DType::i64;
  HostCoo m(CooDesc{nrows, ncols, entries, index, dtype, false});
  std::uniform_int_distribution<std::int64_t> row(0, row_span - 1), col(0, ncols - 1);
  std::vector<std::int64_t> r(static_cast<std::size_t>(entries)), c(r.size());
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (k > 0 && rng() % 3 == 0) {  // a duplicate of an earlier entry
      const std::size_t earlier = rng() % k;
      r[k] = r[earlier];
      c[k] = c[earlier];
    } else {
      r[k] = row(rng);
      c[k] = col(rng);
    }
    if (index == IndexType::i32) {
      static_cast<std::int32_t*>(m.rows())[k] = static_cast<std::int32_t>(r[k]);
      static_cast<std::int32_t*>(m.cols())[k] = static_cast<std::int32_t>(c[k]);
    } else {
      static_cast<std::int64_t*>(m.rows())[k] = r[k];
      static_cast<std::int64_t*>(m.cols())[k] = c[k];
    }
    T v;
    if constexpr (std::is_same_v<T, float>) v = rng() % 4 == 0 ? 16777216.0f : static_cast<float>(rng() % 7) - 3;
    else v = static_cast<std::int64_t>(rng() >> 1);  // sums wrap
    static_cast<T*>(m.vals())[k] = v;
  }
  return m;
}

/// The oracle: positions stably sorted by key, each coordinate's values summed in storage order
/// in T (wrapping for integers), as (key, value bits) pairs.
template <class T>
std::vector<std::pair<std::int64_t, T>> oracle(const HostCoo& m) {
  const std::int64_t n = m.nnz(), nc = m.desc().ncols;
  const auto at = [&](const void* p, std::int64_t k) {
    return m.desc().index == IndexType::i32 ? std::int64_t{static_cast<const std::int32_t*>(p)[k]}
                                            : static_cast<const std::int64_t*>(p)[k];
  };
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  const auto key = [&](std::int64_t k) { return at(m.rows(), k) * nc + at(m.cols(), k); };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t x, std::int64_t y) { return key(x) < key(y); });
  std::vector<std::pair<std::int64_t, T>> out;
  for (const std::int64_t k : order) {
    const T v = static_cast<const T*>(m.vals())[k];
    if (!out.empty() && out.back().first == key(k)) {
      if constexpr (std::is_same_v<T, float>) out.back().second += v;
      else out.back().second = static_cast<T>(static_cast<std::uint64_t>(out.back().second) +
                                              static_cast<std::uint64_t>(v));
    } else {
      out.emplace_back(key(k), v);
    }
  }
  return out;
}

template <class T>
void expect_coalesced_as_oracle(const HostCoo& m, const std::string& what) {
  const HostCoo got = coalesce<HostCoo>(m.view());
  const auto want = oracle<T>(m);
  ASSERT_EQ(got.nnz(), static_cast<std::int64_t>(want.size())) << what;
  const std::int64_t nc = m.desc().ncols;
  for (std::int64_t k = 0; k < got.nnz(); ++k) {
    const auto at = [&](const void* p) {
      return got.desc().index == IndexType::i32
                 ? std::int64_t{static_cast<const std::int32_t*>(p)[k]}
                 : static_cast<const std::int64_t*>(p)[k];
    };
    const T v = static_cast<const T*>(got.vals())[k];
    ASSERT_EQ(at(got.rows()) * nc + at(got.cols()), want[k].first) << what << " entry " << k;
    ASSERT_EQ(std::memcmp(&v, &want[k].second, sizeof v), 0)
        << what << " entry " << k << ": " << v << ", want " << want[k].second;
  }
}

TEST(HostKeyOrder, ShuffledDuplicatesSumInStorageOrderAcrossPasses) {
  std::mt19937_64 rng(2026112840);
  struct Shape {
    std::int64_t nrows, ncols, row_span, entries;
    IndexType index;
  };
  // key bits 4 (one pass), 12 (two of 6), 24 (three of 8), 34 (four of 9); a single row; rows
  // drawn from a small span of a large shape (the high digits all shared: those passes skipped)
  const Shape shapes[] = {{3, 5, 3, 40, IndexType::i32},
                          {64, 64, 64, 3000, IndexType::i32},
                          {4096, 4096, 4096, 200000, IndexType::i32},
                          {100000, 90000, 100000, 150000, IndexType::i64},
                          {1, 1000000, 1, 50000, IndexType::i32},
                          {1 << 20, 1 << 10, 3, 20000, IndexType::i64}};
  for (const Shape& s : shapes) {
    const std::string what = std::to_string(s.nrows) + "x" + std::to_string(s.ncols) + " rows < " +
                             std::to_string(s.row_span);
    expect_coalesced_as_oracle<float>(
        shuffled<float>(s.nrows, s.ncols, s.row_span, s.entries, s.index, rng), "f32 " + what);
    expect_coalesced_as_oracle<std::int64_t>(
        shuffled<std::int64_t>(s.nrows, s.ncols, s.row_span, s.entries, s.index, rng),
        "i64 " + what);
  }
}

}  // namespace
}  // namespace ewise
