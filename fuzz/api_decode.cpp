// fuzz/api_decode.cpp — decoding bytes into one API call (api_call.hpp): the op, options, COO
// operands and the arena, valid and invalid ones (their values and entries:
// api_decode_values.cpp; dense operands' strides and places: api_decode_dense.cpp).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "api_decode.hpp"
#include "api_oracle.hpp"
#include "element.hpp"
#include "internal.hpp"
#include "ewise/half.hpp"
#include "ewise/verify.hpp"

namespace ewise::fuzz {
namespace {

using namespace decode;

/// Sparse values take the first six dtypes of kAllDTypes (f16, bf16, f32, f64, i32, i64).
constexpr std::size_t kSparseDtypeCount = 6;

/// A COO extent: mostly small, sometimes medium, at the int32 index limit, or huge (so that
/// nrows * ncols is near or over int64), rarely negative.
std::int64_t decode_extent(Input& in) {
  static constexpr std::int64_t kHuge[] = {std::int64_t{1} << 32, 3037000499, 3037000500,
                                           std::int64_t{1} << 40, std::int64_t{1} << 62,
                                           INT64_MAX};
  const std::uint8_t e = in.u8();
  if (e == 255) return -1;
  switch (e % 16) {
    case 0: return 0;
    case 10: return 10 + in.below(190);
    case 11: return std::int64_t{1} << 31;        // the largest extent int32 indices allow
    case 12: return (std::int64_t{1} << 31) + 1;  // one too many for int32
    case 13: return kHuge[in.u8() % 6];
    default: return 1 + e % 16 % 9;
  }
}

bool product_over(std::int64_t a, std::int64_t b, std::int64_t limit) {
  std::int64_t p = 0;
  return a > 0 && b > 0 && (__builtin_mul_overflow(a, b, &p) || p > limit);
}

/// A dense operand's dtype for a sparse call whose values are of dtype t, by byte m: one call
/// in four another dtype, any of the thirteen (mixed dtypes promote, sparse.hpp), or for
/// accumulate (whose dense must be of the result dtype) half of those a wider one.
DType dense_dtype(DType t, std::uint8_t m, bool accumulate) {
  if (m < 192) return t;
  static constexpr DType kWide[] = {DType::f64, DType::f32, DType::i64, DType::f16};
  return accumulate && m % 2 ? kWide[m / 2 % 4] : kAllDTypes[m / 2 % std::size(kAllDTypes)];
}

DType other_dtype(DType t, bool no_wider) {
  switch (t) {
    case DType::f16: return DType::bf16;
    case DType::bf16: return DType::f16;
    case DType::f32: return DType::i32;
    case DType::f64: return no_wider ? DType::i64 : DType::f32;
    case DType::i32: return DType::f32;
    case DType::i64: return DType::f64;
    default: return DType::f32;  // sparse values are the six dtypes above
  }
}

/// A union fill: zero (bytes below 128, so zero bytes decode the default), else a value some
/// dtype cannot hold: non-integral, NaN, infinite, beyond int32 or int64, beyond f16's range.
double decode_fill(Input& in) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr double kFills[] = {1.0,  -2.0, 0.5,  -0.0, std::numeric_limits<double>::quiet_NaN(),
                                      kInf, -kInf, 1e300, 2147483648.0, -2147483648.0,
                                      9223372036854775808.0, -9223372036854775808.0,
                                      4294967296.0, 1e-45, 65520.0, 0.1};
  const std::uint8_t b = in.u8();
  return b < 128 ? 0.0 : kFills[b % 16];
}
/// combine_dense_out's and accumulate's dense: nrows x ncols (negative extents as 0, which the
/// COO's own check rejects).
Dims union_dense_shape(const CooDesc& a) {
  return Dims{std::max<std::int64_t>(a.nrows, 0), std::max<std::int64_t>(a.ncols, 0)};
}

}  // namespace

