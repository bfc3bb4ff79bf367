// ewise/detail/check_launch.hpp — launch checking, callable from host-only code.
#pragma once

#include "ewise/detail/stream.hpp"

namespace ewise::detail {

/// Checks the launch just made (cudaGetLastError) and, in debug-sync mode, synchronizes the
/// stream so an asynchronous fault is reported here. Throws CudaError naming `kernel`.
void check_launch(const char* kernel, cudaStream_t stream, const char* file, int line);

}  // namespace ewise::detail
