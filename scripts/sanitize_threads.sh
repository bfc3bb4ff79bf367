#!/usr/bin/env bash
# scripts/sanitize_threads.sh [OUT_DIR] — the CPU backend's thread pool (src/thread_pool.cpp)
# under ThreadSanitizer and under AddressSanitizer + UndefinedBehaviorSanitizer: its tests
# (tests/test_thread_pool.cpp) built with each and run at 1, 2 and 5 threads (EWISE_NUM_THREADS).
# Any report or failed test fails the script. Needs g++ and GoogleTest; no CUDA.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-sanitize-threads}
mkdir -p "$out"
for san in thread address,undefined; do
  bin="$out/thread_pool_${san//,/_}"
  g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize="$san" -fno-sanitize-recover=all \
      -I"$root/src" "$root/tests/test_thread_pool.cpp" "$root/src/thread_pool.cpp" \
      -lgtest -lgtest_main -pthread -o "$bin"
  for threads in 1 2 5; do
    echo "== $san, EWISE_NUM_THREADS=$threads"
    EWISE_NUM_THREADS=$threads TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
      "$bin" --gtest_brief=1
  done
done
echo "sanitize_threads: no reports"
