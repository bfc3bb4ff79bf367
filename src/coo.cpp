#include "ewise/coo.hpp"

#include <climits>

#include <cstdint>
#include <cstring>
#include <utility>

#include "checked.hpp"
#include "residency.hpp"
#include "ewise/compressed.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

std::size_t index_size(IndexType t) { return t == IndexType::i32 ? 4 : 8; }
const char* index_name(IndexType t) { return t == IndexType::i32 ? "i32" : "i64"; }

bool is_sparse_dtype(DType t) {
  for (DType s : kSparseDTypes)
    if (s == t) return true;
  return false;
}

void CooDesc::validate() const {
  EWISE_EXPECTS(is_sparse_dtype(dtype), "COO values of dtype ", dtype_name(dtype),
                " are not supported (sparse values are f16, bf16, f32, f64, i32 or i64)");
  EWISE_EXPECTS(nrows >= 0 && ncols >= 0, "negative COO shape ", nrows, "x", ncols);
  EWISE_EXPECTS(nnz >= 0, "negative nnz ", nnz);
  std::int64_t total = 0;
  EWISE_EXPECTS(!detail::mul_overflows(nrows, ncols, &total), "COO shape ", nrows, "x", ncols,
                ": nrows*ncols overflows int64");
  if (index == IndexType::i32)
    EWISE_EXPECTS(nrows <= (std::int64_t{1} << 31) && ncols <= (std::int64_t{1} << 31),
                  "COO shape ", nrows, "x", ncols, " needs int64 indices (int32 holds up to ",
                  (std::int64_t{1} << 31) - 1, ")");
  std::int64_t bytes = 0;
  EWISE_EXPECTS(!detail::mul_overflows(nnz, 8, &bytes), "nnz ", nnz, " is too large");
}

std::string CooDesc::str() const {
  return detail::concat(dtype_name(dtype), " ", nrows, "x", ncols, " nnz=", nnz, " ",
                        index_name(index), canonical ? " canonical" : "");
}

void check_view(const CooView& v, const char* what) {
  v.desc.validate();
  EWISE_EXPECTS(v.desc.nnz == 0 || (v.rows && v.cols && v.vals), what, " (", v.desc.str(),
                ") has a null index or value array");
  if (v.memory != Memory::device || v.desc.nnz == 0) return;
  // A kernel reading a misaligned element faults with cudaErrorMisalignedAddress, which breaks
  // the CUDA context for the whole process: reject it here, before anything is launched.
  const std::pair<const void*, std::size_t> arrays[] = {{v.rows, index_size(v.desc.index)},
                                                        {v.cols, index_size(v.desc.index)},
                                                        {v.vals, dtype_size(v.desc.dtype)}};
  const char* names[] = {"rows", "cols", "vals"};
  for (int k = 0; k < 3; ++k)
    EWISE_EXPECTS(reinterpret_cast<std::uintptr_t>(arrays[k].first) % arrays[k].second == 0,
                  what, " (", v.desc.str(), "): device array ", names[k], " at ",
                  arrays[k].first, " is not aligned to its ", arrays[k].second, "-byte elements");
}

void check_view(const RowSparseView& v, const char* what) {
  v.desc.validate();
  std::int64_t values = 0;
  EWISE_EXPECTS(!detail::mul_overflows(v.desc.nnz, v.desc.ncols, &values) &&
                    !detail::mul_overflows(values, 8, &values),
                what, " (", v.desc.str(), "): nnz * ncols values overflow int64 bytes");
  EWISE_EXPECTS(v.desc.nnz == 0 || (v.rows && (v.vals || v.desc.ncols == 0)), what, " (",
                v.desc.str(), ") has a null rows or vals array");
  if (v.memory != Memory::device || v.desc.nnz == 0) return;
  const std::pair<const void*, std::size_t> arrays[] = {{v.rows, index_size(v.desc.index)},
                                                        {v.vals, dtype_size(v.desc.dtype)}};
  const char* names[] = {"rows", "vals"};
  for (int k = 0; k < 2; ++k)
    EWISE_EXPECTS(reinterpret_cast<std::uintptr_t>(arrays[k].first) % arrays[k].second == 0,
                  what, " (", v.desc.str(), "): device array ", names[k], " at ",
                  arrays[k].first, " is not aligned to its ", arrays[k].second, "-byte elements");
}

const char* format_name(SparseFormat f) { return f == SparseFormat::csr ? "CSR" : "CSC"; }

