// sparse/reference.cpp — the sparse operations' CPU backend on checked arguments (internal.hpp;
// the public reference over it: sparse_reference.cpp): each operand's entries as sorted (key,
// summed value) vectors (host_sort.hpp), the key row * ncols + col. Two canonical operands
// (marked so, or found sorted without duplicates) are merged in place instead
// (merge_canonical), which gives the same matrix (tests/test_sparse_host.cpp).
#include "internal.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/ops.hpp"
#include "element.hpp"
#include "host_elem.hpp"
#include "host_sort.hpp"
#include "thread_pool.hpp"

namespace ewise {
namespace {

using sparse_detail::factor_at;
using sparse_detail::for_each_coord;
using sparse_detail::for_each_summed_parallel;
using sparse_detail::host_index;
using sparse_detail::Summed;
using sparse_detail::summed;
using sparse_detail::with_elem;

void store_index(void* p, IndexType t, std::int64_t k, std::int64_t v) {
  if (t == IndexType::i32) {
    const auto v32 = static_cast<std::int32_t>(v);
    std::memcpy(static_cast<std::byte*>(p) + k * 4, &v32, 4);
  } else {
    std::memcpy(static_cast<std::byte*>(p) + k * 8, &v, 8);
  }
}

/// A canonical HostCoo from entries sorted by key, rounded to the dtype; entries whose rounded
/// value is zero are left out when drop_zeros.
template <class E>
HostCoo to_coo(const CooDesc& like, const Summed<typename E::compute>& entries, bool drop_zeros) {
  HostCoo out(sparse_detail::result_desc(like, static_cast<std::int64_t>(entries.keys.size())));
  std::int64_t n = 0;
  for_each_coord(entries.keys, like.ncols, [&](std::size_t i, std::int64_t r, std::int64_t c) {
    E::store(out.vals(), n, entries.vals[i]);
    if (drop_zeros && E::load(out.vals(), n) == 0) return;
    store_index(out.rows(), like.index, n, r);
    store_index(out.cols(), like.index, n, c);
    ++n;
  });
  out.set_nnz(n);
  return out;
}

/// Entry n of a canonical result written straight into its arrays (no key or value vectors,
/// no per-row divisions): v rounded to the dtype, the entry left out when drop_zeros and it
/// rounded to zero, as to_coo does; returns the next entry's place. Its callers keep the
/// pointers and n in locals or a struct passed by value (MergeArrays): reached through memory,
/// they were reloaded after each value's store, a byte store that may alias them.
template <class E, class I>
std::int64_t put_entry(I* rows, I* cols, void* vals, std::int64_t n, I r, I c,
                       typename E::compute v, bool drop_zeros) {
  E::store(vals, n, v);
  if (drop_zeros && E::load(vals, n) == 0) return n;
  rows[n] = r;
  cols[n] = c;
  return n + 1;
}

/// What merge_stretch reads and writes. Passed by value, the pointers stay in registers: reached
/// through a lambda's captures they were reloaded after each value's store (a byte store that
/// may alias anything reached through memory), and a union of two 4096² 10% f32 matrices took
/// 1.5 times SciPy's time.
template <class I>
struct MergeArrays {
  const I *ar, *ac, *br, *bc;
  const void *av, *bv;
  I *orow, *ocol;
  void* oval;
  std::int64_t ncols;
  bool drop_zeros;
};

/// Entries [i, ia) of a and [j, jb) of b merged into the result from entry n on (see
/// merge_canonical); returns the entries written.
template <class E, class I, class Both, class AOnly, class BOnly>
std::int64_t merge_stretch(const MergeArrays<I> m, const Both both, const AOnly a_only,
                           const BOnly b_only, std::int64_t i, const std::int64_t ia,
                           std::int64_t j, const std::int64_t jb, std::int64_t n) {
  constexpr bool kUnion = !std::is_same_v<AOnly, std::nullptr_t>;
  using C = typename E::compute;
  const std::int64_t first = n;
  // Keys row * ncols + col (they fit: CooDesc::validate). Without a branch on the keys' order,
  // so that the time does not depend on how two patterns interleave (a branch predictor misses
  // random ones; on the 2-core VM this form and the branch took the same 28 ms for the union of
  // two 4096² 10% f32 matrices): every iteration writes an entry at n, chosen by indexing with
  // the comparisons, and counts it where it is one (always in a union, at a coordinate both
  // store in an intersection; put_entry's zero test besides).
  while (i < ia && j < jb) {
    const I ra = m.ar[i], ca = m.ac[i], rb = m.br[j], cb = m.bc[j];
    const std::int64_t ka = static_cast<std::int64_t>(ra) * m.ncols + ca;
    const std::int64_t kb = static_cast<std::int64_t>(rb) * m.ncols + cb;
    const C x = E::load(m.av, i), y = E::load(m.bv, j);
    const bool a_le = ka <= kb, b_le = kb <= ka;
    const I row[2] = {rb, ra}, col[2] = {cb, ca};
    if constexpr (kUnion) {
      // b's entry alone, a's alone, both: at a_le * (1 + b_le)
      const C v[3] = {b_only(y), a_only(x), both(x, y)};
      n = put_entry<E>(m.orow, m.ocol, m.oval, n, row[a_le], col[a_le],
                       v[static_cast<int>(a_le) * (1 + static_cast<int>(b_le))], m.drop_zeros);
    } else {
      const std::int64_t next = put_entry<E>(m.orow, m.ocol, m.oval, n, ra, ca, both(x, y),
                                             m.drop_zeros);
      n = a_le && b_le ? next : n;
    }
    i += a_le;
    j += b_le;
  }
  if constexpr (kUnion) {
    for (; i < ia; ++i)
      n = put_entry<E>(m.orow, m.ocol, m.oval, n, m.ar[i], m.ac[i], a_only(E::load(m.av, i)),
                       m.drop_zeros);
    for (; j < jb; ++j)
      n = put_entry<E>(m.orow, m.ocol, m.oval, n, m.br[j], m.bc[j], b_only(E::load(m.bv, j)),
                       m.drop_zeros);
  }
  return n - first;
}

/// The merge of two canonical operands (their promise checked by api.cpp's check_indices_host),
/// read in place, each entry put_entry's (with summed()'s vectors and to_coo, COO ⊙ COO of two
/// 4096² 10% matrices took 3 times SciPy's time on the host). value(x, y) for a coordinate both
/// store; unions also a_only(x) and b_only(y) (an intersection passes nullptr for both). The
/// same entries, values and roundings as summed() and to_coo give, which the tests hold it to.
/// Large merges are split at row boundaries over the CPU backend's threads (thread_pool.hpp):
/// each part merges its rows of a and b into its own stretch of the result (as many entries as
/// it can make at most), and the stretches are then moved together in order.
template <class E, class I, class Both, class AOnly, class BOnly>
HostCoo merge_canonical(const CooView& a, const CooView& b, std::int64_t capacity,
                        bool drop_zeros, Both both, AOnly a_only, BOnly b_only) {
  constexpr bool kUnion = !std::is_same_v<AOnly, std::nullptr_t>;
  const I* ar = static_cast<const I*>(a.rows);
  const I* br = static_cast<const I*>(b.rows);
  const std::int64_t na = a.desc.nnz, nb = b.desc.nnz;
  HostCoo out(sparse_detail::result_desc(a.desc, capacity));
  I* const orow = static_cast<I*>(out.rows());
  I* const ocol = static_cast<I*>(out.cols());
  void* const oval = out.vals();
  const MergeArrays<I> arrays{ar,     static_cast<const I*>(a.cols),
                              br,     static_cast<const I*>(b.cols),
                              a.vals, b.vals,
                              orow,   ocol,
                              oval,   a.desc.ncols,
                              drop_zeros};
  const auto merge = [&](std::int64_t i, std::int64_t ia, std::int64_t j, std::int64_t jb,
                         std::int64_t n) {
    return merge_stretch<E>(arrays, both, a_only, b_only, i, ia, j, jb, n);
  };
  const int parts = detail::parts_for(na + nb);
  if (parts == 1) {
    out.set_nnz(merge(0, na, 0, nb, 0));
    return out;
  }
  // Part p: the rows from split[p] on, split at the rows of the larger operand's entries
  // p * nnz / parts (so that the parts hold about as many entries), a's entries [ia[p],
  // ia[p + 1]) and b's [jb[p], jb[p + 1]), its stretch from at[p] on.
  std::vector<std::int64_t> ia(parts + 1), jb(parts + 1), at(parts + 1), made(parts);
  ia[parts] = na;
  jb[parts] = nb;
  for (int p = 1; p < parts; ++p) {
    const I row = na >= nb ? ar[na * p / parts] : br[nb * p / parts];
    ia[p] = std::lower_bound(ar, ar + na, row) - ar;
    jb[p] = std::lower_bound(br, br + nb, row) - br;
  }
  for (int p = 0; p < parts; ++p) {
    const std::int64_t la = ia[p + 1] - ia[p], lb = jb[p + 1] - jb[p];
    at[p + 1] = at[p] + (kUnion ? la + lb : std::min(la, lb));
  }
  detail::run_parts(parts, [&](int p) { made[p] = merge(ia[p], ia[p + 1], jb[p], jb[p + 1], at[p]); });
  // The stretches moved together, each array's moves a part of the pool's (the three arrays
  // are apart; one array's stretches move in order, each into the room its predecessors left).
  const std::size_t value = dtype_size(out.desc().dtype);
  std::byte* const arrays_out[3] = {reinterpret_cast<std::byte*>(orow),
                                    reinterpret_cast<std::byte*>(ocol),
                                    static_cast<std::byte*>(oval)};
  const std::size_t widths[3] = {sizeof(I), sizeof(I), value};
  detail::run_parts(3, [&](int k) {
    std::int64_t to = made[0];
    for (int p = 1; p < parts; ++p) {
      std::memmove(arrays_out[k] + static_cast<std::size_t>(to) * widths[k],
                   arrays_out[k] + static_cast<std::size_t>(at[p]) * widths[k],
                   static_cast<std::size_t>(made[p]) * widths[k]);
      to += made[p];
    }
  });
  std::int64_t n = 0;
  for (int p = 0; p < parts; ++p) n += made[p];
  out.set_nnz(n);
  return out;
}

/// a ⊙ a dense or scalar operand for a canonical a, read in place, each entry put_entry's (the
/// same entries and values as summed() and to_coo give).
template <class E, class I>
HostCoo scale_canonical(const CooView& a, const sparse_detail::DenseOperand& d, bool drop_zeros) {
  const I* ar = static_cast<const I*>(a.rows);
  const I* ac = static_cast<const I*>(a.cols);
  HostCoo out(sparse_detail::result_desc(a.desc, a.desc.nnz));
  I* const orow = static_cast<I*>(out.rows());
  I* const ocol = static_cast<I*>(out.cols());
  void* const oval = out.vals();
  std::int64_t n = 0;
  for (std::int64_t k = 0; k < a.desc.nnz; ++k)
    n = put_entry<E>(orow, ocol, oval, n, ar[k], ac[k],
                     ops::Mul{}(E::load(a.vals, k), factor_at<E>(d, ar[k], ac[k])), drop_zeros);
  out.set_nnz(n);
  return out;
}

/// Whether m is canonical: marked so, or its entries found sorted without duplicates (a SciPy
/// COO is never marked, its flag not relied on); then it takes the in-place paths.
bool canonical_data(const CooView& m) {
  return m.desc.canonical || sparse_detail::keys_increase(m, 0, m.desc.nnz);
}

/// merge_canonical and scale_canonical for a's index type.
template <class E, class... Args>
HostCoo merge_canonical_of(const CooView& a, Args&&... args) {
  if (a.desc.index == IndexType::i32)
    return merge_canonical<E, std::int32_t>(a, std::forward<Args>(args)...);
  return merge_canonical<E, std::int64_t>(a, std::forward<Args>(args)...);
}
template <class E>
HostCoo scale_canonical_of(const CooView& a, const sparse_detail::DenseOperand& d,
                           bool drop_zeros) {
  if (a.desc.index == IndexType::i32) return scale_canonical<E, std::int32_t>(a, d, drop_zeros);
  return scale_canonical<E, std::int64_t>(a, d, drop_zeros);
}

}  // namespace

// ---- the CPU backend on checked arguments (internal.hpp) -------------------------------------

namespace sparse_detail {

HostCoo host_multiply(const CooView& a, const CooView& b, const SparseOptions& options) {
  return with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    using C = typename E::compute;
    if (canonical_data(a) && canonical_data(b))
      return merge_canonical_of<E>(a, b, std::min(a.desc.nnz, b.desc.nnz), options.drop_zeros,
                                   [](C x, C y) { return ops::Mul{}(x, y); }, nullptr, nullptr);
    const auto sa = summed<E>(a), sb = summed<E>(b);  // each over all of the pool's threads
    Summed<typename E::compute> out;
    for (std::size_t i = 0, j = 0; i < sa.keys.size() && j < sb.keys.size();) {
      if (sa.keys[i] < sb.keys[j]) {
        ++i;
      } else if (sb.keys[j] < sa.keys[i]) {
        ++j;
      } else {
        out.keys.push_back(sa.keys[i]);
        out.vals.push_back(ops::Mul{}(sa.vals[i++], sb.vals[j++]));
      }
    }
    return to_coo<E>(a.desc, out, options.drop_zeros);
  });
}

