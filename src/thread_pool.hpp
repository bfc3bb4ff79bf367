// src/thread_pool.hpp — the CPU backend's threads: one process-wide pool that splits a large
// call into parts (dense/cpu.cpp). Sized once by EWISE_NUM_THREADS, else OMP_NUM_THREADS, else
// the hardware's threads, and started by the first call of more than one part. A call that finds the pool busy (another thread
// of the caller's is running a call on it), or that comes from one of the pool's own threads,
// runs its parts on the calling thread: the pool never holds more threads than its size, however
// many threads of the caller's call into ewise.
#pragma once

#include <functional>

namespace ewise::detail {

/// Threads that run_parts may use, the calling thread included (at least 1).
int cpu_threads();

/// Calls part(i) for i in [0, parts), on the pool's threads and the calling thread, and returns
/// when all have returned; the first exception a part throws is rethrown here (the other parts
/// still run). parts <= 1, a pool of one thread, a busy pool: every part on the calling thread.
void run_parts(int parts, const std::function<void(int)>& part);

}  // namespace ewise::detail
