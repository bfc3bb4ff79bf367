// sparse/status.cuh — the index checks of the GPU pipelines and the small device block they
// and the pipelines' totals are read back through, once per synchronization.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "keys.cuh"

namespace ewise::sparse_detail {

/// The index check of one matrix, callable per entry from any kernel that reads the entries
/// anyway: entry i out of range → words[0] = min(i); for a matrix marked canonical, entry i not
/// strictly after entry i - 1 → words[1] = min(i). A null `words` checks nothing.
struct EntryCheck {
  IndexArray rows, cols;
  std::int64_t nrows = 0, ncols = 0;
  bool canonical = false;
  unsigned long long* words = nullptr;

  __device__ void operator()(std::int64_t i) const {
    if (words == nullptr) return;
    const std::int64_t r = rows[i], c = cols[i];
    if (r < 0 || r >= nrows || c < 0 || c >= ncols) {
      atomicMin(words, static_cast<unsigned long long>(i));
    } else if (canonical && i > 0) {
      const std::int64_t pr = rows[i - 1], pc = cols[i - 1];
      if (pr > r || (pr == r && pc >= c)) atomicMin(words + 1, static_cast<unsigned long long>(i));
    }
  }
};

/// Index k of a device array of index type t, read back (synchronizes stream): for the
/// messages of a failed index check.
std::int64_t device_index(const void* p, IndexType t, std::int64_t k, cudaStream_t stream);

/// A small device block: the results of up to two index checks and a few totals, all read
/// back by one read(), which also throws when a check failed. Pipelines launch their checks
/// first and read the status at their first synchronization, before anything is written at an
/// index-derived address; so bad input throws with nothing written.
class Status {
 public:
  static constexpr int kChecks = 2, kTotals = 4;

  explicit Status(cudaStream_t stream);
  /// Returns m's check for a kernel to run on every entry and registers m for read(); when not
  /// enabled (or m is empty), a check that does nothing, and m is not registered.
  EntryCheck fused(const CooView& m, const char* what, bool enabled);
  /// Registers m and launches the check of every entry (unless !enabled).
  void check(const CooView& m, const char* what, bool enabled);
  /// Device slot i (< kTotals) for a total.
  std::int64_t* total_slot(int i) const;
  /// Reads every word back (synchronizes) and throws InvalidArgument for a failed check.
  void read();
  /// Runs the registered checks again over every entry, then read().
  void recheck();
  std::int64_t total(int i) const { return host_[2 * kChecks + i]; }
  /// Device words for the checks of compressed operand i < 2 (kExpandCheckWords, all ones),
  /// read back by read() with the rest but not checked by it; their host copy after read().
  unsigned long long* compressed_slot(int i) const;
  const unsigned long long* compressed_words(int i) const {
    return reinterpret_cast<const unsigned long long*>(host_) + kFirstCompressed +
           i * kExpandCheckWords;
  }

 private:
  EntryCheck check_of(int slot) const;  ///< the check of registered matrix `slot`

  cudaStream_t stream_;
  DeviceBuffer words_;
  static constexpr int kFirstCompressed = 2 * kChecks + kTotals;
  std::int64_t host_[kFirstCompressed + 2 * kExpandCheckWords] = {};
  CooView checked_[kChecks];
  const char* what_[kChecks] = {};
  int nchecked_ = 0;
};

}  // namespace ewise::sparse_detail
