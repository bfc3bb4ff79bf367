// tools/soak.cu — the soak test: thousands of random calls of every ewise operation in one
// process (dense with every kernel, dtype and layout, the functor entry, the allocating form,
// every sparse operation and algorithm, .npy/.mtx round trips of device data), every result
// verified against the CPU reference, on several streams in turn. Device memory is measured
// after a warm-up round and at the end (and every --report seconds): ewise's memory pool's bytes
// in use must be exactly the same and the device's used memory (after trimming the pool) may
// not grow by more than 4 MiB.
//
//   ewise_soak [--seconds S] [--calls N] [--seed X] [--streams K] [--report S] [--scratch DIR]
//
// Stops after S seconds (default 120) or N calls, whichever comes first (N = 0: no limit).
// Kernels are loaded eagerly (CUDA_MODULE_LOADING=EAGER unless set otherwise), so that a kernel
// first used late in the run does not show up as device memory growth.
// Exit status 0 only when every result was right and memory stayed flat.
#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "testing/memory_use.hpp"
#include "testing/tool_options.hpp"
#include "testing/random_calls.cuh"

namespace {

struct Args {
  double seconds = 120;
  std::int64_t calls = 0;
  std::uint64_t seed = 0;
  bool seed_given = false;
  int streams = 2;
  double report = 15;
  std::string scratch;
};

constexpr const char* kUsage =
    "[--seconds S] [--calls N] [--seed X] [--streams K] [--report S] [--scratch DIR]";

Args parse_args(int argc, char** argv) {
  Args a;
  ewise::tools::parse_options(argc, argv, "ewise_soak", kUsage, [&](const std::string& k, const char* v) {
    if (k == "--seconds") a.seconds = std::atof(v);
    else if (k == "--calls") a.calls = std::atoll(v);
    else if (k == "--seed") {
      a.seed = std::strtoull(v, nullptr, 10);
      a.seed_given = true;
    } else if (k == "--streams") a.streams = std::atoi(v);
    else if (k == "--report") a.report = std::atof(v);
    else if (k == "--scratch") a.scratch = v;
    else return false;
    return true;
  });
  if (a.streams < 1 || a.seconds <= 0 || a.calls < 0 || a.report <= 0)
    ewise::tools::exit_usage("ewise_soak", kUsage, "bad option value");
  return a;
}

using ewise::tools::MemoryUse;
using ewise::tools::memory_use;

std::string mib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", bytes / (1 << 20));
  return s;
}

constexpr std::size_t kDeviceSlack = std::size_t{4} << 20;

}  // namespace