HostCoo host_multiply_dense(const CooView& a, const DenseOperand& d, const SparseOptions& options) {
  return with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    if (canonical_data(a)) return scale_canonical_of<E>(a, d, options.drop_zeros);
    auto out = summed<E>(a);
    for_each_coord(out.keys, a.desc.ncols, [&](std::size_t i, std::int64_t r, std::int64_t c) {
      out.vals[i] = ops::Mul{}(out.vals[i], factor_at<E>(d, r, c));
    });
    return to_coo<E>(a.desc, out, options.drop_zeros);
  });
}

void host_multiply_values(const CooView& a, const DenseOperand& d, const TensorView& out_vals) {
  with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    for (std::int64_t k = 0; k < a.desc.nnz; ++k) {
      const std::int64_t r = host_index(a.rows, a.desc.index, k);
      const std::int64_t c = host_index(a.cols, a.desc.index, k);
      E::store(out_vals.data, k, ops::Mul{}(E::load(a.vals, k), factor_at<E>(d, r, c)));
    }
  });
}

HostCoo host_combine(const CooView& a, const CooView& b, const UnionArgs& u,
                     const SparseOptions& options) {
  return with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    using C = typename E::compute;
    if (canonical_data(a) && canonical_data(b)) {
      return with_union_op(u.op, [&](auto f) {
        const auto fill_a = static_cast<C>(u.fill_a), fill_b = static_cast<C>(u.fill_b);
        return merge_canonical_of<E>(
            a, b, a.desc.nnz + b.desc.nnz, options.drop_zeros, [f](C x, C y) { return f(x, y); },
            [f, fill_b](C x) { return f(x, fill_b); }, [f, fill_a](C y) { return f(fill_a, y); });
      });
    }
    const auto sa = summed<E>(a), sb = summed<E>(b);  // each over all of the pool's threads
    Summed<C> out;
    out.keys.reserve(sa.keys.size() + sb.keys.size());
    out.vals.reserve(sa.keys.size() + sb.keys.size());
    with_union_op(u.op, [&](auto f) {
      std::size_t i = 0, j = 0;
      const std::size_t na = sa.keys.size(), nb = sb.keys.size();
      while (i < na || j < nb) {
        if (j == nb || (i < na && sa.keys[i] < sb.keys[j])) {
          out.keys.push_back(sa.keys[i]);
          out.vals.push_back(f(sa.vals[i++], static_cast<C>(u.fill_b)));
        } else if (i == na || sb.keys[j] < sa.keys[i]) {
          out.keys.push_back(sb.keys[j]);
          out.vals.push_back(f(static_cast<C>(u.fill_a), sb.vals[j++]));
        } else {
          out.keys.push_back(sa.keys[i]);
          out.vals.push_back(f(sa.vals[i++], sb.vals[j++]));
        }
      }
    });
    return to_coo<E>(a.desc, out, options.drop_zeros);
  });
}

