// src/timing.hpp — wall and GPU timing shared by the library's compare() and the CLI.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace ewise::detail {

/// Milliseconds of each of `reps` runs of f: CUDA events recorded on `stream` around each run
/// when `gpu` (f's work enqueued on that stream), else a steady clock around f.
std::vector<double> times_ms(bool gpu, cudaStream_t stream, int reps,
                             const std::function<void()>& f);

/// The median of times_ms after one untimed warm-up run (first-touch allocations, caches, lazy
/// module loading).
double median_ms(bool gpu, cudaStream_t stream, int reps, const std::function<void()>& f);

}  // namespace ewise::detail
