// ewise/error.hpp — the exceptions ewise throws and the macros that throw them.
//
// Every failure leaves ewise as an exception derived from ewise::Error:
//   * InvalidArgument — a precondition failed (shape, dtype, rank, overlap, index range, file
//     format). Thrown before anything is launched or written. The message names the values.
//   * CudaError — a CUDA runtime call or a kernel launch failed. Carries the call text, the CUDA
//     error name and message, and file:line.
// Messages start with "ewise: " and are one line, so a CLI can print what() as is.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ewise {

/// Base of every exception thrown by ewise.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A precondition failed; nothing was launched or written.
class InvalidArgument : public Error {
 public:
  InvalidArgument(const std::string& message, const char* file, int line);
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  const char* file_;
  int line_;
};

/// A CUDA runtime call or kernel launch failed.
class CudaError : public Error {
 public:
  CudaError(int code, const std::string& call, const char* file, int line);
  int code() const noexcept { return code_; }  ///< the cudaError_t value
  const std::string& call() const noexcept { return call_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  int code_;
  std::string call_;
  const char* file_;
  int line_;
};

/// When on, every kernel launch by ewise is followed by a stream synchronization, so an
/// asynchronous fault is reported at the launch that caused it. Off by default; the environment
/// variable EWISE_DEBUG_SYNC=1 or the CMake option EWISE_DEBUG_SYNC turns it on at start.
void set_debug_sync(bool on) noexcept;
bool debug_sync() noexcept;

namespace detail {

template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

[[noreturn]] void throw_invalid(const char* file, int line, const std::string& message);
[[noreturn]] void throw_cuda(int code, const char* call, const char* file, int line);

}  // namespace detail
}  // namespace ewise

/// Precondition check: throws ewise::InvalidArgument with the streamed message parts.
#define EWISE_EXPECTS(cond, ...)                                                       \
  do {                                                                                 \
    if (!(cond)) ::ewise::detail::throw_invalid(__FILE__, __LINE__,                    \
                                                ::ewise::detail::concat(__VA_ARGS__)); \
  } while (0)

/// Checks a CUDA runtime call; throws ewise::CudaError when it did not return cudaSuccess.
#define EWISE_CUDA_CHECK(call)                                                         \
  do {                                                                                 \
    const auto ewise_status_ = (call);                                                 \
    if (ewise_status_ != 0)                                                            \
      ::ewise::detail::throw_cuda(static_cast<int>(ewise_status_), #call, __FILE__,    \
                                  __LINE__);                                           \
  } while (0)
