#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "ewise/buffer.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "timing.hpp"

namespace ewise::cli {

void expect_positional(const Args& a, std::size_t n, const std::string& usage) {
  if (a.positional.size() != n) throw UsageError("usage: " + usage);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<Scalar> parse_scalar(const std::string& s) {
  if (s == "True" || s == "False") return Scalar::weak_bool(s == "True");
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0') {
    EWISE_EXPECTS(errno != ERANGE, "the integer ", s, " does not fit int64");
    return Scalar::weak_int(i);
  }
  const double f = std::strtod(s.c_str(), &end);
  if (*end == '\0') return Scalar::weak_float(f);
  return std::nullopt;
}

std::optional<Scalar> scalar_operand(const std::string& arg) {
  if (ends_with(arg, ".npy") || ends_with(arg, ".mtx")) return std::nullopt;
  return parse_scalar(arg);
}

Promotion promotion_of(const Args& a) {
  if (!a.promotion) return Promotion::numpy;
  for (Promotion p : {Promotion::numpy, Promotion::torch})
    if (*a.promotion == promotion_name(p)) return p;
  throw UsageError("unknown promotion rule '" + *a.promotion + "' (expected numpy or torch)");
}

BinaryOp parse_sparse_op(const std::string& name, const std::string& usage) {
  const UsageError unknown("unknown sparse operation '" + name +
                           "' (multiply, add, subtract, minimum, maximum, or mul, sub, min, "
                           "max); " + usage);
  BinaryOp op{};
  try {
    op = parse_op(name);
  } catch (const InvalidArgument&) {
    throw unknown;
  }
  if (op != BinaryOp::multiply && op != BinaryOp::add && op != BinaryOp::subtract &&
      op != BinaryOp::minimum && op != BinaryOp::maximum)
    throw unknown;
  return op;
}

Backend choose_backend(const std::optional<std::string>& device) {
  if (device && *device == "cpu") return {false, ""};
  if (device && *device != "gpu")
    throw UsageError("unknown device '" + *device + "' (expected cpu or gpu)");
  const std::string reason = gpu_unavailable_reason();
  if (reason.empty()) return {true, ""};
  EWISE_EXPECTS(!device, "--device gpu: no usable GPU (", reason, ")");
  return {false, reason};
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  return buf;
}

Progress::Progress(const Args& args)
    : enabled_(!args.quiet && (args.progress || isatty(STDERR_FILENO))),
      tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::stage(const std::string& what) const {
  if (enabled_) std::cerr << "ewise: " << what << "\n";
}

std::function<void(std::int64_t, std::int64_t)> Progress::percent(const std::string& what) const {
  if (!enabled_) return {};
  auto last = std::make_shared<int>(-1);
  const bool tty = tty_;
  return [what, last, tty](std::int64_t done, std::int64_t total) {
    const int pct = total > 0 ? static_cast<int>(100 * done / total) : 100;
    const int shown = tty ? pct : pct / 10 * 10;
    if (shown == *last) return;
    *last = shown;
    if (tty) std::cerr << "\rewise: " << what << ": " << pct << "%" << (pct == 100 ? "\n" : "")
                       << std::flush;
    else std::cerr << "ewise: " << what << ": " << shown << "%\n";
  };
}


Stream::Stream() { EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() { (void)cudaStreamDestroy(s_); }


double time_ms(const Backend& b, cudaStream_t stream, int reps, const std::function<void()>& f) {
  return detail::median_ms(b.gpu, stream, reps, f);
}

double time_once(const Backend& b, cudaStream_t stream, const std::function<void()>& f) {
  return detail::times_ms(b.gpu, stream, 1, f)[0];
}

double copy_bandwidth_gbs(std::size_t bytes, int reps, cudaStream_t stream) {
  DeviceBuffer src(bytes, stream), dst(bytes, stream);
  EWISE_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, stream));
  const double ms = time_ms(Backend{true, ""}, stream, reps, [&] {
    EWISE_CUDA_CHECK(
        cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return 2.0 * static_cast<double>(bytes) / (ms * 1e6);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace ewise::cli
