// sparse/coo_dense_union.cu — COO ⊕ dense on the GPU (sparse.hpp): combine(op, a, dense, out)
// and accumulate(op, dense, a). Both work on a canonical matrix, one thread per entry (a
// matrix not marked canonical is coalesced first by coo_dense.cu's pipeline, which sums
// duplicates in storage order and keeps the sums in the compute type, so that the result is
// rounded once); combine adds one pass over the matrix for the coordinates a does not store.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "compaction.cuh"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "internal.hpp"

namespace ewise::sparse_detail {
namespace {

/// A rank-2 strided tensor: element (r, c) at data[r * row_stride + c * col_stride].
template <class T>
struct Strided2 {
  T* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
  __device__ __forceinline__ T& at(std::int64_t r, std::int64_t c) const {
    return data[r * row_stride + c * col_stride];
  }
};

/// What the entries pass computes for entry k at (r, c) with value v (its sum: the matrix is
/// canonical; stored as V, T or its compute type) and the dense element d = dense(r, c).
enum class EntryForm : std::uint8_t {
  combine,     ///< op(v, d)
  accumulate,  ///< op(d, v), written back to dense(r, c)
  copy,        ///< v (values computed earlier, scattered to out)
};

template <class T, class I, class V, class Op>
struct UnionEntriesArgs {
  const I* rows;
  const I* cols;
  const V* vals;
  std::int64_t n;
  Strided2<const T> dense;
  EntryForm form;
  Op op;
  Strided2<T> out;  ///< written at (r, c) unless out_vals is set
  T* out_vals;      ///< when set: written at k
};

/// One thread per entry. The coordinates are distinct (canonical), so no two threads write
/// one element and no atomics are needed.
template <class T, class I, class V, class Op>
__global__ void __launch_bounds__(kBlock) union_entries_kernel(UnionEntriesArgs<T, I, V, Op> a) {
  using C = detail::compute_t<T>;
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < a.n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = a.rows[k], c = a.cols[k];
    const C v = static_cast<C>(detail::to_compute(a.vals[k]));
    C result = v;
    if (a.form != EntryForm::copy) {
      const C d = detail::to_compute(a.dense.at(r, c));
      result = a.form == EntryForm::combine ? a.op(v, d) : a.op(d, v);
    }
    const T stored = detail::from_compute<T>(result);
    if (a.out_vals) a.out_vals[k] = stored;
    else a.out.at(r, c) = stored;
  }
}

/// out(r, c) = op(fill, dense(r, c)) for every element, in row-major order of the matrix.
template <class T, class U, class Op>
__global__ void __launch_bounds__(kBlock)
    union_fill_kernel(std::int64_t n, detail::FastDivmod<U> ncols, detail::compute_t<T> fill,
                      Strided2<const T> dense, Op op, Strided2<T> out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    U r, c;
    ncols.divmod(static_cast<U>(i), r, c);
    const auto ri = static_cast<std::int64_t>(r), ci = static_cast<std::int64_t>(c);
    out.at(ri, ci) = detail::from_compute<T>(op(fill, detail::to_compute(dense.at(ri, ci))));
  }
}

/// Runs the entries pass over canonical `m` with op (dtype dispatched by the caller; m's values
/// are T, or T's compute type when m.desc.dtype says so).
template <class T, class Op>
void launch_entries(const CooView& m, Strided2<const T> dense, EntryForm form, Op op,
                    Strided2<T> out, T* out_vals, cudaStream_t stream) {
  const std::int64_t n = m.desc.nnz;
  if (n == 0) return;
  const auto run = [&](auto itag, auto vtag) {
    using I = decltype(itag);
    using V = decltype(vtag);
    const UnionEntriesArgs<T, I, V, Op> args{static_cast<const I*>(m.rows),
                                          static_cast<const I*>(m.cols),
                                          static_cast<const V*>(m.vals),
                                          n,
                                          dense,
                                          form,
                                          op,
                                          out,
                                          out_vals};
    detail::launch("sparse union_entries", union_entries_kernel<T, I, V, Op>,
                   dim3(blocks_for(n)), dim3(kBlock), 0, stream, args);
  };
  const auto with_values = [&](auto itag) {
    if constexpr (!std::is_same_v<T, detail::compute_t<T>>) {
      if (m.desc.dtype == DType::f32) return run(itag, detail::compute_t<T>{});
    }
    run(itag, T{});
  };
  if (m.desc.index == IndexType::i64) with_values(std::int64_t{});
  else with_values(std::int32_t{});
}

