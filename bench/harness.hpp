// bench/harness.hpp — the benchmark harness of ewise_bench: timing with CUDA events, rotation of
// input sets past the L2 cache, the same-run references (device-to-device copy and
// cub::DeviceTransform same-shape add), result records and their output (table, JSON, CSV).
//
// Timing method (every case, every reference):
//   * warm-up: 3 launches, the last one timed to estimate one launch's time t (re-estimated
//     over 5 more launches when under 100 us);
//   * a sample is one event pair around `batch` back-to-back launches, batch = ceil(100 us / t)
//     (1 for anything slower than 100 us), so event resolution never dominates;
//   * the reported time is the median over `runs` samples (>= 20) of sample time / batch.
//   * Two call patterns (issue 13): back to back (the samples above; their host wall time per
//     call is the host clock around all runs x batch calls, one synchronization at the end,
//     divided by the calls), and synchronizing: one call, cudaStreamSynchronize, next call, the
//     way a timing loop, a .item() or a host read calls it; its host wall time and GPU time (an
//     event pair around the call) per call are medians over `runs` calls (fewer when runs calls
//     would take over kSyncBudgetMs: at least kMinSyncRuns).
//   * When one set of operands (inputs and output) is smaller than 3x the L2 cache, the case
//     allocates several sets and launch i uses set i % sets, so that every set has been evicted
//     from L2 before it is used again (sets = ceil(3 * L2 / footprint), capped per suite).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/device.hpp"
#include "ewise/tensor.hpp"
#include "ewise/verify.hpp"

namespace ewise::bench {

struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;  ///< back to back, GPU (events), per call
  int runs = 0;   ///< timed samples
  int batch = 0;  ///< launches per sample
  int sets = 1;   ///< operand sets rotated through
  double wall_ms = 0;       ///< back to back, host wall time per call (all samples' calls)
  double sync_gpu_ms = 0;   ///< synchronizing pattern: GPU time per call (median)
  double sync_wall_ms = 0;  ///< synchronizing pattern: host wall time per call (median)
  int sync_runs = 0;        ///< calls timed in the synchronizing pattern (0: not measured)
};

/// The synchronizing pattern times `runs` calls unless that would take longer than this...
inline constexpr double kSyncBudgetMs = 1000;
/// ...and then no fewer than this.
inline constexpr int kMinSyncRuns = 5;

/// One named parameter of a record, its value already rendered as JSON.
struct Param {
  std::string key, json;
};
Param param(const std::string& key, double v);
Param param(const std::string& key, std::int64_t v);
Param param(const std::string& key, int v);
Param param(const std::string& key, const std::string& v);
Param param(const std::string& key, const char* v);
Param param(const std::string& key, bool v);
/// A shape as a JSON list of extents.
Param param(const std::string& key, const Dims& v);

/// One row of the results: a timed case, or a refusal / failure.
struct Record {
  std::string suite;        ///< "paper", "schedules", "patterns", "sparse", "crossover"
  std::string name;         ///< case name within the suite, e.g. "row_vector"
  std::string impl;         ///< kernel or algorithm, e.g. "sliding", "sort_search"
  std::string dtype;
  std::string status = "ok";  ///< "ok", "refused" (the library rejected it), "failed", or
                              ///< "summary" (not timed: a conclusion drawn from other rows)
  std::string note;         ///< refusal or failure message, or what automatic selected
  std::string verified;     ///< how the result was checked before timing
  std::vector<Param> params;
  double bytes = 0;         ///< bytes moved: each input read once, output written once
  Stats stats;
  double gbps = 0;          ///< bytes / median time
  double copy_gbps = 0;     ///< device-to-device copy of the same bytes, this run
  double cub_gbps = 0;      ///< cub::DeviceTransform same-shape add of the output's size and
                            ///< dtype, this run (0 where not applicable: sparse cases)
  double copy_fraction = 0; ///< gbps / copy_gbps
  double cub_fraction = 0;  ///< gbps / cub_gbps
};

