// GPU tests of ewise/memory.hpp: ewise's pool keeps freed memory across synchronizations without
// touching the device's default pool, a caller's resource serves every allocation it is given,
// the per-device default can be set and restored, and results given another stream outlive the
// stream they were made on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// Forwards to ewise's pool and counts what passes through.
class CountingResource final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    ++allocations;
    bytes_allocated += bytes;
    return pool_memory_resource()->allocate(bytes, stream);
  }
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override {
    ++deallocations;
    pool_memory_resource()->deallocate(p, bytes, stream);
  }
  std::atomic<int> allocations{0}, deallocations{0};
  std::atomic<std::size_t> bytes_allocated{0};
};

/// A default resource that must not be reached: every allocation of a call that names its own
/// resource has to come from that one.
class RefusingResource final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, cudaStream_t) override {
    throw Error("RefusingResource: an allocation of " + std::to_string(bytes) +
                " bytes bypassed the call's resource");
  }
  void deallocate(void*, std::size_t, cudaStream_t) noexcept override {}
};

/// Makes `r` the current device's default resource for the scope.
class DefaultResourceGuard {
 public:
  explicit DefaultResourceGuard(MemoryResource* r) : previous_(set_default_memory_resource(r)) {}
  ~DefaultResourceGuard() { set_default_memory_resource(previous_); }
  DefaultResourceGuard(const DefaultResourceGuard&) = delete;
  DefaultResourceGuard& operator=(const DefaultResourceGuard&) = delete;

 private:
  MemoryResource* previous_;
};

std::uint64_t default_pool_attribute(cudaMemPoolAttr attr) {
  int device = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool;
  EWISE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t v = 0;
  EWISE_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
  return v;
}

TEST(Memory, PoolKeepsFreedMemoryAcrossSynchronizationUntilTrimmed) {
  EWISE_REQUIRE_GPU();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  trim_memory_pool(0);
  const MemoryPoolStats before = memory_pool_stats();
  {
    DeviceBuffer b(64 * kMiB);
    EXPECT_EQ(b.resource(), pool_memory_resource());
    EXPECT_GE(memory_pool_stats().used, before.used + 64 * kMiB);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const MemoryPoolStats kept = memory_pool_stats();
  EXPECT_EQ(kept.used, before.used);
  EXPECT_GE(kept.reserved, before.reserved + 64 * kMiB) << "freed memory went back at the sync";
  trim_memory_pool(0);
  EXPECT_LT(memory_pool_stats().reserved, before.reserved + 64 * kMiB);
}

TEST(Memory, DevicesDefaultPoolIsNotTouched) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t threshold = default_pool_attribute(cudaMemPoolAttrReleaseThreshold);
  const std::uint64_t used = default_pool_attribute(cudaMemPoolAttrUsedMemCurrent);
  DeviceBuffer b(8 * kMiB);
  EXPECT_EQ(default_pool_attribute(cudaMemPoolAttrUsedMemCurrent), used);
  EXPECT_EQ(default_pool_attribute(cudaMemPoolAttrReleaseThreshold), threshold);
}

