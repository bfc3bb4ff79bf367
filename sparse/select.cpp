// sparse/select.cpp — the choice of a COO ⊙ COO algorithm and the table of algorithm names.
//
// The automatic rule, first match wins (thresholds and their figures: kAutoSelect in
// policy.hpp):
//   1. sort_search when its sort is small or its lookups are few: an operand is not canonical
//      and the one sort_search sorts has at most sort_search_max_sorted entries, or the
//      searching operand has at most 1/sort_search_ratio of the sorted one's entries;
//   2. merge when both operands are canonical (nothing to sort, equal work per tile);
//   3. bitmap_merge when its bitmap fits in L2 (at most bitmap_max_bytes) and takes at most
//      bitmap_bytes_per_entry bytes per input entry (so only matching entries are sorted);
//   4. merge.
// hash_merge is run only when requested: it is slower than merge on every structure kind of
// the benchmark, the bitmap-less shapes included (sparse.hpp, docs/benchmarks.md).
// A requested algorithm runs as asked unless it cannot: bitmap_merge past kBitmapMaxBytes and
// linear_search past kLinearSearchMaxWork (sparse.hpp) are refused.
#include <iterator>
#include <string>
#include <string_view>

#include "ewise/error.hpp"
#include "policy.hpp"
#include "select.hpp"

namespace ewise {
namespace {

struct AlgorithmName {
  CooAlgorithm algorithm;
  const char* name;
};
/// Every algorithm with its name, in the order error messages list them.
constexpr AlgorithmName kAlgorithmNames[] = {{CooAlgorithm::automatic, "automatic"},
                                             {CooAlgorithm::sort_search, "sort_search"},
                                             {CooAlgorithm::merge, "merge"},
                                             {CooAlgorithm::bitmap_merge, "bitmap_merge"},
                                             {CooAlgorithm::linear_search, "linear_search"},
                                             {CooAlgorithm::hash_merge, "hash_merge"}};

/// "automatic, sort_search, merge, bitmap_merge, linear_search or hash_merge".
std::string algorithm_list() {
  std::string s;
  constexpr std::size_t n = std::size(kAlgorithmNames);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? " or " : ", ";
    s += kAlgorithmNames[i].name;
  }
  return s;
}

}  // namespace

const char* coo_algorithm_name(CooAlgorithm a) {
  for (const AlgorithmName& e : kAlgorithmNames)
    if (e.algorithm == a) return e.name;
  return "unknown";
}

CooAlgorithm parse_coo_algorithm(std::string_view name) {
  for (const AlgorithmName& e : kAlgorithmNames)
    if (name == e.name) return e.algorithm;
  EWISE_EXPECTS(false, "unknown COO algorithm '", name, "' (expected ", algorithm_list(), ")");
  return CooAlgorithm::automatic;
}

namespace sparse_detail {

bool sort_search_sorts_a(const CooDesc& a, const CooDesc& b) {
  if (a.canonical != b.canonical) return a.canonical;
  return a.canonical ? a.nnz >= b.nnz : a.nnz <= b.nnz;
}

CooAlgorithm resolve_algorithm(const CooDesc& a, const CooDesc& b, CooAlgorithm requested) {
  switch (requested) {
    case CooAlgorithm::sort_search:
    case CooAlgorithm::merge:
    case CooAlgorithm::hash_merge:
      return requested;
    case CooAlgorithm::bitmap_merge:
      EWISE_EXPECTS(bitmap_bytes(a) <= kBitmapMaxBytes, "bitmap_merge needs a bitmap of ",
                    bitmap_bytes(a), " bytes for the ", a.nrows, "x", a.ncols, " shape, over the limit of ",
                    kBitmapMaxBytes, "; use merge or sort_search");
      return requested;
    case CooAlgorithm::linear_search: {
      const bool small = a.nnz == 0 || b.nnz <= kLinearSearchMaxWork / a.nnz;
      EWISE_EXPECTS(small, "linear_search is for small inputs: nnz(a) * nnz(b) = ", a.nnz, " * ",
                    b.nnz, " exceeds ", kLinearSearchMaxWork, "; use sort_search or merge");
      return requested;
    }
    case CooAlgorithm::automatic: {
      const AutoSelectPolicy& p = kAutoSelect;
      const bool sorts_a = sort_search_sorts_a(a, b), both_canonical = a.canonical && b.canonical;
      const std::int64_t sorted = sorts_a ? a.nnz : b.nnz, searching = sorts_a ? b.nnz : a.nnz;
      if ((!both_canonical && sorted <= p.sort_search_max_sorted) ||
          searching <= sorted / p.sort_search_ratio)
        return CooAlgorithm::sort_search;
      if (both_canonical) return CooAlgorithm::merge;
      if (bitmap_bytes(a) <= p.bitmap_max_bytes &&
          bitmap_bytes(a) / p.bitmap_bytes_per_entry <= a.nnz + b.nnz)
        return CooAlgorithm::bitmap_merge;
      return CooAlgorithm::merge;
    }
  }
  EWISE_EXPECTS(false, "unknown COO algorithm ", static_cast<int>(requested));
  return requested;
}

}  // namespace sparse_detail
}  // namespace ewise
