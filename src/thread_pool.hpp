// src/thread_pool.hpp — the CPU backend's threads: one process-wide pool that splits a large
// call into parts (dense/cpu.cpp). Sized once by EWISE_NUM_THREADS, else OMP_NUM_THREADS, else
// the hardware's threads, and started by the first call of more than one part. A call that finds the pool busy (another thread
// of the caller's is running a call on it), or that comes from one of the pool's own threads,
// runs its parts on the calling thread: the pool never holds more threads than its size, however
// many threads of the caller's call into ewise.
#pragma once

#include <cstdint>
#include <functional>

namespace ewise::detail {

/// Elements a part of a call split over the threads takes at least: under twice as many a call
/// runs on the calling thread alone (2-core AMD EPYC VM, f32 add: a part of 2^18 elements takes
/// ~0.2 ms, against ~10 us to hand it to a thread).
inline constexpr std::int64_t kElementsPerPart = std::int64_t{1} << 18;

/// Threads that run_parts may use, the calling thread included (at least 1).
int cpu_threads();

/// The parts to split `elements` of work into: at most cpu_threads(), each of at least
/// kElementsPerPart (at least 1).
int parts_for(std::int64_t elements);

/// Calls part(i) for i in [0, parts), on the pool's threads and the calling thread, and returns
/// when all have returned; the first exception a part throws is rethrown here (the other parts
/// still run). parts <= 1, a pool of one thread, a busy pool: every part on the calling thread.
void run_parts(int parts, const std::function<void(int)>& part);

}  // namespace ewise::detail
