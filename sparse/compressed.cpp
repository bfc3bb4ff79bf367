// sparse/compressed.cpp — the operations on CSR and CSC matrices (ewise/sparse.hpp): the
// arguments checked as the matrices they are, each compressed operand spelled out as a COO view
// in the call's orientation (its major indices written out, its own indices and values used as
// they are), the COO operation of api.cpp run on those views, a sparse result compressed again
// (its offsets found from its sorted rows; its column indices and values kept). Two shortcuts
// skip the spelling: a canonical operand times a dense or scalar factor keeps its pattern, made
// in one pass (scaled_in_place); on the GPU two canonical operands of one format are merged as
// they are stored (merged_as_stored). The call's orientation is the first operand's: a CSC call
// runs on the transposes, so that the first operand, and any other of its format, is a COO
// view in major order (canonical when the operand is: merge and union take it as it is).
#include <climits>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/sparse.hpp"
#include "internal.hpp"
#include "promote.hpp"
#include "residency.hpp"
#include "select.hpp"

namespace ewise {

using namespace sparse_detail;

namespace {

/// The types of a backend, by the memory its results live in.
template <Memory M>
struct Backend {
  using Buffer = DeviceBuffer;
  using Coo = DeviceCoo;
};
template <>
struct Backend<Memory::host> {
  using Buffer = HostBuffer;
  using Coo = HostCoo;
};
/// The memory a result type (BasicCompressed, BasicCoo or BasicTensor of a buffer) lives in.
template <class Result>
struct MemoryOf;
template <template <class> class Kind, class Buffer>
struct MemoryOf<Kind<Buffer>> : std::integral_constant<Memory, Buffer::memory> {};

/// The matrix of v without its entries: for the shape, dtype and memory checks of checks.hpp.
CooView shape_of(const CompressedView& v) {
  CooDesc d = v.desc;
  d.nnz = 0;
  return {nullptr, nullptr, nullptr, d, v.memory};
}

/// Adds a device view's three arrays to a residency check; `which` 0 names them a's, 1 b's.
void add_arrays(detail::DeviceOperands& d, const CompressedView& v, int which) {
  if (v.memory != Memory::device) return;
  static const char* const kNames[2][3] = {{"a offsets", "a indices", "a vals"},
                                           {"b offsets", "b indices", "b vals"}};
  const DType index = v.desc.index == IndexType::i32 ? DType::i32 : DType::i64;
  const std::int64_t n = v.desc.nnz;
  d.add(ConstTensorView{v.offsets, TensorDesc::contiguous(index, Dims{v.major_extent() + 1}),
                        Memory::device},
        kNames[which][0]);
  d.add(ConstTensorView{v.indices, TensorDesc::contiguous(index, Dims{n}), Memory::device},
        kNames[which][1]);
  d.add(ConstTensorView{v.vals, TensorDesc::contiguous(v.desc.dtype, Dims{n}), Memory::device},
        kNames[which][2]);
}

/// Throws unless a and b (when given) are resident for device calls (residency.hpp).
void check_resident(const CompressedView& a, const CompressedView* b, cudaStream_t stream,
                    const ConstTensorView* dense = nullptr, const TensorView* out = nullptr) {
  if (a.memory != Memory::device) return;
  detail::DeviceOperands d;
  add_arrays(d, a, 0);
  if (b) add_arrays(d, *b, 1);
  if (dense) d.add(*dense, "dense");
  if (out) d.add(*out, "out");
  d.check(stream);
}

/// The call's orientation: transposed when the first operand is CSC.
struct Orientation {
  bool transposed = false;

