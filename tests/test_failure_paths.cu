// GPU tests of failure paths: a device allocation failure (more than the GPU has, or the GPU
// filled up before a sparse pipeline allocates its temporaries) throws a clear CudaError, leaks
// nothing (ewise's memory pool's used bytes and cudaMemGetInfo come back to where they
// were) and the very next call works; an asynchronous fault from an earlier launch is reported
// by the next ewise call instead of being swallowed (run in a child process: the fault kills
// the CUDA context); invalid input is rejected before anything is written or allocated.
//
// The deliberate faults make compute-sanitizer report errors, so scripts/sanitize_gpu.sh runs
// this file's tests separately (memcheck with API-error reporting off, child tests excluded).
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.cuh"
#include "ewise/dense.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/calls_work.hpp"
#include "testing/gpu_test.hpp"
#include "testing/memory_use.hpp"

extern char** environ;

namespace ewise {
namespace {

// ---- device memory accounting ---------------------------------------------------------------

using tools::MemoryUse;
using tools::memory_use;

/// Driver-level bookkeeping may move cudaMemGetInfo by a little; the pool count must be exact.
constexpr std::size_t kDeviceSlack = std::size_t{4} << 20;

void expect_same_memory(const MemoryUse& before, const char* what) {
  const MemoryUse after = memory_use();
  EXPECT_EQ(after.pool_used, before.pool_used) << what << ": pool bytes still allocated";
  EXPECT_LE(after.device_used, before.device_used + kDeviceSlack)
      << what << ": device memory in use grew from " << before.device_used << " to "
      << after.device_used;
}

std::size_t free_device_bytes() {
  std::size_t free_bytes = 0, total = 0;
  EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

/// Takes every byte the device can still hand out (through the default pool, after ewise's pool
/// has returned its free memory), then what ewise's pool still holds free in the chunks of live
/// buffers, so that the next allocation of ewise fails. Frees it all on destruction.
class Ballast {
 public:
  Ballast() {
    (void)memory_use();  // synchronizes and trims ewise's pool
    for (std::size_t chunk = std::size_t{1} << 30; chunk >= 256; chunk /= 2)
      for (;;) {
        void* p = nullptr;
        if (cudaMallocAsync(&p, chunk, nullptr) != cudaSuccess) break;
        blocks_.push_back(p);
      }
    (void)cudaGetLastError();  // our own failed allocation: not the library's concern
    MemoryResource* pool = pool_memory_resource();
    for (std::size_t chunk = std::size_t{1} << 30; chunk >= 256; chunk /= 2)
      for (;;) {
        try {
          pooled_.push_back({pool->allocate(chunk, nullptr), chunk});
        } catch (const CudaError&) {
          break;
        }
      }
  }
  Ballast(const Ballast&) = delete;
  Ballast& operator=(const Ballast&) = delete;
  ~Ballast() {
    for (void* p : blocks_) (void)cudaFreeAsync(p, nullptr);
    for (const auto& [p, bytes] : pooled_) pool_memory_resource()->deallocate(p, bytes, nullptr);
    (void)cudaStreamSynchronize(nullptr);
  }

 private:
  std::vector<void*> blocks_;
  std::vector<std::pair<void*, std::size_t>> pooled_;
};

void expect_out_of_memory(const CudaError& e, const char* what) {
  EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation)) << what << ": " << e.what();
  EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
}

using test::expect_dense_call_works;
using test::expect_sparse_call_works;

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

// ---- allocation failures --------------------------------------------------------------------

TEST(FailurePaths, AllocationLargerThanTheGpuThrowsLeaksNothingAndTheNextCallWorks) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  expect_dense_call_works(seed, "warm-up");  // first-use allocations are not leaks
  const MemoryUse before = memory_use();
  const std::size_t free_bytes = free_device_bytes();

  // An owning tensor bigger than the free memory.
  try {
    DeviceTensor t(DType::f32, {static_cast<std::int64_t>(free_bytes / 4 + (1 << 28))});
    ADD_FAILURE() << "allocating " << t.bytes() << " bytes with " << free_bytes << " free did not throw";
  } catch (const CudaError& e) {
    expect_out_of_memory(e, "DeviceTensor");
    EXPECT_NE(std::string(e.what()).find("cudaMallocFromPoolAsync"), std::string::npos) << e.what();
  }
  expect_same_memory(before, "after DeviceTensor");
  expect_dense_call_works(seed, "a failed DeviceTensor allocation");