void host_combine_dense(BinaryOp op, double fill_a, const CooView& a, const DenseOperand& d,
                        const TensorView& out) {
  const std::int64_t nc = a.desc.ncols;
  // No elements, no entries (and a run of rows past the first would offset a null pointer)
  if (a.desc.nrows == 0 || nc == 0) return;
  const DType dtype = a.desc.dtype;
  const std::int64_t s0 = out.desc.strides[0], s1 = out.desc.strides[1];
  with_elem(dtype, [&](auto e) {
    using E = decltype(e);
    using C = typename E::compute;
    const auto at = [&](std::int64_t r, std::int64_t c) { return factor_at<E>(d, r, c); };
    const auto value = static_cast<std::int64_t>(dtype_size(dtype));
    for_each_summed_parallel<E>(a, [&](const auto& each) {
      with_union_op(op, [&](auto f) {
        each([&](std::int64_t r0, std::int64_t r1, const auto& visit) {
          // The entries' results first, in place of their values: they read dense at their
          // coordinates, which out may be (in place; check_union_output refuses any other
          // overlap).
          visit([&](std::int64_t r, std::int64_t c, C& v) { v = f(v, at(r, c)); });
          // Every other element of the rows is fill_a op dense: the dense CPU backend's call
          // (vectorized; element by element where out is dense), the same values as the
          // functor's (the same compute type and one rounding). With a temporary of the whole
          // matrix and a loop an element, a 4096² f32 add took 6 times SciPy's time. (dense is
          // a tensor here, dense_operand's: never a scalar DenseOperand.)
          const Dims rows{r1 - r0, nc};
          const ConstTensorView dense(
              static_cast<const std::byte*>(d.data) + r0 * d.row_stride * value,
              TensorDesc::strided(dtype, rows, Dims{d.row_stride, d.col_stride}), Memory::host);
          const TensorView out_rows{static_cast<std::byte*>(out.data) + r0 * s0 * value,
                                    TensorDesc::strided(dtype, rows, Dims{s0, s1}), Memory::host};
          binary(op, Scalar::of(dtype, fill_a), dense, out_rows);
          visit([&](std::int64_t r, std::int64_t c, C& v) {
            E::store(out.data, r * s0 + c * s1, v);
          });
        });
      });
    });
  });
}

