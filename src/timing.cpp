// src/timing.cpp — see timing.hpp.
#include "timing.hpp"

#include <algorithm>
#include <chrono>

#include "ewise/error.hpp"

namespace ewise::detail {
namespace {

struct Event {
  cudaEvent_t e = nullptr;
  Event() { EWISE_CUDA_CHECK(cudaEventCreate(&e)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)cudaEventDestroy(e); }
};

}  // namespace

std::vector<double> times_ms(bool gpu, cudaStream_t stream, int reps,
                             const std::function<void()>& f) {
  std::vector<double> t;
  if (gpu) {
    const Event start, stop;
    for (int r = 0; r < reps; ++r) {
      EWISE_CUDA_CHECK(cudaEventRecord(start.e, stream));
      f();
      EWISE_CUDA_CHECK(cudaEventRecord(stop.e, stream));
      EWISE_CUDA_CHECK(cudaEventSynchronize(stop.e));
      float ms = 0;
      EWISE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e));
      t.push_back(ms);
    }
    return t;
  }
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

double median_ms(bool gpu, cudaStream_t stream, int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t = times_ms(gpu, stream, reps, f);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ewise::detail
