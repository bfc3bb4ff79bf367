#!/usr/bin/env bash
# scripts/sanitize_threads.sh [OUT_DIR] — the CPU backend's threaded paths under ThreadSanitizer
# and under AddressSanitizer + UndefinedBehaviorSanitizer. Each sanitizer builds the whole
# library and the host tests without CUDA (EWISE_WITH_CUDA=OFF: every library source is
# instrumented, none goes through nvcc) and runs the whole host suite (the pool's own tests, the
# dense calls and canonical sparse merges split over it, the sorts, every other CPU-backend
# call) at 1, 2 and 5 threads (EWISE_NUM_THREADS). Any report or failed test fails the script.
# Needs g++, CMake and GoogleTest; no CUDA. JOBS: parallel compile jobs (default 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-sanitize-threads}
jobs=${JOBS:-2}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
for san in thread address,undefined; do
  build="$out/${san//,/_}"
  cmake -S "$root" -B "$build" "${generator[@]}" -DEWISE_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug \
    -DEWISE_BUILD_PYTHON=OFF -DEWISE_BUILD_CLI=OFF \
    -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=$san -fno-sanitize-recover=all" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$san" >/dev/null
  cmake --build "$build" --target ewise_host_tests -j "$jobs"
  for threads in 1 2 5; do
    echo "== $san, EWISE_NUM_THREADS=$threads"
    EWISE_NUM_THREADS=$threads TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
      "$build/tests/ewise_host_tests" --gtest_brief=1
  done
done
echo "sanitize_threads: no reports"
