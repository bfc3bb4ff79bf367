// sparse/compressed_host.cpp — the CPU backend's passes over compressed (CSR or CSC) operands
// (internal.hpp): a compressed operand's major indices spelled out with its checks, a canonical
// COO matrix's offsets, and a canonical operand times a dense or scalar factor in its own
// pattern, its checks made in the same pass, its slices split over the pool's threads.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_targets.hpp"
#include "host_elem.hpp"
#include "internal.hpp"
#include "thread_pool.hpp"

namespace ewise::sparse_detail {
namespace {

/// Throws for v's offsets unless offsets[0] = 0, they never decrease and offsets[major] = nnz.
template <class I>
void check_offsets(const CompressedView& v, const char* what) {
  const I* off = static_cast<const I*>(v.offsets);
  const std::int64_t nmajor = v.major_extent();
  for (std::int64_t m = 0; m < nmajor; ++m)
    if (off[m] > off[m + 1]) throw_offsets_decrease(what, v, m, off[m], off[m + 1]);
  if (off[0] != 0 || off[nmajor] != v.desc.nnz) throw_offsets_ends(what, v, off[0], off[nmajor]);
}

/// Throws for the first entry of slice m (entries [lo, hi), offsets checked) whose index is
/// outside [0, nminor), or with `canonical` not after its predecessor in the slice.
template <class I>
void check_slice(const CompressedView& v, const char* what, std::int64_t m, std::int64_t lo,
                 std::int64_t hi) {
  const I* idx = static_cast<const I*>(v.indices);
  for (std::int64_t k = lo; k < hi; ++k) {
    if (idx[k] < 0 || idx[k] >= v.minor_extent())
      throw_index_out_of_range(what, v, k, m, idx[k]);
    if (v.desc.canonical && k > lo && idx[k - 1] >= idx[k])
      throw_slice_not_increasing(what, v, k, m, idx[k - 1], idx[k]);
  }
}

/// The bound of an index check in I's unsigned width: one compare finds a negative index or
/// one past nminor (past I's range, only a negative one: it is at least 2^31 or 2^63 as
/// unsigned).
template <class I>
std::make_unsigned_t<I> index_limit(std::int64_t nminor) {
  using U = std::make_unsigned_t<I>;
  return static_cast<U>(std::min<std::int64_t>(nminor, std::numeric_limits<I>::max()) +
                        (nminor > std::numeric_limits<I>::max() ? 1 : 0));
}

/// Whether the entries of slices [m0, m1) (offsets checked) hold an index at or past `limit`
/// as unsigned or, where `canonical`, one not after its predecessor in its slice; with Copy,
/// the indices copied to out as they are read. Loops over all the slices' entries at once,
/// which vectorize with one tail, not one a slice: the range by one compare an entry, the
/// order by counting the descents (an index not after the one before it) over the whole run
/// less those at the slices' starts, where an index may fall. Built for AVX2 and the baseline
/// (cpu_targets.hpp).
template <bool Copy, class I>
EWISE_CPU_TARGETS bool entries_bad(const I* off, const I* idx, std::int64_t m0, std::int64_t m1,
                 std::make_unsigned_t<I> limit, bool canonical, I* out) {
  using U = std::make_unsigned_t<I>;
  const std::int64_t lo = off[m0], hi = off[m1];
  if (hi == lo) return false;  // (an empty matrix's arrays may be null)
  if constexpr (Copy) out[lo] = idx[lo];
  U bad = static_cast<U>(idx[lo]) >= limit, descents = 0;
  for (std::int64_t k = lo + 1; k < hi; ++k) {
    const I c = idx[k];
    if constexpr (Copy) out[k] = c;
    bad |= static_cast<U>(c) >= limit;
    descents += static_cast<U>(idx[k - 1] >= c);
  }
  if (!canonical) return bad != 0;
  // each start inside the run once (empty slices repeat one; offsets never decrease)
  for (std::int64_t m = m0 + 1, prev = lo; m < m1; ++m) {
    const std::int64_t start = off[m];
    if (start != prev && start < hi) descents -= static_cast<U>(idx[start - 1] >= idx[start]);
    prev = start;
  }
  return (bad | descents) != 0;
}

/// The first of slices [m0, m1) whose entries fail entries_bad (checked all at once, then
/// slice by slice where they fail), else m1; with Copy, the indices copied to out.
template <bool Copy, class I>
std::int64_t first_bad_slice(const I* off, const I* idx, std::int64_t m0, std::int64_t m1,
                             std::make_unsigned_t<I> limit, bool canonical, I* out) {
  if (!entries_bad<Copy>(off, idx, m0, m1, limit, canonical, out)) return m1;
  while (m0 + 1 < m1 && !entries_bad<false>(off, idx, m0, m0 + 1, limit, canonical,
                                           static_cast<I*>(nullptr)))
    ++m0;
  return m0;
}

/// Slices [m0, m1) of scale() (offsets checked): their indices copied to out_indices and
/// checked (first_bad_slice), then their values made; returns the first slice that failed, else
/// m1. Built for AVX2 and the baseline (cpu_targets.hpp): in SSE2 alone the loops were
/// issue-bound (docs/benchmarks.md, "Compressed operands' loops for AVX2").
template <class E, class I>
EWISE_CPU_TARGETS std::int64_t scale_slices(const I* off, const I* idx, std::int64_t m0,
                                            std::int64_t m1, std::make_unsigned_t<I> limit,
                                            bool canonical, const void* vals,
                                            const DenseOperand& d, typename E::compute s,
                                            I* out_indices, void* out_vals) {
  if (const std::int64_t m = first_bad_slice<true>(off, idx, m0, m1, limit, canonical,
                                                    out_indices);
      m < m1)
    return m;
  const void* const dense = d.data;
  if (dense == nullptr) {  // a scalar: one loop over the run
    for (std::int64_t k = off[m0], hi = off[m1]; k < hi; ++k)
      E::store(out_vals, k, ops::Mul{}(E::load(vals, k), s));
    return m1;
  }
  const std::int64_t row_stride = d.row_stride, col_stride = d.col_stride;
  for (std::int64_t m = m0; m < m1; ++m) {
    const std::int64_t row = m * row_stride;
    for (std::int64_t k = off[m], hi = off[m + 1]; k < hi; ++k)
      E::store(out_vals, k,
               ops::Mul{}(E::load(vals, k), E::load(dense, row + idx[k] * col_stride)));
  }
  return m1;
}

template <class E, class I>
void scale(const CompressedView& v, const DenseOperand& d, I* out_offsets, I* out_indices,
           void* out_vals) {
  using C = typename E::compute;
  using U = std::make_unsigned_t<I>;
  const I* off = static_cast<const I*>(v.offsets);
  const I* idx = static_cast<const I*>(v.indices);
  const std::int64_t nmajor = v.major_extent(), nminor = v.minor_extent(), nnz = v.desc.nnz;
  check_offsets<I>(v, "a");
  std::memcpy(out_offsets, off, static_cast<std::size_t>(nmajor + 1) * sizeof(I));
  C scalar{};
  if (d.scalar) std::memcpy(&scalar, &d.value, sizeof scalar);
  const U limit = index_limit<I>(nminor);
  // Part p takes the slices that start in its share of the entries; each part keeps the
  // first slice that failed its check, and the lowest of those throws, as a pass in order would.
  const int parts = detail::parts_for(nnz);
  std::vector<std::int64_t> failed(static_cast<std::size_t>(parts), nmajor);
  const auto first_slice = [&](int p) {
    const I start = static_cast<I>(nnz * p / parts);
    return p == parts ? nmajor : std::lower_bound(off, off + nmajor, start) - off;
  };
  detail::run_parts(parts, [&](int p) {
    const std::int64_t end = first_slice(p + 1);
    const std::int64_t m = scale_slices<E, I>(off, idx, first_slice(p), end, limit,
                                              v.desc.canonical, v.vals, d, scalar, out_indices,
                                              out_vals);
    if (m < end) failed[static_cast<std::size_t>(p)] = m;
  });
  const std::int64_t m = *std::min_element(failed.begin(), failed.end());
  if (m < nmajor) check_slice<I>(v, "a", m, off[m], off[m + 1]);
}

/// majors[k] = the major index of each entry of slices [0, nmajor) (offsets checked), the
/// entries checked first (first_bad_slice); returns the first slice that failed, else nmajor.
/// Built for AVX2 and the baseline (cpu_targets.hpp).
template <class I>
EWISE_CPU_TARGETS std::int64_t spell_slices(const I* off, const I* idx, std::int64_t nmajor,
                                            std::make_unsigned_t<I> limit, bool canonical,
                                            I* majors) {
  if (const std::int64_t m = first_bad_slice<false>(off, idx, 0, nmajor, limit, canonical,
                                                     static_cast<I*>(nullptr));
      m < nmajor)
    return m;
  for (std::int64_t m = 0; m < nmajor; ++m)
    std::fill(majors + off[m], majors + off[m + 1], static_cast<I>(m));
  return nmajor;
}

}  // namespace

template <class I>
void host_expand(const CompressedView& v, I* majors, const char* what) {
  check_offsets<I>(v, what);
  const I* off = static_cast<const I*>(v.offsets);
  const std::int64_t nmajor = v.major_extent();
  const std::int64_t m = spell_slices(off, static_cast<const I*>(v.indices), nmajor,
                                      index_limit<I>(v.minor_extent()), v.desc.canonical, majors);
  if (m < nmajor) check_slice<I>(v, what, m, off[m], off[m + 1]);
}
template void host_expand(const CompressedView&, std::int32_t*, const char*);
template void host_expand(const CompressedView&, std::int64_t*, const char*);

template <class I>
void host_offsets(const CooView& a, I* offsets) {
  const I* rows = static_cast<const I*>(a.rows);
  std::int64_t k = 0;
  for (std::int64_t r = 0; r <= a.desc.nrows; ++r) {
    while (k < a.desc.nnz && rows[k] < r) ++k;
    offsets[r] = static_cast<I>(k);
  }
}
template void host_offsets(const CooView&, std::int32_t*);
template void host_offsets(const CooView&, std::int64_t*);

void host_scale_compressed(const CompressedView& v, const DenseOperand& factor, void* out_offsets,
                           void* out_indices, void* out_vals) {
  with_elem(v.desc.dtype, [&](auto e) {
    if (v.desc.index == IndexType::i32)
      scale<decltype(e)>(v, factor, static_cast<std::int32_t*>(out_offsets),
                         static_cast<std::int32_t*>(out_indices), out_vals);
    else
      scale<decltype(e)>(v, factor, static_cast<std::int64_t*>(out_offsets),
                         static_cast<std::int64_t*>(out_indices), out_vals);
  });
}

}  // namespace ewise::sparse_detail
