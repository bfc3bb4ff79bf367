#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets (clang++ with AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET=60] [TARGET...]     targets: npy mtx plan api (default: all)
#
# Environment: EWISE_FUZZ_BUILD (build and working-corpus directory, default
# /work/build-hardening/fuzz or ./build-fuzz outside that machine), CXX (default clang++),
# FUZZ_JOBS (parallel
# fuzzing processes per target, default 1), FUZZ_KEEP_GOING=1 (look past known bugs: runs in
# libFuzzer's fork mode with -ignore_crashes=1, undefined behaviour is reported but does not stop
# the run; every crash is still saved and the run still fails).
# Seeds come from fuzz/corpus/<target>/ (read-only; new inputs go to the working corpus in the
# build directory) with fuzz/<target>.dict where present. Prints executions per target; exits
# non-zero when a target crashes, leaks, hangs or reports undefined behaviour (the reproducer is
# left in the build directory as crash-*/leak-*/timeout-*; add it to fuzz/corpus/<target>/).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(npy mtx plan api)
default_build=/work/build-hardening/fuzz
[[ -d /work ]] || default_build="$root/build-fuzz"
build="${EWISE_FUZZ_BUILD:-$default_build}"
cxx="${CXX:-clang++}"
jobs="${FUZZ_JOBS:-1}"

# The library as the build without CUDA compiles it (CMakeLists.txt, EWISE_WITH_CUDA=OFF): every
# host source but residency.cpp, the no-driver runtime API of src/no_cuda, and the launchers of
# src/no_cuda/no_device.cpp, which throw CudaError if reached (the entries pass host views
# only). No CUDA toolkit is needed and nothing touches a GPU.
sources=()
for f in "$root"/src/*.cpp "$root"/dense/*.cpp "$root"/sparse/*.cpp "$root"/src/no_cuda/no_device.cpp; do
  [[ $f == */src/residency.cpp ]] || sources+=("${f#"$root"/}")
done
# -ffp-contract=off: the CPU backend's loops must give the reference's bits (CMakeLists.txt).
flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fsanitize-recover=undefined -ffp-contract=off -DEWISE_NO_CUDA -I"$root/include"
       -I"$root/src" -I"$root/src/no_cuda")

mkdir -p "$build/obj"
objs=()
for s in "${sources[@]%.cpp}" fuzz/entries_io fuzz/entries_plan fuzz/entries_dense fuzz/entries_api \
         fuzz/api_oracle fuzz/api_oracle_rules fuzz/api_oracle_binary fuzz/api_call fuzz/api_decode fuzz/api_decode_values fuzz/api_decode_dense \
         fuzz/api_run; do
  src="$root/$s.cpp"
  obj="$build/obj/${s//\//_}.o"
  if [[ ! -f $obj || $src -nt $obj || -n $(find "$root/include" "$root/src" "$root/dense" "$root/sparse" "$root/fuzz" -newer "$obj" -name '*.h*' -print -quit) ]]; then
    # The checking harness is not coverage-instrumented: coverage should steer towards new
    # behaviour of the code under test, and tracing the harness's loops costs most of the time.
    if [[ $s == fuzz/* ]]; then
      "$cxx" "${flags[@]/-fsanitize=fuzzer-no-link,/-fsanitize=}" -c "$src" -o "$obj"
    else
      "$cxx" "${flags[@]}" -c "$src" -o "$obj"
    fi
  fi
  objs+=("$obj")
done

status=0
summary=()
for t in "${targets[@]}"; do
  exe="$build/fuzz_$t"
  "$cxx" "${flags[@]/fuzzer-no-link/fuzzer}" -DEWISE_FUZZ_ENTRY="${t}_entry" \
    "$root/fuzz/target.cpp" "${objs[@]}" -pthread -o "$exe"
  work="$build/corpus/$t"
  mkdir -p "$work" "$build/artifacts/$t"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=8192
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/")
  [[ -f $root/fuzz/$t.dict ]] && args+=(-dict="$root/fuzz/$t.dict")
  halt=1
  if [[ ${FUZZ_KEEP_GOING:-0} == 1 ]]; then
    halt=0
    args+=(-fork="$jobs" -ignore_crashes=1)
  elif [[ $jobs -gt 1 ]]; then
    args+=(-fork="$jobs")
  fi
  log="$build/fuzz_$t.log"
  echo "== fuzzing $t for ${seconds}s (log $log)"
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
     UBSAN_OPTIONS=halt_on_error=$halt:print_stacktrace=1 \
     "$exe" "${args[@]}" "$work" "$root/fuzz/corpus/$t" >"$log" 2>&1; then
    result=ok
    if grep -qE "runtime error:|crash: [0-9]+/[0-9]+/[1-9]" "$log"; then
      result=FAILED
      status=1
    fi
  else
    result=FAILED
    status=1
  fi
  [[ $result == FAILED ]] &&
    { grep -E "ERROR|runtime error|invariant violated|Test unit written" "$log" | sort -u | head -20 || true; }
  # Executions: the final stats of a plain run, or the last status line of a fork-mode run.
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | awk '{s+=$1} END {print s+0}' || true)
  [[ ${execs:-0} == 0 ]] && execs=$(grep -Eo '^#[0-9]+:' "$log" | tail -1 | tr -d '#:' || true)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  new_artifacts=$(find "$build/artifacts/$t" -type f -newer "$exe")
  crashes=$(printf '%s' "$new_artifacts" | grep -c . || true)
  for a in $new_artifacts; do  # replay each reproducer once to show why it failed
    echo "   reproducer $a:"
    UBSAN_OPTIONS=halt_on_error=1 "$exe" "$a" 2>&1 |
      grep -E "runtime error|invariant violated|ERROR: (Address|Leak)Sanitizer|terminate called|what\(\)" |
      head -2 | sed 's/^/     /' || true
  done
  units=$(find "$work" -type f | wc -l)
  [[ $crashes -gt 0 ]] && { result=FAILED; status=1; }
  summary+=("$(printf '%-5s %-6s %10s execs in %ss  coverage %s edges  working corpus %s inputs  new reproducers %s' \
               "$t" "$result" "$execs" "$seconds" "$cov" "$units" "$crashes")")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
