#!/usr/bin/env python3
"""The benchmark record: one directory per device kind, bench/results/<kind>/, data in JSON.

    ewise.json    ewise_bench's output: "meta" (commit, device, clocks, seed, runs,
                  sync_budget_ms, inputs_dir, ... and, added by `annotate`, the device kind and
                  the toolchain) and "results" (one per case)
    peers.json    bench/peers.py's output: PyTorch and CuPy on the same cases
    summary.md    bench/summarize.py's tables          peers.md   peers.py's ratio table
    plots/*.png   bench/plot.py's figures

A result of ewise.json: suite, name, impl, dtype, status ("ok", "refused", "failed", "summary"),
note, verified (how it was checked before timing), params (the case: shapes, op, density, ...;
the structures suite adds kind, form, nnz_a/b, unique_a/b, nnz_out, dense, generator and the
.npy stems of its inputs), bytes (moved: inputs read once, output written once), and the times
in ms per call in two call patterns:
    back to back    median_ms, min_ms, max_ms (GPU time from events, over `runs` samples of
                    `batch` calls), wall_ms (host wall time per call around all those calls,
                    one synchronization at the end)
    synchronizing   sync_gpu_ms, sync_wall_ms (each call followed by cudaStreamSynchronize: GPU
                    time of the call and host wall time up to the synchronization's return,
                    medians over sync_runs calls; 0 where not measured)
then gbps, copy_gbps, copy_fraction (bytes / median_ms over the same-run device copy of the same
bytes: the roofline fraction), cub_gbps, cub_fraction (dense: of the same-run cub add).
peers.json: "meta", "cases" (each peer's timings, the same fields per pattern) and "ratios" (one
row per case: <lib>_ms, <lib>_wall_ms, <lib>_sync_gpu_ms, <lib>_sync_wall_ms for lib in ewise,
torch, cupy; <lib>_ratio = ewise / peer GPU time back to back, <lib>_sync_ratio = ewise / peer
wall time synchronizing).

The other scripts read and write the record through this module. As a program (run_all.sh):

    python3 bench/record.py kind                           the kind of GPU 0, e.g. h200
    python3 bench/record.py annotate DIR --build BUILD     adds kind and toolchain to DIR/ewise.json
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys

EWISE = "ewise.json"
PEERS = "peers.json"


def kind_of(gpu_name):
    """A device kind from a GPU name: the model without vendor, memory or form factor.
    'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA H200' -> 'h200', 'NVIDIA A100-SXM4-80GB' -> 'a100',
    'NVIDIA GeForce RTX 4090' -> 'rtx-4090'."""
    kept = []
    for word in re.split(r"[\s_-]+", gpu_name.strip().lower()):
        if word in ("", "nvidia", "geforce", "tesla", "quadro"):
            continue
        if re.fullmatch(r"\d+gb|hbm\w*|pcie|sxm\w*|nvl\w*", word):
            break
        kept.append(word)
    return "-".join(kept) or "gpu"


def load_ewise(record):
    with open(os.path.join(record, EWISE)) as f:
        return json.load(f)


def load_peers(record):
    """peers.json of the record, or None when the peers did not run."""
    path = os.path.join(record, PEERS)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def write_ewise(record, data):
    """Writes ewise.json the way ewise_bench does: the meta on one line, one result a line (so
    that two records diff line by line)."""
    lines = ["{", f'"meta": {json.dumps(data["meta"])},', '"results": [']
    lines.append(",\n".join(json.dumps(r) for r in data["results"]))
    lines += ["]", "}", ""]
    with open(os.path.join(record, EWISE), "w") as f:
        f.write("\n".join(lines))


def first_line(cmd, pattern=None):
    """The first output line of cmd (or the first group of pattern in its output), or None."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    if pattern:
        m = re.search(pattern, out)
        return m.group(1) if m else None
    return out.strip().splitlines()[0] if out.strip() else None


def gpu_name():
    return first_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"])


def cmake_cache(build, key):
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def annotate(record, build, kind):
    """Adds the device kind and the toolchain of the run to the record's meta."""
    data = load_ewise(record)
    cxx = cmake_cache(build, "CMAKE_CXX_COMPILER")
    found = {
        "kind": kind or kind_of(data["meta"].get("device", "")),
        "driver_version": first_line(["nvidia-smi", "--query-gpu=driver_version",
                                      "--format=csv,noheader", "-i", "0"]),
        "nvcc": first_line(["nvcc", "--version"], r"release [\d.]+, V([\d.]+)"),
        "cxx": first_line([cxx, "--version"]) if cxx else None,
        "cmake": first_line(["cmake", "--version"], r"cmake version (\S+)"),
        "host": f"{platform.node()} {platform.system()} {platform.release()} {platform.machine()}",
    }
    data["meta"].update({k: v for k, v in found.items() if v})
    write_ewise(record, data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("kind", help="print the device kind of GPU 0")
    an = sub.add_parser("annotate", help="add the device kind and toolchain to DIR/ewise.json")
    an.add_argument("record")
    an.add_argument("--build", default="", help="the build directory of ewise_bench")
    an.add_argument("--kind", default="", help="the device kind (default: from the device name)")
    args = ap.parse_args()
    if args.command == "kind":
        name = gpu_name()
        if not name:
            sys.exit("record.py: nvidia-smi names no GPU; set EWISE_BENCH_KIND")
        print(kind_of(name))
    else:
        annotate(args.record, args.build, args.kind)


if __name__ == "__main__":
    main()
