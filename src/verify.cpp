#include "ewise/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

#include "element.hpp"
#include "ewise/error.hpp"
#include "random.hpp"
#include "residency.hpp"
#include "strided_device.hpp"

namespace ewise::verify {
namespace {

/// The options of a fill of dtype t: the range cut to what it holds (unsigned: from 0; bool: 0
/// and 1), so that every value drawn lies in [lo, hi].
GenOptions options_for(DType t, GenOptions o) {
  if (dtype_kind(t) == DTypeKind::unsigned_int || t == DType::b8) o.lo = std::max(o.lo, 0.0);
  if (t == DType::b8) o.hi = std::min(o.hi, 1.0);
  return o;
}

detail::RandomSpec spec_of(std::uint64_t seed, const GenOptions& o) {
  EWISE_EXPECTS(o.lo <= o.hi, "random range [", o.lo, ", ", o.hi, "] is empty");
  EWISE_EXPECTS(o.allow_zero || o.hi >= o.min_magnitude || o.lo <= -o.min_magnitude,
                "random range [", o.lo, ", ", o.hi, "] holds no value of magnitude >= ",
                o.min_magnitude, " (set allow_zero)");
  return {seed, o.lo, o.hi, o.min_magnitude, o.allow_zero};
}

// Bytes that equal no value the generators produce: NaN for floating types.
void poison_pattern(DType t, std::byte* out) {
  std::memset(out, is_floating(t) ? 0xFF : 0x5A, dtype_size(t));
}

}  // namespace

std::uint64_t seed_from_env_or_random() {
  if (const char* s = std::getenv("EWISE_SEED")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 0);
    EWISE_EXPECTS(end != s && *end == '\0', "EWISE_SEED='", s, "' is not a number");
    return v;
  }
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

void fill_random(const TensorView& v, std::uint64_t seed, const GenOptions& options,
                 cudaStream_t stream) {
  check_view(v, "tensor to fill");
  const detail::RandomSpec spec = spec_of(seed, options_for(v.desc.dtype, options));
  if (v.memory == Memory::device) {
    detail::DeviceOperands().add(v, "tensor to fill").check(stream);
    detail::device_fill_random(v, spec, stream);
    return;
  }
  const DType t = v.desc.dtype;
  detail::for_each_coord(v.desc.shape, [&](std::int64_t i, const Dims& c) {
    std::byte* p = detail::element_at(v.data, t, detail::dot(c, v.desc.strides));
    const auto idx = static_cast<std::uint64_t>(i);
    if (!is_floating(t)) {
      detail::store_int(t, p, detail::draw_int(spec, idx));
      return;
    }
    const double x = detail::draw_real(spec, idx, [&](double y) {
      detail::store_double(t, p, y);  // round to the dtype
      return detail::load_double(t, p);
    });
    detail::store_double(t, p, x);
  });
}

HostTensor random_tensor(DType dtype, const Dims& shape, std::uint64_t seed,
                         const GenOptions& options) {
  HostTensor t(dtype, shape);
  fill_random(t.view(), seed, options);
  return t;
}

void poison(const TensorView& v, cudaStream_t stream) {
  check_view(v, "tensor to poison");
  std::byte pattern[8];
  poison_pattern(v.desc.dtype, pattern);
  if (v.memory == Memory::device) {
    detail::DeviceOperands().add(v, "tensor to poison").check(stream);
    detail::device_poison(v, pattern, stream);
    return;
  }
  const std::size_t elem = dtype_size(v.desc.dtype);
  detail::for_each_coord(v.desc.shape, [&](std::int64_t, const Dims& c) {
    std::memcpy(detail::element_at(v.data, v.desc.dtype, detail::dot(c, v.desc.strides)),
                pattern, elem);
  });
}

bool is_poison(DType dtype, const void* element) {
  std::byte pattern[8];
  poison_pattern(dtype, pattern);
  return std::memcmp(element, pattern, dtype_size(dtype)) == 0;
}

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f16: return {1e-3, 1e-3};
    case DType::bf16: return {1e-2, 8e-3};
    case DType::f32: return {1e-6, 1e-6};
    case DType::f64: return {1e-12, 1e-12};
    default: return {0, 0};  // integers and bool: exact
  }
}