ApiCall decode_api_call(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  ApiCall c;
  c.op = static_cast<ApiOp>(in.u8() % kApiOpCount);
  // binary: x's dtype, any; the sparse calls: their values', one of the six they take.
  c.dtype = kAllDTypes[in.u8() % (c.op == ApiOp::binary ? std::size(kAllDTypes) : kSparseDtypeCount)];
  c.out_vals_dtype = c.dtype;
  in.seed(in.u64());
  const std::uint8_t flags = in.u8();

  if (c.op == ApiOp::binary) {
    c.binop = kAllOps[in.u8() % std::size(kAllOps)];
    const std::uint8_t ko = in.u8();
    c.dense.kernel = ko % 2 ? kKernelNames[1 + (ko / 2) % 9].kernel : Kernel::automatic;
    const std::uint8_t tu = in.u8();
    static constexpr int kThreads[] = {32, 64, 96, 128, 256, 512, 1024, 33, -32, 2048};
    static constexpr int kFactors[] = {1, 2, 3, 8, 64, -1};
    static constexpr int kBlocks[] = {1, 2, 3, -1};
    if (tu % 8 == 1) c.dense.threads = kThreads[(tu / 8) % 10];
    if (tu % 8 == 2) c.dense.sliding_factor = kFactors[(tu / 8) % 6];
    if (tu % 8 == 3) c.dense.blocks = kBlocks[(tu / 8) % 4];
    // Shapes: out's extents, the inputs' derived by dropping leading dims and setting dims to 1
    // (or, rarely, to a size that does not broadcast).
    const int rank = in.u8() % 5;
    static constexpr std::int64_t kExt[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33, 0, 1, 2, 3, 64, 1};
    Dims shape = Dims::of_rank(rank, 1);
    std::int64_t numel = 1;
    for (int d = 0; d < rank; ++d) {
      shape[d] = kExt[in.u8() % 16];
      if (numel * std::max<std::int64_t>(shape[d], 1) > 1024) shape[d] = 1;
      numel *= std::max<std::int64_t>(shape[d], 1);
    }
    const auto input_shape = [&](Input& inp) {
      const std::uint8_t m = inp.u8();
      Dims s = shape;
      if (m % 4 == 1 && rank > 0) s = Dims::from(shape.begin() + m / 4 % (rank + 1), rank - m / 4 % (rank + 1));
      if (m % 4 == 2)
        for (int d = 0; d < s.size(); ++d)
          if (inp.u8() % 2) s[d] = 1;
      if (m >= 250 && s.size() > 0) s[static_cast<int>(inp.below(s.size()))] += 1;  // mismatch
      return s;
    };
    Dims xs = input_shape(in), ys = input_shape(in);
    Dims os = shape;
    if (flags >= 248 && rank > 0) os[static_cast<int>(in.below(rank))] += 1;  // wrong out shape
    bool empty_huge = false;
    if (flags % 32 == 7) {  // empty output with a huge extent: y is a stride-0 vector of it
      const std::int64_t h = std::int64_t{1} << (33 + in.u8() % 29);
      os = xs = Dims{0, h};
      ys = Dims{h};
      empty_huge = true;
    }
    // y's dtype: x's half of the time, else any; out's: the result's (where the call is defined)
    // or rarely any; PyTorch's rules one call in four. The arena's elements are as wide as the
    // widest of the three, so that every view is aligned.
    // One call in eight y is a scalar (of rank 0): a Python int, float or bool, or a typed
    // scalar of y's dtype.
    const std::uint8_t yb = in.u8(), ob = in.u8(), pb = in.u8();
    if (pb % 4 == 3) c.dense.promotion = Promotion::torch;
    DType yt = yb < 128 ? c.dtype : kAllDTypes[yb % std::size(kAllDTypes)];
    c.y_scalar = pb / 4 % 8 == 7 && !empty_huge;
    if (c.y_scalar) {
      c.scalar = decode_scalar(pb / 32 % 4, yt, in);
      yt = c.scalar.dtype();
      ys = Dims{};
    }
    c.x.desc = TensorDesc{c.dtype, xs, input_strides(xs, in)};
    c.y.desc = TensorDesc{yt, ys, empty_huge ? Dims{0} : input_strides(ys, in)};
    const BinaryTypes types = binary_types(c);
    const DType ot = ob < 224 && types.valid ? types.result : kAllDTypes[ob % std::size(kAllDTypes)];
    c.out.desc = TensorDesc{ot, os, empty_huge ? row_major(os) : output_strides(os, in)};
    for (DType t : {c.y.desc.dtype, ot})
      if (dtype_size(t) > dtype_size(c.dtype)) c.dtype = t;
    // Views too large for the arena get row-major strides (which fit: numel <= 2048).
    for (ArenaView* v : {&c.x, &c.y, &c.out})
      if (needed(v->desc, kZone) < 0) v->desc.strides = row_major(v->desc.shape);
    // Arena: inputs in [0, zone), a separate output after it.
    const std::int64_t nx = needed(c.x.desc, kZone), ny = needed(c.y.desc, kZone);
    const std::int64_t zone = std::max<std::int64_t>({nx, ny, 1}) + in.u8() % 8;
    c.x.offset = place(c.x.desc, 0, zone, in);
    c.y.offset = place(c.y.desc, 0, zone, in);
    const std::int64_t no = std::max<std::int64_t>(needed(c.out.desc, kZone), 0);
    std::int64_t total = zone + no;
    const std::uint8_t where = in.u8() % 8;
    const bool x_like = c.x.desc.shape == os && c.x.desc.dtype == c.out.desc.dtype;
    const bool y_like = c.y.desc.shape == os && c.y.desc.dtype == c.out.desc.dtype;
    if (where == 4 && x_like) c.out = c.x;  // exactly in place
    else if (where == 5 && y_like) c.out = c.y;
    else if (where == 6 && no <= zone) c.out.offset = place(c.out.desc, 0, zone, in);
    else if (where == 7) c.out.offset = c.x.offset;
    else {
      c.out.offset = place(c.out.desc, zone, no, in);
      c.out_poisoned = true;
    }
    if (!inside(c.out, total)) {  // out at x's offset with its own strides may stick out
      c.out.offset = place(c.out.desc, zone, no, in);
      c.out_poisoned = true;
    }
    c.arena = values(c.dtype, total, in);
    // The inputs' own values where the arena's are of another dtype, then every bool input's
    // again (an input of another dtype may share their bytes; a bool is 0 or 1).
    std::vector<const ArenaView*> inputs{&c.x};
    if (!c.y_scalar) inputs.push_back(&c.y);
    for (const ArenaView* v : inputs)
      if (v->desc.dtype != c.dtype && v->desc.dtype != DType::b8)
        write_view_values(c.arena, *v, dtype_size(c.dtype), in);
    for (const ArenaView* v : inputs)
      if (v->desc.dtype == DType::b8) write_view_values(c.arena, *v, dtype_size(c.dtype), in);
    if (c.out_poisoned && no > 0) {
      verify::poison(TensorView{c.arena.data() + c.out.offset * static_cast<std::int64_t>(dtype_size(c.dtype)),
                                c.out.desc, Memory::host});
    }
    return c;
  }

  // Sparse calls.
  CooDesc& ad = c.a.desc;
  ad.index = flags & 1 ? IndexType::i64 : IndexType::i32;
  ad.dtype = c.dtype;
  ad.nrows = decode_extent(in);
  ad.ncols = decode_extent(in);
  const bool dense_result = c.op == ApiOp::coo_to_dense || c.op == ApiOp::combine_dense ||
                            c.op == ApiOp::combine_dense_out || c.op == ApiOp::accumulate;
  if (dense_result && product_over(ad.nrows, ad.ncols, 4096)) {
    ad.nrows = std::min<std::int64_t>(ad.nrows, 64);
    ad.ncols = std::min<std::int64_t>(ad.ncols, 64);
  }
  if (c.op == ApiOp::csr_row_offsets && ad.nrows > 4096 && ad.nrows != INT64_MAX) ad.nrows = 4096;
  std::vector<Coord> pool;
  if (ad.nrows > 0 && ad.ncols > 0)
    for (int k = 1 + in.u8() % 6; k > 0; --k) pool.push_back({in_range(ad.nrows, in), in_range(ad.ncols, in)});
  bool valid = decode_entries(c.a, pool, in);
  if (c.op == ApiOp::multiply_coo || c.op == ApiOp::combine_coo) {
    c.b.desc = ad;
    // Mismatches (zero bytes decode none): shapes, index types, value dtypes (which promote).
    const std::uint8_t m = in.u8() % 32;
    if (m == 31) c.b.desc.nrows = ad.nrows < INT64_MAX ? ad.nrows + 1 : 1;
    if (m >= 24 && m <= 30) c.b.desc.dtype = kAllDTypes[m % kSparseDtypeCount];  // mixed dtypes
    if (m == 29) c.b.desc.index = ad.index == IndexType::i32 ? IndexType::i64 : IndexType::i32;
    valid = decode_entries(c.b, pool, in) && valid;
    if (c.op == ApiOp::multiply_coo) {
      const std::uint8_t alg = in.u8();
      c.sparse.algorithm = static_cast<CooAlgorithm>(alg < 250 ? alg % 6 : alg);
    }
  }
  if (is_union(c.op)) {  // any op (all but add, subtract, minimum, maximum are rejected), any fill
    c.binop = kAllOps[in.u8() % std::size(kAllOps)];
    c.sparse.fill_a = decode_fill(in);
    c.sparse.fill_b = decode_fill(in);
  }
  if (flags & 2) c.sparse.drop_zeros = true;
  if ((flags & 96) == 96) c.sparse.promotion = Promotion::torch;
  // Skipping the index checks is allowed only on valid indices (else undefined behaviour).
  if ((flags & 12) == 12 && valid) c.sparse.validate_indices = false;
  const std::uint8_t rare = in.u8();
  if (rare == 1) {
    c.a.null_arrays = c.a.desc.nnz > 0;
  } else if (rare == 2) {
    c.a.desc.nnz = -1;
    c.a.rows.clear();
    c.a.cols.clear();
    c.a.vals.clear();
  }
  if (!valid || c.a.null_arrays || c.a.desc.nnz < 0) c.sparse.validate_indices = true;

  if (c.op == ApiOp::multiply_dense || c.op == ApiOp::multiply_values ||
      c.op == ApiOp::multiply_values_into_a || c.op == ApiOp::combine_dense ||
      c.op == ApiOp::combine_dense_out) {
    c.x.desc = sparse_dense_desc(ad, dense_dtype(c.dtype, in.u8(), false), in);
  } else if (c.op == ApiOp::accumulate) {  // written in place: nrows x ncols, output strides
    const std::uint8_t b = in.u8(), m = b % 32;
    const Dims shape = m == 31 ? Dims{std::max<std::int64_t>(ad.ncols, 0)} : union_dense_shape(ad);
    c.x.desc = TensorDesc{dense_dtype(c.dtype, b, true), shape, output_strides(shape, in)};
    if (needed(c.x.desc, kZone) < 0) c.x.desc.strides = row_major(shape);
  } else if (c.op == ApiOp::dense_to_coo) {
    c.dense_to_coo_index = flags & 16 ? IndexType::i64 : IndexType::i32;
    const std::uint8_t m = in.u8();
    Dims shape{m % 10, (m / 10) % 10};
    if (m >= 200) shape = m % 2 ? Dims{0, std::int64_t{1} << (31 + m % 30)} : Dims{(std::int64_t{1} << 31) + m % 2, 0};
    if (m == 199) shape = Dims{3};
    c.x.desc = TensorDesc{c.dtype, shape, input_strides(shape, in)};
  }
  // Outputs of the result dtype (where the rule gives one), rarely of a's or another.
  DType result = c.dtype;
  if (!sparse_result_dtype(c, result)) result = c.dtype;
  if (c.op == ApiOp::multiply_values) {
    const std::uint8_t m = in.u8() % 32;
    c.out_vals_len = std::max<std::int64_t>(c.a.desc.nnz, 0) + (m == 31 ? 1 : 0);
    c.out_vals_dtype = m == 30 ? other_dtype(result, true) : m == 29 ? c.dtype : result;
  }
  const std::int64_t nx = std::max<std::int64_t>(needed(c.x.desc, kZone), 0);
  const std::int64_t total = nx + in.u8() % 4;
  c.x.offset = place(c.x.desc, 0, total, in);
  std::int64_t arena_total = std::max<std::int64_t>(total, 1), no = 0;
  if (c.op == ApiOp::combine_dense_out) {
    const Dims shape = union_dense_shape(ad);
    c.out.desc = TensorDesc{result, shape, output_strides(shape, in)};
    if (needed(c.out.desc, kZone) < 0) c.out.desc.strides = row_major(shape);
    no = std::max<std::int64_t>(needed(c.out.desc, kZone), 0);
    const std::uint8_t wb = in.u8(), where = wb % 8, m = wb / 8;  // m: rarely another out dtype
    if (m == 30) c.out.desc.dtype = other_dtype(result, true);
    if (m == 29) c.out.desc.dtype = c.dtype;
    if (where == 5 && c.x.desc.shape == shape && c.x.desc.dtype == c.out.desc.dtype) {
      c.out = c.x;  // exactly in place
    } else {
      c.out.offset = c.x.offset;  // where 6: x's start with out's own strides
      if (where != 6 || !inside(c.out, arena_total)) {
        c.out.offset = place(c.out.desc, arena_total, no, in);
        c.out_poisoned = true;
        arena_total += no;
      }
    }
  }
  // The arena's elements as wide as the widest view's, so that every view is aligned; the dense
  // operand's own values where it is of another dtype.
  if (has_dense_operand(c.op) && dtype_size(c.x.desc.dtype) > dtype_size(c.dtype)) c.dtype = c.x.desc.dtype;
  if (c.op == ApiOp::combine_dense_out && dtype_size(c.out.desc.dtype) > dtype_size(c.dtype))
    c.dtype = c.out.desc.dtype;
  c.arena = values(c.dtype, arena_total, in);
  if (has_dense_operand(c.op) && c.x.desc.dtype != c.dtype && needed(c.x.desc, kZone) >= 0)
    write_view_values(c.arena, c.x, dtype_size(c.dtype), in);  // (not a huge accumulate shape)
  if (c.out_poisoned && no > 0)
    verify::poison(TensorView{c.arena.data() + c.out.offset * static_cast<std::int64_t>(dtype_size(c.dtype)),
                              c.out.desc, Memory::host});
  return c;
}

}  // namespace ewise::fuzz
