// fuzz/api_oracle.cpp — the api oracle's expected results (api_oracle.hpp): operands of mixed
// value dtypes converted to the result dtype first, values in its compute type, duplicates summed
// in storage order (std::map of (row, col)), the operations of ops.hpp, every NaN written as the
// canonical NaN, drop_zeros on the rounded value.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "api_oracle.hpp"
#include "ewise/half.hpp"
#include "ewise/verify.hpp"
#include "internal.hpp"

namespace ewise::fuzz {

// The one place the oracle's NaN rule lives (ops.hpp: the canonical NaN, sign clear, every
// exponent and payload bit set).
std::uint64_t expected_nan_bits(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return 0x7FFF;
    case DType::f32: return 0x7FFFFFFF;
    default: return 0x7FFFFFFFFFFFFFFF;
  }
}

namespace {

// ---- values --------------------------------------------------------------------------------

/// How one dtype is loaded into its compute type and stored back, rounded once.
template <DType D>
struct Kind {
  static constexpr DType dtype = D;
  using compute = std::conditional_t<
      D == DType::f64, double,
      std::conditional_t<D == DType::i32, std::int32_t,
                         std::conditional_t<D == DType::i64, std::int64_t, float>>>;
  static constexpr std::size_t size = D == DType::f16 || D == DType::bf16 ? 2
                                      : D == DType::f64 || D == DType::i64 ? 8
                                                                           : 4;
  static compute load(const std::uint8_t* p) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, p, size);
    if constexpr (D == DType::f16) return f16_bits_to_float(static_cast<std::uint16_t>(bits));
    else if constexpr (D == DType::bf16) return bf16_bits_to_float(static_cast<std::uint16_t>(bits));
    else {
      compute v;
      std::memcpy(&v, p, size);
      return v;
    }
  }
  static std::uint64_t bits(compute v) {
    if constexpr (std::is_floating_point_v<compute>)
      if (std::isnan(v)) return expected_nan_bits(D);
    if constexpr (D == DType::f16) return float_to_f16_bits(v);
    else if constexpr (D == DType::bf16) return float_to_bf16_bits(v);
    else {
      std::uint64_t b = 0;
      std::memcpy(&b, &v, size);
      return b;
    }
  }
  static void store(std::uint8_t* p, compute v) {
    const std::uint64_t b = bits(v);
    std::memcpy(p, &b, size);
  }
  /// The stored value compares equal to zero (±0 for floats).
  static bool stored_zero(compute v) { return load_bits(bits(v)) == compute(0); }
  static compute load_bits(std::uint64_t b) { return load(reinterpret_cast<const std::uint8_t*>(&b)); }
};

template <class F>
decltype(auto) with_kind(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f(Kind<DType::f16>{});
    case DType::bf16: return f(Kind<DType::bf16>{});
    case DType::f32: return f(Kind<DType::f32>{});
    case DType::f64: return f(Kind<DType::f64>{});
    case DType::i32: return f(Kind<DType::i32>{});
    default: return f(Kind<DType::i64>{});
  }
}

/// The operations of the sparse calls (multiply, and the union's add, subtract, minimum and
/// maximum), from ops.hpp's text: integers wrap; min / max propagate NaN and return `a` when the
/// operands compare equal. (binary's, over every operation: api_oracle_binary.cpp.)
template <class T>
T apply(BinaryOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case BinaryOp::add: return static_cast<T>(U(a) + U(b));
      case BinaryOp::sub: return static_cast<T>(U(a) - U(b));
      case BinaryOp::mul: return static_cast<T>(U(a) * U(b));
      case BinaryOp::min: return b < a ? b : a;
      default: return a < b ? b : a;
    }
  } else {
    const bool nan = std::isnan(a) || std::isnan(b);
    switch (op) {
      case BinaryOp::add: return a + b;
      case BinaryOp::sub: return a - b;
      case BinaryOp::mul: return a * b;
      case BinaryOp::min: return nan ? std::numeric_limits<T>::quiet_NaN() : b < a ? b : a;
      default: return nan ? std::numeric_limits<T>::quiet_NaN() : a < b ? b : a;
    }
  }
}
void push_index(Bytes& b, IndexType t, std::int64_t v) {
  const std::size_t n = index_size(t), at = b.size();
  b.resize(at + n);
  if (t == IndexType::i32) {
    const auto v32 = static_cast<std::int32_t>(v);
    std::memcpy(b.data() + at, &v32, 4);
  } else {
    std::memcpy(b.data() + at, &v, 8);
  }
}

template <class K>
void push_value(Bytes& b, typename K::compute v) {
  const std::size_t at = b.size();
  b.resize(at + K::size);
  K::store(b.data() + at, v);
}

