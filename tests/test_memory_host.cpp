// Host tests of ewise/memory.hpp that need no GPU: bad device ordinals are rejected before any
// CUDA call, and an empty buffer allocates nothing.
#include <gtest/gtest.h>

#include <string>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "testing/expect_invalid.hpp"

namespace ewise {
namespace {

TEST(MemoryHost, NegativeDeviceOrdinalsOtherThanCurrentAreRejected) {
  test::expect_invalid([] { pool_memory_resource(-2); }, {"-1 (the current device)", "-2"});
  test::expect_invalid([] { set_default_memory_resource(nullptr, -7); }, {"-7"});
  test::expect_invalid([] { memory_pool_stats(-3); }, {"-3"});
  test::expect_invalid([] { trim_memory_pool(0, -4); }, {"-4"});
}

TEST(MemoryHost, EmptyBufferAllocatesNothing) {
  DeviceBuffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.resource(), nullptr);
  DeviceTensor none(DType::f32, {0, 5});
  EXPECT_EQ(none.data(), nullptr);
}

}  // namespace
}  // namespace ewise
