// sparse/drop_zeros.cu — drop_zero_entries (drop_zeros.cuh): a compaction of the entries whose
// value compares unequal to zero.
#include <utility>

#include "compaction.cuh"
#include "drop_zeros.cuh"
#include "ewise/detail/types.cuh"
#include "internal.hpp"

namespace ewise::sparse_detail {

namespace {

template <class T>
struct NonzeroEntries {
  IndexArray rows, cols;
  const T* vals;
  IndexArray out_rows, out_cols;
  T* out_vals;
  __device__ bool flag(std::int64_t i) const {
    return detail::to_compute(vals[i]) != detail::compute_t<T>(0);
  }
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    out_rows.set(slot, rows[i]);
    out_cols.set(slot, cols[i]);
    out_vals[slot] = vals[i];
  }
};

}  // namespace

DeviceCoo drop_zero_entries(DeviceCoo in, Status& status, cudaStream_t stream) {
  const CooDesc& d = in.desc();
  if (d.nnz == 0) return in;
  return detail::dispatch_dtype(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    NonzeroEntries<T> op{index_array(in.rows(), d.index), index_array(in.cols(), d.index),
                         static_cast<const T*>(in.vals()), {}, {}, nullptr};
    Compaction c(d.nnz, stream);
    c.count(op);
    const std::int64_t n = c.scan_total(status, 3);
    if (n == d.nnz) return std::move(in);
    DeviceCoo out(result_desc(d, n), stream);
    op.out_rows = index_array(out.rows(), d.index);
    op.out_cols = index_array(out.cols(), d.index);
    op.out_vals = static_cast<T*>(out.vals());
    c.write(op);
    return out;
  });
}

}  // namespace ewise::sparse_detail
