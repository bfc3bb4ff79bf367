// GPU tests of concurrent use: several host threads, each with its own stream, call every dense
// and sparse operation at once on different data (plus inputs shared read-only by all threads;
// the calls come from tests/testing/random_calls.cuh, shared with the soak program),
// and every result is checked against the CPU reference. A second test checks that calls on one
// stream never wait for work queued on another (no device-wide synchronization, no implicit
// legacy-default-stream use, no cudaMalloc/cudaFree): a kernel spins on one stream until the
// host releases it, and a whole round of operations on another stream must finish meanwhile.
//
// Environment: EWISE_SEED replays a run; EWISE_CONCURRENCY_THREADS (default 8) and
// EWISE_CONCURRENCY_ROUNDS (calls per thread, default 60) size the first test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"
#include "testing/random_calls.cuh"

namespace ewise {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

/// Owns a CUDA stream.
class Stream {
 public:
  explicit Stream(unsigned flags) { EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    (void)cudaStreamSynchronize(s_);
    (void)cudaStreamDestroy(s_);
  }
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT

 private:
  cudaStream_t s_ = nullptr;
};

/// Releases all waiting threads at once.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(m_);
    if (--waiting_ == 0) cv_.notify_all();
    else cv_.wait(lock, [&] { return waiting_ == 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int waiting_;
};

/// What one thread did.
struct Tally {
  std::int64_t calls = 0, verified = 0;
  std::array<std::int64_t, soak::kCallKinds> per_kind{};
  std::vector<std::string> failures;
};

void record(Tally& t, const soak::RandomCaller::Result& r, int thread, std::uint64_t seed) {
  ++t.calls;
  ++t.per_kind[static_cast<std::size_t>(r.call)];
  if (r.problem.empty()) {
    ++t.verified;
    return;
  }
  t.failures.push_back("thread " + std::to_string(thread) + " call " + std::to_string(t.calls) +
                       " (" + soak::call_name(r.call) + ", seed " + std::to_string(seed) + "): " +
                       r.problem);
}

TEST(Concurrency, ThreadsWithOwnStreamsCallEveryOperationAtOnce) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  const int threads = std::max(2, env_int("EWISE_CONCURRENCY_THREADS", 8));
  const int rounds = std::max(1, env_int("EWISE_CONCURRENCY_ROUNDS", 60));
  const soak::SharedInputs shared = soak::make_shared_inputs(seed);
  std::vector<Tally> tallies(static_cast<std::size_t>(threads));
  StartLine start(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      Tally& t = tallies[static_cast<std::size_t>(i)];
      try {
        // Half the streams non-blocking, half ordinary: both kinds must work side by side.
        const Stream stream(i % 2 ? cudaStreamNonBlocking : cudaStreamDefault);
        const std::uint64_t thread_seed = seed + 1000003ull * static_cast<std::uint64_t>(i + 1);
        soak::RandomCaller caller(thread_seed, shared, stream);
        start.arrive_and_wait();
        for (int r = 0; r < rounds; ++r) record(t, caller.step(), i, thread_seed);
      } catch (const std::exception& e) {
        t.failures.push_back("thread " + std::to_string(i) + " setup threw: " + e.what());
      }
    });
  for (auto& th : pool) th.join();
  std::int64_t calls = 0, verified = 0;
  std::array<std::int64_t, soak::kCallKinds> per_kind{};
  for (const Tally& t : tallies) {
    calls += t.calls;
    verified += t.verified;
    for (int k = 0; k < soak::kCallKinds; ++k) per_kind[k] += t.per_kind[k];
    for (const std::string& f : t.failures) ADD_FAILURE() << f;
  }
  std::cout << "[ verified ] " << threads << " threads x " << rounds << " calls: " << verified
            << " of " << calls << " results verified (";
  for (int k = 0; k < soak::kCallKinds; ++k)
    if (per_kind[k] > 0) std::cout << (k ? " " : "") << soak::call_name(static_cast<soak::Call>(k)) << " " << per_kind[k];
  std::cout << ")\n";
  EXPECT_EQ(calls, static_cast<std::int64_t>(threads) * rounds);
  EXPECT_EQ(verified, calls);
}

