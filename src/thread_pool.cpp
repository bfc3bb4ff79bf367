// src/thread_pool.cpp — see thread_pool.hpp.
#include "thread_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace ewise::detail {
namespace {

/// A positive integer environment variable's value, or 0.
int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n > 0 && n <= 4096 ? static_cast<int>(n) : 0;
}

int configured_threads() {
  if (const int n = env_count("EWISE_NUM_THREADS")) return n;
  if (const int n = env_count("OMP_NUM_THREADS")) return n;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

thread_local bool in_pool_thread = false;

/// Every part on the calling thread; the first exception rethrown after the last part.
void run_inline(int parts, const std::function<void(int)>& part) {
  std::exception_ptr error;
  for (int i = 0; i < parts; ++i) {
    try {
      part(i);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}
/// Set in a child process made by fork(): the pool's threads did not come with it, so every
/// call there runs on the calling thread (Python's multiprocessing and PyTorch's DataLoader
/// fork).
bool forked_child = false;

class Pool {
 public:
  /// size - 1 threads of its own (the calling thread takes parts too).
  explicit Pool(int size) {
    pthread_atfork(nullptr, nullptr, [] { forked_child = true; });
    for (int i = 1; i < size; ++i) std::thread([this] { serve(); }).detach();
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void run(int parts, const std::function<void(int)>& part) {
    if (in_pool_thread || forked_child) return run_inline(parts, part);
    std::unique_lock<std::mutex> busy(run_, std::try_to_lock);
    if (!busy.owns_lock()) return run_inline(parts, part);
    {
      const std::lock_guard<std::mutex> g(m_);
      job_ = &part;
      parts_ = parts;
      next_ = done_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> g(m_);
    finished_.wait(g, [&] { return done_ == parts_; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  /// Takes parts of the current job until none is left.
  void work() {
    for (;;) {
      const std::function<void(int)>* job = nullptr;
      int i = 0;
      {
        const std::lock_guard<std::mutex> g(m_);
        if (job_ == nullptr || next_ >= parts_) return;
        job = job_;
        i = next_++;
      }
      std::exception_ptr error;
      try {
        (*job)(i);
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard<std::mutex> g(m_);
      if (error && !error_) error_ = error;
      if (++done_ == parts_) finished_.notify_one();
    }
  }

  void serve() {
    in_pool_thread = true;
    unsigned long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> g(m_);
        wake_.wait(g, [&] { return generation_ != seen; });
        seen = generation_;
      }
      work();
    }
  }

  std::mutex run_;  ///< held by the call running on the pool
  std::mutex m_;    ///< guards what follows
  std::condition_variable wake_, finished_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0, next_ = 0, done_ = 0;
  unsigned long generation_ = 0;
  std::exception_ptr error_;
};

/// The pool, made at first use and never destroyed: its threads wait until the process ends
/// (joining them from a static destructor would also run in a forked child, which has none).
Pool& pool() {
  static Pool* p = new Pool(cpu_threads());
  return *p;
}

}  // namespace

int cpu_threads() {
  static const int n = configured_threads();
  return n;
}

int parts_for(std::int64_t elements) {
  const std::int64_t most = elements / kElementsPerPart;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(cpu_threads(), most)));
}

void run_parts(int parts, const std::function<void(int)>& part) {
  // A call of one part, or a process of one thread, never starts the pool.
  if (parts <= 1 || cpu_threads() == 1) return run_inline(parts, part);
  pool().run(parts, part);
}

}  // namespace ewise::detail
