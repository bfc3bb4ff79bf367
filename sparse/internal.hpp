// sparse/internal.hpp — what the sparse sources share: argument checks, role selection, the
// temporary-storage helper and the entry points of the GPU pipelines. Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/ops.hpp"  // EWISE_HD
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::sparse_detail {

// ---- argument checks (checks.cpp), shared by the CPU and GPU backends ----------------------

/// check_view on both; same shape, dtype, index type and memory.
void check_operands(const CooView& a, const CooView& b);

/// A dense operand read at (r, c) as data[r * row_stride + c * col_stride] (elements).
struct DenseOperand {
  const void* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0;
};
/// check_view on both; same dtype and memory; dense broadcasts to a's shape.
DenseOperand check_dense_operand(const CooView& a, const ConstTensorView& dense);

/// Throws unless `inputs` equals `result` (the memory the chosen result type lives in).
void check_result_memory(Memory inputs, Memory result, const char* op);

/// The messages of check_indices: entry k is out of range / not after entry k - 1.
[[noreturn]] void throw_out_of_range(const char* what, const CooDesc& d, std::int64_t k,
                                     std::int64_t row, std::int64_t col);
[[noreturn]] void throw_not_increasing(const char* what, std::int64_t k, std::int64_t prev_row,
                                       std::int64_t prev_col, std::int64_t row, std::int64_t col);

/// check_indices on a host view.
void check_indices_host(const CooView& m, const char* what);

/// Row and column of entry k of a host view.
std::int64_t host_index(const void* p, IndexType t, std::int64_t k);

/// Throws unless a is marked canonical (for coo_to_csr_row_offsets).
void check_canonical_for_csr(const CooView& a);
/// The dtype of CSR row offsets for a (see sparse.hpp).
DType csr_offsets_dtype(const CooDesc& a);

/// dense_to_coo's checks: rank 2, shape suits `index`. Returns the COO descriptor (nnz 0).
CooDesc check_dense_to_coo(const ConstTensorView& dense, IndexType index);

// ---- algorithm selection ------------------------------------------------------------------

/// Under `automatic`, sort_search runs when an operand is not canonical and the one it sorts has
/// at most this many entries (its sorted keys stay in cache; when both are canonical merge's
/// fewer steps win: 16384², 1e-4, H200: merge 0.040 ms, sort_search 0.055 ms) ...
inline constexpr std::int64_t kAutoSortSearchMaxSorted = std::int64_t{1} << 16;
/// ... or the searching operand has at most 1/kAutoSortSearchRatio of the searched one's entries.
inline constexpr std::int64_t kAutoSortSearchRatio = 32;
/// Under `automatic`, bitmap_merge runs (for inputs not both canonical) when its bitmaps take at
/// most this many bytes per input entry.
inline constexpr std::int64_t kAutoBitmapBytesPerEntry = 32;
/// ... and the bitmap fits in the L2 of an H100 (50 MB) or H200 (60 MB). H200, unsorted f32:
/// 16384² (32 MiB bitmap) bitmap_merge 2.10 ms vs merge 2.77 ms at 1e-1; 32768² (128 MiB)
/// bitmap_merge 15.1 ms vs merge 10.4 ms at 1e-1, 1.38 vs 1.11 ms at 1e-2 (bench, e51fcc1).
inline constexpr std::int64_t kAutoBitmapMaxBytes = std::int64_t{48} << 20;

/// Bytes of bitmap_merge's bitmap for a shape.
inline std::int64_t bitmap_bytes(const CooDesc& d) {
  const std::int64_t cells = d.nrows * d.ncols;
  return 4 * (cells / 32 + (cells % 32 != 0 ? 1 : 0));
}

/// The operand sort_search sorts (or searches in place when canonical): true = a.
/// Both canonical: the larger; one canonical: that one; neither: the smaller.
bool sort_search_sorts_a(const CooDesc& a, const CooDesc& b);

/// select_coo_algorithm on descriptors (no view checks).
CooAlgorithm resolve_algorithm(const CooDesc& a, const CooDesc& b, CooAlgorithm requested);

/// A descriptor of the result of an operation on `like`, with `nnz` entries.
inline CooDesc result_desc(const CooDesc& like, std::int64_t nnz) {
  return {like.nrows, like.ncols, nnz, like.index, like.dtype, true};
}

// ---- device-side data references (plain structs the kernels take by value) ----------------

/// A device array of integers whose width is known at run time: Narrow or Wide elements,
/// read (and written) as Wide. The branch on `wide` is uniform across a kernel.
template <class Narrow, class Wide>
struct VarArray {
  const void* p = nullptr;
  bool wide = false;

  EWISE_HD Wide operator[](std::int64_t k) const {
    return wide ? static_cast<const Wide*>(p)[k] : static_cast<Wide>(static_cast<const Narrow*>(p)[k]);
  }
  /// Only for arrays made from writable memory.
  EWISE_HD void set(std::int64_t k, Wide v) const {
    if (wide) const_cast<Wide*>(static_cast<const Wide*>(p))[k] = v;
    else const_cast<Narrow*>(static_cast<const Narrow*>(p))[k] = static_cast<Narrow>(v);
  }
};
using IndexArray = VarArray<std::int32_t, std::int64_t>;  ///< row or column indices
using WordArray = VarArray<std::uint32_t, std::uint64_t>;  ///< sort keys and permutations

inline IndexArray index_array(const void* p, IndexType t) { return {p, t == IndexType::i64}; }

/// Absolute indices of a sequence of entries: stored (sorted keys) or computed from indices.
struct KeySeq {
  WordArray keys;  ///< when keys.p is null, key(k) = rows[k] * ncols + cols[k]
  IndexArray rows, cols;
  std::uint64_t ncols = 0;

  EWISE_HD std::uint64_t operator[](std::int64_t k) const {
    return keys.p ? keys[k]
                  : static_cast<std::uint64_t>(rows[k]) * ncols + static_cast<std::uint64_t>(cols[k]);
  }
};

/// Keys of a matrix's entries in storage order, computed from its indices.
inline KeySeq implicit_keys(const CooView& m) {
  return {{}, index_array(m.rows, m.desc.index), index_array(m.cols, m.desc.index),
          static_cast<std::uint64_t>(m.desc.ncols)};
}

/// Key width for a shape: 32 bits when every absolute index fits, else 64.
inline bool wide_keys(const CooDesc& d) {
  return d.nrows * d.ncols > (std::int64_t{1} << 32);
}
/// Bits a radix sort must look at: enough for nrows * ncols - 1 (at least 1).
int key_bits(const CooDesc& d);

// ---- temporary storage ---------------------------------------------------------------------

/// One stream-ordered device allocation carved into aligned pieces (CUB's alias_temporaries):
/// piece i holds bytes[i] bytes and starts on a 256-byte boundary. Freed on `stream` when the
/// Workspace dies, also during unwinding.
class Workspace {
 public:
  static constexpr std::size_t kAlign = 256;

  Workspace() = default;
  Workspace(std::initializer_list<std::size_t> bytes, cudaStream_t stream);

  template <class T = void>
  T* get(std::size_t i) const {
    return reinterpret_cast<T*>(static_cast<std::byte*>(const_cast<void*>(buf_.data())) +
                                offsets_.at(i));
  }
  std::size_t bytes(std::size_t i) const { return sizes_.at(i); }

 private:
  DeviceBuffer buf_;
  std::vector<std::size_t> offsets_, sizes_;
};

/// Copies `n` int64 words from the device to the host and waits for them.
std::vector<std::int64_t> read_words(const std::int64_t* device_words, std::size_t n,
                                     cudaStream_t stream);

// ---- CUB wrappers (cub.cu: every CUB instantiation lives there) ----------------------------

std::size_t exclusive_sum_temp_bytes(std::int64_t n);
/// out[i] = in[0] + ... + in[i-1] over n int64 values.
void exclusive_sum(void* temp, std::size_t temp_bytes, const std::int64_t* in, std::int64_t* out,
                   std::int64_t n, cudaStream_t stream);

/// Key/value buffer pairs of a radix sort: current[] holds the input; after sort_pairs, the
/// element `selector` of each pair holds the sorted data.
struct SortBuffers {
  void* keys[2] = {nullptr, nullptr};
  void* vals[2] = {nullptr, nullptr};
  int selector = 0;
};
std::size_t sort_pairs_temp_bytes(std::int64_t n, bool wide_keys, std::size_t val_bytes, int end_bit);
/// Stable radix sort of (key, value) pairs by the low `end_bit` bits of the keys: 32- or 64-bit
/// (wide) keys, values of 2, 4 or 8 bytes (moved as bits).
void sort_pairs(void* temp, std::size_t temp_bytes, SortBuffers& buf, std::int64_t n,
                bool wide_keys, std::size_t val_bytes, int end_bit, cudaStream_t stream);

// ---- GPU pipelines (device views; arguments already checked) -------------------------------

DeviceCoo device_multiply(const CooView& a, const CooView& b, CooAlgorithm algorithm,
                          const SparseOptions& options, cudaStream_t stream);
DeviceCoo device_multiply_dense(const CooView& a, const DenseOperand& dense,
                                const SparseOptions& options, cudaStream_t stream);
DeviceCoo device_coalesce(const CooView& a, const SparseOptions& options, cudaStream_t stream);
DeviceCoo device_dense_to_coo(const ConstTensorView& dense, const CooDesc& desc,
                              cudaStream_t stream);
DeviceTensor device_coo_to_dense(const CooView& a, const SparseOptions& options,
                                 cudaStream_t stream);
DeviceTensor device_csr_row_offsets(const CooView& a, const SparseOptions& options,
                                    cudaStream_t stream);
void device_check_indices(const CooView& m, const char* what, cudaStream_t stream);

}  // namespace ewise::sparse_detail
