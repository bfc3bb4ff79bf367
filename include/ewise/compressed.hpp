// ewise/compressed.hpp — sparse matrices in compressed form, CSR and CSC: views and owning
// matrices. Operations on them are in ewise/sparse.hpp, beside COO's.
//
// A CSR matrix of shape nrows × ncols stores its nnz entries row after row: offsets (nrows + 1
// of them) and the entries' column indices and values; row r's entries are k in
// [offsets[r], offsets[r + 1]), entry k being (r, indices[k], vals[k]). CSC is the same with
// the roles of rows and columns exchanged (ncols + 1 offsets, row indices): the CSR form of the
// transpose. The major axis is the compressed one (rows for CSR), the minor the other.
// Offsets and indices are of one index type (as SciPy and PyTorch keep them): int32 or int64.
// The descriptor is COO's (ewise/coo.hpp): the matrix's shape, nnz, index type, value dtype,
// and `canonical`, the promise that each major slice's indices are strictly increasing (no
// duplicates: SciPy's has_canonical_format, PyTorch's CSR invariant). Entries are grouped by
// major index by construction, so a canonical CSR matrix is a canonical COO matrix once its
// row indices are spelled out: nothing needs sorting. ewise's operations return canonical
// matrices.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstdint>
#include <utility>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"

namespace ewise {

enum class SparseFormat : std::uint8_t { csr, csc };
const char* format_name(SparseFormat f);  ///< "CSR", "CSC"

/// Read-only view of a CSR or CSC matrix.
struct CompressedView {
  const void* offsets = nullptr;  ///< major_extent() + 1 of desc.index
  const void* indices = nullptr;  ///< desc.nnz minor indices of desc.index
  const void* vals = nullptr;     ///< desc.nnz values of desc.dtype
  CooDesc desc;
  SparseFormat format = SparseFormat::csr;
  Memory memory = Memory::device;

  std::int64_t major_extent() const noexcept {
    return format == SparseFormat::csr ? desc.nrows : desc.ncols;
  }
  std::int64_t minor_extent() const noexcept {
    return format == SparseFormat::csr ? desc.ncols : desc.nrows;
  }
};

/// Throws InvalidArgument unless desc is valid, nnz fits the index type (int32 offsets hold up
/// to 2^31 - 1 entries), the arrays are non-null (offsets always; the others when nnz > 0) and
/// device arrays are aligned to their element size. The offsets' values are checked by the
/// operations (validate_indices): offsets[0] = 0, never decreasing, offsets[major] = nnz.
void check_view(const CompressedView& v, const char* what);

/// A CSR or CSC matrix that owns its three arrays.
template <class Buffer>
class BasicCompressed {
 public:
  BasicCompressed() = default;
  /// Takes over three arrays holding a matrix of `desc` in `format` (the caller vouches for
  /// their sizes: major + 1 offsets, desc.nnz indices and values).
  BasicCompressed(const CooDesc& desc, SparseFormat format, Buffer offsets, Buffer indices,
                  Buffer vals)
      : desc_(desc),
        format_(format),
        offsets_(std::move(offsets)),
        indices_(std::move(indices)),
        vals_(std::move(vals)) {}

  const CooDesc& desc() const noexcept { return desc_; }
  SparseFormat format() const noexcept { return format_; }
  std::int64_t nnz() const noexcept { return desc_.nnz; }

  /// Frees the arrays on `stream` (see DeviceBuffer::set_stream; nothing to do on the host).
  void set_stream(cudaStream_t stream) noexcept {
    offsets_.set_stream(stream);
    indices_.set_stream(stream);
    vals_.set_stream(stream);
  }

  const void* offsets() const noexcept { return offsets_.data(); }
  const void* indices() const noexcept { return indices_.data(); }
  const void* vals() const noexcept { return vals_.data(); }
  void* vals() noexcept { return vals_.data(); }

  CompressedView view() const noexcept {
    return {offsets(), indices(), vals(), desc_, format_, Buffer::memory};
  }
  operator CompressedView() const noexcept { return view(); }  // NOLINT

 private:
  CooDesc desc_;
  SparseFormat format_ = SparseFormat::csr;
  Buffer offsets_, indices_, vals_;
};

using DeviceCompressed = BasicCompressed<DeviceBuffer>;
using HostCompressed = BasicCompressed<HostBuffer>;

}  // namespace ewise