namespace {

// Whether got matches want, and the absolute and relative errors (0 when both are NaN).
struct ElementCheck {
  bool ok;
  double abs_err, rel_err;
};

// NaN matches only a NaN of the same bits (got_bits, want_bits: the stored patterns; ops.hpp
// makes every written NaN canonical, so a NaN of other bits is a bug or an unwritten element).
std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The element's stored bytes as an integer.
std::uint64_t raw_bits(DType t, const std::byte* p) {
  std::uint64_t b = 0;
  std::memcpy(&b, p, dtype_size(t));
  return b;
}

ElementCheck check_element(double got, double want, Tolerance tol, std::uint64_t got_bits,
                           std::uint64_t want_bits) {
  if (std::isnan(want) || std::isnan(got)) return {got_bits == want_bits, 0, 0};
  if (std::isinf(want) || std::isinf(got)) return {got == want, got == want ? 0 : INFINITY, 0};
  const double abs_err = std::fabs(got - want);
  const double rel_err = want != 0 ? abs_err / std::fabs(want) : (abs_err ? INFINITY : 0);
  return {abs_err <= tol.abs + tol.rel * std::fabs(want), abs_err, rel_err};
}

}  // namespace

std::string CompareReport::str() const {
  if (ok()) return detail::concat("all ", checked, " elements match (worst abs error ",
                                  max_abs_error, ", rel ", max_rel_error, ")");
  return detail::concat(mismatches, " of ", checked, " elements differ (", poisoned,
                        " never written); worst abs error ", max_abs_error, ", rel ",
                        max_rel_error, "; first at ", first_coord.str(), ": got ", first_got,
                        " (bits 0x", hex(first_got_bits), "), want ", first_want, " (bits 0x",
                        hex(first_want_bits), ")");
}

CompareReport compare(const ConstTensorView& got, const ConstTensorView& want, Tolerance tol,
                      cudaStream_t stream) {
  EWISE_EXPECTS(got.desc.dtype == want.desc.dtype, "compare: dtypes differ (",
                dtype_name(got.desc.dtype), " vs ", dtype_name(want.desc.dtype), ")");
  EWISE_EXPECTS(got.desc.shape == want.desc.shape, "compare: shapes differ (",
                got.desc.shape.str(), " vs ", want.desc.shape.str(), ")");
  const HostTensor g = to_host(got, stream), w = to_host(want, stream);
  const DType t = g.dtype();
  CompareReport r;
  detail::for_each_coord(g.shape(), [&](std::int64_t i, const Dims& c) {
    const std::byte* pg = detail::element_at(g.data(), t, i);
    const std::byte* pw = detail::element_at(w.data(), t, i);
    ++r.checked;
    bool ok;
    double gv, wv;
    if (is_floating(t)) {
      gv = detail::load_double(t, pg);
      wv = detail::load_double(t, pw);
      const ElementCheck e = check_element(gv, wv, tol, raw_bits(t, pg), raw_bits(t, pw));
      ok = e.ok;
      r.max_abs_error = std::max(r.max_abs_error, e.abs_err);
      r.max_rel_error = std::max(r.max_rel_error, e.rel_err);
    } else {  // integers compare exactly, in int64
      const std::int64_t a = detail::load_int(t, pg), b = detail::load_int(t, pw);
      ok = a == b;
      gv = static_cast<double>(a);
      wv = static_cast<double>(b);
      const double err = std::fabs(gv - wv);
      r.max_abs_error = std::max(r.max_abs_error, err);
      if (b != 0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(wv));
    }
    if (ok) return;
    ++r.mismatches;
    if (is_poison(t, pg)) ++r.poisoned;
    if (!r.has_first) {
      r.has_first = true;
      r.first_coord = c;
      r.first_got = gv;
      r.first_want = wv;
      r.first_got_bits = raw_bits(t, pg);
      r.first_want_bits = raw_bits(t, pw);
    }
  });
  return r;
}

