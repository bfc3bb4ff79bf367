// tests/testing/row_sparse.hpp — random row-sparse operands and their oracle for the host and
// GPU tests (test_rows_host.cpp, test_rows.cu). The oracle is accumulate of the expanded COO
// matrix, whose entries are the (rows[k], c) of the stored rows with the same value block: by
// definition the same semantics (ewise/sparse.hpp), by an implementation of its own (the COO
// CPU backend, itself checked against the dense reference in test_sparse_host.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ewise/coo.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"
#include "ewise/verify.hpp"
#include "testing/values.hpp"

namespace ewise::test {

/// verify::random_coo's options for a COO operand of the conversion tests: in storage order
/// without duplicates, or shuffled with 30% duplicates.
inline verify::CooGenOptions conversion_coo_options(DType dtype, IndexType index, bool shuffled) {
  verify::CooGenOptions g;
  g.index = index;
  g.dtype = dtype;
  g.unsorted = shuffled;
  g.duplicate_fraction = shuffled ? 0.3 : 0.0;
  return g;
}

/// A host row-sparse operand that owns its arrays.
struct RowCase {
  HostTensor rows, vals;
  std::int64_t nrows = 0;
  bool canonical = false;

  RowSparseView view() const {
    return row_sparse_view(rows.view(), vals.view(), nrows, canonical);
  }
};

/// nnz stored rows of width `width` drawn from [0, nrows): canonical, a sorted subset without
/// repeats (nnz at most nrows); otherwise in random order with duplicates, a few hot rows
/// taking many (as an embedding gradient's frequent ids do). Values from fill_values (±0, ±inf,
/// NaNs, integer extremes among them).
inline RowCase random_rows(std::mt19937_64& rng, std::int64_t nrows, std::int64_t width,
                           std::int64_t nnz, DType dtype, IndexType index, bool canonical) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(nnz));
  if (canonical) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(nrows));
    for (std::int64_t i = 0; i < nrows; ++i) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng);
    std::copy(all.begin(), all.begin() + nnz, r.begin());
    std::sort(r.begin(), r.end());
  } else {
    const std::int64_t hot = std::max<std::int64_t>(1, nrows / 16);
    for (auto& x : r)
      x = static_cast<std::int64_t>(rng() % (rng() % 2 ? hot : std::max<std::int64_t>(nrows, 1)));
  }
  RowCase c{HostTensor(index == IndexType::i32 ? DType::i32 : DType::i64, Dims{nnz}),
            HostTensor(dtype, Dims{nnz, width}), nrows, canonical};
  for (std::int64_t k = 0; k < nnz; ++k) {
    if (index == IndexType::i32) c.rows.data_as<std::int32_t>()[k] = static_cast<std::int32_t>(r[k]);
    else c.rows.data_as<std::int64_t>()[k] = r[k];
  }
  fill_values(dtype, c.vals.data(), nnz * width, rng);
  return c;
}

/// The COO matrix of a host row-sparse view: entry k * width + c at (rows[k], c), its value
/// vals[k * width + c] (the block is the value array as it is). Canonical when a is.
inline HostCoo expanded(const RowSparseView& a) {
  const std::int64_t n = a.desc.nnz, w = a.desc.ncols;
  CooDesc d = a.desc;
  d.nnz = n * w;
  HostCoo m(d);
  for (std::int64_t k = 0; k < n; ++k)
    for (std::int64_t c = 0; c < w; ++c) {
      const std::int64_t e = k * w + c;
      if (d.index == IndexType::i32) {
        static_cast<std::int32_t*>(m.rows())[e] = static_cast<const std::int32_t*>(a.rows)[k];
        static_cast<std::int32_t*>(m.cols())[e] = static_cast<std::int32_t>(c);
      } else {
        static_cast<std::int64_t*>(m.rows())[e] = static_cast<const std::int64_t*>(a.rows)[k];
        static_cast<std::int64_t*>(m.cols())[e] = c;
      }
    }
  if (d.nnz > 0)
    std::memcpy(m.vals(), a.vals, static_cast<std::size_t>(d.nnz) * dtype_size(d.dtype));
  return m;
}

/// "" where two host COO matrices are the same to the bit (descriptors, indices, values), else
/// what differs first.
inline std::string coo_difference(const CooView& got, const CooView& want) {
  const CooDesc &g = got.desc, &w = want.desc;
  if (g.nrows != w.nrows || g.ncols != w.ncols || g.nnz != w.nnz || g.index != w.index ||
      g.dtype != w.dtype || g.canonical != w.canonical)
    return "descriptors differ: nnz " + std::to_string(g.nnz) + " vs " + std::to_string(w.nnz) +
           ", " + dtype_name(g.dtype) + " vs " + dtype_name(w.dtype) +
           (g.canonical != w.canonical ? ", canonical differs" : "");
  const std::size_t ib = static_cast<std::size_t>(g.nnz) * index_size(g.index);
  const std::size_t vb = static_cast<std::size_t>(g.nnz) * dtype_size(g.dtype);
  if (ib > 0 && std::memcmp(got.rows, want.rows, ib) != 0) return "row indices differ";
  if (ib > 0 && std::memcmp(got.cols, want.cols, ib) != 0) return "column indices differ";
  if (vb > 0 && std::memcmp(got.vals, want.vals, vb) != 0) return "values differ";
  return "";
}

/// A (nrows, width) host table of random values.
inline HostTensor random_table(std::mt19937_64& rng, DType dtype, std::int64_t nrows,
                               std::int64_t width) {
  HostTensor t(dtype, Dims{nrows, width});
  fill_values(dtype, t.data(), t.numel(), rng);
  return t;
}

}  // namespace ewise::test