using Coord = std::pair<std::int64_t, std::int64_t>;

/// Each coordinate's values summed in storage order in the compute type.
template <class K>
std::map<Coord, typename K::compute> sums(const CooBytes& m) {
  std::map<Coord, typename K::compute> out;
  for (std::int64_t k = 0; k < m.desc.nnz; ++k) {
    const Coord rc{index_at(m.rows, m.desc.index, k), index_at(m.cols, m.desc.index, k)};
    const auto v = K::load(m.vals.data() + k * static_cast<std::int64_t>(K::size));
    const auto it = out.find(rc);
    if (it == out.end()) out.emplace(rc, v);
    else it->second = apply(BinaryOp::add, it->second, v);
  }
  return out;
}

/// The canonical result of sorted entries with values in the compute type.
template <class K>
void expect_coo(Expected& e, const CooDesc& like, IndexType index,
                const std::vector<std::pair<Coord, typename K::compute>>& entries, bool drop_zeros) {
  e.has_coo = true;
  e.coo = CooDesc{like.nrows, like.ncols, 0, index, K::dtype, true};
  for (const auto& [rc, v] : entries) {
    if (drop_zeros && K::stored_zero(v)) continue;
    push_index(e.rows, index, rc.first);
    push_index(e.cols, index, rc.second);
    push_value<K>(e.vals, v);
    ++e.coo.nnz;
  }
}

/// A dense operand in the result dtype: its elements and the index of its first one there.
struct DenseIn {
  const Bytes* bytes = nullptr;
  std::int64_t base = 0;
  TensorDesc desc;
};

/// The call's dense operand x in dtype r (sparse.hpp: an operand of another dtype is converted
/// to the result dtype first): the arena itself, or `converted`, every element of the arena
/// read as x's dtype and cast to r (the arena's elements are as wide as x's, or wider).
DenseIn dense_in(const ApiCall& c, DType r, Bytes& converted) {
  const std::int64_t xs = static_cast<std::int64_t>(dtype_size(c.x.desc.dtype));
  DenseIn d{&c.arena, c.x.offset * static_cast<std::int64_t>(dtype_size(c.dtype)) / xs, c.x.desc};
  if (c.x.desc.dtype == r) return d;
  converted = convert_elements(c.arena, c.x.desc.dtype, r);
  d.bytes = &converted;
  d.desc.dtype = r;
  return d;
}

/// m with its values converted to dtype r (sparse.hpp: before duplicates are summed).
CooBytes in_dtype(const CooBytes& m, DType r) {
  if (m.desc.dtype == r) return m;
  CooBytes out = m;
  out.vals = convert_elements(m.vals, m.desc.dtype, r);
  out.desc.dtype = r;
  return out;
}

/// The dense operand's element at (r, c) of the COO shape, broadcast.
template <class K>
typename K::compute dense_at(const DenseIn& d, std::int64_t r, std::int64_t col) {
  const std::int64_t off = d.base + offset_at(d.desc, Dims{r, col});
  return K::load(d.bytes->data() + off * static_cast<std::int64_t>(K::size));
}
/// A fill as the dtype holds it (sparse.hpp, SparseOptions::fill_a): floats rounded to the dtype
/// (16-bit types through f32), integers only when whole and in range; false otherwise.
template <class K>
bool fill_value(double f, typename K::compute& out) {
  using C = typename K::compute;
  if constexpr (std::is_integral_v<C>) {
    const double lo = K::dtype == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
    if (!(f == std::trunc(f) && f >= lo && f < -lo)) return false;
    out = static_cast<C>(f);
  } else if constexpr (K::dtype == DType::f64) {
    out = f;
  } else {
    out = K::load_bits(K::bits(static_cast<float>(f)));
  }
  return true;
}

/// The union of a and dense as a (nrows, ncols) row-major vector: op(fill_a or Σa, dense).
template <class K>
std::vector<typename K::compute> union_dense(const ApiCall& c, const CooBytes& a,
                                             const DenseIn& x, typename K::compute fill_a) {
  const std::int64_t nr = a.desc.nrows, nc = a.desc.ncols;
  std::vector<typename K::compute> out(static_cast<std::size_t>(nr * nc));
  for (std::int64_t r = 0; r < nr && nc > 0; ++r)
    for (std::int64_t col = 0; col < nc; ++col)
      out[static_cast<std::size_t>(r * nc + col)] = apply(c.binop, fill_a, dense_at<K>(x, r, col));
  for (const auto& [rc, v] : sums<K>(a))
    out[static_cast<std::size_t>(rc.first * nc + rc.second)] =
        apply(c.binop, v, dense_at<K>(x, rc.first, rc.second));
  return out;
}
}  // namespace

