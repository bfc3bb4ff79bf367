// ewise/io.hpp — NumPy .npy and Matrix Market .mtx files.
//
// Reading
//   HostTensor t = ewise::io::read_npy("x.npy");   // any version 1.0-3.0, C or Fortran order
//   HostCoo    m = ewise::io::read_mtx("A.mtx");   // coordinate real/integer/pattern
// Writing (atomically: the data goes to a temporary file in the output's directory, which is
// renamed over the output only once everything was written; on any failure the temporary file
// is removed and an existing output is left untouched)
//   ewise::io::write_npy("y.npy", view);           // host or device view, any strides
//   ewise::io::write_mtx("C.mtx", coo);            // host or device COO view
//
// Errors: every problem with a file (cannot be opened, malformed or truncated, wrong header,
// unsupported type, out-of-range or non-numeric entries, too many or too few entries, cannot be
// written) throws ewise::InvalidArgument with a one-line message that starts with the file name:
//   "ewise: A.mtx:7: column index 0 out of range 1..5"   (text files: name:line)
//   "ewise: x.npy: data is truncated: ..."               (binary files: name)
// The readers never trust a size a header declares: it is checked against the bytes actually
// present before anything is allocated, so no input makes them allocate more than a small
// multiple of the file's size, read out of bounds or crash. parse_npy / parse_mtx read from
// memory with the same code (for tests and fuzzing).
//
// .npy (NumPy format 1.0, 2.0 and 3.0; little-endian data)
//   descr   dtype   notes
//   '<f2'   f16
//   '<V2'   bf16    NumPy has no bfloat16 type code: np.save of an ml_dtypes.bfloat16 array
//   '|V2'   bf16    writes the 2-byte raw type 'V2'; ewise reads it as bf16 and writes bf16 as
//                   '<V2' (load it in Python with np.load(f).view(ml_dtypes.bfloat16)).
//   '<f4'   f32
//   '<f8'   f64
//   '<i4'   i32
//   '<i8'   i64
//   '|b1'   bool    each byte 0 or 1 (any other byte is an error naming the element)
//   '|i1'   i8
//   '|u1'   u8
//   '<i2'   i16
//   '<u2'   u16
//   '<u4'   u32
//   '<u8'   u64
//   Big-endian ('>') data, structured descrs and any other type are rejected with a message
//   naming the descr. '|' (no byte order) is accepted only where NumPy writes it: for 'V2' and
//   the 1-byte types (which are written with it).
//   Fortran-order files are converted to the C order of the returned (contiguous) tensor.
//   The header must hold exactly the keys 'descr', 'fortran_order' and 'shape'; rank <= 8; the
//   data must be exactly shape-product * itemsize bytes (trailing bytes are an error).
//   Writing produces C order, version 1.0 (2.0 only when a header would exceed 65535 bytes,
//   which no rank <= 8 shape does), header padded so that the data starts at a multiple of 64,
//   exactly as np.save does; NpyWriteOptions can force a version or Fortran order.
//
// .mtx (Matrix Market exchange format, "matrix coordinate" only)
//   Fields real, integer and pattern; symmetry general, symmetric and skew-symmetric (complex,
//   hermitian and the dense "array" format are rejected). Keywords are case-insensitive.
//   Indices are 1-based. Lines starting with '%' and blank lines are skipped anywhere after the
//   banner; CRLF line ends are accepted. Entries have exactly 2 (pattern) or 3 fields.
//   The result:
//     * symmetric: each off-diagonal entry (i,j) also gives (j,i) (an entry on the diagonal
//       appears once); skew-symmetric: (j,i) gets the negated value and a diagonal entry is an
//       error (pattern skew-symmetric is an error). Entries may be given in either triangle.
//       Symmetric files need a square shape.
//     * values: real -> f64; integer -> i64 (exact, every value must fit int64); pattern -> f64
//       with every value 1.0.
//     * indices: i32 when nrows and ncols are at most 2^31, else i64.
//     * entries sorted by (row, column). Duplicate coordinates are kept as separate entries
//       (ewise operations sum them); the matrix is marked canonical when there are none.
//   Writing produces "%%MatrixMarket matrix coordinate real general" (f16, bf16, f32, f64; each
//   value printed as the shortest decimal that reads back as the same double) or "... integer
//   general" (i32, i64), one line per stored entry in storage order, 1-based indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::io {

// ---- .npy ----------------------------------------------------------------------------------

/// Reads a .npy file into a new contiguous host tensor. Throws InvalidArgument (see above).
HostTensor read_npy(const std::string& path);

/// The same from `size` bytes in memory; `name` stands for the file name in error messages.
HostTensor parse_npy(const void* data, std::size_t size, const std::string& name = "<memory>");

struct NpyWriteOptions {
  int version = 0;             ///< 0: the lowest that can hold the header (1.0); else 1, 2 or 3
  bool fortran_order = false;  ///< store the data in Fortran (column-major) order
};

/// Writes a tensor (host or device view, any strides; device views are copied on `stream`,
/// which is synchronized) to a .npy file, atomically. Throws InvalidArgument when the view is
/// invalid or the file cannot be written, CudaError when copying from the device fails.
void write_npy(const std::string& path, const ConstTensorView& tensor,
               const NpyWriteOptions& options = {}, cudaStream_t stream = nullptr);

/// The .npy descr ewise writes for a dtype: "<f2", "<V2" (bf16), "<f4", "<f8", "<i4", "<i8",
/// "|b1" (bool), "|i1", "|u1", "<i2", "<u2", "<u4", "<u8".
const char* npy_descr(DType dtype);

// ---- .mtx ----------------------------------------------------------------------------------

struct MtxReadOptions {
  /// Called while entries are parsed with (bytes parsed, total bytes), at most about 100 times
  /// per file and once at the end; for progress displays of large files. May be empty.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

/// Reads a Matrix Market coordinate file into a new host COO matrix (see above for the rules).
HostCoo read_mtx(const std::string& path, const MtxReadOptions& options = {});

/// The same from text in memory; `name` stands for the file name in error messages.
HostCoo parse_mtx(std::string_view text, const std::string& name = "<memory>",
                  const MtxReadOptions& options = {});

/// Writes a COO matrix (host or device view; device views are copied on `stream`, which is
/// synchronized) as a general coordinate Matrix Market file, atomically.
void write_mtx(const std::string& path, const CooView& matrix, cudaStream_t stream = nullptr);

}  // namespace ewise::io
