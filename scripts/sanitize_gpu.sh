#!/usr/bin/env bash
# scripts/sanitize_gpu.sh — runs the GPU test suite under compute-sanitizer's memcheck (with
# device leak checking), racecheck, initcheck and synccheck. Any reported error, failed test or
# non-zero exit fails the script; prints the errors per tool at the end.
#
#   scripts/sanitize_gpu.sh [BUILD_DIR=build] [TOOL...]      tools: memcheck racecheck initcheck
#                                                              synccheck failures (default: all)
#
# BUILD_DIR must hold a built tests/ewise_gpu_tests. Logs go to $SANITIZE_LOG_DIR (default
# BUILD_DIR/sanitize). Sizes are reduced for the sanitizers (they run kernels 10-100x slower):
#   EWISE_DENSE_CASES=12 (random cases per dtype in test_dense.cu), EWISE_DENSE_SMALL=1 (no
#   multi-GiB dense test), EWISE_CONCURRENCY_THREADS=4, EWISE_CONCURRENCY_ROUNDS=12.
# Left out of the main passes, with the reason:
#   Large.*, SparseGpu.MoreThan2To31Entries — tens of GiB; hours under a sanitizer.
#   Concurrency.CallsOnOneStreamDoNotWaitForAnotherStream — compute-sanitizer serializes kernel
#     launches, so the kernel spinning on one stream blocks the other stream by construction.
#   FailurePaths*, FailurePathsChild*, GpuFoundation.LaunchErrorsAreTypedAndNamed — they provoke
#     CUDA errors on purpose; the "failures" pass runs them under memcheck with API-error
#     reporting off, as a device leak check of the error paths, except the child processes that
#     fault on purpose and FailurePaths.SparseOperationsOnAFullDevice (it takes all device
#     memory, which the sanitizer needs for itself).
# racecheck runs the tests of the kernels that use shared memory (dense sliding_shared and tiled
# through the random sweep, tile-edge and functor tests; every sparse test; the threads test).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
[[ $# -gt 0 ]] && shift
tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(memcheck racecheck initcheck synccheck failures)
exe="$build/tests/ewise_gpu_tests"
[[ -x $exe ]] || { echo "sanitize_gpu: $exe not built" >&2; exit 2; }
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
[[ -x $sanitizer ]] || { echo "sanitize_gpu: compute-sanitizer not found" >&2; exit 2; }
logs="${SANITIZE_LOG_DIR:-$build/sanitize}"
mkdir -p "$logs"

export EWISE_REQUIRE_GPU=1
export EWISE_DENSE_CASES="${EWISE_DENSE_CASES:-12}" EWISE_DENSE_SMALL=1
export EWISE_CONCURRENCY_THREADS="${EWISE_CONCURRENCY_THREADS:-4}"
export EWISE_CONCURRENCY_ROUNDS="${EWISE_CONCURRENCY_ROUNDS:-12}"

excluded="Large.*:SparseGpu.MoreThan2To31Entries:Concurrency.CallsOnOneStreamDoNotWaitForAnotherStream"
excluded+=":FailurePaths.*:FailurePathsChild.*:GpuFoundation.LaunchErrorsAreTypedAndNamed"
shared_memory="DenseRandom.*:DenseGpu.SlidingSharedTileEdges:DenseGpu.TiledTileEdges"
shared_memory+=":DenseGpu.UserFunctorEveryKernel:Sparse*:Concurrency.ThreadsWithOwnStreamsCallEveryOperationAtOnce"

status=0
summary=()
for tool in "${tools[@]}"; do
  args=(--error-exitcode 99 --print-limit 100)
  filter="*:-$excluded"
  case $tool in
    memcheck) args+=(--tool memcheck --leak-check full) ;;
    racecheck) args+=(--tool racecheck --racecheck-report all); filter="$shared_memory:-$excluded" ;;
    initcheck) args+=(--tool initcheck) ;;
    synccheck) args+=(--tool synccheck) ;;
    failures)
      args+=(--tool memcheck --leak-check full --report-api-errors no)
      filter="FailurePaths.*:GpuFoundation.LaunchErrorsAreTypedAndNamed"
      filter+=":-FailurePaths.AsyncFaultIsReportedByTheNextCall:FailurePaths.SparseOperationsOnAFullDevice"
      ;;
    *) echo "sanitize_gpu: unknown tool $tool" >&2; exit 2 ;;
  esac
  log="$logs/$tool.log"
  echo "== $tool ($filter) -> $log"
  start=$SECONDS
  "$sanitizer" "${args[@]}" "$exe" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  hazards=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?, [0-9]+ warnings?\)' "$log" | tail -1 || true)
  passed=$(grep -Eo '\[  PASSED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  failed=$(grep -Eo '\[  FAILED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  skipped=$(grep -Eo '\[  SKIPPED \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  result=ok
  if [[ $rc -ne 0 || -z $errors || $errors != 0 || $failed != 0 ]]; then
    result=FAILED
    status=1
    grep -E "^========= (Invalid|Race|Uninitialized|Barrier|Program hit|Leaked|ERROR|Error)|FAILED|Failure" "$log" | head -20
  fi
  summary+=("$(printf '%-10s %-6s exit %-3s errors %-4s tests passed %-4s failed %-3s skipped %-3s %4ss %s' \
               "$tool" "$result" "$rc" "${errors:-?}" "$passed" "$failed" "$skipped" "$took" "$hazards")")
done
echo "== compute-sanitizer summary (logs in $logs)"
printf '%s\n' "${summary[@]}"
exit $status
