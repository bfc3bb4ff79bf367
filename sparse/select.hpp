// sparse/select.hpp — the choice of a COO ⊙ COO algorithm (select.cpp). Host-compilable.
#pragma once

#include <cstdint>

#include "ewise/coo.hpp"
#include "ewise/sparse.hpp"

namespace ewise::sparse_detail {

/// Bytes of bitmap_merge's bitmap for a shape: a bit per cell, in 32-bit words.
inline std::int64_t bitmap_bytes(const CooDesc& d) {
  const std::int64_t cells = d.nrows * d.ncols;
  return 4 * (cells / 32 + (cells % 32 != 0 ? 1 : 0));
}

/// The operand sort_search sorts (or searches in place when canonical): true = a.
/// Both canonical: the larger; one canonical: that one; neither: the smaller.
bool sort_search_sorts_a(const CooDesc& a, const CooDesc& b);

/// The algorithm multiply runs for operands a and b given `requested` (select_coo_algorithm on
/// descriptors, without the view checks): `requested` when it can run them (else throws
/// InvalidArgument), the automatic choice for `automatic`.
CooAlgorithm resolve_algorithm(const CooDesc& a, const CooDesc& b, CooAlgorithm requested);

}  // namespace ewise::sparse_detail
