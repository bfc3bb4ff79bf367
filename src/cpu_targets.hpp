// src/cpu_targets.hpp — EWISE_CPU_TARGETS, which builds a CPU backend loop for AVX2 and for
// the baseline (EWISE_CPU_X86 where it does), used by dense/cpu.cpp and
// sparse/compressed_host.cpp.
#pragma once

/// A loop marked EWISE_CPU_TARGETS is built twice on x86-64 Linux by GCC (Clang 14 takes no
/// target_clones on templates nor "f16c" in __builtin_cpu_supports: it builds the portable
/// loops), for AVX2 and the baseline, and the loader picks one by the CPU it runs on: AVX2
/// halves the instructions of a loop that is otherwise issue-bound on SSE2 (f32 add with its NaN
/// rule). FMA stays off (AVX2 does not include it; the files are also built with
/// -ffp-contract=off, CMakeLists.txt), so the results stay the reference's. Not under
/// ThreadSanitizer: the loader runs a clone's resolver before the sanitizer's runtime starts,
/// and the instrumented resolver crashes there.
#if defined(__SANITIZE_THREAD__)
#define EWISE_CPU_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EWISE_CPU_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(EWISE_CPU_NO_CLONES)
#define EWISE_CPU_X86 1
#define EWISE_CPU_TARGETS __attribute__((target_clones("avx2", "default")))
#else
#define EWISE_CPU_X86 0
#define EWISE_CPU_TARGETS
#endif
