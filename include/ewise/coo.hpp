// ewise/coo.hpp — sparse COO matrices: views and owning matrices.
//
// A COO matrix of shape nrows × ncols holds nnz entries as three arrays: row indices, column
// indices (both int32 or int64) and values. Entry k stands for
// (rows[k], cols[k], vals[k]); its absolute index is rows[k] * ncols + cols[k]. The values are
// of one of kSparseDTypes (the dtypes the sparse kernels are built for); operations promote
// operands of different ones (ewise/sparse.hpp).
// `canonical` is a promise by whoever built the matrix: entries sorted by absolute index with no
// duplicate coordinates. ewise's operations always return canonical matrices.
// Operations on COO matrices are in ewise/sparse.hpp.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstdint>
#include <utility>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// The dtypes of COO values.
inline constexpr DType kSparseDTypes[] = {DType::f16, DType::bf16, DType::f32,
                                          DType::f64, DType::i32,  DType::i64};
bool is_sparse_dtype(DType t);  ///< one of kSparseDTypes

enum class IndexType : std::uint8_t { i32, i64 };
std::size_t index_size(IndexType t);
const char* index_name(IndexType t);  ///< "i32", "i64"

struct CooDesc {
  std::int64_t nrows = 0;
  std::int64_t ncols = 0;
  std::int64_t nnz = 0;
  IndexType index = IndexType::i32;
  DType dtype = DType::f32;
  bool canonical = false;

  /// Throws InvalidArgument when an extent or nnz is negative, nrows * ncols overflows int64,
  /// an int32 index type cannot hold nrows - 1 or ncols - 1, or dtype is not a sparse dtype.
  void validate() const;
  std::string str() const;  ///< "f32 1000x2000 nnz=5000 i32 canonical"
};

/// Read-only view of a COO matrix.
struct CooView {
  const void* rows = nullptr;
  const void* cols = nullptr;
  const void* vals = nullptr;
  CooDesc desc;
  Memory memory = Memory::device;
};

/// Writable view of a COO matrix.
struct MutableCooView {
  void* rows = nullptr;
  void* cols = nullptr;
  void* vals = nullptr;
  CooDesc desc;
  Memory memory = Memory::device;
  operator CooView() const noexcept { return {rows, cols, vals, desc, memory}; }  // NOLINT
};

/// Throws InvalidArgument unless desc is valid, the arrays are non-null when nnz > 0, and device
/// arrays are aligned to their element size (a misaligned one would fault a kernel and break
/// the process's CUDA context).
void check_view(const CooView& v, const char* what);

/// Read-only view of a row-sparse matrix (PyTorch's hybrid COO with one sparse dimension,
/// TensorFlow's IndexedSlices, an embedding table's gradient): desc.nnz stored rows of an
/// nrows × ncols matrix, stored row k at row index rows[k] (of desc.index) with its ncols values
/// vals[k * ncols + c], c < ncols (a contiguous row-major nnz × ncols block of desc.dtype). The
/// same descriptor as COO's, read so: ncols is the row width, nnz the count of stored rows.
/// A row index stored more than once stands for the sum of its rows, summed in storage order as
/// a COO matrix's duplicates are. desc.canonical promises rows strictly increasing.
struct RowSparseView {
  const void* rows = nullptr;
  const void* vals = nullptr;
  CooDesc desc;
  Memory memory = Memory::device;
};

/// Throws InvalidArgument unless desc is valid, nnz * ncols fits int64, the arrays are non-null
/// when there are values, and device arrays are aligned to their element size.
void check_view(const RowSparseView& v, const char* what);

/// A COO matrix that owns its three arrays.
template <class Buffer>
class BasicCoo {
 public:
  BasicCoo() = default;
  /// Allocates arrays for desc.nnz entries (contents uninitialized).
  explicit BasicCoo(const CooDesc& desc, cudaStream_t stream = nullptr)
      : desc_((desc.validate(), desc)),
        rows_(bytes(desc.nnz, index_size(desc.index)), stream),
        cols_(bytes(desc.nnz, index_size(desc.index)), stream),
        vals_(bytes(desc.nnz, dtype_size(desc.dtype)), stream) {}

  /// Takes over three arrays holding desc.nnz entries (the caller vouches for their sizes).
  BasicCoo(const CooDesc& desc, Buffer rows, Buffer cols, Buffer vals)
      : desc_(desc), rows_(std::move(rows)), cols_(std::move(cols)), vals_(std::move(vals)) {}