/// The canonical form of a to work on: a itself (its indices checked by a pass of their own
/// when asked, one synchronization), or a coalesced copy with its sums in the compute type
/// (which the sort's pass checks; one synchronization). Either way every index is checked
/// before this returns.
class CanonicalOperand {
 public:
  CanonicalOperand(const CooView& a, bool validate, cudaStream_t stream) : view_(a) {
    if (a.desc.canonical || a.desc.nnz == 0) {
      if (validate && a.desc.nnz > 0) device_check_indices(a, "a", stream);
      return;
    }
    owned_ = device_coalesce_sums(a, validate, stream);
    view_ = owned_.view();
  }
  const CooView& view() const { return view_; }

 private:
  DeviceCoo owned_;
  CooView view_;
};

}  // namespace

void device_combine_dense(const CooView& a, const DenseOperand& dense, const TensorView& out,
                          bool out_is_dense, const UnionArgs& u, const SparseOptions& options,
                          cudaStream_t stream) {
  const std::int64_t nr = a.desc.nrows, nc = a.desc.ncols, cells = nr * nc;
  const CanonicalOperand canonical(a, options.validate_indices, stream);
  if (cells == 0) return;
  const CooView& m = canonical.view();
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    const Strided2<const T> d{static_cast<const T*>(dense.data), dense.row_stride,
                              dense.col_stride};
    const Strided2<T> o{static_cast<T*>(out.data), out.desc.strides[0], out.desc.strides[1]};
    with_union_op(u.op, [&](auto op) {
      using Op = decltype(op);
      // out is dense: the entries' results are computed before the matrix pass overwrites it.
      DeviceBuffer staged;
      if (out_is_dense && m.desc.nnz > 0) {
        staged = DeviceBuffer(static_cast<std::size_t>(m.desc.nnz) * sizeof(T), stream);
        launch_entries<T>(m, d, EntryForm::combine, op, o, static_cast<T*>(staged.data()), stream);
      }
      const auto fill = [&](auto utag) {
        using U = decltype(utag);
        detail::launch("sparse union_fill", union_fill_kernel<T, U, Op>, dim3(blocks_for(cells)),
                       dim3(kBlock), 0, stream, cells, detail::FastDivmod<U>(nc),
                       static_cast<C>(u.fill_a), d, op, o);
      };
      if (cells <= INT32_MAX) fill(std::uint32_t{});
      else fill(std::uint64_t{});
      if (staged.data() == nullptr) {
        launch_entries<T>(m, d, EntryForm::combine, op, o, nullptr, stream);
      } else {
        CooDesc staged_desc = m.desc;  // the staged results are T, whatever m's values are
        staged_desc.dtype = a.desc.dtype;
        const CooView values{m.rows, m.cols, staged.data(), staged_desc, Memory::device};
        launch_entries<T>(values, d, EntryForm::copy, op, o, nullptr, stream);
      }
    });
  });
}

void device_accumulate(const TensorView& dense, const CooView& a, BinaryOp op,
                       const SparseOptions& options, cudaStream_t stream) {
  const CanonicalOperand canonical(a, options.validate_indices, stream);
  const CooView& m = canonical.view();
  if (m.desc.nnz == 0) return;
  detail::dispatch_dtype(a.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Strided2<T> d{static_cast<T*>(dense.data), dense.desc.strides[0], dense.desc.strides[1]};
    with_union_op(op, [&](auto f) {
      launch_entries<T>(m, Strided2<const T>{d.data, d.row_stride, d.col_stride},
                        EntryForm::accumulate, f, d, nullptr, stream);
    });
  });
}

}  // namespace ewise::sparse_detail
