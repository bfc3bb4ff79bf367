#!/usr/bin/env bash
# bench/run_all.sh OUTDIR [ewise_bench options, e.g. --quick]
#
# The one command behind BENCHMARKS.md: configures and builds ewise_bench (Ninja, Release,
# CUDA arch $EWISE_CUDA_ARCH or 90-real) in $EWISE_BENCH_BUILD (default build-bench/), runs every
# suite, then bench/peers.py (PyTorch, CuPy), bench/summarize.py (the tables of BENCHMARKS.md)
# and bench/plot.py, leaving in OUTDIR:
#   ewise.json ewise.csv ewise.log   peers.json peers.md peers.log   summary.md   plots/*.png
#   build.log env.txt (nvidia-smi, versions)
# The commit reported is $EWISE_COMMIT, else git's HEAD (with -dirty), else "unknown".
# Exit status: non-zero when the build fails or any case fails verification.
set -uo pipefail

out=${1:?usage: bench/run_all.sh OUTDIR [ewise_bench options]}
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EWISE_BENCH_BUILD:-$root/build-bench}
mkdir -p "$out/plots"
out=$(cd "$out" && pwd)
start=$(date +%s)
stamp() { echo "[run_all $(($(date +%s) - start)) s] $*"; }

if [ -z "${EWISE_COMMIT:-}" ]; then
  EWISE_COMMIT=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
fi
export EWISE_COMMIT
{
  echo "commit $EWISE_COMMIT"; date -u +%FT%TZ; uname -a
  nvidia-smi 2>&1 || true
  nvcc --version 2>&1 | tail -2 || true
  cmake --version | head -1
} > "$out/env.txt"

stamp "build ($build)"
if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES="${EWISE_CUDA_ARCH:-90-real}" -DEWISE_BUILD_BENCH=ON \
         -DEWISE_BUILD_TESTS=OFF -DEWISE_BUILD_CLI=OFF -DEWISE_BUILD_EXAMPLES=OFF &&
       cmake --build "$build" --target ewise_bench -j "$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  stamp "build failed"
  exit 2
fi

stamp "ewise_bench $*"
"$build/bench/ewise_bench" "$@" --json "$out/ewise.json" --csv "$out/ewise.csv" 2>&1 |
  tee "$out/ewise.log"
bench_rc=${PIPESTATUS[0]}

if [ -f "$out/ewise.json" ]; then
  stamp "peers"
  python3 "$root/bench/peers.py" --ewise "$out/ewise.json" --out "$out" 2>&1 | tee "$out/peers.log"
  python3 "$root/bench/summarize.py" --ewise "$out/ewise.json" --peers "$out/peers.json" \
    > "$out/summary.md"
  stamp "plots"
  python3 "$root/bench/plot.py" --ewise "$out/ewise.json" --peers "$out/peers.json" \
    --out "$out/plots" 2>&1 | tail -20
fi
stamp "done (ewise_bench exit $bench_rc); results in $out"
exit "$bench_rc"