  const CooDesc& desc() const noexcept { return desc_; }
  std::int64_t nnz() const noexcept { return desc_.nnz; }
  /// Marks the entries canonical (or not); the caller vouches for it.
  void set_canonical(bool c) noexcept { desc_.canonical = c; }
  /// Shrinks the entry count (after an operation knows its exact output size); the arrays keep
  /// their size. Throws InvalidArgument unless 0 <= nnz <= nnz().
  void set_nnz(std::int64_t nnz) {
    EWISE_EXPECTS(nnz >= 0 && nnz <= desc_.nnz, "set_nnz can only shrink the entry count: ", nnz,
                  " is not in [0, ", desc_.nnz, "]");
    desc_.nnz = nnz;
  }

  /// Frees the arrays on `stream` (see DeviceBuffer::set_stream; nothing to do on the host).
  void set_stream(cudaStream_t stream) noexcept {
    rows_.set_stream(stream);
    cols_.set_stream(stream);
    vals_.set_stream(stream);
  }

  void* rows() noexcept { return rows_.data(); }
  void* cols() noexcept { return cols_.data(); }
  void* vals() noexcept { return vals_.data(); }
  const void* rows() const noexcept { return rows_.data(); }
  const void* cols() const noexcept { return cols_.data(); }
  const void* vals() const noexcept { return vals_.data(); }

  /// The three arrays, moved out; the matrix is left empty (for a result that keeps some of
  /// them: a compressed matrix takes the column indices and values of a COO one).
  struct Arrays {
    Buffer rows, cols, vals;
  };
  Arrays release() noexcept {
    desc_.nnz = 0;
    return {std::move(rows_), std::move(cols_), std::move(vals_)};
  }

  MutableCooView view() noexcept { return {rows(), cols(), vals(), desc_, Buffer::memory}; }
  CooView view() const noexcept { return {rows(), cols(), vals(), desc_, Buffer::memory}; }
  operator CooView() const noexcept { return view(); }  // NOLINT

 private:
  static std::size_t bytes(std::int64_t n, std::size_t elem) {
    return static_cast<std::size_t>(n) * elem;
  }
  CooDesc desc_;
  Buffer rows_, cols_, vals_;
};

using DeviceCoo = BasicCoo<DeviceBuffer>;
using HostCoo = BasicCoo<HostBuffer>;

/// A row-sparse matrix that owns its arrays: desc.nnz row indices and a desc.nnz × desc.ncols
/// row-major block of values (RowSparseView's layout).
template <class Buffer>
class BasicRowSparse {
 public:
  BasicRowSparse() = default;
  /// Allocates the arrays for desc.nnz stored rows (contents uninitialized).
  explicit BasicRowSparse(const CooDesc& desc, cudaStream_t stream = nullptr)
      : desc_((desc.validate(), desc)),
        rows_(static_cast<std::size_t>(desc.nnz) * index_size(desc.index), stream),
        vals_(static_cast<std::size_t>(desc.nnz) * static_cast<std::size_t>(desc.ncols) *
                  dtype_size(desc.dtype),
              stream) {}

  const CooDesc& desc() const noexcept { return desc_; }
  std::int64_t nnz() const noexcept { return desc_.nnz; }
  void* rows() noexcept { return rows_.data(); }
  void* vals() noexcept { return vals_.data(); }
  const void* rows() const noexcept { return rows_.data(); }
  const void* vals() const noexcept { return vals_.data(); }

  RowSparseView view() const noexcept { return {rows(), vals(), desc_, Buffer::memory}; }
  operator RowSparseView() const noexcept { return view(); }  // NOLINT

  /// The two arrays, moved out; the matrix is left empty (a COO result keeps the value block).
  struct Arrays {
    Buffer rows, vals;
  };
  Arrays release() noexcept {
    desc_.nnz = 0;
    return {std::move(rows_), std::move(vals_)};
  }

 private:
  CooDesc desc_;
  Buffer rows_, vals_;
};

using DeviceRowSparse = BasicRowSparse<DeviceBuffer>;
using HostRowSparse = BasicRowSparse<HostBuffer>;

/// Copies a COO view to a new host matrix (synchronizes `stream` for device views).
HostCoo to_host(const CooView& v, cudaStream_t stream = nullptr);
/// Copies a COO view to a new device matrix on `stream`.
DeviceCoo to_device(const CooView& v, cudaStream_t stream = nullptr);

}  // namespace ewise
