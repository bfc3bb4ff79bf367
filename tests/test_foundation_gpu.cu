// GPU tests of the foundation: buffers, copies, device-side harness, error reporting.
#include <gtest/gtest.h>

#include <cstring>

#include "ewise/buffer.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

TEST(GpuFoundation, DeviceInfo) {
  EWISE_REQUIRE_GPU();
  const DeviceInfo info = current_device_info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.global_memory_bytes, 0u);
}

TEST(GpuFoundation, BufferMoveAndStreamOrderedRoundTrip) {
  EWISE_REQUIRE_GPU();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    const HostTensor h = verify::random_tensor(DType::bf16, {33, 17}, 5);
    DeviceTensor d = to_device(h, s);
    DeviceTensor moved = std::move(d);
    EXPECT_EQ(d.data(), nullptr);
    const HostTensor back = to_host(moved, s);
    EXPECT_EQ(std::memcmp(back.data(), h.data(), h.bytes()), 0);
  }
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(GpuFoundation, StridedDeviceViewsCopyFillAndPoison) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = verify::seed_from_env_or_random();
  SCOPED_TRACE("EWISE_SEED=" + std::to_string(seed));
  for (DType t : kAllDTypes) {
    DeviceTensor mem(t, {6, 10});
    verify::poison(mem.view());
    // a reversed, every-other-column view of the (6,10) buffer: shape (6,5)
    const std::int64_t last = 5 * 10 + 8;
    const TensorView v{static_cast<std::byte*>(mem.data()) + last * dtype_size(t),
                       TensorDesc::strided(t, {6, 5}, {-10, -2}), Memory::device};
    verify::fill_random(v, seed);
    const HostTensor whole = to_host(mem);
    const HostTensor view_host = to_host(v);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 10; ++j) {
        const auto* e = static_cast<const std::byte*>(whole.data()) + (i * 10 + j) * dtype_size(t);
        EXPECT_EQ(verify::is_poison(t, e), j % 2 == 1) << dtype_name(t) << " (" << i << "," << j << ")";
      }
    for (std::int64_t k = 0; k < 30; ++k)
      EXPECT_FALSE(verify::is_poison(t, static_cast<const std::byte*>(view_host.data()) + k * dtype_size(t)));
    // the same view generated on the host from the same seed is identical
    HostTensor host_gen(t, {6, 5});
    verify::fill_random(host_gen.view(), seed);
    const verify::CompareReport r = verify::compare(v, host_gen, verify::Tolerance{});
    EXPECT_TRUE(r.ok()) << dtype_name(t) << ": " << r.str();
    EXPECT_EQ(std::memcmp(view_host.data(), host_gen.data(), host_gen.bytes()), 0) << dtype_name(t);
    // to_host of a broadcast (stride 0) of the strided view: the same 30 elements, 3 times
    const ConstTensorView repeated{v.data, TensorDesc::strided(t, {3, 6, 5}, {0, -10, -2}), Memory::device};
    const HostTensor rep = to_host(repeated);
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(std::memcmp(static_cast<const std::byte*>(rep.data()) + k * host_gen.bytes(), host_gen.data(),
                            host_gen.bytes()), 0) << dtype_name(t) << " copy " << k;
  }
}

__global__ void out_of_bounds_kernel(int* p) { p[threadIdx.x] = 1; }

TEST(GpuFoundation, LaunchErrorsAreTypedAndNamed) {
  EWISE_REQUIRE_GPU();
  int* p = nullptr;
  // an invalid configuration (too many threads per block) fails at launch
  try {
    detail::launch("too_big", out_of_bounds_kernel, dim3(1), dim3(4096), 0, nullptr, p);
    FAIL() << "launch with 4096 threads per block did not throw";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("too_big"), std::string::npos) << e.what();
    // CUDA 12 reports cudaErrorInvalidConfiguration, CUDA 13 cudaErrorInvalidValue.
    const std::string name = cudaGetErrorName(static_cast<cudaError_t>(e.code()));
    EXPECT_TRUE(name == "cudaErrorInvalidConfiguration" || name == "cudaErrorInvalidValue") << name;
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
  EXPECT_THROW(DeviceBuffer(std::size_t{1} << 62), CudaError);  // allocation failure
  DeviceBuffer ok(1024);  // and the library is still usable afterwards
  EXPECT_NE(ok.data(), nullptr);
}

}  // namespace
}  // namespace ewise