// ---- COO ----------------------------------------------------------------------------------

namespace {

// Distinct absolute indices in [0, total), `count` of them, in increasing order.
std::vector<std::int64_t> distinct_indices(std::int64_t total, std::int64_t count,
                                           std::mt19937_64& rng) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  if (count * 4 >= total) {  // dense: selection sampling over all indices (Knuth's S)
    std::int64_t needed = count;
    for (std::int64_t i = 0; i < total && needed > 0; ++i) {
      const std::int64_t left = total - i;
      if (static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(left)) < needed) {
        out.push_back(i);
        --needed;
      }
    }
    return out;
  }
  // sparse: draw, sort, dedupe, top up until enough, then drop a random surplus
  std::uniform_int_distribution<std::int64_t> pick(0, total - 1);
  while (static_cast<std::int64_t>(out.size()) < count) {
    const std::int64_t missing = count - static_cast<std::int64_t>(out.size());
    for (std::int64_t k = 0; k < missing + missing / 8 + 16; ++k) out.push_back(pick(rng));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  std::shuffle(out.begin(), out.end(), rng);
  out.resize(static_cast<std::size_t>(count));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

HostCoo random_coo(std::int64_t nrows, std::int64_t ncols, double density, std::uint64_t seed,
                   const CooGenOptions& o) {
  EWISE_EXPECTS(density >= 0 && density <= 1, "density ", density, " is outside [0, 1]");
  EWISE_EXPECTS(o.duplicate_fraction >= 0, "duplicate fraction ", o.duplicate_fraction,
                " is negative");
  CooDesc probe{nrows, ncols, 0, o.index, o.dtype, false};
  probe.validate();
  const std::int64_t total = nrows * ncols;
  const auto distinct = static_cast<std::int64_t>(std::llround(density * static_cast<double>(total)));
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> abs = distinct_indices(total, distinct, rng);
  const auto dups = distinct == 0 ? 0 : static_cast<std::int64_t>(std::llround(o.duplicate_fraction * static_cast<double>(distinct)));
  for (std::int64_t k = 0; k < dups; ++k) abs.push_back(abs[rng() % static_cast<std::uint64_t>(distinct)]);
  if (o.unsorted) std::shuffle(abs.begin(), abs.end(), rng);
  else std::sort(abs.begin(), abs.end());

  CooDesc desc{nrows, ncols, static_cast<std::int64_t>(abs.size()), o.index, o.dtype,
               !o.unsorted && dups == 0};
  HostCoo coo(desc);
  TensorView vals{coo.vals(), TensorDesc::contiguous(o.dtype, {desc.nnz}), Memory::host};
  fill_random(vals, seed ^ 0x5EEDC00ull, o.values);
  const std::size_t isz = index_size(o.index);
  for (std::size_t k = 0; k < abs.size(); ++k) {
    const std::int64_t r = abs[k] / ncols, c = abs[k] % ncols;
    auto* rp = static_cast<std::byte*>(coo.rows()) + k * isz;
    auto* cp = static_cast<std::byte*>(coo.cols()) + k * isz;
    if (o.index == IndexType::i32) {
      detail::store_raw(rp, static_cast<std::int32_t>(r));
      detail::store_raw(cp, static_cast<std::int32_t>(c));
    } else {
      detail::store_raw(rp, r);
      detail::store_raw(cp, c);
    }
  }
  return coo;
}

namespace {

// One coordinate's entries: their values summed, and the stored bits when there is one entry.
struct Entry {
  double sum = 0;
  std::uint64_t bits = 0;
  std::int64_t count = 0;
};

struct Entries {
  std::map<std::pair<std::int64_t, std::int64_t>, Entry> at;
  bool canonical = true;
};

Entries entries_of(const HostCoo& m) {
  Entries e;
  const CooDesc& d = m.desc();
  const std::size_t isz = index_size(d.index);
  std::int64_t prev = -1;
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const auto* rp = static_cast<const std::byte*>(m.rows()) + k * static_cast<std::int64_t>(isz);
    const auto* cp = static_cast<const std::byte*>(m.cols()) + k * static_cast<std::int64_t>(isz);
    const std::int64_t r = d.index == IndexType::i32 ? detail::load_raw<std::int32_t>(rp) : detail::load_raw<std::int64_t>(rp);
    const std::int64_t c = d.index == IndexType::i32 ? detail::load_raw<std::int32_t>(cp) : detail::load_raw<std::int64_t>(cp);
    const std::int64_t a = r * d.ncols + c;
    if (a <= prev) e.canonical = false;
    prev = a;
    const std::byte* v = detail::element_at(m.vals(), d.dtype, k);
    Entry& x = e.at[{r, c}];
    x.sum += detail::load_double(d.dtype, v);
    x.bits = raw_bits(d.dtype, v);
    ++x.count;
  }
  return e;
}

}  // namespace