  // The allocating dense form: a broadcast whose output does not fit.
  {
    const std::int64_t n = 1 << 20;
    const auto m = static_cast<std::int64_t>(free_bytes / 4 / n + 64);  // n * m * 4 > free
    DeviceTensor a(DType::f32, {n, 1}), b(DType::f32, {1, m});
    verify::fill_random(a.view(), seed);
    verify::fill_random(b.view(), seed + 1);
    const MemoryUse with_inputs = memory_use();
    try {
      const DeviceTensor c = binary(BinaryOp::mul, a.view(), b.view());
      ADD_FAILURE() << "the allocating binary() of " << c.bytes() << " bytes did not throw";
    } catch (const CudaError& e) {
      expect_out_of_memory(e, "allocating binary()");
    }
    expect_same_memory(with_inputs, "after the allocating binary()");
  }
  expect_dense_call_works(seed, "a failed allocating binary()");
  expect_sparse_call_works(seed, "a failed allocating binary()");
  expect_same_memory(before, "at the end");
}

/// The sparse pipelines allocate temporaries and their result inside the call: with the device
/// full, they must fail cleanly, free what they had, and work again once memory is back.
TEST(FailurePaths, SparseOperationsOnAFullDevice) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  verify::CooGenOptions unsorted;
  unsorted.unsorted = true;
  unsorted.duplicate_fraction = 0.1;
  const HostCoo ha = verify::random_coo(3000, 2000, 0.05, seed, unsorted);  // 300k entries
  const HostCoo hb = verify::random_coo(3000, 2000, 0.05, seed + 1, unsorted);
  const HostTensor hrow = verify::random_tensor(DType::f32, {1, 2000}, seed + 2);
  const DeviceCoo a = to_device(ha.view()), b = to_device(hb.view());
  const DeviceTensor row = to_device(hrow.view());
  const DeviceTensor dense = coo_to_dense(a.view());
  const MemoryUse before = memory_use();

  struct Case {
    const char* name;
    std::function<void()> run;  // runs the operation and checks its result
  };
  const auto check_coo = [](const DeviceCoo& got, const HostCoo& want, const char* what) {
    const verify::CooCompareReport r = verify::compare_coo(got.view(), want.view(), {});
    EXPECT_TRUE(r.ok() && r.got_canonical) << what << ": " << r.str();
  };
  const Case cases[] = {
      {"multiply sort_search",
       [&] {
         check_coo(multiply(a.view(), b.view(), {CooAlgorithm::sort_search}),
                   reference_multiply(ha.view(), hb.view()), "sort_search");
       }},
      {"multiply merge",
       [&] {
         check_coo(multiply(a.view(), b.view(), {CooAlgorithm::merge}),
                   reference_multiply(ha.view(), hb.view()), "merge");
       }},
      {"multiply bitmap_merge",
       [&] {
         check_coo(multiply(a.view(), b.view(), {CooAlgorithm::bitmap_merge}),
                   reference_multiply(ha.view(), hb.view()), "bitmap_merge");
       }},
      {"multiply by a row vector",
       [&] { check_coo(multiply(a.view(), row.view()), reference_multiply(ha.view(), hrow.view()), "dense"); }},
      {"coalesce", [&] { check_coo(coalesce(a.view()), reference_coalesce(ha.view()), "coalesce"); }},
      {"dense_to_coo",
       [&] {
         check_coo(dense_to_coo(dense.view()),
                   reference_dense_to_coo(reference_coo_to_dense(ha.view()).view()), "dense_to_coo");
       }},
      {"coo_to_dense",
       [&] {
         const verify::CompareReport r = verify::compare(
             coo_to_dense(b.view()).view(), reference_coo_to_dense(hb.view()).view(), verify::Tolerance{});
         EXPECT_TRUE(r.ok()) << "coo_to_dense: " << r.str();
       }},
  };
  for (const Case& c : cases) {
    {
      const Ballast full;
      try {
        c.run();
        ADD_FAILURE() << c.name << " succeeded with no device memory left";
      } catch (const CudaError& e) {
        expect_out_of_memory(e, c.name);
      } catch (const Error& e) {
        ADD_FAILURE() << c.name << " on a full device threw a non-CUDA error: " << e.what();
      }
    }
    expect_same_memory(before, c.name);
    c.run();  // memory is back: the same call works and is right
    expect_same_memory(before, c.name);
  }
}

// ---- errors pending from earlier calls ------------------------------------------------------

__global__ void user_kernel(int* p) { p[threadIdx.x] = 1; }

