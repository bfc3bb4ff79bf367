// GPU tests with more than one GPU. ewise runs on the calling thread's current device:
// operands or a stream of another device throw InvalidArgument naming both ordinals (never a
// fault: the next call works), threads that each drive their own device get verified results
// side by side, and the device properties and ewise's memory pools are per device.
// Every test needs 2 GPUs and skips with the count found when there are fewer.
//
// Environment: EWISE_SEED replays a run; EWISE_MULTI_GPU_ROUNDS (default 3) sets how many times
// each thread goes through every kind of call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/calls_work.hpp"
#include "testing/gpu_test.hpp"
#include "testing/random_calls.cuh"

namespace ewise {
namespace {

using test::expect_invalid;

int device_count() {
  int n = 0;
  EWISE_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

/// Second statement of every test here, after EWISE_REQUIRE_GPU().
#define EWISE_REQUIRE_TWO_GPUS()                                                \
  do {                                                                          \
    const int ewise_gpus_ = device_count();                                     \
    if (ewise_gpus_ < 2) GTEST_SKIP() << "needs 2 GPUs, found " << ewise_gpus_; \
  } while (0)

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

/// Makes `device` current for the guard's lifetime.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    EWISE_CUDA_CHECK(cudaGetDevice(&previous_));
    EWISE_CUDA_CHECK(cudaSetDevice(device));
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  ~CurrentDevice() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

/// Owns a stream created on the device current at construction; destroyed on that device.
class Stream {
 public:
  Stream() {
    EWISE_CUDA_CHECK(cudaGetDevice(&device_));
    EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    const CurrentDevice on(device_);
    (void)cudaStreamSynchronize(s_);
    (void)cudaStreamDestroy(s_);
  }
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT

 private:
  int device_ = 0;
  cudaStream_t s_ = nullptr;
};

/// A cudaMalloc allocation on `device`, filled with the harness's random f32 values; freed on
/// that device.
class Allocation {
 public:
  Allocation(int device, std::int64_t n, std::uint64_t seed) : device_(device), n_(n) {
    const CurrentDevice on(device);
    EWISE_CUDA_CHECK(cudaMalloc(&p_, static_cast<std::size_t>(n) * sizeof(float)));
    verify::fill_random(view(), seed);
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() {
    const CurrentDevice on(device_);
    (void)cudaFree(p_);
  }
  TensorView view() const { return {p_, TensorDesc::contiguous(DType::f32, {n_}), Memory::device}; }

 private:
  int device_;
  std::int64_t n_;
  void* p_ = nullptr;
};

/// No error left behind, and out = a + b on device 0's small tensors is right.
void expect_device0_call_works(std::uint64_t seed, const std::string& after) {
  test::expect_no_error_left(after);
  if (::testing::Test::HasFatalFailure()) return;  // the context is broken: nothing more runs
  test::expect_dense_call_works(seed, after);
}

/// Every element of the device view `v` still holds the poison pattern.
void expect_poisoned(const ConstTensorView& v, const std::string& what) {
  const HostTensor h = to_host(v);
  const auto* bytes = static_cast<const std::byte*>(h.data());
  for (std::int64_t i = 0; i < h.numel(); ++i)
    if (!verify::is_poison(h.dtype(),
                           bytes + static_cast<std::size_t>(i) * dtype_size(h.dtype()))) {
      ADD_FAILURE() << what << ": element " << i << " was written";
      return;
    }
}

TEST(MultiGpu, OperandsOfAnotherDeviceThrowAndTheNextCallWorks) {
  EWISE_REQUIRE_GPU();
  EWISE_REQUIRE_TWO_GPUS();
  const std::uint64_t seed = test_seed();
  const CurrentDevice on0(0);
  constexpr std::int64_t n = 4096;
  const Allocation a1(1, n, seed);  // device 1's memory
  const Allocation b0(0, n, seed + 1);
  DeviceTensor out0(DType::f32, {n});
  verify::poison(out0.view());
  const std::initializer_list<std::string> parts = {"memory of device 1",
                                                    "the current device is 0"};

  expect_invalid([&] { binary(BinaryOp::add, a1.view(), b0.view(), out0.view()); },
                 {"a at", "memory of device 1", "the current device is 0"}, "binary: a on 1");
  expect_invalid([&] { binary(BinaryOp::add, b0.view(), b0.view(), a1.view()); },
                 {"out at", "memory of device 1", "the current device is 0"}, "binary: out on 1");
  expect_invalid([&] { (void)binary(BinaryOp::mul, b0.view(), a1.view()); }, parts,
                 "allocating binary: b on 1");
  expect_invalid([&] { (void)to_host(a1.view()); }, parts, "to_host of device 1's memory");
  expect_invalid([&] { verify::poison(a1.view()); }, parts, "poison of device 1's memory");
  expect_poisoned(out0.view(), "out on device 0 after the rejected calls");
  expect_device0_call_works(seed, "dense calls on device 1's memory");

  // Sparse: a COO matrix made on device 1, used with device 0 current.
  const HostCoo hc = verify::random_coo(200, 300, 0.05, seed + 2);
  std::optional<DeviceCoo> on_device1;
  {
    const CurrentDevice on1(1);
    on_device1 = to_device(hc.view());
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const CooView c1 = on_device1->view();
  const DeviceCoo c0 = to_device(hc.view());
  expect_invalid([&] { (void)multiply(c0.view(), c1); }, {"b rows at", "memory of device 1"},
                 "multiply(COO, COO): b on 1");
  expect_invalid([&] { (void)coalesce(c1); }, {"a rows at", "memory of device 1"},
                 "coalesce: a on 1");
  expect_invalid([&] { (void)coo_to_dense(c1); }, parts, "coo_to_dense: a on 1");
  expect_invalid([&] { (void)to_host(c1); }, parts, "to_host(COO) of device 1's memory");
  expect_device0_call_works(seed, "sparse calls on device 1's memory");
  {
    const CurrentDevice on1(1);
    on_device1.reset();  // freed on its own device's default stream
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

TEST(MultiGpu, StreamOfAnotherDeviceThrows) {
  EWISE_REQUIRE_GPU();
  EWISE_REQUIRE_TWO_GPUS();
  const std::uint64_t seed = test_seed();
  const CurrentDevice on0(0);
  std::optional<Stream> stream1;
  {
    const CurrentDevice on1(1);
    stream1.emplace();  // created on device 1
  }
  const cudaStream_t s1 = *stream1;
  const DeviceTensor a = to_device(verify::random_tensor(DType::f32, {64, 64}, seed));
  DeviceTensor out(DType::f32, {64, 64});
  verify::poison(out.view());
  const DeviceCoo c = to_device(verify::random_coo(64, 64, 0.1, seed + 1).view());
  const std::initializer_list<std::string> parts = {"belongs to device 1",
                                                    "the current device is 0"};

  expect_invalid([&] { binary(BinaryOp::add, a.view(), a.view(), out.view(), {}, s1); }, parts, "binary");
  expect_invalid([&] { (void)binary(BinaryOp::add, a.view(), a.view(), {}, s1); }, parts, "allocating binary");
  expect_invalid([&] { (void)multiply(c.view(), c.view(), {}, s1); }, parts, "multiply");
  expect_invalid([&] { (void)coalesce(c.view(), {}, s1); }, parts, "coalesce");
  expect_invalid([&] { (void)to_host(a, s1); }, parts, "to_host");
  expect_invalid([&] { (void)to_device(a, s1); }, parts, "to_device");
  expect_poisoned(out.view(), "out after the rejected calls");
  expect_device0_call_works(seed, "calls on device 1's stream");
}

/// One thread per GPU (cudaSetDevice in each), each on its own stream, goes through every kind
/// of call of tests/testing/random_calls.cuh (dense with every kernel and the functor entry,
/// COO ⊙ COO, COO ⊙ dense, coalesce, conversions, index checks, file round trips), each result
/// verified against the CPU backend.
TEST(MultiGpu, ThreadPerDeviceVerifiedCalls) {
  EWISE_REQUIRE_GPU();
  EWISE_REQUIRE_TWO_GPUS();
  const std::uint64_t seed = test_seed();
  const char* env = std::getenv("EWISE_MULTI_GPU_ROUNDS");
  const int rounds = env != nullptr && *env != '\0' ? std::max(1, std::atoi(env)) : 3;
  const int devices = device_count();
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(devices));
  std::vector<int> verified(static_cast<std::size_t>(devices), 0);
  std::vector<std::thread> threads;
  for (int d = 0; d < devices; ++d)
    threads.emplace_back([&, d] {
      std::vector<std::string>& f = failures[static_cast<std::size_t>(d)];
      try {
        EWISE_CUDA_CHECK(cudaSetDevice(d));
        const detail::DeviceProps props = detail::current_device_props();
        if (props.ordinal != d)
          f.push_back("current_device_props().ordinal is " + std::to_string(props.ordinal));
        const Stream stream;
        const std::uint64_t thread_seed = seed + 1000003ull * static_cast<std::uint64_t>(d + 1);
        const soak::SharedInputs shared = soak::make_shared_inputs(thread_seed);
        soak::RandomCaller caller(thread_seed, shared, stream);
        for (int r = 0; r < rounds; ++r)
          for (int k = 0; k < soak::kCallKinds; ++k) {
            const auto call = static_cast<soak::Call>(k);
            std::string problem;
            try {
              problem = caller.run(call);
            } catch (const std::exception& e) {
              problem = std::string("threw: ") + e.what();
            }
            if (problem.empty())
              ++verified[static_cast<std::size_t>(d)];
            else
              f.push_back(std::string(soak::call_name(call)) + " round " + std::to_string(r) +
                          ": " + problem);
          }
        EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
      } catch (const std::exception& e) {
        f.push_back(std::string("threw: ") + e.what());
      }
    });
  for (std::thread& t : threads) t.join();
  for (int d = 0; d < devices; ++d) {
    for (const std::string& f : failures[static_cast<std::size_t>(d)])
      ADD_FAILURE() << "device " << d << ": " << f;
    EXPECT_EQ(verified[static_cast<std::size_t>(d)], rounds * soak::kCallKinds) << "device " << d;
  }
  std::cout << "[ verified ] " << devices << " devices x " << rounds * soak::kCallKinds
            << " calls each\n";
}

TEST(MultiGpu, PoolsAndPropertiesArePerDevice) {
  EWISE_REQUIRE_GPU();
  EWISE_REQUIRE_TWO_GPUS();
  EXPECT_EQ(detail::device_props(0).ordinal, 0);
  EXPECT_EQ(detail::device_props(1).ordinal, 1);
  EXPECT_NE(pool_memory_resource(0), pool_memory_resource(1));
  {
    const CurrentDevice on1(1);
    EXPECT_EQ(detail::current_device_props().ordinal, 1);
    EXPECT_EQ(pool_memory_resource(), pool_memory_resource(1));
    EXPECT_EQ(default_memory_resource(), pool_memory_resource(1));
  }
  {
    const CurrentDevice on0(0);
    EXPECT_EQ(detail::current_device_props().ordinal, 0);
    EXPECT_EQ(pool_memory_resource(), pool_memory_resource(0));
  }

  // A buffer made with device 1 current comes from device 1's pool, lives on device 1, and
  // moves device 1's pool statistics only.
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  EWISE_CUDA_CHECK(cudaSetDevice(0));
  EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  const MemoryPoolStats before0 = memory_pool_stats(0), before1 = memory_pool_stats(1);
  {
    const CurrentDevice on1(1);
    const DeviceBuffer buffer(kBytes);
    cudaPointerAttributes attr{};
    EWISE_CUDA_CHECK(cudaPointerGetAttributes(&attr, buffer.data()));
    EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
    EXPECT_EQ(attr.device, 1);
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(memory_pool_stats(1).used, before1.used + kBytes);
    EXPECT_EQ(memory_pool_stats(0).used, before0.used);
  }
  {
    const CurrentDevice on1(1);
    EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  EXPECT_EQ(memory_pool_stats(1).used, before1.used);
  EXPECT_EQ(memory_pool_stats(0).used, before0.used);
}

}  // namespace
}  // namespace ewise
