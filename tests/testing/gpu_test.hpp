// tests/testing/gpu_test.hpp — how GPU tests decide whether to run.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ewise/device.hpp"

namespace ewise::test {

/// True when GPU tests must run: EWISE_REQUIRE_GPU=1 turns a missing GPU into a failure.
inline bool gpu_required() {
  const char* v = std::getenv("EWISE_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
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
