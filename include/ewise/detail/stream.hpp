// ewise/detail/stream.hpp — cudaStream_t for the public headers. A CUDA build includes the
// CUDA runtime's API header, as callers of a GPU library expect; a build without CUDA
// (EWISE_WITH_CUDA=OFF, which defines EWISE_NO_CUDA for the library and its users) declares the
// type exactly as that header does, so the headers need no CUDA toolkit and still agree with
// the runtime's own where a caller includes both.
#pragma once

#ifdef EWISE_NO_CUDA
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#else
#include <cuda_runtime_api.h>
#endif