bool sparse_result_dtype(const ApiCall& c, DType& out) {
  const Promotion rule = c.sparse.promotion;
  const auto tensor = [](DType t) { return OperandType{t, Weight::tensor}; };
  const OperandType a = tensor(c.a.desc.dtype);
  // A rank-0 dense operand: a 0-d tensor (ewise::Operand::type, promotion.hpp).
  const OperandType x{c.x.desc.dtype, rule == Promotion::torch && c.x.desc.rank() == 0
                                          ? Weight::zero_dim
                                          : Weight::tensor};
  BinaryTypes t;
  switch (c.op) {
    case ApiOp::multiply_coo: t = op_dtypes(BinaryOp::multiply, rule, a, tensor(c.b.desc.dtype)); break;
    case ApiOp::combine_coo: t = op_dtypes(c.binop, rule, a, tensor(c.b.desc.dtype)); break;
    case ApiOp::multiply_dense:
    case ApiOp::multiply_values:
    case ApiOp::multiply_values_into_a: t = op_dtypes(BinaryOp::multiply, rule, a, x); break;
    case ApiOp::combine_dense:
    case ApiOp::combine_dense_out: t = op_dtypes(c.binop, rule, a, x); break;
    case ApiOp::accumulate: t = op_dtypes(c.binop, rule, tensor(c.x.desc.dtype), a); break;
    default: out = c.a.desc.dtype; return true;
  }
  out = t.result;
  return t.valid && is_sparse_dtype(out);
}

