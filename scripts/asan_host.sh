#!/usr/bin/env bash
# scripts/asan_host.sh — builds the host test suite with AddressSanitizer (LeakSanitizer
# included) and UndefinedBehaviorSanitizer and runs it; any report fails the script.
#
#   scripts/asan_host.sh [BUILD_DIR] [-- GTEST_ARGS...]
#
# The whole library is instrumented: the C++ sources by g++ directly, the host side of the .cu
# sources by g++ through nvcc (-Xcompiler); device code is not (compute-sanitizer covers it:
# scripts/sanitize_gpu.sh). The fuzz corpus replay (tests/test_fuzz_corpus.cpp) runs here with
# the sanitizers, so a corpus input that triggers undefined behaviour fails this script.
# BUILD_DIR defaults to /work/build-hardening/asan (./build-asan off this machine).
# Environment: JOBS (parallel compile jobs, default 2), CMAKE_CUDA_ARCHITECTURES (default 90-real).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
default_build=/work/build-hardening/asan
[[ -d /work ]] || default_build="$root/build-asan"
build="${1:-$default_build}"
[[ $# -gt 0 ]] && shift
[[ ${1:-} == -- ]] && shift
jobs="${JOBS:-2}"

san=(-fsanitize=address -fsanitize=undefined -fno-sanitize-recover=undefined
     -fno-omit-frame-pointer)
cuda_san=()
for f in "${san[@]}"; do cuda_san+=("-Xcompiler=$f"); done

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90-real}" \
  -DEWISE_BUILD_BENCH=OFF -DEWISE_BUILD_CLI=OFF -DEWISE_BUILD_EXAMPLES=OFF \
  -DCMAKE_CXX_FLAGS="-O1 ${san[*]}" \
  -DCMAKE_CUDA_FLAGS="${cuda_san[*]}" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address -fsanitize=undefined" >/dev/null
cmake --build "$build" --target ewise_host_tests -j "$jobs"

# protect_shadow_gap=0: the CUDA driver maps memory where ASan would otherwise reserve its
# shadow gap (matters only where a GPU is present). Leaks are reported by LeakSanitizer at exit.
export ASAN_OPTIONS="detect_leaks=1:protect_shadow_gap=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
log="$build/host_tests_asan.log"
set +e
"$build/tests/ewise_host_tests" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
reports=$(grep -cE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$log" || true)
tests=$(grep -Eo '\[==========\] [0-9]+ tests? from [0-9]+ test suites? ran' "$log" | tail -1 || true)
echo "== asan_host: exit $rc, sanitizer reports: $reports, ${tests:-no test summary} (log $log)"
[[ $rc -eq 0 && $reports -eq 0 ]]