// ---- calls on one stream do not wait for another stream's work ----------------------------

/// Spins until *release is set by the host or `timeout_cycles` pass (then sets *timed_out).
__global__ void spin_kernel(volatile int* release, long long timeout_cycles, int* timed_out) {
  const long long start = clock64();
  while (*release == 0) {
    if (clock64() - start > timeout_cycles) {
      *timed_out = 1;
      return;
    }
  }
}

/// Host memory the device can read and write while a kernel runs.
class MappedInts {
 public:
  MappedInts() {
    EWISE_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), 2 * sizeof(int), cudaHostAllocMapped));
    host_[0] = host_[1] = 0;
    EWISE_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  MappedInts(const MappedInts&) = delete;
  MappedInts& operator=(const MappedInts&) = delete;
  ~MappedInts() { (void)cudaFreeHost(host_); }
  volatile int* host() { return host_; }
  int* device() { return device_; }

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

TEST(Concurrency, CallsOnOneStreamDoNotWaitForAnotherStream) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  const soak::SharedInputs shared = soak::make_shared_inputs(seed);
  // Blocking streams: they would also wait for anything queued on the legacy default stream.
  const Stream busy(cudaStreamDefault), work(cudaStreamDefault);
  // Every kind of call but the file round trips, 4 times each.
  std::vector<soak::Call> sequence;
  for (int round = 0; round < 4; ++round)
    for (int k = 0; k < soak::kCallKinds; ++k)
      if (k != static_cast<int>(soak::Call::npy_round_trip) && k != static_cast<int>(soak::Call::mtx_round_trip))
        sequence.push_back(static_cast<soak::Call>(k));
  std::string slowest;  // the call that took longest in the last run_all, and how long
  const auto run_all = [&](Tally& t) {
    soak::RandomCaller caller(seed, shared, work);  // same seed: the same calls every time
    double longest = 0;
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      soak::RandomCaller::Result r{sequence[i], {}};
      const auto t0 = std::chrono::steady_clock::now();
      try {
        r.problem = caller.run(r.call);
      } catch (const std::exception& e) {
        r.problem = std::string("threw: ") + e.what();
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s > longest) {
        longest = s;
        slowest = "call " + std::to_string(i) + " (" + soak::call_name(r.call) + ") took " + std::to_string(s) + " s";
      }
      record(t, r, 0, seed);
    }
  };
  // The same calls once before: with lazy module loading (the default), the first launch of a
  // kernel may synchronize the context, which would wait for the spinning kernel.
  Tally warmup;
  run_all(warmup);
  for (const std::string& f : warmup.failures) ADD_FAILURE() << f;

  int clock_khz = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), cudaSuccess);
  const long long timeout_cycles = 20LL * 1000 * clock_khz;  // 20 s
  MappedInts flags;
  detail::launch("spin_kernel", spin_kernel, dim3(1), dim3(1), 0, busy, flags.device(),
                 timeout_cycles, flags.device() + 1);
  Tally t;
  const auto t0 = std::chrono::steady_clock::now();
  run_all(t);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool timed_out_before_release = flags.host()[1] != 0;
  flags.host()[0] = 1;  // release the spinner
  ASSERT_EQ(cudaStreamSynchronize(busy), cudaSuccess);
  for (const std::string& f : t.failures) ADD_FAILURE() << f;
  EXPECT_EQ(t.verified, static_cast<std::int64_t>(sequence.size()));
  EXPECT_FALSE(timed_out_before_release)
      << sequence.size() << " calls on one stream took " << seconds << " s: they waited for the spinning kernel on "
      << "another stream (device-wide synchronization or legacy default stream use); slowest: "
      << slowest;
  std::cout << "[ verified ] " << sequence.size() << " calls on one stream in " << seconds
            << " s while another stream was busy\n";
}

}  // namespace
}  // namespace ewise
