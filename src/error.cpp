#include "ewise/error.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "ewise/detail/check_launch.hpp"

namespace ewise {
namespace {

bool debug_sync_from_environment() {
#if defined(EWISE_DEBUG_SYNC_DEFAULT)
  bool on = true;
#else
  bool on = false;
#endif
  if (const char* v = std::getenv("EWISE_DEBUG_SYNC")) on = std::strcmp(v, "0") != 0;
  return on;
}

std::atomic<bool>& debug_sync_flag() {
  static std::atomic<bool> flag{debug_sync_from_environment()};
  return flag;
}

std::string cuda_message(int code, const std::string& call, const char* file, int line) {
  const auto err = static_cast<cudaError_t>(code);
  return detail::concat("ewise: CUDA error ", cudaGetErrorName(err), " (", cudaGetErrorString(err),
                        ") in ", call, " at ", file, ":", line);
}

}  // namespace

InvalidArgument::InvalidArgument(const std::string& message, const char* file, int line)
    : Error("ewise: " + message), file_(file), line_(line) {}

CudaError::CudaError(int code, const std::string& call, const char* file, int line)
    : Error(cuda_message(code, call, file, line)), code_(code), call_(call), file_(file),
      line_(line) {}

void set_debug_sync(bool on) noexcept { debug_sync_flag().store(on); }
bool debug_sync() noexcept { return debug_sync_flag().load(); }

namespace detail {

void throw_invalid(const char* file, int line, const std::string& message) {
  throw InvalidArgument(message, file, line);
}

void throw_cuda(int code, const char* call, const char* file, int line) {
  // The runtime also records a failed call as its last error; clear it, or the next launch
  // check would report this error again (a sticky error stays and is reported again anyway).
  (void)cudaGetLastError();
  throw CudaError(code, call, file, line);
}

void check_launch(const char* kernel, cudaStream_t stream, const char* file, int line) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess)
    throw CudaError(launch, concat("launch of ", kernel), file, line);
  if (debug_sync()) {
    const cudaError_t run = cudaStreamSynchronize(stream);
    if (run != cudaSuccess)
      throw CudaError(run, concat("kernel ", kernel, " (debug sync)"), file, line);
  }
}

}  // namespace detail
}  // namespace ewise
