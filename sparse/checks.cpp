// sparse/checks.cpp — argument checks and algorithm selection shared by the CPU and GPU
// backends, and the temporary-storage helper.
#include <algorithm>
#include <cstring>

#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"
#include "internal.hpp"

namespace ewise::sparse_detail {

void check_operands(const CooView& a, const CooView& b) {
  check_view(a, "a");
  check_view(b, "b");
  EWISE_EXPECTS(a.desc.nrows == b.desc.nrows && a.desc.ncols == b.desc.ncols,
                "multiply: shapes differ: a is ", a.desc.nrows, "x", a.desc.ncols, ", b is ",
                b.desc.nrows, "x", b.desc.ncols);
  EWISE_EXPECTS(a.desc.dtype == b.desc.dtype, "multiply: dtypes differ: a is ",
                dtype_name(a.desc.dtype), ", b is ", dtype_name(b.desc.dtype));
  EWISE_EXPECTS(a.desc.index == b.desc.index, "multiply: index types differ: a is ",
                index_name(a.desc.index), ", b is ", index_name(b.desc.index));
  EWISE_EXPECTS(a.memory == b.memory, "multiply: a is in ", memory_name(a.memory),
                " memory but b is in ", memory_name(b.memory), " memory");
}

DenseOperand check_dense_operand(const CooView& a, const ConstTensorView& dense) {
  check_view(a, "a");
  check_view(dense, "dense");
  EWISE_EXPECTS(a.desc.dtype == dense.desc.dtype, "multiply: dtypes differ: a is ",
                dtype_name(a.desc.dtype), ", dense is ", dtype_name(dense.desc.dtype));
  EWISE_EXPECTS(a.memory == dense.memory, "multiply: a is in ", memory_name(a.memory),
                " memory but dense is in ", memory_name(dense.memory), " memory");
  EWISE_EXPECTS(dense.desc.rank() <= 2, "multiply: dense operand ", dense.desc.shape.str(),
                " has rank ", dense.desc.rank(), "; it must broadcast to the COO shape (",
                a.desc.nrows, ",", a.desc.ncols, ")");
  const Dims s = broadcast_strides(dense.desc, Dims{a.desc.nrows, a.desc.ncols});
  return {dense.data, s[0], s[1]};
}

void check_result_memory(Memory inputs, Memory result, const char* op) {
  EWISE_EXPECTS(inputs == result, op, ": the inputs are in ", memory_name(inputs),
                " memory but the result type lives in ", memory_name(result),
                " memory (use the ", inputs == Memory::host ? "Host" : "Device",
                " result type, or copy the inputs)");
}

void throw_out_of_range(const char* what, const CooDesc& d, std::int64_t k, std::int64_t row,
                        std::int64_t col) {
  detail::throw_invalid(__FILE__, __LINE__,
                        detail::concat(what, ": entry ", k, " is at (", row, ", ", col,
                                       "), outside its ", d.nrows, "x", d.ncols, " shape"));
}

void throw_not_increasing(const char* what, std::int64_t k, std::int64_t prev_row,
                          std::int64_t prev_col, std::int64_t row, std::int64_t col) {
  detail::throw_invalid(
      __FILE__, __LINE__,
      detail::concat(what, " is marked canonical but entry ", k, " at (", row, ", ", col,
                     ") does not come after entry ", k - 1, " at (", prev_row, ", ", prev_col,
                     ") (canonical: sorted by row * ncols + col, no duplicates)"));
}

std::int64_t host_index(const void* p, IndexType t, std::int64_t k) {
  if (t == IndexType::i32) {
    std::int32_t v;
    std::memcpy(&v, static_cast<const std::byte*>(p) + k * 4, 4);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, static_cast<const std::byte*>(p) + k * 8, 8);
  return v;
}

void check_indices_host(const CooView& m, const char* what) {
  const CooDesc& d = m.desc;
  std::int64_t prev_r = 0, prev_c = 0;
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const std::int64_t r = host_index(m.rows, d.index, k), c = host_index(m.cols, d.index, k);
    if (r < 0 || r >= d.nrows || c < 0 || c >= d.ncols) throw_out_of_range(what, d, k, r, c);
    if (d.canonical && k > 0 && (r < prev_r || (r == prev_r && c <= prev_c)))
      throw_not_increasing(what, k, prev_r, prev_c, r, c);
    prev_r = r;
    prev_c = c;
  }
}

