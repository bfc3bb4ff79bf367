// sparse/bitmap_merge.cu — COO ⊙ COO by bitmap_merge, for unsorted input: a bitmap of one
// operand's coordinates drops the other's entries that cannot match, both ways, and merge runs
// on what is left, so only matching entries are ever sorted.
#include <algorithm>

#include "compaction.cuh"
#include "internal.hpp"
#include "multiply.cuh"
#include "select.hpp"

namespace ewise::sparse_detail {
namespace {

/// Sets bit row * ncols + col for every entry in range (and runs its index check).
__global__ void set_bits_kernel(EntryCheck check, IndexArray rows, IndexArray cols, std::int64_t n,
                                std::int64_t nrows, std::int64_t ncols, std::uint32_t* bits) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    if (r < 0 || r >= nrows || c < 0 || c >= ncols) continue;
    const auto key = static_cast<std::uint64_t>(r * ncols + c);
    atomicOr(bits + (key >> 5), 1u << (key & 31));
  }
}

/// Marks the entries whose coordinate has its bit set (runs their index check): the count
/// pass tests the bitmap once per entry and keeps the answer in `marks` for the write pass.
struct MarkByBitmap {
  EntryCheck check;
  IndexArray rows, cols;
  std::int64_t nrows, ncols;
  const std::uint32_t* bits;
  std::uint8_t* marks;
  __device__ bool flag(std::int64_t i) const {
    check(i);
    const std::int64_t r = rows[i], c = cols[i];
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    const auto key = in ? static_cast<std::uint64_t>(r * ncols + c) : 0;
    const bool hit = in && ((bits[key >> 5] >> (key & 31)) & 1u);
    marks[i] = hit ? 1 : 0;
    return hit;
  }
};

/// Copies the marked entries in storage order. Word: the values' bits (a copy needs no dtype).
template <class Word>
struct CopyMarked {
  const std::uint8_t* marks;
  IndexArray rows, cols;
  const Word* vals;
  IndexArray out_rows, out_cols;
  Word* out_vals;
  __device__ bool flag(std::int64_t i) const { return marks[i] != 0; }
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    out_rows.set(slot, rows[i]);
    out_cols.set(slot, cols[i]);
    out_vals[slot] = vals[i];
  }
};

template <class F>
void with_word(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    default: f(std::uint64_t{}); return;
  }
}

/// The entries of m whose coordinate has its bit set, as a new matrix (same order, so a
/// canonical m gives a canonical result). Synchronizes (reads the status).
DeviceCoo keep_marked(const CooView& m, const EntryCheck& check, const std::uint32_t* bits,
                      std::uint8_t* marks, Status& status, int slot, cudaStream_t stream) {
  const CooDesc& d = m.desc;
  const IndexArray rows = index_array(m.rows, d.index), cols = index_array(m.cols, d.index);
  Compaction filter(d.nnz, stream);
  filter.count(MarkByBitmap{check, rows, cols, d.nrows, d.ncols, bits, marks});
  CooDesc kept = d;
  kept.nnz = filter.scan_total(status, slot);
  DeviceCoo out(kept, stream);
  with_word(d.dtype, [&](auto word) {
    using W = decltype(word);
    filter.write(CopyMarked<W>{marks, rows, cols, static_cast<const W*>(m.vals),
                               index_array(out.rows(), d.index), index_array(out.cols(), d.index),
                               static_cast<W*>(out.vals())});
  });
  return out;
}

}  // namespace

/// One bitmap at a time (so that it can stay in L2): b's coordinates keep a's matching entries
/// (a'), then a''s coordinates keep b's; merge runs on a' and b'.
DeviceCoo bitmap_merge_pipeline(const CooView& a, const CooView& b, bool validate,
                                Status& status, cudaStream_t stream) {
  const CooDesc& d = a.desc;
  const auto bytes = static_cast<std::size_t>(bitmap_bytes(d));
  Workspace ws({bytes, static_cast<std::size_t>(std::max(a.desc.nnz, b.desc.nnz))}, stream);
  auto* bits = ws.get<std::uint32_t>(0);
  auto* marks = ws.get<std::uint8_t>(1);
  const auto set_bits = [&](const CooView& m, const EntryCheck& check) {
    EWISE_CUDA_CHECK(cudaMemsetAsync(bits, 0, bytes, stream));
    detail::launch("sparse bitmap set_bits", set_bits_kernel, dim3(blocks_for(m.desc.nnz)), dim3(kBlock),
                   0, stream, check, index_array(m.rows, d.index), index_array(m.cols, d.index),
                   m.desc.nnz, d.nrows, d.ncols, bits);
  };
  const EntryCheck check_a = status.fused(a, "a", validate), check_b = status.fused(b, "b", validate);
  set_bits(b, check_b);
  const DeviceCoo kept_a = keep_marked(a, check_a, bits, marks, status, 0, stream);
  if (kept_a.nnz() == 0) return DeviceCoo(result_desc(d, 0), stream);
  set_bits(kept_a, EntryCheck{});
  const DeviceCoo kept_b = keep_marked(b, EntryCheck{}, bits, marks, status, 1, stream);
  return merge_pipeline(kept_a, kept_b, false, status, stream);
}

}  // namespace ewise::sparse_detail
