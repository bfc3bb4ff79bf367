#!/usr/bin/env bash
# bench/run_all.sh [RECORD] [ewise_bench options, e.g. --quick]
#
# The one command behind docs/benchmarks.md: configures and builds ewise_bench (Ninja, Release,
# CUDA arch $EWISE_CUDA_ARCH or 90-real) in $EWISE_BENCH_BUILD (default build-bench/), runs every
# suite, then bench/peers.py (PyTorch, CuPy), bench/summarize.py and bench/plot.py. The record
# (bench/record.py describes it) goes to RECORD, default bench/results/<kind>, where the device
# kind comes from GPU 0's name (h100, h200, ...) unless $EWISE_BENCH_KIND names it:
#   ewise.json (meta: commit, device, kind, toolchain; one result per case)   peers.json
#   summary.md peers.md (tables made from the JSON)   plots/*.png
# A run replaces the record's files; the build log stays in the build directory. The commit
# reported is $EWISE_COMMIT, else git's HEAD (with -dirty), else "unknown". The structures and
# union suites write their inputs (~2.5 GB and ~2.8 GB of .npy) to $EWISE_BENCH_INPUTS (default
# $build/structures-inputs) for peers.py; they are deleted after peers.py unless
# EWISE_BENCH_KEEP_INPUTS=1. Options go to ewise_bench: `run_all.sh RECORD --suite union` runs
# one suite (and the peers of its cases only).
# Exit status: non-zero when the build fails or any case fails verification.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EWISE_BENCH_BUILD:-$root/build-bench}
kind=${EWISE_BENCH_KIND:-}
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  out=$1
  shift
else
  if [ -z "$kind" ]; then
    kind=$(python3 "$root/bench/record.py" kind) || exit 2
  fi
  out=$root/bench/results/$kind
fi
mkdir -p "$out/plots" "$build"
out=$(cd "$out" && pwd)
rm -f "$out/ewise.json" "$out/peers.json" "$out/summary.md" "$out/peers.md" "$out"/plots/*.png
start=$(date +%s)
stamp() { echo "[run_all $(($(date +%s) - start)) s] $*"; }

if [ -z "${EWISE_COMMIT:-}" ]; then
  EWISE_COMMIT=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
fi
export EWISE_COMMIT

stamp "build ($build, log $build/run_all_build.log)"
if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES="${EWISE_CUDA_ARCH:-90-real}" -DEWISE_BUILD_BENCH=ON \
         -DEWISE_BUILD_TESTS=OFF -DEWISE_BUILD_CLI=OFF -DEWISE_BUILD_EXAMPLES=OFF &&
       cmake --build "$build" --target ewise_bench -j "$(nproc)"; } > "$build/run_all_build.log" 2>&1; then
  tail -30 "$build/run_all_build.log"
  stamp "build failed"
  exit 2
fi

inputs=${EWISE_BENCH_INPUTS:-$build/structures-inputs}
mkdir -p "$inputs"
rm -f "$inputs"/*.npy

stamp "ewise_bench $*"
"$build/bench/ewise_bench" "$@" --json "$out/ewise.json" --inputs "$inputs"
bench_rc=$?

if [ -f "$out/ewise.json" ]; then
  python3 "$root/bench/record.py" annotate "$out" --build "$build" --kind "$kind"
  stamp "peers"
  python3 "$root/bench/peers.py" "$out"
  if [ "${EWISE_BENCH_KEEP_INPUTS:-0}" != 1 ]; then
    rm -f "$inputs"/*.npy
  fi
  stamp "summary"
  python3 "$root/bench/summarize.py" "$out"
  stamp "plots"
  python3 "$root/bench/plot.py" "$out" 2>&1 | tail -20
fi
stamp "done (ewise_bench exit $bench_rc); record in $out"
exit "$bench_rc"
