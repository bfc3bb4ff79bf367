// src/no_cuda/cuda_runtime_api.h — the CUDA runtime API as a build without CUDA
// (EWISE_WITH_CUDA=OFF) sees it: the types, constants and functions ewise's host code, tests,
// CLI and Python module use, behaving as the real runtime does on a machine without an NVIDIA
// driver. That is the machine CI tests the CUDA build on, so both builds take the same host
// paths: every call that needs the driver returns cudaErrorInsufficientDriver, the device count
// is 0, the version queries give 0, the error strings name the build. The functions are static
// (internal linkage): a program that links this build and the real runtime keeps the real one.
// Only the library's own targets see this directory (CMakeLists.txt); the installed headers
// declare cudaStream_t alone (ewise/detail/stream.hpp).
#pragma once

#include <cstddef>

#include "ewise/detail/stream.hpp"

// The values are the real runtime's, so that codes in messages and tests mean the same.
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorMisalignedAddress = 716,
};
typedef cudaError_t cudaError;

struct CUevent_st;
typedef struct CUevent_st* cudaEvent_t;
struct CUmemPoolHandle_st;
typedef struct CUmemPoolHandle_st* cudaMemPool_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
#define cudaStreamNonBlocking 0x01

enum cudaDeviceAttr {
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMemoryPoolsSupported = 115,
};

/// The fields ewise reads (DeviceInfo); never filled here.
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  int multiProcessorCount, major, minor, l2CacheSize;
};

enum cudaMemAllocationType { cudaMemAllocationTypeInvalid = 0, cudaMemAllocationTypePinned = 1 };
enum cudaMemLocationType { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1 };
struct cudaMemLocation {
  cudaMemLocationType type;
  int id;
};
struct cudaMemPoolProps {
  cudaMemAllocationType allocType;
  cudaMemLocation location;
};
enum cudaMemPoolAttr {
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrUsedMemCurrent = 7,
  cudaMemPoolAttrUsedMemHigh = 8,
};

namespace ewise_no_cuda {
constexpr cudaError_t kNoDriver = cudaErrorInsufficientDriver;
}  // namespace ewise_no_cuda

static inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
  }
  return "cudaErrorUnknown";
}
static inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error"
                          : "this ewise was built without CUDA (EWISE_WITH_CUDA=OFF): it runs "
                            "host operands on the CPU backend and has no GPU calls";
}
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = 0;
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaDriverGetVersion(int* version) {
  *version = 0;
  return cudaSuccess;
}
static inline cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 0;
  return cudaSuccess;
}

// Every other call needs the driver.
static inline cudaError_t cudaGetDevice(int*) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaSetDevice(int) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaDeviceGetAttribute(int*, cudaDeviceAttr, int) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaDeviceSynchronize() { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaMemGetInfo(std::size_t*, std::size_t*) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMalloc(void**, std::size_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaFree(void*) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaFreeAsync(void*, cudaStream_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaMemcpy(void*, const void*, std::size_t, cudaMemcpyKind) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemcpyAsync(void*, const void*, std::size_t, cudaMemcpyKind,
                                          cudaStream_t = nullptr) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemsetAsync(void*, int, std::size_t, cudaStream_t = nullptr) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t*, unsigned) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaStreamGetDevice(cudaStream_t, int*) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t*) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaEventDestroy(cudaEvent_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return ewise_no_cuda::kNoDriver; }
static inline cudaError_t cudaEventElapsedTime(float*, cudaEvent_t, cudaEvent_t) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t*, int) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemPoolCreate(cudaMemPool_t*, const cudaMemPoolProps*) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, std::size_t) {
  return ewise_no_cuda::kNoDriver;
}
static inline cudaError_t cudaMallocFromPoolAsync(void**, std::size_t, cudaMemPool_t,
                                                  cudaStream_t) {
  return ewise_no_cuda::kNoDriver;
}