void host_accumulate(BinaryOp op, const TensorView& dense, const CooView& a) {
  const std::int64_t s0 = dense.desc.strides[0], s1 = dense.desc.strides[1];
  with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    using C = typename E::compute;
    with_union_op(op, [&](auto f) {
      for_each_summed_parallel<E>(a, [&](const auto& each) {
        each([&](std::int64_t, std::int64_t, const auto& visit) {
          visit([&](std::int64_t r, std::int64_t c, C& v) {
            const std::int64_t k = r * s0 + c * s1;
            E::store(dense.data, k, f(E::load(dense.data, k), v));
          });
        });
      });
    });
  });
}

HostCoo host_coalesce(const CooView& a, const SparseOptions& options) {
  return with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    return to_coo<E>(a.desc, summed<E>(a), options.drop_zeros);
  });
}

HostCoo host_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc) {
  return with_elem(desc.dtype, [&](auto e) {
    using E = decltype(e);
    Summed<typename E::compute> out;
    // No row loop without columns: an empty (2^31, 0) tensor is not 2^31 iterations.
    for (std::int64_t r = 0; r < desc.nrows && desc.ncols > 0; ++r)
      for (std::int64_t c = 0; c < desc.ncols; ++c) {
        const auto v = E::load(dense.data, r * dense.desc.strides[0] + c * dense.desc.strides[1]);
        if (v != 0) {
          out.keys.push_back(r * desc.ncols + c);
          out.vals.push_back(v);
        }
      }
    return to_coo<E>(desc, out, false);
  });
}