  CooDesc desc(CooDesc d) const {
    if (transposed) std::swap(d.nrows, d.ncols);
    return d;
  }
  /// A dense operand or output as the call reads it: a 1-D one (a row of the matrix) made the
  /// (1, n) it broadcasts as, then transposed.
  template <class View>
  View dense(View v) const {
    if (!transposed || v.desc.rank() == 0 || v.desc.rank() > 2) return v;
    if (v.desc.rank() == 1) {
      v.desc.shape = Dims{1, v.desc.shape[0]};
      v.desc.strides = Dims{0, v.desc.strides[0]};
    }
    v.desc.shape = Dims{v.desc.shape[1], v.desc.shape[0]};
    v.desc.strides = Dims{v.desc.strides[1], v.desc.strides[0]};
    return v;
  }
};
Orientation orientation_of(SparseFormat f) { return {f == SparseFormat::csc}; }

// ---- spelling out and compressing -----------------------------------------------------------

/// A compressed operand as a COO view in the call's orientation, with its major indices' array.
template <class Buffer>
struct Spelled {
  Buffer majors;
  CooView coo;
};

/// Spells out the compressed operands of a call (spell), then checks them (check, before the
/// views are used): v's major indices written out, and the COO view they make with v's indices
/// and values: in v's own order (canonical when v is) where v's major axis is the call's row
/// axis, else transposed. The checks (offsets, index range, canonical promise) run in the same
/// pass: host views always, each as it is spelled; device views with validate_indices, read back
/// for every operand at once by check (one synchronization).
template <class Buffer>
class Speller {
 public:
  static constexpr bool kDevice = Buffer::memory == Memory::device;

  Speller(const SparseOptions& options, cudaStream_t stream) : options_(options), stream_(stream) {
    if (!kDevice || !options.validate_indices) return;
    const detail::CallMemory memory(options.memory);
    words_ = DeviceBuffer(sizeof(unsigned long long) * kExpandCheckWords * 2, stream);
    EWISE_CUDA_CHECK(cudaMemsetAsync(words_.data(), 0xFF, words_.size(), stream));
  }

  Spelled<Buffer> spell(const CompressedView& v, Orientation o, const char* what) {
    Buffer majors(static_cast<std::size_t>(v.desc.nnz) * index_size(v.desc.index), stream_,
                  options_.memory);
    if constexpr (kDevice) {
      auto* words = static_cast<unsigned long long*>(words_.data());
      const detail::CallMemory memory(options_.memory);
      device_expand_offsets(v, majors.data(), words ? words + n_ * kExpandCheckWords : nullptr,
                            stream_);
      checks_[n_++] = {v, majors.data(), what};
    } else if (v.desc.index == IndexType::i32) {
      host_expand(v, static_cast<std::int32_t*>(majors.data()), what);
    } else {
      host_expand(v, static_cast<std::int64_t*>(majors.data()), what);
    }
    const bool in_order = (v.format == SparseFormat::csc) == o.transposed;
    CooDesc d = o.desc(v.desc);
    d.canonical = in_order && v.desc.canonical;
    const void* m = majors.data();
    return {std::move(majors),
            {in_order ? m : v.indices, in_order ? v.indices : m, v.vals, d, v.memory}};
  }

  void check() {
    if (words_.data() != nullptr)
      device_read_expand_checks(checks_, n_, static_cast<const unsigned long long*>(words_.data()),
                                stream_);
  }

