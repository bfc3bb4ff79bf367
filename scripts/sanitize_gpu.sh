#!/usr/bin/env bash
# scripts/sanitize_gpu.sh — runs the GPU test suite under compute-sanitizer's memcheck (with
# device leak checking), racecheck, initcheck and synccheck. Any reported error, failed test or
# non-zero exit fails the script; prints the errors per tool at the end.
#
#   scripts/sanitize_gpu.sh [--shard K/N | --jobs J] [--timeout S] [BUILD_DIR=build] [TOOL...]
#       tools: memcheck racecheck initcheck synccheck failures (default: all)
#       --shard K/N: run only shard K (0-based) of N of each tool's tests (GoogleTest's own
#       sharding, GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS), so that a sweep can be split over
#       several runs of bounded length; the N shards of a tool together run each test once.
#       --jobs J: run every tool's tests as J shards, J sanitizer processes at a time on the one
#       GPU. The sanitizers are bound by host instrumentation, not the GPU, so on a machine
#       with J spare cores the sweep takes about 1/J of the serial time (racecheck alone is
#       ~1,400 s serial on an H100).
#       --timeout S: a sanitizer run still going after S seconds is killed and fails the sweep
#       ("timed out"), so one stuck run cannot take the whole sweep's time.
#
# BUILD_DIR must hold a built tests/ewise_gpu_tests. Logs go to $SANITIZE_LOG_DIR (default
# BUILD_DIR/sanitize). Sizes are reduced for the sanitizers (they run kernels 10-100x slower),
# every test still runs: EWISE_SANITIZER_SIZES=1 (one dtype per element size, fewer tile edges
# and one union op per check in the sparse tests: tests/testing/gpu_test.hpp,
# tests/test_sparse.cu), EWISE_DENSE_CASES=12 (random cases per dtype in test_dense.cu),
# EWISE_DENSE_SMALL=1 (no multi-GiB dense test), EWISE_CONCURRENCY_THREADS=4,
# EWISE_CONCURRENCY_ROUNDS=12.
# Left out of the main passes, with the reason:
#   Large.*, SparseGpu.MoreThan2To31Entries — tens of GiB; hours under a sanitizer.
#   Concurrency.CallsOnOneStreamDoNotWaitForAnotherStream — compute-sanitizer serializes kernel
#     launches, so the kernel spinning on one stream blocks the other stream by construction.
#   FailurePaths*, FailurePathsChild*, GpuFoundation.LaunchErrorsAreTypedAndNamed — they provoke
#     CUDA errors on purpose; the "failures" pass runs them under memcheck with API-error
#     reporting off, as a device leak check of the error paths, except the child processes that
#     fault on purpose and FailurePaths.SparseOperationsOnAFullDevice (it takes all device
#     memory, which the sanitizer needs for itself).
#   Residency.* — the residency check asks the driver about addresses that belong to no
#     allocation (cuMemGetAddressRange fails, by design); the "failures" pass runs them.
# Every tool runs the same tests (racecheck too: the sparse pipelines' CUB passes, the tiled and
# sliding_shared kernels and user functors all meet shared memory somewhere in the suite).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shards=()  # K/N of each run of a tool; "" runs all its tests at once
jobs=1
timeout_s=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --shard)
      [[ ${2:-} =~ ^([0-9]+)/([1-9][0-9]*)$ ]] && ((BASH_REMATCH[1] < BASH_REMATCH[2])) ||
        { echo "sanitize_gpu: --shard takes K/N with 0 <= K < N, not '${2:-}'" >&2; exit 2; }
      shards=("$2") ;;
    --jobs)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] ||
        { echo "sanitize_gpu: --jobs takes a positive count, not '${2:-}'" >&2; exit 2; }
      jobs=$2 ;;
    --timeout)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] ||
        { echo "sanitize_gpu: --timeout takes seconds > 0, not '${2:-}'" >&2; exit 2; }
      timeout_s=$2 ;;
    *) echo "sanitize_gpu: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