TEST(Memory, CallersResourceServesBuffersTensorsAndCopies) {
  EWISE_REQUIRE_GPU();
  CountingResource counting;
  {
    DeviceTensor t(DType::f32, {1000}, nullptr, &counting);
    EXPECT_EQ(t.view().data, t.data());
    const HostTensor h = verify::random_tensor(DType::f64, {33, 7}, 11);
    const DeviceTensor d = to_device(h, nullptr, &counting);
    const HostTensor back = to_host(d);
    EXPECT_EQ(std::memcmp(back.data(), h.data(), h.bytes()), 0);
    EXPECT_EQ(counting.allocations.load(), 2);
    EXPECT_GE(counting.bytes_allocated.load(), 4000u + h.bytes());
    DeviceBuffer empty(0, nullptr, &counting);  // nothing to allocate
    EXPECT_EQ(empty.resource(), nullptr);
    EXPECT_EQ(counting.allocations.load(), 2);
  }
  EXPECT_EQ(counting.deallocations.load(), 2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(Memory, DefaultResourceCanBeSetAndRestored) {
  EWISE_REQUIRE_GPU();
  CountingResource counting;
  EXPECT_EQ(default_memory_resource(), pool_memory_resource());
  EXPECT_EQ(set_default_memory_resource(&counting), nullptr);
  EXPECT_EQ(default_memory_resource(), &counting);
  { DeviceBuffer b(1000); }
  EXPECT_EQ(set_default_memory_resource(nullptr), &counting);
  EXPECT_EQ(default_memory_resource(), pool_memory_resource());
  { DeviceBuffer b(1000); }
  EXPECT_EQ(counting.allocations.load(), 1);
  EXPECT_EQ(counting.deallocations.load(), 1);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_THROW(set_default_memory_resource(&counting, count), InvalidArgument);
  EXPECT_EQ(default_memory_resource(), pool_memory_resource());
}

TEST(Memory, CallsTakeEveryTemporaryAndTheResultFromTheCallersResource) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions unsorted;
  unsorted.unsorted = true;
  unsorted.duplicate_fraction = 0.1;
  const HostCoo ha = verify::random_coo(500, 300, 0.05, 21, unsorted);
  const HostCoo hb = verify::random_coo(500, 300, 0.05, 22, unsorted);
  const HostTensor hrow = verify::random_tensor(DType::f32, {300}, 23);
  const DeviceCoo a = to_device(ha.view()), b = to_device(hb.view());
  const DeviceTensor row = to_device(hrow.view());
  const HostCoo want = reference_multiply(ha.view(), hb.view());
  CountingResource counting;
  RefusingResource refusing;
  {
    const DefaultResourceGuard guard(&refusing);
    SparseOptions o;
    o.memory = &counting;
    for (CooAlgorithm alg : {CooAlgorithm::sort_search, CooAlgorithm::merge,
                             CooAlgorithm::bitmap_merge, CooAlgorithm::linear_search}) {
      o.algorithm = alg;
      const DeviceCoo c = multiply(a.view(), b.view(), o);
      const verify::CooCompareReport r = verify::compare_coo(c.view(), want.view(), {});
      EXPECT_TRUE(r.ok()) << coo_algorithm_name(alg) << ": " << r.str();
    }
    o.drop_zeros = true;
    const DeviceCoo scaled = multiply(a.view(), row.view(), o);
    const DeviceCoo canonical = coalesce(a.view(), o);
    const DeviceTensor dense = coo_to_dense(a.view(), o);
    const DeviceTensor offsets = coo_to_csr_row_offsets(canonical.view(), o);
    const DeviceCoo back = dense_to_coo(dense.view(), IndexType::i32, nullptr, &counting);
    EXPECT_EQ(back.nnz(), canonical.nnz());
    DenseOptions d;
    d.memory = &counting;
    const DeviceTensor sum = binary(BinaryOp::add, dense.view(), row.view(), d);
    EXPECT_EQ(sum.shape(), dense.shape());
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_GT(counting.allocations.load(), 10);
  EXPECT_EQ(counting.deallocations.load(), counting.allocations.load());
}

TEST(Memory, ResultsOutliveTheirStreamOnceGivenAnother) {
  EWISE_REQUIRE_GPU();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  {
    DeviceBuffer kept;
    DeviceTensor tensor;
    DeviceCoo coo;
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    kept = DeviceBuffer(kMiB, s);
    ASSERT_EQ(cudaMemsetAsync(kept.data(), 1, kMiB, s), cudaSuccess);
    tensor = DeviceTensor(DType::f32, {1000}, s);
    coo = to_device(verify::random_coo(50, 40, 0.1, 5).view(), s);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    kept.set_stream(nullptr);
    tensor.set_stream(nullptr);
    coo.set_stream(nullptr);
    EXPECT_EQ(kept.stream(), nullptr);
    ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  }  // freed here, on the default stream, after their first stream is gone
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // The next call must not inherit an error from that free.
  const HostTensor ha = verify::random_tensor(DType::f32, {37, 65}, 3);
  const HostTensor hb = verify::random_tensor(DType::f32, {65}, 4);
  const DeviceTensor a = to_device(ha), b = to_device(hb);
  DeviceTensor out(DType::f32, {37, 65});
  verify::poison(out.view());
  ASSERT_NO_THROW(binary(BinaryOp::add, a.view(), b.view(), out.view()));
  HostTensor want(DType::f32, {37, 65});
  reference_binary(BinaryOp::add, ha.view(), hb.view(), want.view());
  const verify::CompareReport r = verify::compare(out.view(), want.view(), verify::Tolerance{});
  EXPECT_TRUE(r.ok()) << r.str();
}

}  // namespace
}  // namespace ewise
