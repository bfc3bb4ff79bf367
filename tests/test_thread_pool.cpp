// The CPU backend's thread pool (src/thread_pool.hpp): every part runs once, whatever the parts
// against the threads; nested, concurrent and failing calls. ctest also runs these with
// EWISE_NUM_THREADS=1 and =5 (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "thread_pool.hpp"

namespace ewise::detail {
namespace {

/// How often each part of run_parts(parts) ran.
std::vector<int> runs_of(int parts) {
  std::vector<std::atomic<int>> count(static_cast<std::size_t>(parts));
  run_parts(parts, [&](int i) { ++count[static_cast<std::size_t>(i)]; });
  return std::vector<int>(count.begin(), count.end());
}

TEST(ThreadPool, EveryPartRunsOnce) {
  const int threads = cpu_threads();
  ASSERT_GE(threads, 1);
  for (int parts : {0, 1, 2, threads, threads + 1, 3 * threads + 2, 257}) {
    const std::vector<int> runs = runs_of(parts);
    for (int i = 0; i < parts; ++i) ASSERT_EQ(runs[static_cast<std::size_t>(i)], 1) << parts;
  }
}

TEST(ThreadPool, NestedAndConcurrentCallsRunOnTheCallingThread) {
  // A part that calls run_parts: its parts run on its own thread (no deadlock, all run).
  std::atomic<int> inner{0};
  run_parts(4, [&](int) { run_parts(3, [&](int) { ++inner; }); });
  EXPECT_EQ(inner.load(), 12);
  // Threads of the caller's calling at once: each call runs all its parts.
  std::vector<std::thread> callers;
  std::atomic<int> total{0};
  for (int c = 0; c < 6; ++c)
    callers.emplace_back([&] {
      for (int k = 0; k < 50; ++k) run_parts(5, [&](int) { ++total; });
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 6 * 50 * 5);
}

TEST(ThreadPool, APartsExceptionReachesTheCaller) {
  std::atomic<int> ran{0};
  EXPECT_THROW(run_parts(8,
                         [&](int i) {
                           ++ran;
                           if (i == 5) throw std::runtime_error("part 5");
                         }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 8);  // the other parts still ran
  EXPECT_EQ(runs_of(7), std::vector<int>(7, 1));  // and the pool still works
}

}  // namespace
}  // namespace ewise::detail