struct Options {
  bool quick = false;
  int runs = 25;
  std::uint64_t seed = 0;
  std::string json_path, csv_path;
  /// Where the structures and union suites write their inputs as .npy for bench/peers.py ("":
  /// nowhere).
  std::string inputs_dir;
  /// Run only the cases whose label contains this text ("": all), e.g. one case under ncu.
  std::string case_filter;
};

/// `sets` back-to-back copies of a buffer of `elems` elements, each starting on a 256-byte
/// boundary; optionally filled with the harness's random values (`gen`: no zeros by default).
class Arena {
 public:
  Arena(DType dtype, std::int64_t elems, int sets, bool fill, std::uint64_t seed,
        cudaStream_t stream, const verify::GenOptions& gen = {});
  int sets() const noexcept { return sets_; }
  /// Start of set i % sets.
  void* at(std::int64_t i) const noexcept {
    return base_ + (i % sets_) * stride_ * static_cast<std::int64_t>(elem_);
  }

 private:
  DeviceTensor buf_;
  std::byte* base_ = nullptr;
  std::size_t elem_ = 0;
  std::int64_t stride_ = 0;  ///< elements between sets
  int sets_ = 1;
};

/// A unit of work of a suite: one label for progress, any number of records.
struct Case {
  std::string label;
  std::function<void()> run;
};

class Bench {
 public:
  explicit Bench(const Options& options);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  const Options& options() const noexcept { return options_; }
  bool quick() const noexcept { return options_.quick; }
  cudaStream_t stream() const noexcept { return stream_; }
  const DeviceInfo& device() const noexcept { return info_; }
  /// A fresh seed for the next case (derived from the run's seed, printed at start).
  std::uint64_t next_seed();

  /// Operand sets to rotate through so that each is out of L2 before reuse (see file comment).
  int sets_for(std::size_t footprint_bytes, int cap) const;

  /// Times op(i) for launch counter i = 0, 1, 2, ... (the op picks its set as i % sets), back
  /// to back and, when `sync_pattern`, synchronizing after each call (see the file comment).
  Stats time(const std::function<void(std::int64_t)>& op, int sets, bool sync_pattern = true);

  /// Bandwidth (bytes/s) of a device-to-device cudaMemcpyAsync moving `bytes_moved` bytes
  /// (bytes_moved / 2 read and as many written), measured once per size in this run.
  double copy_bandwidth(double bytes_moved);
  /// Bandwidth of cub::DeviceTransform::Transform adding two contiguous `numel`-element
  /// vectors of `dtype` (3 * numel elements moved), verified once, measured once per size.
  double cub_add_bandwidth(DType dtype, std::int64_t numel);

  /// Fills in bandwidth and the two fractions (when status is "ok"; the cub reference only when
  /// cub_numel > 0), prints the row, keeps it.
  void add(Record r, std::int64_t cub_numel);
  /// Keeps a case that was not timed: `status` "refused" or "failed", `why` as its note.
  void add_untimed(Record r, const char* status, const char* why);
  /// Runs the cases of one suite with progress lines.
  void run_suite(const std::string& suite, const std::vector<Case>& cases);

  int failures() const noexcept { return failures_; }
  /// Prints device, clocks, driver, commit (EWISE_COMMIT, else the configure-time git commit),
  /// seed and mode.
  void print_header() const;
  /// Writes the records to --json / --csv (when given), with the header's facts as "meta".
  void write_outputs() const;

 private:
  double theoretical_gbps() const;

  Options options_;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  std::uint64_t seed_state_;
  std::map<double, double> copy_cache_;
  std::map<std::pair<int, std::int64_t>, double> cub_cache_;
  std::vector<Record> records_;
  std::vector<std::string> suites_;
  int failures_ = 0;
  double start_s_;
  int sm_clock_khz_ = 0;
  std::string smi_;      ///< nvidia-smi's current clocks line, or why there is none
  std::string started_;  ///< UTC start time, ISO 8601
};

/// Seconds since an arbitrary epoch (steady clock).
double now_s();

}  // namespace ewise::bench
