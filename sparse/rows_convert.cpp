// sparse/rows_convert.cpp — conversions between row-sparse and 2-D COO (ewise/sparse.hpp's
// to_coo(RowSparseView) and to_row_sparse(CooView)): both coalesce first (rows.cpp, api.cpp),
// then spell the rows out or group the entries by row, here on the host and in rows_convert.cu
// on the GPU.
#include <cstring>
#include <type_traits>
#include <utility>

#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "internal.hpp"
#include "ewise/memory.hpp"

namespace ewise {

using namespace sparse_detail;

namespace {

template <class Buffer>
constexpr bool kOnHost = Buffer::memory == Memory::host;

/// Calls f(I{}) with I the integer type of `index`.
template <class F>
void with_index_type(IndexType index, F&& f) {
  if (index == IndexType::i32) f(std::int32_t{});
  else f(std::int64_t{});
}

/// The checks both conversions make before coalescing.
void check_conversion(const SparseOptions& options, const char* call) {
  EWISE_EXPECTS(!options.drop_zeros, call, ": drop_zeros is not supported (a stored row is kept "
                "whole, its zeros included)");
}

/// The CPU backend of to_row_sparse: c canonical, so its entries come row by row.
HostRowSparse host_coo_to_rows(const CooView& c) {
  const std::int64_t n = c.desc.nnz, width = c.desc.ncols;
  const std::size_t size = dtype_size(c.desc.dtype);
  HostRowSparse out;
  with_index_type(c.desc.index, [&](auto index) {
    using I = decltype(index);
    const I* r = static_cast<const I*>(c.rows);
    const I* cols = static_cast<const I*>(c.cols);
    std::int64_t runs = 0;
    for (std::int64_t e = 0; e < n; ++e) runs += e == 0 || r[e] != r[e - 1];
    CooDesc d = c.desc;
    d.nnz = runs;
    out = HostRowSparse(d);
    if (runs * width > 0)
      std::memset(out.vals(), 0, static_cast<std::size_t>(runs * width) * size);
    I* rows = static_cast<I*>(out.rows());
    auto* vals = static_cast<unsigned char*>(out.vals());
    std::int64_t run = -1;
    for (std::int64_t e = 0; e < n; ++e) {
      if (e == 0 || r[e] != r[e - 1]) rows[++run] = r[e];
      std::memcpy(vals + static_cast<std::size_t>(run * width + cols[e]) * size,
                  static_cast<const unsigned char*>(c.vals) + static_cast<std::size_t>(e) * size,
                  size);
    }
  });
  return out;
}

}  // namespace

template <class Result>
Result to_coo(const RowSparseView& a, const SparseOptions& options, cudaStream_t stream) {
  using Buffer = std::conditional_t<std::is_same_v<Result, HostCoo>, HostBuffer, DeviceBuffer>;
  using Rows = BasicRowSparse<Buffer>;
  check_conversion(options, "to_coo");
  Rows c = coalesce<Rows>(a, options, stream);
  CooDesc d = c.desc();
  const std::int64_t n = d.nnz, width = d.ncols;
  d.nnz = n * width;  // fits: the value block holds as many values
  d.canonical = true;
  typename Rows::Arrays arrays = c.release();
  const detail::CallMemory memory(kOnHost<Buffer> ? nullptr : options.memory);
  const auto index_bytes = static_cast<std::size_t>(d.nnz) * index_size(d.index);
  Buffer rows(index_bytes, stream), cols(index_bytes, stream);
  if constexpr (kOnHost<Buffer>) {
    with_index_type(d.index, [&](auto index) {
      using I = decltype(index);
      const I* r = static_cast<const I*>(arrays.rows.data());
      I* out_rows = static_cast<I*>(rows.data());
      I* out_cols = static_cast<I*>(cols.data());
      for (std::int64_t k = 0; k < n; ++k)
        for (std::int64_t j = 0; j < width; ++j) {
          out_rows[k * width + j] = r[k];
          out_cols[k * width + j] = static_cast<I>(j);
        }
    });
  } else if (d.nnz > 0) {
    device_spell_rows(arrays.rows.data(), n, width, d.index, rows.data(), cols.data(), stream);
  }
  return Result(d, std::move(rows), std::move(cols), std::move(arrays.vals));
}

template <class Result>
Result to_row_sparse(const CooView& a, const SparseOptions& options, cudaStream_t stream) {
  constexpr bool kHost = std::is_same_v<Result, HostRowSparse>;
  using Coo = std::conditional_t<kHost, HostCoo, DeviceCoo>;
  check_conversion(options, "to_row_sparse");
  const Coo c = coalesce<Coo>(a, options, stream);
  if constexpr (kHost) {
    return host_coo_to_rows(c.view());
  } else {
    const detail::CallMemory memory(options.memory);
    return device_coo_to_rows(c.view(), stream);
  }
}

template DeviceCoo to_coo<DeviceCoo>(const RowSparseView&, const SparseOptions&, cudaStream_t);
template HostCoo to_coo<HostCoo>(const RowSparseView&, const SparseOptions&, cudaStream_t);
template DeviceRowSparse to_row_sparse<DeviceRowSparse>(const CooView&, const SparseOptions&,
                                                        cudaStream_t);
template HostRowSparse to_row_sparse<HostRowSparse>(const CooView&, const SparseOptions&,
                                                    cudaStream_t);

}  // namespace ewise
