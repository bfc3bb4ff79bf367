// fuzz/api_oracle_rules.cpp — the api oracle's validity rules (api_oracle.hpp), each written
// from the text of the header that states it.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "api_oracle.hpp"
#include "internal.hpp"

namespace ewise::fuzz {
namespace {

/// Byte range [lo, hi] an arena view reaches (numel > 0).
std::pair<std::int64_t, std::int64_t> byte_range(const ArenaView& v, std::size_t arena_elem) {
  std::int64_t lo = 0, hi = 0;
  for (int i = 0; i < v.desc.rank(); ++i) {
    const std::int64_t reach = (v.desc.shape[i] - 1) * v.desc.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto elem = static_cast<std::int64_t>(dtype_size(v.desc.dtype));
  const std::int64_t base = v.offset * static_cast<std::int64_t>(arena_elem);
  return {base + lo * elem, base + (hi + 1) * elem - 1};
}

}  // namespace

bool coo_desc_ok(const CooDesc& d) {
  std::int64_t total;
  if (d.nrows < 0 || d.ncols < 0 || d.nnz < 0 || __builtin_mul_overflow(d.nrows, d.ncols, &total))
    return false;
  const std::int64_t limit = std::int64_t{1} << 31;
  return d.index == IndexType::i64 || (d.nrows <= limit && d.ncols <= limit);
}

std::int64_t index_at(const Bytes& b, IndexType t, std::int64_t k) {
  if (t == IndexType::i32) {
    std::int32_t v;
    std::memcpy(&v, b.data() + k * 4, 4);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, b.data() + k * 8, 8);
  return v;
}

bool coo_ok(const CooBytes& m) {
  const CooDesc& d = m.desc;
  if (!coo_desc_ok(d) || (d.nnz > 0 && m.null_arrays)) return false;
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const std::int64_t r = index_at(m.rows, d.index, k), c = index_at(m.cols, d.index, k);
    if (r < 0 || r >= d.nrows || c < 0 || c >= d.ncols) return false;
    if (d.canonical && k > 0) {
      const std::int64_t pr = index_at(m.rows, d.index, k - 1), pc = index_at(m.cols, d.index, k - 1);
      if (r < pr || (r == pr && c <= pc)) return false;
    }
  }
  return true;
}

bool tensor_desc_ok(const TensorDesc& d) {
  i128 numel = 1, lo = 0, hi = 0;
  for (int i = 0; i < d.rank(); ++i) {
    if (d.shape[i] < 0) return false;
    numel *= d.shape[i];
    if (numel > INT64_MAX) return false;  // the product of the extents so far
  }
  if (numel == 0) return true;
  const i128 elem = static_cast<i128>(dtype_size(d.dtype));
  for (int i = 0; i < d.rank(); ++i) {
    const i128 span = static_cast<i128>(d.shape[i] - 1) * d.strides[i];
    (span < 0 ? lo : hi) += span;
    if (lo < INT64_MIN || hi > INT64_MAX) return false;
  }
  return lo * elem >= INT64_MIN && hi * elem <= INT64_MAX;
}

bool broadcasts_to(const Dims& shape, const Dims& to) {
  if (shape.size() > to.size()) return false;
  const int lead = to.size() - shape.size();
  for (int j = 0; j < shape.size(); ++j)
    if (shape[j] != 1 && shape[j] != to[lead + j]) return false;
  return true;
}

bool broadcast(const Dims& a, const Dims& b, Dims& out) {
  const int r = std::max(a.size(), b.size());
  out = Dims::of_rank(r, 1);
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - a.size()), ib = i - (r - b.size());
    const std::int64_t ea = ia >= 0 ? a[ia] : 1, eb = ib >= 0 ? b[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1) return false;
    out[i] = ea == 1 ? eb : ea;
  }
  return true;
}

std::int64_t numel_of(const Dims& s) {
  std::int64_t n = 1;
  for (int i = 0; i < s.size(); ++i) n *= s[i];
  return n;
}

bool options_ok(const DenseOptions& o) {
  return (o.threads == 0 || (o.threads >= 32 && o.threads <= 1024 && o.threads % 32 == 0)) &&
         o.blocks >= 0 && o.sliding_factor >= 0;
}

bool out_layout_ok(const TensorDesc& out) {
  if (numel_of(out.shape) == 0) return true;
  std::set<std::int64_t> seen;  // no two output coordinates at one element
  bool distinct = true;
  for_each_coord(out.shape, [&](const Dims& coord) {
    distinct = seen.insert(offset_at(out, coord)).second && distinct;
  });
  // ewise's test is conservative (TensorDesc::is_non_overlapping, reported: its comment says
  // exact): the dims of extent > 1 sorted by |stride|, each |stride| must pass the reach of the
  // inner ones. It may refuse distinct layouts (strides (193,49,13,3) over (4,4,4,4)), never
  // accept an overlapping one.
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (|stride|, extent)
  for (int i = 0; i < out.rank(); ++i)
    if (out.shape[i] > 1) dims.emplace_back(std::llabs(out.strides[i]), out.shape[i]);
  std::sort(dims.begin(), dims.end());
  bool sorted_ok = true;
  i128 reach = 0;
  for (const auto& [stride, extent] : dims) {
    sorted_ok = sorted_ok && stride > reach;
    reach += static_cast<i128>(extent - 1) * stride;
  }
  EWISE_FUZZ_REQUIRE(!sorted_ok || distinct, "the output ", out.str(),
                     " passes the sorted-stride test but two coordinates share an element");
  return distinct && sorted_ok;
}

bool overlap_ok(const ArenaView& out, const ArenaView& in, std::size_t arena_elem) {
  if (numel_of(in.desc.shape) == 0 || numel_of(out.desc.shape) == 0) return true;
  if (in.offset == out.offset && in.desc.shape == out.desc.shape &&
      in.desc.strides == out.desc.strides && in.desc.dtype == out.desc.dtype)
    return true;
  const auto [olo, ohi] = byte_range(out, arena_elem);
  const auto [ilo, ihi] = byte_range(in, arena_elem);
  return ohi < ilo || ihi < olo;
}

bool binary_ok(const ApiCall& c) {
  const std::size_t elem = dtype_size(c.dtype);
  for (const ArenaView* v : {&c.x, &c.y, &c.out})
    if (!tensor_desc_ok(v->desc)) return false;
  Dims shape;
  if (!broadcast(c.x.desc.shape, c.y.desc.shape, shape) || !(shape == c.out.desc.shape)) return false;
  if (!options_ok(c.dense)) return false;
  return out_layout_ok(c.out.desc) && overlap_ok(c.out, c.x, elem) &&
         (c.y_scalar || overlap_ok(c.out, c.y, elem));
}

bool union_op_ok(BinaryOp op) {
  return op == BinaryOp::add || op == BinaryOp::sub || op == BinaryOp::min || op == BinaryOp::max;
}

}  // namespace ewise::fuzz