if ((jobs > 1)); then
  ((${#shards[@]} == 0)) || { echo "sanitize_gpu: --shard and --jobs exclude each other" >&2; exit 2; }
  for ((k = 0; k < jobs; ++k)); do shards+=("$k/$jobs"); done
fi
((${#shards[@]} > 0)) || shards=("")
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

export EWISE_REQUIRE_GPU=1 EWISE_SANITIZER_SIZES=1
export EWISE_DENSE_CASES="${EWISE_DENSE_CASES:-12}" EWISE_DENSE_SMALL=1
export EWISE_CONCURRENCY_THREADS="${EWISE_CONCURRENCY_THREADS:-4}"
export EWISE_CONCURRENCY_ROUNDS="${EWISE_CONCURRENCY_ROUNDS:-12}"

excluded="Large.*:SparseGpu.MoreThan2To31Entries:Concurrency.CallsOnOneStreamDoNotWaitForAnotherStream"
excluded+=":FailurePaths.*:FailurePathsChild.*:GpuFoundation.LaunchErrorsAreTypedAndNamed:Residency.*"

# The distinct reports in a log (kind and where, addresses and sizes folded), most frequent
# first: enough to triage when only the script's output comes back.
distinct_reports() {
  awk '
    /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER|Target application|errors were not printed/ {
      kind = $0; sub(/^========= /, "", kind); want = 1; detail = ""; next }
    want && /^=========  +[A-Za-z]/ {
      line = $0; sub(/^=========  +/, "", line)
      sub(/ \[0x[0-9a-f]+\].*/, "", line); sub(/\+0x[0-9a-f]+ in /, " in ", line)
      if (line ~ /^(Saved host backtrace|by thread|Address)/) next
      if (detail == "") detail = line
      if (kind ~ /^Host API/ && line !~ /^Host Frame:/) next  # the API call: wait for its caller
      print kind " | " substr(detail (detail != line ? " <- " line : ""), 1, 200); want = 0 }
  ' "$1" | sed -E 's/0x[0-9a-f]+/0x../g; s/[0-9]+ bytes/N bytes/g' | sort | uniq -c | sort -rn |
    head -"${2:-8}"
}

# One sanitizer run: tool $1 over shard $2 ("" for all its tests); writes its log and a
# one-line result ("ok" or "FAILED" first) to $log.result.
run_tool() {
  local tool=$1 shard=$2 args=(--error-exitcode 99 --print-limit 1000) filter="*:-$excluded"
  case $tool in
    memcheck) args+=(--tool memcheck --leak-check full) ;;
    racecheck) args+=(--tool racecheck --racecheck-report all) ;;
    initcheck) args+=(--tool initcheck) ;;
    synccheck) args+=(--tool synccheck) ;;
    failures)
      args+=(--tool memcheck --leak-check full --report-api-errors no)
      filter="FailurePaths.*:GpuFoundation.LaunchErrorsAreTypedAndNamed:Residency.*"
      filter+=":-FailurePaths.AsyncFaultIsReportedByTheNextCall:FailurePaths.SparseOperationsOnAFullDevice"
      ;;
  esac
  local log="$logs/$tool${shard:+.shard${shard/\//of}}.log"
  rm -f "$log.result" "$log.detail"
  local -a env_shard=()
  [[ -n $shard ]] && env_shard=(GTEST_SHARD_INDEX="${shard%/*}" GTEST_TOTAL_SHARDS="${shard#*/}")
  local -a limit=()
  ((timeout_s > 0)) && limit=(timeout --kill-after=10 "$timeout_s")
  echo "== $tool${shard:+ shard $shard} ($filter) -> $log"
  local start=$SECONDS rc
  env "${env_shard[@]}" "${limit[@]}" "$sanitizer" "${args[@]}" "$exe" --gtest_filter="$filter" \
    >"$log" 2>&1
  rc=$?
  local took=$((SECONDS - start))
  local errors hazards passed failed skipped result=ok note=""
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  hazards=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?, [0-9]+ warnings?\)' "$log" | tail -1 || true)
  # racecheck prints its own summary instead of an error summary: its errors are the hazards'.
  [[ -z $errors && -n $hazards ]] && errors=$(grep -Eo '[0-9]+ errors?' <<<"$hazards" | grep -Eo '[0-9]+')
  passed=$(grep -Eo '\[  PASSED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  failed=$(grep -Eo '\[  FAILED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  skipped=$(grep -Eo '\[  SKIPPED \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' || echo 0)
  if ((rc == 124 || rc == 137)) && ((timeout_s > 0)); then
    note="timed out after ${timeout_s}s in $(grep -E '^\[ RUN      \]' "$log" | tail -1 | cut -c14-)"
  fi
  if [[ $rc -ne 0 || -z $errors || $errors != 0 || $failed != 0 ]]; then
    result=FAILED
    { grep -E "FAILED|Failure" "$log" | head -10; [[ -n $note ]] && echo "   $note"; } >"$log.detail"
  fi
  if [[ ${errors:-0} != 0 ]]; then
    { echo "   distinct reports (of the first 1000 printed):"; distinct_reports "$log" | sed 's/^/   /'; } >>"$log.detail"
  fi
  printf '%-6s %-10s %-8s exit %-3s errors %-4s tests passed %-4s failed %-3s skipped %-3s %4ss %s%s\n' \
    "$result" "$tool" "${shard:-all}" "$rc" "${errors:-?}" "$passed" "$failed" "$skipped" "$took" \
    "$hazards" "${note:+ ($note)}" >"$log.result"
}

for tool in "${tools[@]}"; do
  case $tool in
    memcheck | racecheck | initcheck | synccheck | failures) ;;
    *) echo "sanitize_gpu: unknown tool $tool" >&2; exit 2 ;;
  esac
done
results=()
for tool in "${tools[@]}"; do
  for shard in "${shards[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
    run_tool "$tool" "$shard" &
    results+=("$logs/$tool${shard:+.shard${shard/\//of}}.log")
  done
done
wait
status=0
echo "== compute-sanitizer summary (logs in $logs)"
for log in "${results[@]}"; do
  if [[ ! -s $log.result ]] || ! grep -q '^ok ' "$log.result"; then
    status=1
    [[ -f $log.detail ]] && cat "$log.detail"
  fi
  cat "$log.result" 2>/dev/null || echo "FAILED $log: no result"
done
exit $status