 private:
  SparseOptions options_;
  cudaStream_t stream_;
  DeviceBuffer words_;
  ExpandCheck checks_[2];
  int n_ = 0;
};

/// f(a's COO view, b's or an empty view), a and b (when given) spelled out and checked by one
/// Speller on the backend of memory M; the spelled views live for the call of f.
template <Memory M, class F>
decltype(auto) with_spelled(const CompressedView& a, const CompressedView* b, Orientation o,
                            const SparseOptions& options, cudaStream_t stream, F&& f) {
  using Buffer = typename Backend<M>::Buffer;
  Speller<Buffer> speller(options, stream);
  const Spelled<Buffer> sa = speller.spell(a, o, "a");
  std::optional<Spelled<Buffer>> sb;
  if (b) sb.emplace(speller.spell(*b, o, "b"));
  speller.check();
  return f(sa.coo, sb ? sb->coo : CooView{});
}

/// The options of a COO operation on spelled views: their indices were checked as spell made
/// them (or not at all, as asked), so the operation does not check them again.
SparseOptions spelled(SparseOptions options) {
  options.validate_indices = false;
  return options;
}

/// A canonical COO result of the call's orientation as a compressed matrix of `format`: its
/// offsets made from its rows, its column indices and values taken over.
template <class Result, class Coo>
Result compress(Coo coo, SparseFormat format, Orientation o, const SparseOptions& options,
                cudaStream_t stream) {
  using Buffer = typename Backend<MemoryOf<Result>::value>::Buffer;
  const CooDesc d = coo.desc();
  EWISE_EXPECTS(d.index == IndexType::i64 || d.nnz <= INT32_MAX, "the result's ", d.nnz,
                " entries do not fit int32 offsets: pass operands with int64 indices");
  Buffer offsets(static_cast<std::size_t>(d.nrows + 1) * index_size(d.index), stream,
                 options.memory);
  if constexpr (Buffer::memory == Memory::host) {
    if (d.index == IndexType::i32)
      host_offsets(coo.view(), static_cast<std::int32_t*>(offsets.data()));
    else
      host_offsets(coo.view(), static_cast<std::int64_t*>(offsets.data()));
  } else {
    device_row_offsets(coo.view(), offsets.data(), d.index, stream);
  }
  auto arrays = coo.release();
  CooDesc real = o.desc(d);
  real.canonical = true;
  return Result(real, format, std::move(offsets), std::move(arrays.cols), std::move(arrays.vals));
}

/// The COO result type of a compressed result type.
template <class Result>
using CooOf = typename Backend<MemoryOf<Result>::value>::Coo;

/// A form with a sparse result: coo_form(orientation, a's view, b's view), the COO form on the
/// spelled views (with_spelled), its result compressed in a's format.
template <class Result, class CooForm>
Result compressed_form(const CompressedView& a, const CompressedView* b,
                       const SparseOptions& options, cudaStream_t stream, CooForm coo_form) {
  const Orientation o = orientation_of(a.format);
  return compress<Result>(
      with_spelled<MemoryOf<Result>::value>(
          a, b, o, options, stream,
          [&](const CooView& va, const CooView& vb) { return coo_form(o, va, vb); }),
      a.format, o, options, stream);
}

/// a with its values of p's dtype (a's arrays, or a converted copy of its values that p owns).
CompressedView promoted(Promoted& p, const CompressedView& a) {
  CompressedView pa = a;
  pa.vals = p.coo(CooView{nullptr, nullptr, a.vals, a.desc, a.memory}).vals;
  pa.desc.dtype = p.dtype();
  return pa;
}

/// a ⊙ factor for a canonical a (values of the result dtype; factor made for it in the call's
/// orientation) without drop_zeros, and on the device a factor without column bands; else
/// nothing. a's pattern is kept: its offsets and indices copied, each value times the factor at
/// its (major, minor). The checks are the spelled path's, made in the same pass (on the device
/// with validate_indices, on the host always): the result's buffers are the call's own, so a
/// failed check writes nothing of the caller's.
template <class Result>
std::optional<Result> scaled_in_place(const CompressedView& a, const DenseOperand& factor,
                                      const SparseOptions& options, cudaStream_t stream) {
  if (!a.desc.canonical || options.drop_zeros ||
      (a.memory == Memory::device && !device_scales_in_place(a, factor)))
    return std::nullopt;
  using Buffer = typename Backend<MemoryOf<Result>::value>::Buffer;
  const std::size_t n = static_cast<std::size_t>(a.desc.nnz), index = index_size(a.desc.index);
  const std::size_t offsets_bytes = static_cast<std::size_t>(a.major_extent() + 1) * index;
  Buffer offsets(offsets_bytes, stream, options.memory), indices(n * index, stream, options.memory),
      vals(n * dtype_size(a.desc.dtype), stream, options.memory);
  if constexpr (Buffer::memory == Memory::host) {
    host_scale_compressed(a, factor, offsets.data(), indices.data(), vals.data());
  } else {
    const detail::CallMemory memory(options.memory);
    device_scale_compressed(a, factor, options.validate_indices, offsets.data(), indices.data(),
                            vals.data(), stream);
  }
  CooDesc d = a.desc;
  d.canonical = true;
  return Result(d, a.format, std::move(offsets), std::move(indices), std::move(vals));
}

/// a ⊙ b (u null) or their union (u) for canonical device operands of one format that the
/// planner merges (the union always), by device_compressed_merge on values of dtype r; else none.
template <class Result>
std::optional<Result> merged_as_stored(const CompressedView& a, const CompressedView& b, DType r,
                                       const UnionArgs* u, const SparseOptions& options,
                                       cudaStream_t stream) {
  if constexpr (MemoryOf<Result>::value == Memory::host) {
    return std::nullopt;
  } else {
    const Orientation o = orientation_of(a.format);
    const bool some = u ? a.desc.nnz + b.desc.nnz > 0 : a.desc.nnz > 0 && b.desc.nnz > 0;
    if (a.format != b.format || !a.desc.canonical || !b.desc.canonical || !some ||
        a.major_extent() == 0 ||
        (!u && resolve_algorithm(o.desc(a.desc), o.desc(b.desc), options.algorithm) !=
                   CooAlgorithm::merge))
      return std::nullopt;
    Promoted p(r, options.memory, stream);
    const detail::CallMemory memory(options.memory);
    return compress<Result>(
        device_compressed_merge(promoted(p, a), promoted(p, b), u, options, stream), a.format, o,
        options, stream);
  }
}

/// The checks every form makes of its compressed operands and the memory of its result.
void check_compressed(const CompressedView& a, const CompressedView* b, Memory result,
                      const char* op) {
  check_view(a, "a");
  if (b) {
    check_view(*b, "b");
    check_operands(shape_of(a), shape_of(*b), op);
  }
  check_result_memory(a.memory, result, op);
}

}  // namespace

template <class Result>
Result multiply(const CompressedView& a, const CompressedView& b, const SparseOptions& options,
                cudaStream_t stream) {
  check_compressed(a, &b, MemoryOf<Result>::value, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               {b.desc.dtype, Weight::tensor});
  check_resident(a, &b, stream);
  if (auto m = merged_as_stored<Result>(a, b, r, nullptr, options, stream)) return std::move(*m);
  return compressed_form<Result>(a, &b, options, stream,
                                 [&](Orientation, const CooView& va, const CooView& vb) {
                                   return multiply<CooOf<Result>>(va, vb, spelled(options), stream);
                                 });
}

template <class Result>
Result multiply(const CompressedView& a, const ConstTensorView& dense, const SparseOptions& options,
                cudaStream_t stream) {
  check_compressed(a, nullptr, MemoryOf<Result>::value, "multiply");
  check_dense_operand(shape_of(a), dense);
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype,
                               Operand(dense).type(options.promotion));
  check_resident(a, nullptr, stream, &dense);
  const Orientation o = orientation_of(a.format);
  Promoted p(r, options.memory, stream);
  const CompressedView pa = promoted(p, a);
  const ConstTensorView pd = p.dense(dense);
  const DenseOperand factor = dense_operand(o.desc(pa.desc), o.dense(pd));
  if (auto out = scaled_in_place<Result>(pa, factor, options, stream)) return std::move(*out);
  return compressed_form<Result>(
      pa, nullptr, options, stream, [&](Orientation, const CooView& va, const CooView&) {
        return multiply<CooOf<Result>>(va, o.dense(pd), spelled(options), stream);
      });
}

