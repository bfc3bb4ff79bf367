#!/usr/bin/env bash
# scripts/gpu_reliability.sh — the GPU half of the reliability suite in one command, for a GPU
# machine: build, then the concurrency / failure-path / large-size tests, the compute-sanitizer
# sweep (scripts/sanitize_gpu.sh) and the soak (tools/soak.cu), each logged to LOG_DIR.
#
#   scripts/gpu_reliability.sh [LOG_DIR=reliability-logs]
#
# Environment:
#   STEPS           which steps, in order (default "build tests large soak sanitize")
#   BUILD_DIR       build directory (default build)
#   SOAK_SECONDS    soak length (default 120; "rest": what is left of BUDGET minus 20 s)
#   SANITIZE_TOOLS  tools for sanitize_gpu.sh (default: all of them)
#   BUDGET          seconds for the whole script (default 0 = none): each step gets at most
#                   what is left, so a slow step cannot take the logs of the others with it.
# Exit status 0 only when every step that ran passed. A summary line per step is printed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logs="${1:-reliability-logs}"
mkdir -p "$logs"
build="${BUILD_DIR:-build}"
steps=(${STEPS:-build tests large soak sanitize})
budget="${BUDGET:-0}"
export EWISE_REQUIRE_GPU=1

left() {  # seconds left of the budget (a large number when there is none)
  if [[ $budget -gt 0 ]]; then echo $((budget - SECONDS)); else echo 100000; fi
}

status=0
summary=()
run_step() {  # name, command...
  local name=$1
  shift
  local t=$(left)
  if [[ $t -le 5 ]]; then
    summary+=("$(printf '%-9s NOT RUN (out of time)' "$name")")
    status=1
    return
  fi
  local start=$SECONDS
  timeout --kill-after=10 "$t" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local result=ok
  [[ $rc -ne 0 ]] && { result="FAILED (exit $rc$([[ $rc -eq 124 ]] && echo ', out of time'))"; status=1; }
  summary+=("$(printf '%-9s %-28s %4ss  %s' "$name" "$result" $((SECONDS - start)) "$(tail -n 1 "$logs/$name.log")")")
  echo "${summary[-1]}"
}

for step in "${steps[@]}"; do
  case $step in
    build)
      run_step build bash -c "cmake -S '$root' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=\${CMAKE_CUDA_ARCHITECTURES:-90-real} -DEWISE_BUILD_BENCH=OFF \
        -DEWISE_BUILD_CLI=OFF -DEWISE_BUILD_EXAMPLES=OFF && \
        cmake --build '$build' --target ewise_reliability_tests ewise_soak ewise_gpu_tests -- -k 0" ;;
    tests)  # from their own binary: runs even when another part of ewise_gpu_tests does not build
      run_step tests "$build/tools/ewise_reliability_tests" \
        --gtest_filter='Concurrency.*:FailurePaths.*:FailurePathsChild.*' ;;
    large)
      run_step large "$build/tools/ewise_reliability_tests" --gtest_filter='Large.*' ;;
    suite)  # everything else, unsanitized (to tell sanitizer findings from plain failures)
      run_step suite "$build/tests/ewise_gpu_tests" \
        --gtest_filter='*:-Large.*:Concurrency.*:FailurePaths.*:FailurePathsChild.*' ;;
    soak)
      secs="${SOAK_SECONDS:-120}"
      [[ $secs == rest ]] && secs=$(($(left) - 20))
      [[ $secs -lt 30 ]] && secs=30
      run_step soak "$build/tools/ewise_soak" --seconds "$secs" --report 30 ;;
    sanitize)
      run_step sanitize env SANITIZE_LOG_DIR="$logs/sanitize" "$root/scripts/sanitize_gpu.sh" \
        "$build" ${SANITIZE_TOOLS:-}
      # One compressed file for the per-tool logs (they are long, and fewer files travel better).
      tar -C "$logs" -czf "$logs/sanitize-logs.tgz" sanitize && rm -rf "$logs/sanitize" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
echo "== gpu_reliability summary (logs in $logs)"
printf '%s\n' "${summary[@]}"
exit $status
