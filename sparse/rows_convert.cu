// sparse/rows_convert.cu — the GPU side of the conversions between row-sparse and 2-D COO
// (rows_convert.cpp): to_coo's spelled-out indices, and to_row_sparse's grouping of a canonical
// COO matrix by row.
#include <cuda_runtime.h>

#include <cstdint>

#include "compaction.cuh"
#include "ewise/buffer.hpp"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "rows.cuh"

namespace ewise::sparse_detail {
namespace {

/// Entry e of the n * width entries: (rows[e / width], e % width).
__global__ void spell_rows_kernel(IndexArray rows, std::int64_t total,
                                  detail::FastDivmod<std::uint64_t> width, IndexArray out_rows,
                                  IndexArray out_cols) {
  const auto step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < total; e += step) {
    std::uint64_t k, j;
    width.divmod(static_cast<std::uint64_t>(e), k, j);
    out_rows.set(e, rows[static_cast<std::int64_t>(k)]);
    out_cols.set(e, static_cast<std::int64_t>(j));
  }
}

/// Entry e of a canonical matrix (n entries, sorted by row, then column) into the row-sparse
/// result: its run s, the last of the `runs` run heads at or before e (a binary search); the
/// run's head writes the row index, and every entry its value's bits (V: an unsigned integer of
/// the value's size) at (s, its column) of the zeroed block.
template <class V>
__global__ void group_rows_kernel(IndexArray rows, IndexArray cols, const V* vals, std::int64_t n,
                                  const std::int64_t* heads, std::int64_t runs,
                                  std::int64_t width, IndexArray out_rows, V* out_vals) {
  const auto step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += step) {
    std::int64_t lo = 0, hi = runs;  // heads[lo] <= e < heads[hi] (heads[runs]: n)
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (heads[mid] <= e) lo = mid;
      else hi = mid;
    }
    if (heads[lo] == e) out_rows.set(lo, rows[e]);
    out_vals[lo * width + cols[e]] = vals[e];
  }
}

}  // namespace

void device_spell_rows(const void* rows, std::int64_t n, std::int64_t width, IndexType index,
                       void* out_rows, void* out_cols, cudaStream_t stream) {
  const std::int64_t total = n * width;
  const bool wide = index == IndexType::i64;
  detail::launch("sparse spell_rows", spell_rows_kernel, dim3(blocks_for(total)), dim3(kBlock), 0,
                 stream, IndexArray{rows, wide}, total,
                 detail::FastDivmod<std::uint64_t>(static_cast<std::uint64_t>(width)),
                 IndexArray{out_rows, wide}, IndexArray{out_cols, wide});
}

DeviceRowSparse device_coo_to_rows(const CooView& c, cudaStream_t stream) {
  const std::int64_t n = c.desc.nnz, width = c.desc.ncols;
  CooDesc d = c.desc;
  d.canonical = true;
  if (n == 0) {
    d.nnz = 0;
    return DeviceRowSparse(d, stream);
  }
  const bool wide = c.desc.index == IndexType::i64;
  KeySeq keys;  // the row indices, read as unsigned words (they are not negative)
  keys.keys = WordArray{c.rows, wide};
  DeviceBuffer count(sizeof(std::int64_t), stream);
  const RunHeads heads(keys, n, static_cast<std::int64_t*>(count.data()), stream);
  const auto runs = read_back<std::int64_t>(count.data(), stream);
  d.nnz = runs;
  DeviceRowSparse out(d, stream);
  const std::size_t size = dtype_size(d.dtype);
  EWISE_CUDA_CHECK(
      cudaMemsetAsync(out.vals(), 0, static_cast<std::size_t>(runs * width) * size, stream));
  const auto group = [&](auto bits) {
    using V = decltype(bits);
    detail::launch("sparse group_rows", group_rows_kernel<V>, dim3(blocks_for(n)), dim3(kBlock),
                   0, stream, IndexArray{c.rows, wide}, IndexArray{c.cols, wide},
                   static_cast<const V*>(c.vals), n, heads.positions(), runs, width,
                   IndexArray{out.rows(), wide}, static_cast<V*>(out.vals()));
  };
  switch (size) {
    case 1: group(std::uint8_t{}); break;
    case 2: group(std::uint16_t{}); break;
    case 4: group(std::uint32_t{}); break;
    default: group(std::uint64_t{}); break;
  }
  return out;
}

}  // namespace ewise::sparse_detail