void check_canonical_for_csr(const CooView& a) {
  EWISE_EXPECTS(a.desc.canonical, "coo_to_csr_row_offsets: the matrix (", a.desc.str(),
                ") is not marked canonical; coalesce it first");
}

DType csr_offsets_dtype(const CooDesc& a) {
  return a.index == IndexType::i32 && a.nnz <= INT32_MAX ? DType::i32 : DType::i64;
}

CooDesc check_dense_to_coo(const ConstTensorView& dense, IndexType index) {
  check_view(dense, "dense");
  EWISE_EXPECTS(dense.desc.rank() == 2, "dense_to_coo: the tensor ", dense.desc.shape.str(),
                " has rank ", dense.desc.rank(), "; a matrix has rank 2");
  CooDesc d{dense.desc.shape[0], dense.desc.shape[1], 0, index, dense.desc.dtype, true};
  d.validate();
  return d;
}

bool sort_search_sorts_a(const CooDesc& a, const CooDesc& b) {
  if (a.canonical != b.canonical) return a.canonical;
  return a.canonical ? a.nnz >= b.nnz : a.nnz <= b.nnz;
}

CooAlgorithm resolve_algorithm(const CooDesc& a, const CooDesc& b, CooAlgorithm requested) {
  switch (requested) {
    case CooAlgorithm::sort_search:
    case CooAlgorithm::merge:
      return requested;
    case CooAlgorithm::bitmap_merge:
      EWISE_EXPECTS(bitmap_bytes(a) <= kBitmapMaxBytes, "bitmap_merge needs a bitmap of ",
                    bitmap_bytes(a), " bytes for the ", a.nrows, "x", a.ncols, " shape, over the limit of ",
                    kBitmapMaxBytes, "; use merge or sort_search");
      return requested;
    case CooAlgorithm::linear_search: {
      const bool small = a.nnz == 0 || b.nnz <= kLinearSearchMaxWork / a.nnz;
      EWISE_EXPECTS(small, "linear_search is for small inputs: nnz(a) * nnz(b) = ", a.nnz, " * ",
                    b.nnz, " exceeds ", kLinearSearchMaxWork, "; use sort_search or merge");
      return requested;
    }
    case CooAlgorithm::automatic: {
      const bool sorts_a = sort_search_sorts_a(a, b), both_canonical = a.canonical && b.canonical;
      const std::int64_t sorted = sorts_a ? a.nnz : b.nnz, searching = sorts_a ? b.nnz : a.nnz;
      if ((!both_canonical && sorted <= kAutoSortSearchMaxSorted) || searching <= sorted / kAutoSortSearchRatio)
        return CooAlgorithm::sort_search;
      if (both_canonical) return CooAlgorithm::merge;
      if (bitmap_bytes(a) <= kAutoBitmapMaxBytes &&
          bitmap_bytes(a) / kAutoBitmapBytesPerEntry <= a.nnz + b.nnz)
        return CooAlgorithm::bitmap_merge;
      return CooAlgorithm::merge;
    }
  }
  EWISE_EXPECTS(false, "unknown COO algorithm ", static_cast<int>(requested));
  return requested;
}

int key_bits(const CooDesc& d) {
  const auto top = static_cast<std::uint64_t>(std::max<std::int64_t>(d.nrows * d.ncols - 1, 1));
  int bits = 0;
  while (bits < 64 && (top >> bits) != 0) ++bits;
  return bits;
}

Workspace::Workspace(std::initializer_list<std::size_t> bytes, cudaStream_t stream) {
  std::size_t total = 0;
  for (std::size_t b : bytes) {
    offsets_.push_back(total);
    sizes_.push_back(b);
    total += (b + kAlign - 1) / kAlign * kAlign;
  }
  buf_ = DeviceBuffer(total, stream);
}

std::vector<std::int64_t> read_words(const std::int64_t* device_words, std::size_t n,
                                     cudaStream_t stream) {
  std::vector<std::int64_t> host(n);
  if (n == 0) return host;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(host.data(), device_words, n * sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace ewise::sparse_detail
