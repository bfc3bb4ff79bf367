// tests/testing/gpu_test.hpp — how GPU tests decide whether to run.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "ewise/device.hpp"
#include "ewise/tensor.hpp"

namespace ewise::test {

/// True when GPU tests must run: EWISE_REQUIRE_GPU=1 turns a missing GPU into a failure.
inline bool gpu_required() {
  const char* v = std::getenv("EWISE_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

/// True under scripts/sanitize_gpu.sh (EWISE_SANITIZER_SIZES=1): the tests keep every code path
/// but run fewer repetitions of it (one dtype per element size, fewer tile edges, one union op
/// per check), because the sanitizers run kernels 10-100x slower (H100, racecheck:
/// DenseGpu.TiledTileEdges over 40 s of a 10-minute device call at full size; a union sweep
/// instance 1.4 s under memcheck, 33-38 s under racecheck).
inline bool sanitizer_sizes() {
  const char* v = std::getenv("EWISE_SANITIZER_SIZES");
  return v != nullptr && std::string(v) == "1";
}

/// The dtypes the kernel sweeps take: the six the same-dtype kernels and sparse values are built
/// for (f16, bf16, f32, f64, i32, i64: the first six of kAllDTypes), or under sanitizer_sizes()
/// one per element size (an integer among them): what a memory or shared-memory checker can tell
/// apart. The other dtypes run the converting kernel only (tests/test_mixed.cu).
inline std::vector<DType> sweep_dtypes() {
  if (sanitizer_sizes()) return {DType::f16, DType::f32, DType::i64};
  return {std::begin(kAllDTypes), std::begin(kAllDTypes) + 6};
}

}  // namespace ewise::test

/// First statement of every GPU test: skips with the reason when no GPU is usable, or fails when
/// EWISE_REQUIRE_GPU=1.
#define EWISE_REQUIRE_GPU()                                                              \
  do {                                                                                   \
    if (!::ewise::gpu_available()) {                                                     \
      if (::ewise::test::gpu_required())                                                 \
        FAIL() << "EWISE_REQUIRE_GPU=1 but no GPU: " << ::ewise::gpu_unavailable_reason(); \
      GTEST_SKIP() << "no CUDA device (" << ::ewise::gpu_unavailable_reason()            \
                   << "); GPU test skipped";                                             \
    }                                                                                    \
  } while (0)