std::string CooCompareReport::str() const {
  return detail::concat(ok() ? "COO match" : "COO MISMATCH", ": got nnz ", got_nnz,
                        got_canonical ? " (canonical)" : " (not canonical)", ", want nnz ",
                        want_nnz, "; missing ", missing, ", extra ", extra, ", value mismatches ",
                        value_mismatches, ", worst abs error ", max_abs_error,
                        first_problem.empty() ? "" : "; first: " + first_problem);
}

CooCompareReport compare_coo(const CooView& got, const CooView& want, Tolerance tol,
                             cudaStream_t stream) {
  EWISE_EXPECTS(got.desc.nrows == want.desc.nrows && got.desc.ncols == want.desc.ncols,
                "compare_coo: shapes differ (", got.desc.nrows, "x", got.desc.ncols, " vs ",
                want.desc.nrows, "x", want.desc.ncols, ")");
  const Entries g = entries_of(to_host(got, stream)), w = entries_of(to_host(want, stream));
  CooCompareReport r;
  r.got_nnz = got.desc.nnz;
  r.want_nnz = want.desc.nnz;
  r.got_canonical = g.canonical;
  const auto note = [&](const std::string& s) {
    if (r.first_problem.empty()) r.first_problem = s;
  };
  for (const auto& [rc, wv] : w.at) {
    const auto it = g.at.find(rc);
    const std::string at = detail::concat("(", rc.first, ",", rc.second, ")");
    if (it == g.at.end()) {
      ++r.missing;
      note(at + " missing");
      continue;
    }
    const Entry& gv = it->second;
    // Summed duplicates have no stored bits: a NaN sum then matches any NaN.
    const bool single = gv.count == 1 && wv.count == 1;
    const ElementCheck e = check_element(gv.sum, wv.sum, tol, single ? gv.bits : 0,
                                         single ? wv.bits : 0);
    r.max_abs_error = std::max(r.max_abs_error, e.abs_err);
    if (!e.ok) {
      ++r.value_mismatches;
      note(detail::concat(at, ": got ", gv.sum, " (bits 0x", hex(gv.bits), "), want ", wv.sum,
                          " (bits 0x", hex(wv.bits), ")"));
    }
  }
  for (const auto& [rc, gv] : g.at)
    if (!w.at.count(rc)) {
      ++r.extra;
      note(detail::concat("(", rc.first, ",", rc.second, ") extra, value ", gv.sum));
    }
  return r;
}

}  // namespace ewise::verify