Expected api_oracle(const ApiCall& c) {
  Expected e;
  e.arena = c.arena;
  const auto view_of = [&](const ArenaView& v) {
    return ConstTensorView{c.arena.data() + v.offset * static_cast<std::int64_t>(dtype_size(c.dtype)),
                           v.desc, Memory::host};
  };
  const CooDesc& ad = c.a.desc;
  const auto arena_elem = static_cast<std::int64_t>(dtype_size(c.dtype));
  // Mixed value dtypes (sparse.hpp): the result dtype r is the dense operation's; each operand
  // of another dtype is converted to r first, then the same-dtype operation runs in r.
  DType r = ad.dtype;
  const bool typed = sparse_result_dtype(c, r);
  const CooBytes a = in_dtype(c.a, r), b = in_dtype(c.b, r);
  Bytes converted;
  switch (c.op) {
    case ApiOp::multiply_coo: {
      const CooDesc& bd = c.b.desc;
      e.valid = coo_ok(c.a) && coo_ok(c.b) && ad.nrows == bd.nrows && ad.ncols == bd.ncols &&
                typed && ad.index == bd.index &&
                static_cast<int>(c.sparse.algorithm) <= static_cast<int>(CooAlgorithm::hash_merge);
      if (!e.valid) break;
      with_kind(r, [&](auto k) {
        using K = decltype(k);
        const auto sa = sums<K>(a), sb = sums<K>(b);
        std::vector<std::pair<Coord, typename K::compute>> out;
        for (const auto& [rc, v] : sa) {
          const auto it = sb.find(rc);
          if (it != sb.end()) out.emplace_back(rc, apply(BinaryOp::mul, v, it->second));
        }
        expect_coo<K>(e, ad, ad.index, out, c.sparse.drop_zeros);
      });
      break;
    }
    case ApiOp::multiply_dense:
    case ApiOp::multiply_values:
    case ApiOp::multiply_values_into_a: {
      const bool values = c.op != ApiOp::multiply_dense;
      e.valid = coo_ok(c.a) && tensor_desc_ok(c.x.desc) && typed && c.x.desc.rank() <= 2 &&
                broadcasts_to(c.x.desc.shape, Dims{ad.nrows, ad.ncols});
      // out_vals of the result dtype (a.vals in place: a of that dtype).
      if (c.op == ApiOp::multiply_values)
        e.valid = e.valid && !c.sparse.drop_zeros && c.out_vals_dtype == r &&
                  c.out_vals_len == ad.nnz;
      if (c.op == ApiOp::multiply_values_into_a)
        e.valid = e.valid && !c.sparse.drop_zeros && ad.dtype == r;
      if (values) {  // before: poison, or a's values
        if (c.op == ApiOp::multiply_values_into_a) e.out_vals = c.a.null_arrays ? Bytes{} : c.a.vals;
        else {
          e.out_vals.assign(static_cast<std::size_t>(c.out_vals_len) * dtype_size(c.out_vals_dtype), 0);
          if (c.out_vals_len > 0)
            verify::poison(TensorView{e.out_vals.data(),
                                      TensorDesc::contiguous(c.out_vals_dtype, Dims{c.out_vals_len}),
                                      Memory::host});
        }
      }
      if (!e.valid) break;
      with_kind(r, [&](auto k) {
        using K = decltype(k);
        const DenseIn x = dense_in(c, r, converted);
        if (values) {
          for (std::int64_t i = 0; i < ad.nnz; ++i) {
            const auto v = K::load(a.vals.data() + i * static_cast<std::int64_t>(K::size));
            const auto d = dense_at<K>(x, index_at(a.rows, ad.index, i), index_at(a.cols, ad.index, i));
            K::store(e.out_vals.data() + i * static_cast<std::int64_t>(K::size), apply(BinaryOp::mul, v, d));
          }
          return;
        }
        std::vector<std::pair<Coord, typename K::compute>> out;
        for (const auto& [rc, v] : sums<K>(a))
          out.emplace_back(rc, apply(BinaryOp::mul, v, dense_at<K>(x, rc.first, rc.second)));
        expect_coo<K>(e, ad, ad.index, out, c.sparse.drop_zeros);
      });
      break;
    }
    case ApiOp::coalesce:
      e.valid = coo_ok(c.a);
      if (!e.valid) break;
      with_kind(ad.dtype, [&](auto k) {
        using K = decltype(k);
        const auto s = sums<K>(c.a);
        expect_coo<K>(e, ad, ad.index, {s.begin(), s.end()}, c.sparse.drop_zeros);
      });
      break;
    case ApiOp::coo_to_dense:
      e.valid = coo_ok(c.a);
      if (!e.valid) break;
      e.has_tensor = true;
      e.tensor_dtype = ad.dtype;
      e.tensor_shape = Dims{ad.nrows, ad.ncols};
      e.tensor.assign(static_cast<std::size_t>(ad.nrows * ad.ncols) * dtype_size(ad.dtype), 0);
      with_kind(ad.dtype, [&](auto k) {
        using K = decltype(k);
        for (const auto& [rc, v] : sums<K>(c.a))
          K::store(e.tensor.data() + (rc.first * ad.ncols + rc.second) * static_cast<std::int64_t>(K::size), v);
      });
      break;
    case ApiOp::dense_to_coo: {
      const TensorDesc& d = c.x.desc;
      e.valid = tensor_desc_ok(d) && d.rank() == 2 &&
                coo_desc_ok(CooDesc{d.shape[0], d.shape[1], 0, c.dense_to_coo_index, d.dtype, true});
      if (!e.valid) break;
      with_kind(d.dtype, [&](auto k) {
        using K = decltype(k);
        std::vector<std::pair<Coord, typename K::compute>> out;
        for_each_coord(d.shape, [&](const Dims& coord) {
          const auto v = K::load(c.arena.data() + (c.x.offset + offset_at(d, coord)) *
                                                      static_cast<std::int64_t>(K::size));
          if (v != typename K::compute(0)) out.emplace_back(Coord{coord[0], coord[1]}, v);
        });
        expect_coo<K>(e, CooDesc{d.shape[0], d.shape[1], 0, c.dense_to_coo_index, d.dtype, true},
                      c.dense_to_coo_index, out, false);
      });
      break;
    }
    case ApiOp::csr_row_offsets: {
      e.valid = coo_ok(c.a) && ad.canonical && ad.nrows < INT64_MAX;
      if (!e.valid) break;
      e.has_tensor = true;
      const bool narrow = ad.index == IndexType::i32 && ad.nnz <= INT32_MAX;
      e.tensor_dtype = narrow ? DType::i32 : DType::i64;
      e.tensor_shape = Dims{ad.nrows + 1};
      for (std::int64_t row = 0; row <= ad.nrows; ++row) {
        std::int64_t before = 0;
        for (std::int64_t k = 0; k < ad.nnz; ++k) before += index_at(c.a.rows, ad.index, k) < row;
        push_index(e.tensor, narrow ? IndexType::i32 : IndexType::i64, before);
      }
      break;
    }
    case ApiOp::check_indices: e.valid = coo_ok(c.a); break;
    case ApiOp::combine_coo: {
      const CooDesc& bd = c.b.desc;
      e.valid = union_op_ok(c.binop) && coo_ok(c.a) && coo_ok(c.b) && ad.nrows == bd.nrows &&
                ad.ncols == bd.ncols && typed && ad.index == bd.index;
      if (!e.valid) break;
      with_kind(r, [&](auto k) {  // the fills as the result dtype holds them
        using K = decltype(k);
        typename K::compute fa, fb;
        e.valid = fill_value<K>(c.sparse.fill_a, fa) && fill_value<K>(c.sparse.fill_b, fb);
        if (!e.valid) return;
        const auto sa = sums<K>(a), sb = sums<K>(b);
        std::set<Coord> keys;
        for (const auto& m : {&sa, &sb})
          for (const auto& kv : *m) keys.insert(kv.first);
        std::vector<std::pair<Coord, typename K::compute>> out;
        for (const Coord& rc : keys) {
          const auto ia = sa.find(rc), ib = sb.find(rc);
          out.emplace_back(rc, apply(c.binop, ia == sa.end() ? fa : ia->second,
                                     ib == sb.end() ? fb : ib->second));
        }
        expect_coo<K>(e, ad, ad.index, out, c.sparse.drop_zeros);
      });
      break;
    }
    case ApiOp::combine_dense:
    case ApiOp::combine_dense_out: {
      const std::size_t elem = dtype_size(c.dtype);
      e.valid = union_op_ok(c.binop) && coo_ok(c.a) && tensor_desc_ok(c.x.desc) && typed &&
                c.x.desc.rank() <= 2 &&
                broadcasts_to(c.x.desc.shape, Dims{ad.nrows, ad.ncols}) && !c.sparse.drop_zeros;
      const bool into = c.op == ApiOp::combine_dense_out;
      if (into)
        e.valid = e.valid && tensor_desc_ok(c.out.desc) && c.out.desc.dtype == r &&
                  c.out.desc.shape == (Dims{ad.nrows, ad.ncols}) && out_layout_ok(c.out.desc) &&
                  overlap_ok(c.out, c.x, elem);
      if (!e.valid) break;
      with_kind(r, [&](auto k) {
        using K = decltype(k);
        typename K::compute fa, fb;  // both fills checked; fill_b is not used
        e.valid = fill_value<K>(c.sparse.fill_a, fa) && fill_value<K>(c.sparse.fill_b, fb);
        if (!e.valid) return;
        const auto result = union_dense<K>(c, a, dense_in(c, r, converted), fa);
        if (!into) {
          e.has_tensor = true;
          e.tensor_dtype = r;
          e.tensor_shape = Dims{ad.nrows, ad.ncols};
          for (const auto v : result) push_value<K>(e.tensor, v);
          return;
        }
        for (std::int64_t row = 0; row < ad.nrows && ad.ncols > 0; ++row)
          for (std::int64_t col = 0; col < ad.ncols; ++col)
            K::store(e.arena.data() + c.out.offset * arena_elem +
                         offset_at(c.out.desc, Dims{row, col}) * static_cast<std::int64_t>(K::size),
                     result[static_cast<std::size_t>(row * ad.ncols + col)]);
      });
      break;
    }
    case ApiOp::accumulate:  // the fills are not used, and not checked
      // dense is written in place: it must be of the result dtype op(dense, a) has.
      e.valid = union_op_ok(c.binop) && coo_ok(c.a) && !c.sparse.drop_zeros &&
                tensor_desc_ok(c.x.desc) && typed && c.x.desc.dtype == r &&
                c.x.desc.shape == (Dims{ad.nrows, ad.ncols}) && out_layout_ok(c.x.desc);
      if (!e.valid) break;
      with_kind(r, [&](auto k) {
        using K = decltype(k);
        for (const auto& [rc, v] : sums<K>(a)) {
          const std::int64_t at = c.x.offset * arena_elem + offset_at(c.x.desc, Dims{rc.first, rc.second}) *
                                                                static_cast<std::int64_t>(K::size);
          K::store(e.arena.data() + at, apply(c.binop, K::load(c.arena.data() + at), v));
        }
      });
      break;
    case ApiOp::binary: {
      const BinaryTypes t = binary_types(c);
      e.valid = binary_ok(c) && t.valid && same_kind(t.result, c.out.desc.dtype);
      // A named kernel: general runs any call; the others run the same-dtype calls whose plans
      // their rule allows (kernel_supports, whose rules the plan target checks against the
      // descriptors).
      if (e.valid && c.dense.kernel != Kernel::automatic && c.dense.kernel != Kernel::general)
        e.valid = !c.y_scalar && runs_typed_kernels(c, t) &&
                  kernel_supports(c.dense.kernel, view_of(c.x), view_of(c.y),
                                  TensorView{const_cast<void*>(view_of(c.out).data), c.out.desc, Memory::host});
      if (!e.valid) break;
      expect_binary(c, t, e.arena);
      break;
    }
  }
  return e;
}

}  // namespace ewise::fuzz