/// An unchecked failed launch of the user's is not swallowed by the next ewise call (which
/// reports a CudaError), and ewise works again afterwards.
TEST(FailurePaths, EarlierUncheckedLaunchErrorIsReported) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const HostTensor ha = verify::random_tensor(DType::f32, {16, 16}, seed);
  const DeviceTensor a = to_device(ha);
  DeviceTensor out(DType::f32, {16, 16});
  user_kernel<<<1, 4096>>>(nullptr);  // too many threads: fails at launch, not checked
  const cudaError_t pending = cudaPeekAtLastError();
  ASSERT_NE(pending, cudaSuccess);
  try {
    binary(BinaryOp::add, a.view(), a.view(), out.view());
    ADD_FAILURE() << "the pending launch error was swallowed";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), static_cast<int>(pending)) << e.what();
  }
  expect_dense_call_works(seed, "a reported user launch error");
}

// ---- asynchronous faults: in a child process ------------------------------------------------

constexpr const char* kChildEnv = "EWISE_FAILURE_CHILD";

struct ChildResult {
  int exit_code = -1;  ///< -1 when killed by a signal
  std::string output;
};

/// Runs this test binary again with only `test` selected and EWISE_FAILURE_CHILD=`scenario`.
ChildResult run_child(const std::string& test, const std::string& scenario) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, kChildEnv, std::strlen(kChildEnv)) != 0) env_strings.push_back(*e);
  env_strings.push_back(std::string(kChildEnv) + "=" + scenario);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=" + test;
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  ChildResult r;
  if (rc != 0) {
    close(fds[0]);
    r.output = std::string("posix_spawn failed: ") + std::strerror(rc);
    return r;
  }
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// The user's kernel that writes through a bad pointer: a sticky illegal-address fault.
__global__ void faulting_kernel(int* p) { p[threadIdx.x] = 1; }

int* bad_device_pointer() { return reinterpret_cast<int*>(std::uintptr_t{1} << 46); }

/// Body of the child runs. Skips unless started by AsyncFaultIsReportedByTheNextCall.
TEST(FailurePathsChild, AfterAFault) {
  const char* scenario = std::getenv(kChildEnv);
  if (scenario == nullptr) GTEST_SKIP() << "runs only as a child of FailurePaths.AsyncFault*";
  EWISE_REQUIRE_GPU();
  const std::string s = scenario;
  const HostTensor ha = verify::random_tensor(DType::f32, {64, 64}, 1);
  const DeviceTensor a = to_device(ha);
  DeviceTensor out(DType::f32, {64, 64});
  const HostCoo hc = verify::random_coo(64, 64, 0.1, 2);
  const DeviceCoo c = to_device(hc.view());
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);

  if (s == "debug_sync") {
    // ewise's own kernel faults; with debug sync on, the call that launched it reports it.
    // A device view over an unmapped address no longer gets that far (the residency check
    // rejects it before the launch); indices far out of range with validate_indices off (the
    // caller vouched for them) still do: coo_to_dense writes 2^46 elements past its output.
    set_debug_sync(true);
    TensorView unmapped = out.view();
    unmapped.data = bad_device_pointer();
    EXPECT_THROW(binary(BinaryOp::add, a.view(), a.view(), unmapped, {}, stream), InvalidArgument);
    verify::CooGenOptions wide;
    wide.index = IndexType::i64;
    HostCoo lying = verify::random_coo(64, 64, 0.1, 3, wide);
    static_cast<std::int64_t*>(lying.rows())[lying.nnz() - 1] = std::int64_t{1} << 40;
    const DeviceCoo bad = to_device(lying.view());
    SparseOptions unchecked;
    unchecked.validate_indices = false;
    try {
      (void)coo_to_dense(bad.view(), unchecked, stream);
      ADD_FAILURE() << "the faulting ewise kernel was not reported in debug-sync mode";
    } catch (const CudaError& e) {
      EXPECT_NE(std::string(e.what()).find("debug sync"), std::string::npos) << e.what();
      std::cout << "[ reported ] " << e.what() << "\n";
    }
    return;
  }
  detail::launch("faulting_kernel", faulting_kernel, dim3(1), dim3(32), 0, stream,
                 bad_device_pointer());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the fault has happened
  try {
    if (s == "dense") binary(BinaryOp::mul, a.view(), a.view(), out.view(), {}, stream);
    else if (s == "sparse") (void)multiply(c.view(), c.view(), {}, stream);
    else if (s == "copy") (void)to_host(a.view(), stream);
    else FAIL() << "unknown scenario " << s;
    ADD_FAILURE() << s << ": the earlier fault was swallowed";
  } catch (const CudaError& e) {
    EXPECT_NE(e.code(), 0);
    std::cout << "[ reported ] " << e.what() << "\n";
  }
}