void check_view(const CompressedView& v, const char* what) {
  v.desc.validate();
  const char* format = format_name(v.format);
  EWISE_EXPECTS(v.desc.index == IndexType::i64 || v.desc.nnz <= INT32_MAX, what, " (", format,
                " ", v.desc.str(), "): ", v.desc.nnz,
                " entries do not fit int32 offsets; use int64 offsets and indices");
  EWISE_EXPECTS(v.offsets && (v.desc.nnz == 0 || (v.indices && v.vals)), what, " (", format, " ",
                v.desc.str(), ") has a null offsets, indices or vals array");
  if (v.memory != Memory::device) return;
  const std::pair<const void*, std::size_t> arrays[] = {{v.offsets, index_size(v.desc.index)},
                                                        {v.indices, index_size(v.desc.index)},
                                                        {v.vals, dtype_size(v.desc.dtype)}};
  const char* names[] = {"offsets", "indices", "vals"};
  for (int k = 0; k < (v.desc.nnz == 0 ? 1 : 3); ++k)
    EWISE_EXPECTS(reinterpret_cast<std::uintptr_t>(arrays[k].first) % arrays[k].second == 0,
                  what, " (", format, " ", v.desc.str(), "): device array ", names[k], " at ",
                  arrays[k].first, " is not aligned to its ", arrays[k].second, "-byte elements");
}

CompressedView compressed_view(const ConstTensorView& offsets, const ConstTensorView& indices,
                               const ConstTensorView& vals, std::int64_t nrows, std::int64_t ncols,
                               SparseFormat format, bool canonical) {
  const char* name = format_name(format);
  check_view(offsets, "offsets");
  check_view(indices, "indices");
  check_view(vals, "vals");
  for (const ConstTensorView* v : {&offsets, &indices, &vals})
    EWISE_EXPECTS(v->desc.rank() == 1 && v->desc.is_contiguous(), "compressed_view: ", name,
                  " offsets, indices and vals must be contiguous 1-D tensors; got ", v->desc.str());
  EWISE_EXPECTS(offsets.desc.dtype == indices.desc.dtype &&
                    (offsets.desc.dtype == DType::i32 || offsets.desc.dtype == DType::i64),
                "compressed_view: ", name,
                " offsets and indices must both be i32 or both i64; got ",
                dtype_name(offsets.desc.dtype), " and ", dtype_name(indices.desc.dtype));
  EWISE_EXPECTS(offsets.memory == indices.memory && indices.memory == vals.memory,
                "compressed_view: ", name, " offsets, indices and vals are not all in one memory (",
                memory_name(offsets.memory), ", ", memory_name(indices.memory), ", ",
                memory_name(vals.memory), ")");
  const std::int64_t major = format == SparseFormat::csr ? nrows : ncols;
  EWISE_EXPECTS(offsets.desc.shape[0] == major + 1, "compressed_view: a ", name, " matrix of ",
                nrows, "x", ncols, " needs ", major + 1, " offsets; got ", offsets.desc.shape[0]);
  EWISE_EXPECTS(indices.desc.shape[0] == vals.desc.shape[0], "compressed_view: ", name,
                " indices and vals lengths differ: ", indices.desc.shape[0], ", ",
                vals.desc.shape[0]);
  const IndexType index = offsets.desc.dtype == DType::i32 ? IndexType::i32 : IndexType::i64;
  const CompressedView v{
      offsets.data, indices.data,
      vals.data,    CooDesc{nrows, ncols, indices.desc.shape[0], index, vals.desc.dtype, canonical},
      format,       offsets.memory};
  check_view(v, "compressed_view");
  return v;
}

namespace {

template <class Dst>
Dst copy_coo(const CooView& v, cudaStream_t stream, cudaMemcpyKind kind) {
  check_view(v, "COO matrix");
  if (kind != cudaMemcpyHostToHost) detail::DeviceOperands().add(v, "COO matrix").check(stream);
  Dst out(v.desc, stream);
  const auto n = static_cast<std::size_t>(v.desc.nnz);
  const std::size_t ib = n * index_size(v.desc.index), vb = n * dtype_size(v.desc.dtype);
  if (n == 0) return out;
  if (kind == cudaMemcpyHostToHost) {  // no CUDA call: works without a GPU
    std::memcpy(out.rows(), v.rows, ib);
    std::memcpy(out.cols(), v.cols, ib);
    std::memcpy(out.vals(), v.vals, vb);
    return out;
  }
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.rows(), v.rows, ib, kind, stream));
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.cols(), v.cols, ib, kind, stream));
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.vals(), v.vals, vb, kind, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // host memory on one side may be pageable
  return out;
}

}  // namespace

HostCoo to_host(const CooView& v, cudaStream_t stream) {
  return copy_coo<HostCoo>(v, stream, v.memory == Memory::host ? cudaMemcpyHostToHost
                                                                 : cudaMemcpyDeviceToHost);
}

DeviceCoo to_device(const CooView& v, cudaStream_t stream) {
  return copy_coo<DeviceCoo>(v, stream, v.memory == Memory::host ? cudaMemcpyHostToDevice
                                                                   : cudaMemcpyDeviceToDevice);
}

}  // namespace ewise