template <class Result>
Result multiply(const CompressedView& a, const Scalar& s, const SparseOptions& options,
                cudaStream_t stream) {
  check_compressed(a, nullptr, MemoryOf<Result>::value, "multiply");
  const DType r = result_dtype(BinaryOp::multiply, options.promotion, a.desc.dtype, s.type());
  check_resident(a, nullptr, stream);
  const CooView shape{nullptr, nullptr, a.vals, a.desc, a.memory};
  const DenseOperand factor = scalar_factor(BinaryOp::multiply, shape, s, r, options.promotion);
  if (a.desc.canonical && !options.drop_zeros) {  // else nothing converted here
    Promoted p(r, options.memory, stream);
    if (auto out = scaled_in_place<Result>(promoted(p, a), factor, options, stream))
      return std::move(*out);
  }
  return compressed_form<Result>(a, nullptr, options, stream,
                                 [&](Orientation, const CooView& va, const CooView&) {
                                   return multiply<CooOf<Result>>(va, s, spelled(options), stream);
                                 });
}

template <class Result>
Result combine(BinaryOp op, const CompressedView& a, const CompressedView& b,
               const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "combine");
  check_compressed(a, &b, MemoryOf<Result>::value, "combine");
  const DType r = result_dtype(op, options.promotion, a.desc.dtype, {b.desc.dtype, Weight::tensor});
  check_resident(a, &b, stream);
  const UnionArgs u{op, union_fill(options.fill_a, r, "fill_a"),
                    union_fill(options.fill_b, r, "fill_b")};
  if (auto out = merged_as_stored<Result>(a, b, r, &u, options, stream)) return std::move(*out);
  return compressed_form<Result>(
      a, &b, options, stream, [&](Orientation, const CooView& va, const CooView& vb) {
        return combine<CooOf<Result>>(op, va, vb, spelled(options), stream);
      });
}