TEST(FailurePaths, AsyncFaultIsReportedByTheNextCall) {
  EWISE_REQUIRE_GPU();
  for (const char* scenario : {"dense", "sparse", "copy", "debug_sync"}) {
    const ChildResult r = run_child("FailurePathsChild.AfterAFault", scenario);
    EXPECT_EQ(r.exit_code, 0) << scenario << ": child failed:\n" << r.output;
    EXPECT_NE(r.output.find("[ reported ]"), std::string::npos)
        << scenario << ": no error was reported:\n" << r.output;
    EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << scenario << ":\n"
                                                                      << r.output;
  }
}

// ---- invalid input: nothing written, nothing allocated --------------------------------------

TEST(FailurePaths, InvalidSparseInputIsRejectedBeforeAnythingIsAllocated) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const HostCoo ha = verify::random_coo(500, 400, 0.02, seed);
  HostCoo bad_index = verify::random_coo(500, 400, 0.02, seed + 1);
  HostCoo lying = verify::random_coo(500, 400, 0.02, seed + 2);
  ASSERT_GT(bad_index.nnz(), 10);
  // A row index out of range in the middle, and a "canonical" matrix with two entries swapped.
  static_cast<std::int32_t*>(bad_index.rows())[bad_index.nnz() / 2] = 500;
  ASSERT_TRUE(lying.desc().canonical);
  std::swap(static_cast<std::int32_t*>(lying.cols())[3], static_cast<std::int32_t*>(lying.cols())[4]);
  std::swap(static_cast<std::int32_t*>(lying.rows())[3], static_cast<std::int32_t*>(lying.rows())[4]);
  const DeviceCoo a = to_device(ha.view()), bad = to_device(bad_index.view()),
                  liar = to_device(lying.view());
  const MemoryUse before = memory_use();
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"multiply, index out of range", [&] { (void)multiply(a.view(), bad.view()); }},
      {"multiply, false canonical", [&] { (void)multiply(liar.view(), a.view()); }},
      {"coalesce, index out of range", [&] { (void)coalesce(bad.view()); }},
      {"coo_to_dense, index out of range", [&] { (void)coo_to_dense(bad.view()); }},
      {"coo_to_csr_row_offsets, false canonical", [&] { (void)coo_to_csr_row_offsets(liar.view()); }},
  };
  for (const auto& [what, call] : calls) {
    try {
      call();
      ADD_FAILURE() << what << ": not rejected";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("entry"), std::string::npos) << what << ": " << e.what();
    }
    expect_same_memory(before, what);
  }
  expect_sparse_call_works(seed, "rejected sparse inputs");
}

TEST(FailurePaths, InvalidDenseInputWritesNothing) {
  EWISE_REQUIRE_GPU();
  // Cases not in test_dense.cu's validation test: misaligned data, a functor not instantiated
  // for the dtype, each leaving the output (and its neighbours in the buffer) untouched.
  DeviceBuffer buf(4096);
  TensorView all{buf.data(), TensorDesc::contiguous(DType::f32, {1024}), Memory::device};
  verify::poison(all);
  const auto at = [&](std::size_t byte, DType t, const Dims& shape) {
    return TensorView{static_cast<std::byte*>(buf.data()) + byte, TensorDesc::contiguous(t, shape),
                      Memory::device};
  };
  DeviceTensor a(DType::f32, {8, 8});
  verify::fill_random(a.view(), 3);
  constexpr unsigned mask_f16 = dtype_mask({DType::f16});
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"misaligned output", [&] { binary(BinaryOp::add, a.view(), a.view(), at(1, DType::f32, {8, 8})); }},
      {"misaligned input", [&] { binary(BinaryOp::add, at(2050, DType::f32, {8, 8}), a.view(), at(0, DType::f32, {8, 8})); }},
      {"functor dtype not instantiated",
       [&] { binary<mask_f16>(ops::Add{}, a, a, at(0, DType::f32, {8, 8})); }},
  };
  for (const auto& [what, call] : calls) {
    EXPECT_THROW(call(), InvalidArgument) << what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    const HostTensor h = to_host(all);
    for (std::int64_t i = 0; i < 1024; ++i)
      ASSERT_TRUE(verify::is_poison(DType::f32, static_cast<const std::byte*>(h.data()) + 4 * i))
          << what << ": element " << i << " of the buffer was written";
  }
}

}  // namespace
}  // namespace ewise