int main(int argc, char** argv) {
  using namespace ewise;
  const Args args = parse_args(argc, argv);
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);  // before the first CUDA call
  if (!gpu_available()) {
    std::fprintf(stderr, "ewise_soak: no GPU: %s\n", gpu_unavailable_reason().c_str());
    return 2;
  }
  const std::uint64_t seed = args.seed_given ? args.seed : verify::seed_from_env_or_random();
  const DeviceInfo info = current_device_info();
  std::printf("soak: %s, seed %llu, %d streams, up to %.0f s%s\n", info.name.c_str(),
              static_cast<unsigned long long>(seed), args.streams, args.seconds,
              args.calls ? (", " + std::to_string(args.calls) + " calls").c_str() : "");

  const soak::SharedInputs shared = soak::make_shared_inputs(seed);
  soak::CallerOptions options;
  options.max_extent_log2 = 8;
  options.max_elements = std::int64_t{1} << 22;
  options.max_sparse_dim = 1000;
  options.max_density = 0.1;
  options.weights = {6, 2, 2, 2, 4, 2, 2, 2, 2, 1, 1, 1, 3, 2};
  options.scratch_dir = args.scratch;
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(args.streams));
  std::vector<std::unique_ptr<soak::RandomCaller>> callers;
  for (int i = 0; i < args.streams; ++i) {
    EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[static_cast<std::size_t>(i)], cudaStreamNonBlocking));
    callers.push_back(std::make_unique<soak::RandomCaller>(seed + 7919u * static_cast<std::uint64_t>(i + 1),
                                                           shared, streams[static_cast<std::size_t>(i)], options));
  }

  std::array<std::int64_t, soak::kCallKinds> calls{}, verified{};
  std::int64_t failures = 0;
  const auto note = [&](const soak::RandomCaller::Result& r) {
    const auto k = static_cast<std::size_t>(r.call);
    ++calls[k];
    if (r.problem.empty()) {
      ++verified[k];
    } else if (++failures <= 20) {
      std::printf("FAIL %s: %s\n", soak::call_name(r.call), r.problem.c_str());
    }
  };
  // Warm-up: every kind once on every stream (module loading, pool growth), counted.
  for (auto& c : callers)
    for (int k = 0; k < soak::kCallKinds; ++k) {
      soak::RandomCaller::Result r{static_cast<soak::Call>(k), {}};
      try {
        r.problem = c->run(r.call);
      } catch (const std::exception& e) {
        r.problem = std::string("threw: ") + e.what();
      }
      note(r);
    }
  const MemoryUse start = memory_use();
  std::printf("memory at start: device used %s, pool used %s (reserved after trim %s)\n",
              mib(static_cast<double>(start.device_used)).c_str(), mib(static_cast<double>(start.pool_used)).c_str(),
              mib(static_cast<double>(start.pool_reserved)).c_str());

  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::int64_t total = 0, i = 0;
  double next_report = args.report;
  bool flat = true;
  const auto check_flat = [&](const MemoryUse& m) {
    return m.pool_used == start.pool_used && m.device_used <= start.device_used + kDeviceSlack;
  };
  while (elapsed() < args.seconds && (args.calls == 0 || total < args.calls)) {
    note(callers[static_cast<std::size_t>(i++ % args.streams)]->step());
    ++total;
    if (elapsed() >= next_report) {
      const MemoryUse m = memory_use();
      flat = flat && check_flat(m);
      std::printf("  %6.0f s: %lld calls, %lld failures; device used %s, pool used %s\n", elapsed(),
                  static_cast<long long>(total), static_cast<long long>(failures),
                  mib(static_cast<double>(m.device_used)).c_str(), mib(static_cast<double>(m.pool_used)).c_str());
      std::fflush(stdout);
      next_report += args.report;
    }
  }
  const double seconds = elapsed();
  const MemoryUse end = memory_use();
  flat = flat && check_flat(end);
  for (cudaStream_t s : streams) EWISE_CUDA_CHECK(cudaStreamDestroy(s));

  std::int64_t all_calls = 0, all_verified = 0;
  std::printf("calls by kind (verified / made):\n");
  for (int k = 0; k < soak::kCallKinds; ++k) {
    all_calls += calls[k];
    all_verified += verified[k];
    std::printf("  %-20s %8lld / %lld\n", soak::call_name(static_cast<soak::Call>(k)),
                static_cast<long long>(verified[k]), static_cast<long long>(calls[k]));
  }
  std::printf("memory at end:   device used %s, pool used %s (high water %s)\n",
              mib(static_cast<double>(end.device_used)).c_str(), mib(static_cast<double>(end.pool_used)).c_str(),
              mib(static_cast<double>(end.pool_high)).c_str());
  std::printf("soak %s: %lld calls (%lld after warm-up) in %.1f s, %lld verified, %lld failed; "
              "memory %s (device used %s -> %s, pool used %s -> %s)\n",
              failures == 0 && flat ? "PASSED" : "FAILED", static_cast<long long>(all_calls),
              static_cast<long long>(total), seconds, static_cast<long long>(all_verified),
              static_cast<long long>(failures), flat ? "flat" : "NOT FLAT",
              mib(static_cast<double>(start.device_used)).c_str(), mib(static_cast<double>(end.device_used)).c_str(),
              mib(static_cast<double>(start.pool_used)).c_str(), mib(static_cast<double>(end.pool_used)).c_str());
  return failures == 0 && flat ? 0 : 1;
}
