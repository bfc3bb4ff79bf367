// cli/cli.hpp — pieces shared by the commands of the `ewise` tool.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"

namespace ewise::cli {

/// A wrong command line (exit status 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The parsed command line of one command.
struct Args {
  std::vector<std::string> positional;
  std::string output;                     ///< -o / --output
  std::optional<std::string> kernel;      ///< --kernel
  std::optional<std::string> algorithm;   ///< --algorithm
  std::optional<std::string> device;      ///< --device cpu|gpu
  std::optional<std::string> promotion;   ///< --promotion numpy|torch
  std::optional<std::string> shape;       ///< --shape RxC (compare)
  std::optional<std::string> dtype;       ///< --dtype (compare)
  std::optional<std::string> op;          ///< --op (compare)
  std::optional<std::string> density;     ///< --density D1,D2,... (compare)
  std::optional<std::string> json;        ///< --json FILE (compare)
  std::optional<std::string> plot;        ///< --plot FILE.png (compare)
  bool verify = false;                    ///< --verify
  bool quiet = false;                     ///< --quiet
  bool progress = false;                  ///< --progress (also on when stderr is a terminal)
};

/// Throws UsageError("usage: " + usage) unless there are n positional arguments.
void expect_positional(const Args& a, std::size_t n, const std::string& usage);

bool ends_with(const std::string& s, const std::string& suffix);

/// e's message without the "ewise: " every message starts with (error.hpp), to be quoted in
/// another message.
inline std::string message_of(const Error& e) {
  std::string msg = e.what();
  if (msg.rfind("ewise: ", 0) == 0) msg.erase(0, 7);
  return msg;
}

/// Runs f; an InvalidArgument it throws is rethrown with `context` in front of its message.
template <class F>
auto with_context(const std::string& context, F&& f) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(context + ": " + message_of(e), e.file(), e.line());
  }
}

/// Runs f, a parse of a name given on the command line; an InvalidArgument it throws (an
/// unknown name) becomes a UsageError with the same message.
template <class F>
auto parse_name(F&& f) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    throw UsageError(message_of(e));
  }
}

/// The Python scalar an operand spells: True or False, an integer (int64), or a float (a
/// decimal with a point or an exponent, inf, nan); nothing for any other text (a file name).
std::optional<Scalar> parse_scalar(const std::string& s);

/// A number operand (parse_scalar), unless the text names a .npy or .mtx file.
std::optional<Scalar> scalar_operand(const std::string& arg);

/// The sparse operation `name` names (NumPy's name or its alias: multiply, add, subtract,
/// minimum, maximum), or a UsageError ending with `usage`.
BinaryOp parse_sparse_op(const std::string& name, const std::string& usage);

/// --promotion: numpy (the default) or torch; UsageError for another name.
Promotion promotion_of(const Args& a);

/// Where a command runs: on the GPU, or on the CPU reference backend (host views).
struct Backend {
  bool gpu = false;
  std::string fallback_reason;  ///< why the CPU was chosen by default ("" when asked for)
  std::string label() const { return gpu ? "GPU" : "CPU reference"; }
  /// "the GPU", "the CPU reference", or "the CPU reference (no usable GPU: ...)".
  std::string description() const {
    return "the " + label() +
           (fallback_reason.empty() ? "" : " (no usable GPU: " + fallback_reason + ")");
  }
};

/// --device as given, or the GPU when one is usable, else the CPU reference (with the reason
/// in fallback_reason). Throws UsageError for an unknown name, InvalidArgument for --device gpu
/// without a usable GPU.
Backend choose_backend(const std::optional<std::string>& device);

/// Milliseconds with three decimals: "0.013".
std::string ms_text(double ms);

/// Progress display on stderr: "\r"-updated percentages on a terminal, a line per 10% when
/// forced on with --progress elsewhere, nothing otherwise.
class Progress {
 public:
  explicit Progress(const Args& args);
  bool enabled() const noexcept { return enabled_; }
  /// A one-line stage message ("reading A.mtx (12.5 MB)").
  void stage(const std::string& what) const;
  /// A callback for io::MtxReadOptions::progress that shows "what: NN%".
  std::function<void(std::int64_t, std::int64_t)> percent(const std::string& what) const;

 private:
  bool enabled_ = false;
  bool tty_ = false;
};

/// A CUDA stream owned for the lifetime of the object.
class Stream {
 public:
  Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT

 private:
  cudaStream_t s_ = nullptr;
};

/// Median time in milliseconds of `reps` runs of f (after one warm-up run): CUDA events on
/// `stream` for the GPU, a steady clock for the CPU.
double time_ms(const Backend& b, cudaStream_t stream, int reps, const std::function<void()>& f);

/// Milliseconds of one run of f (no warm-up), timed like time_ms.
double time_once(const Backend& b, cudaStream_t stream, const std::function<void()>& f);

/// Device-to-device cudaMemcpy bandwidth in GB/s (bytes read + bytes written per second),
/// timed with CUDA events over `reps` copies of `bytes` bytes.
double copy_bandwidth_gbs(std::size_t bytes, int reps, cudaStream_t stream);

/// "12.5 MB", "3.2 GB" (decimal units).
std::string human_bytes(double bytes);

int run_info(const Args& args);
int run_demo(const Args& args);
int run_dense(const Args& args);   // dense.cpp
int run_sparse(const Args& args);  // sparse.cpp
int run_compare(const Args& args);  // compare.cpp

}  // namespace ewise::cli
