#include "ewise/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <ostream>

#include "checked.hpp"
#include "ewise/error.hpp"

namespace ewise {

void detail::throw_unknown_dtype(DType t) {
  EWISE_EXPECTS(false, "unknown dtype ", static_cast<int>(t));
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::b8: return "bool";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::i16: return "i16";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
  }
  return "unknown";
}

DTypeKind dtype_kind(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64: return DTypeKind::floating;
    case DType::b8: return DTypeKind::boolean;
    case DType::u8:
    case DType::u16:
    case DType::u32:
    case DType::u64: return DTypeKind::unsigned_int;
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64: return DTypeKind::signed_int;
  }
  detail::throw_unknown_dtype(t);
}

bool is_floating(DType t) { return dtype_kind(t) == DTypeKind::floating; }

bool is_integer(DType t) {
  const DTypeKind k = dtype_kind(t);
  return k == DTypeKind::signed_int || k == DTypeKind::unsigned_int;
}

DType parse_dtype(std::string_view name) {
  if (name == "b8") return DType::b8;
  for (DType t : kAllDTypes)
    if (name == dtype_name(t)) return t;
  EWISE_EXPECTS(false, "unknown dtype '", name,
                "' (expected f16, bf16, f32, f64, i32, i64, bool, i8, u8, i16, u16, u32 or u64)");
  return DType::f32;
}

const char* memory_name(Memory m) { return m == Memory::host ? "host" : "device"; }

// ---- Dims ---------------------------------------------------------------------------------

Dims::Dims(std::initializer_list<std::int64_t> values) {
  EWISE_EXPECTS(values.size() <= static_cast<std::size_t>(kMaxRank), "rank ", values.size(),
                " exceeds the maximum rank ", kMaxRank);
  for (std::int64_t v : values) v_[static_cast<std::size_t>(rank_++)] = v;
}

Dims Dims::of_rank(int rank, std::int64_t fill) {
  EWISE_EXPECTS(rank >= 0 && rank <= kMaxRank, "rank ", rank, " is outside 0..", kMaxRank);
  Dims d;
  d.rank_ = rank;
  std::fill(d.v_.begin(), d.v_.begin() + rank, fill);
  return d;
}

Dims Dims::from(const std::int64_t* values, int rank) {
  Dims d = of_rank(rank, 0);
  std::copy(values, values + rank, d.v_.begin());
  return d;
}

void Dims::throw_full() const {
  EWISE_EXPECTS(false, "rank ", rank_ + 1, " exceeds the maximum rank ", kMaxRank);
}

void Dims::throw_overflow() const {
  EWISE_EXPECTS(false, "the product of ", str(), " overflows int64");
}

std::string Dims::str() const {
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) s += (i ? "," : "") + std::to_string(v_[i]);
  if (rank_ == 1) s += ",";
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const Dims& d) { return os << d.str(); }

// ---- TensorDesc ---------------------------------------------------------------------------

TensorDesc TensorDesc::contiguous(DType dtype, const Dims& shape) {
  TensorDesc d;
  d.dtype = dtype;
  d.shape = shape;
  d.strides = Dims::of_rank(shape.size(), 1);
  for (int i = shape.size() - 2; i >= 0; --i) {
    std::int64_t s = 0;
    if (detail::mul_overflows(d.strides[i + 1], std::max<std::int64_t>(shape[i + 1], 1), &s))
      s = -1;  // reported by validate()
    d.strides[i] = s;
  }
  d.validate();
  return d;
}

TensorDesc TensorDesc::strided(DType dtype, const Dims& shape, const Dims& strides) {
  TensorDesc d{dtype, shape, strides};
  d.validate();
  return d;
}

bool TensorDesc::is_contiguous() const noexcept {
  for (int i = 0; i < rank(); ++i)
    if (shape[i] == 0) return true;  // no elements: any strides describe it
  std::int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool TensorDesc::is_non_overlapping() const {
  if (numel() == 0) return true;  // nothing to overlap
  // Sort the dims of extent > 1 by |stride|; each must step past everything the inner ones reach.
  int order[kMaxRank];
  int n = 0;
  for (int i = 0; i < rank(); ++i) {
    if (shape[i] <= 1) continue;
    int k = n++;  // insertion sort by |stride|
    for (; k > 0 && std::llabs(strides[order[k - 1]]) > std::llabs(strides[i]); --k)
      order[k] = order[k - 1];
    order[k] = i;
  }
  detail::int128 reach = 0;  // the span of the inner dims; 128 bits: the sum can pass int64
  for (int k = 0; k < n; ++k) {
    const detail::int128 s = std::llabs(strides[order[k]]);
    if (s <= reach) return false;
    reach += (shape[order[k]] - 1) * s;
  }
  return true;
}

void TensorDesc::validate() const {
  EWISE_EXPECTS(strides.size() == shape.size(), "shape ", shape.str(), " has rank ",
                shape.size(), " but strides ", strides.str(), " have rank ", strides.size());
  for (int i = 0; i < rank(); ++i)
    EWISE_EXPECTS(shape[i] >= 0, "negative extent ", shape[i], " in dim ", i, " of shape ",
                  shape.str());
  const std::int64_t n = numel();  // throws on overflow
  if (n == 0) return;
  // Every reachable offset, in bytes, must fit in int64.
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  std::int64_t lo = 0, hi = 0;
  for (int i = 0; i < rank(); ++i) {
    std::int64_t span = 0;
    EWISE_EXPECTS(!detail::mul_overflows(shape[i] - 1, strides[i], &span) &&
                      !detail::add_overflows(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi),
                  "strides ", strides.str(), " over shape ", shape.str(),
                  " reach offsets that overflow int64");
  }
  std::int64_t b = 0;
  EWISE_EXPECTS(!detail::mul_overflows(hi, elem, &b) && !detail::mul_overflows(lo, elem, &b),
                "strides ", strides.str(), " over shape ", shape.str(),
                " reach byte offsets that overflow int64");
}

std::string TensorDesc::str() const {
  return std::string(dtype_name(dtype)) + shape.str() + " strides " + strides.str();
}

void check_view(const ConstTensorView& v, const char* what) {
  v.desc.validate();
  EWISE_EXPECTS(v.data != nullptr || v.desc.numel() == 0, what, " has null data but ",
                v.desc.numel(), " elements (", v.desc.str(), ")");
}

}  // namespace ewise