HostTensor host_coo_to_dense(const CooView& a) {
  HostTensor out(a.desc.dtype, Dims{a.desc.nrows, a.desc.ncols});
  with_elem(a.desc.dtype, [&](auto e) {
    using E = decltype(e);
    for (std::int64_t k = 0; k < out.numel(); ++k) E::store(out.data(), k, 0);
    const auto sa = summed<E>(a);
    for (std::size_t i = 0; i < sa.keys.size(); ++i) E::store(out.data(), sa.keys[i], sa.vals[i]);
  });
  return out;
}

HostTensor host_csr_row_offsets(const CooView& a) {
  const DType t = csr_offsets_dtype(a.desc);
  std::vector<std::int64_t> per_row(static_cast<std::size_t>(a.desc.nrows) + 1, 0);
  for (std::int64_t k = 0; k < a.desc.nnz; ++k)
    ++per_row[static_cast<std::size_t>(host_index(a.rows, a.desc.index, k)) + 1];
  HostTensor out(t, Dims{a.desc.nrows + 1});
  std::int64_t total = 0;
  for (std::int64_t r = 0; r <= a.desc.nrows; ++r) {
    total += per_row[static_cast<std::size_t>(r)];
    store_index(out.data(), t == DType::i32 ? IndexType::i32 : IndexType::i64, r, total);
  }
  return out;
}

}  // namespace sparse_detail

}  // namespace ewise
