// sparse/sort.cuh — sorting entries by key: the one radix-sort scratch every sort uses (CUB's
// DeviceRadixSort behind it) and a matrix's entries as a sequence in key order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ewise/coo.hpp"
#include "keys.cuh"
#include "status.cuh"
#include "workspace.hpp"

namespace ewise::sparse_detail {

/// A stable radix sort of n (key, value) pairs by the low `end_bit` bits of the keys (32- or
/// 64-bit keys; values of 2, 4 or 8 bytes, moved as bits): its double buffers and CUB's
/// temporary storage in one allocation, with `extra_bytes` more for the caller. Write the input
/// to keys_in() and vals_in(), sort(), then read keys() and vals().
class SortScratch {
 public:
  SortScratch(std::int64_t n, bool wide_keys, std::size_t val_bytes, int end_bit,
              cudaStream_t stream, std::size_t extra_bytes = 0);

  void* keys_in() const { return ws_.get(kKeys); }
  void* vals_in() const { return ws_.get(kVals); }
  void* extra() const { return ws_.get(kExtra); }
  /// Sorts on the stream given to the constructor.
  void sort();
  const void* keys() const { return ws_.get(kKeys + selector_); }
  const void* vals() const { return ws_.get(kVals + selector_); }
  /// The allocation, for a caller that keeps the sorted data longer than the scratch.
  Workspace release() && { return std::move(ws_); }

 private:
  static constexpr std::size_t kKeys = 0, kVals = 2, kTemp = 4, kExtra = 5;  // Workspace pieces

  Workspace ws_;
  std::int64_t n_;
  bool wide_keys_;
  std::size_t val_bytes_;
  int end_bit_;
  cudaStream_t stream_;
  int selector_ = 0;  ///< which of the double buffers holds the sorted data
};

/// A matrix's entries as a sequence: position j holds the entry whose key is keys[j] and whose
/// value is vals[storage(j)]. Two layouts:
///  * the matrix's own arrays (storage_order): rows, cols and vals by storage index, and
///    storage(j) = perm[j] when perm is set (the matched entries of sort_search), else j;
///  * a sorted copy (sort_entries): the values sorted with the keys (storage(j) = j), rows and
///    cols null, an entry's row and column from its key (coords), so that a pass over the copy
///    reads it in order instead of gathering each entry's indices and value from the matrix.
struct EntrySeq {
  KeySeq keys;
  WordArray perm;
  std::int64_t n = 0;
  bool unique = true;  ///< no two positions share a key
  bool sorted = true;  ///< keys increase; false only for storage_keys of a non-canonical matrix
  IndexArray rows, cols;  ///< the matrix's indices by storage index, or null (from the keys)
  const void* vals = nullptr;

  EWISE_HD std::int64_t storage(std::int64_t j) const {
    return perm.p ? static_cast<std::int64_t>(perm[j]) : j;
  }
  /// Row and column of position j.
  __device__ void coords(std::int64_t j, std::int64_t& row, std::int64_t& col) const {
    if (rows.p) {
      const std::int64_t i = storage(j);
      row = rows[i];
      col = cols[i];
      return;
    }
    std::uint64_t r, c;
    if (keys.keys.wide) split_key(static_cast<const std::uint64_t*>(keys.keys.p)[j], keys.ncols, &r, &c);
    else split_key(static_cast<const std::uint32_t*>(keys.keys.p)[j], keys.ncols, &r, &c);
    row = static_cast<std::int64_t>(r);
    col = static_cast<std::int64_t>(c);
  }
};

/// Calls f(W{}) with W the unsigned integer as wide as a value of dtype: values copied or
/// sorted as bits need no arithmetic type.
template <class F>
void with_word(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    default: f(std::uint64_t{}); return;
  }
}

/// m's entries in storage order, keys computed from its indices (sorted and unique when m is
/// canonical).
EntrySeq storage_order(const CooView& m);

/// An EntrySeq with the buffers it points into.
struct SortedSeq {
  Workspace ws;
  EntrySeq seq;
};

/// Canonical m: storage_order(m) (`check` is not run). Otherwise a sorted copy: the keys and
/// values radix-sorted (stable, so duplicates keep their storage order) over key_bits(m.desc)
/// bits; the pass that computes the keys runs `check`.
SortedSeq sort_entries(const CooView& m, const EntryCheck& check, cudaStream_t stream);
/// m's keys stored in storage order (unsorted unless canonical); for linear_search.
SortedSeq storage_keys(const CooView& m, cudaStream_t stream);

}  // namespace ewise::sparse_detail