template <class Result>
Result combine(BinaryOp op, const CompressedView& a, const Scalar& s, const SparseOptions& options,
               cudaStream_t stream) {
  check_union_op(op, "combine");
  check_compressed(a, nullptr, MemoryOf<Result>::value, "combine");
  result_dtype(op, options.promotion, a.desc.dtype, s.type());
  check_scalar_union(op, s, format_name(a.format));
  check_resident(a, nullptr, stream);
  return compressed_form<Result>(
      a, nullptr, options, stream, [&](Orientation, const CooView& va, const CooView&) {
        return combine<CooOf<Result>>(op, va, s, spelled(options), stream);
      });
}

void combine(BinaryOp op, const CompressedView& a, const ConstTensorView& dense,
             const TensorView& out, const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "combine");
  check_compressed(a, nullptr, a.memory, "combine");
  check_dense_operand(shape_of(a), dense, "combine");
  check_dense_result_options(options.drop_zeros, "combine");
  check_view(out, "out");
  const DType r =
      result_dtype(op, options.promotion, a.desc.dtype, Operand(dense).type(options.promotion));
  check_union_output(shape_of(a), &dense, out, r, "combine");
  check_resident(a, nullptr, stream, &dense, &out);
  const Orientation o = orientation_of(a.format);
  const auto run = [&](const CooView& va, const CooView&) {
    combine(op, va, o.dense(dense), o.dense(out), spelled(options), stream);
  };
  if (a.memory == Memory::host)
    with_spelled<Memory::host>(a, nullptr, o, options, stream, run);
  else
    with_spelled<Memory::device>(a, nullptr, o, options, stream, run);
}

template <class Result>
Result combine(BinaryOp op, const CompressedView& a, const ConstTensorView& dense,
               const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "combine");
  check_compressed(a, nullptr, MemoryOf<Result>::value, "combine");
  check_dense_operand(shape_of(a), dense, "combine");
  const DType r =
      result_dtype(op, options.promotion, a.desc.dtype, Operand(dense).type(options.promotion));
  Result out(r, Dims{a.desc.nrows, a.desc.ncols}, stream, options.memory);
  combine(op, a, dense, out.view(), options, stream);
  return out;
}

void accumulate(BinaryOp op, const TensorView& dense, const CompressedView& a,
                const SparseOptions& options, cudaStream_t stream) {
  check_union_op(op, "accumulate");
  check_compressed(a, nullptr, a.memory, "accumulate");
  const DType r = accumulate_dtype(op, dense, a.desc.dtype, options);
  check_union_output(shape_of(a), nullptr, dense, r, "accumulate");
  const ConstTensorView read = dense;
  check_resident(a, nullptr, stream, &read);
  const Orientation o = orientation_of(a.format);
  const auto run = [&](const CooView& va, const CooView&) {
    accumulate(op, o.dense(dense), va, spelled(options), stream);
  };
  if (a.memory == Memory::host)
    with_spelled<Memory::host>(a, nullptr, o, options, stream, run);
  else
    with_spelled<Memory::device>(a, nullptr, o, options, stream, run);
}

template <class Result>
Result coalesce(const CompressedView& a, const SparseOptions& options, cudaStream_t stream) {
  check_compressed(a, nullptr, MemoryOf<Result>::value, "coalesce");
  check_resident(a, nullptr, stream);
  return compressed_form<Result>(a, nullptr, options, stream,
                                 [&](Orientation, const CooView& va, const CooView&) {
                                   return coalesce<CooOf<Result>>(va, spelled(options), stream);
                                 });
}

template <class Result>
Result to_coo(const CompressedView& a, const SparseOptions& options, cudaStream_t stream) {
  constexpr Memory M = MemoryOf<Result>::value;
  check_compressed(a, nullptr, M, "to_coo");
  check_resident(a, nullptr, stream);
  return with_spelled<M>(a, nullptr, Orientation{}, options, stream,
                         [&](const CooView& va, const CooView&) {
                           return coalesce<Result>(va, spelled(options), stream);
                         });
}

template <class Result>
Result to_compressed(const CooView& a, SparseFormat format, const SparseOptions& options,
                     cudaStream_t stream) {
  constexpr Memory M = MemoryOf<Result>::value;
  check_view(a, "a");
  check_result_memory(a.memory, M, "to_compressed");
  const Orientation o = orientation_of(format);
  CooView v = a;
  if (o.transposed) {
    v = {a.cols, a.rows, a.vals, o.desc(a.desc), a.memory};
    v.desc.canonical = false;
  }
  return compress<Result>(coalesce<CooOf<Result>>(v, options, stream), format, o, options, stream);
}

#define EWISE_COMPRESSED_INSTANTIATE(Compressed, Coo, Tensor)                                     \
  template Compressed multiply<Compressed>(const CompressedView&, const CompressedView&,          \
                                           const SparseOptions&, cudaStream_t);                   \
  template Compressed multiply<Compressed>(const CompressedView&, const ConstTensorView&,         \
                                           const SparseOptions&, cudaStream_t);                   \
  template Compressed multiply<Compressed>(const CompressedView&, const Scalar&,                  \
                                           const SparseOptions&, cudaStream_t);                   \
  template Compressed combine<Compressed>(BinaryOp, const CompressedView&, const CompressedView&, \
                                          const SparseOptions&, cudaStream_t);                    \
  template Compressed combine<Compressed>(BinaryOp, const CompressedView&, const Scalar&,         \
                                          const SparseOptions&, cudaStream_t);                    \
  template Tensor combine<Tensor>(BinaryOp, const CompressedView&, const ConstTensorView&,        \
                                  const SparseOptions&, cudaStream_t);                            \
  template Compressed coalesce<Compressed>(const CompressedView&, const SparseOptions&,           \
                                           cudaStream_t);                                         \
  template Coo to_coo<Coo>(const CompressedView&, const SparseOptions&, cudaStream_t);            \
  template Compressed to_compressed<Compressed>(const CooView&, SparseFormat,                     \
                                                const SparseOptions&, cudaStream_t);
EWISE_COMPRESSED_INSTANTIATE(DeviceCompressed, DeviceCoo, DeviceTensor)
EWISE_COMPRESSED_INSTANTIATE(HostCompressed, HostCoo, HostTensor)
#undef EWISE_COMPRESSED_INSTANTIATE

}  // namespace ewise
