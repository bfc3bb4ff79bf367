#!/usr/bin/env python3
"""Times PyTorch and CuPy on the cases of an ewise_bench run, on the same GPU, and writes the
ratio table (ewise time / peer time: below 1 means ewise is faster). Reads the record's
ewise.json, writes its peers.json (data) and peers.md (the table).

    python3 bench/peers.py RECORD [--runs 25]          e.g. bench/results/h200

Cases are read from ewise's JSON, so both run exactly the same shapes, dtypes and densities:
  * dense: every `automatic` row of the patterns, schedules and crossover suites
    (torch.add/mul(a, b, out=c) and cupy.add/multiply(a, b, out=c) on the same layouts: a
    transposed operand is a transposed view, never a copy);
  * sparse COO ⊙ COO (automatic rows of the sparse and crossover suites): PyTorch from raw
    indices (sparse_coo_tensor(...) * ..., coalescing included) and from coalesced tensors;
    CuPy from COO (coo_matrix -> tocsr conversion included, then multiply) and from ready CSR;
  * sparse COO ⊙ dense (sparse suite): PyTorch sparse * dense, CuPy csr.multiply(dense);
  * the structures suite, on identical inputs: ewise_bench --inputs DIR wrote them as .npy and
    the JSON's meta names DIR. PyTorch: coo*coo and coo*dense on coalesced tensors (canonical
    form) or raw uncoalesced ones built from the indices (natural form; the coo*coo product
    includes the construction); values*dense as `vals * dense[rows, cols]` (a gather). CuPy:
    ready CSR matrices (conversion not timed; the natural form's duplicates summed by it),
    `.multiply(other)`; values*dense as the same gather on CuPy arrays. These run in a worker
    process: PyTorch's CUDA sparse mul can die with SIGFPE on large shapes, so a worker that
    dies loses only its current case (recorded as such) and the next worker goes on; PyTorch's
    sparse calls are skipped, with the reason recorded, where nrows*ncols >= 2^37 unless
    --torch-huge;
  * the union suite (issue 14), the same way on its own identical inputs: coo+coo as PyTorch
    `(A + B).coalesce()` (A, B made once, not timed: coalesced for the canonical form, raw for
    the natural one) and CuPy `A + B` on ready CSR (the natural form's duplicates summed by the
    conversion); dense+=coo as PyTorch `D.add_(A)` into a copy of the table (A made once) and
    CuPy `D += A` (recorded as in place or as rebinding D to a new array); coo+dense as PyTorch
    `D + A` (a dense result; PyTorch refuses sparse + dense) and CuPy `A + D`.
Inputs of the other suites are drawn the way ewise_bench draws them (every cell stored
independently with the case's density, values uniform in [-4, 4] away from zero), not the same
bits: nnz agrees to sampling noise, which the table shows. A peer's output that differs from ewise's (PyTorch pads
its product with explicit zeros to an operand's nnz; CuPy may return another format) is noted
with its nnz.

Timing as in ewise_bench: 3 warm-up calls (the last timed to size the batch), then the median
over >= 20 samples timed with CUDA events; a sample is a batch of back-to-back calls long enough (>= 100 us) for the events, and
dense inputs rotate through enough sets to exceed 3x the L2 cache when one set is smaller.
Both call patterns, as ewise_bench: back to back (GPU time as above; host wall time per call
around all samples' calls, one synchronization at the end) and synchronizing (each call followed
by a synchronization of the current stream; host wall and GPU time per call, medians of the
runs, fewer when they would take over 1 s, at least 5).
"""
import argparse
import json
import os
import platform
import sys
import tempfile
import time

import record
from peers_drawn import collect_cases, run_dense_cupy, run_dense_torch, run_sparse
from peers_inputs import input_peers, input_worker
from peers_report import drawn_row, fmt_ms, fmt_ratio, input_row, log, write_table
from peers_timing import CupyTimer, TorchTimer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", nargs="?", help="the record directory (holds ewise.json)")
    ap.add_argument("--runs", type=int, default=20, help="timed samples per case (>= 20)")
    ap.add_argument("--torch-huge", action="store_true",
                    help="structures, union: run PyTorch's sparse mul and add also where "
                         "nrows*ncols >= 2^37 (in the worker process; it may die with SIGFPE)")
    ap.add_argument("--input-worker", nargs=2, metavar=("TASKS", "OUT"),
                    help=argparse.SUPPRESS)  # internal: the worker process
    args = ap.parse_args()
    if args.input_worker:
        return input_worker(*args.input_worker, args.runs, args.torch_huge)
    if not args.record:
        ap.error("the record directory is required")
    ewise = record.load_ewise(args.record)
    try:
        import torch
    except ImportError:
        log("peers: PyTorch not importable; nothing to compare")
        return 0
    try:
        import cupy as cp
        import cupyx.scipy.sparse  # noqa: F401
    except Exception as e:  # noqa: BLE001
        log(f"peers: CuPy not importable ({e}); PyTorch only")
        cp = None
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    ttimer = TorchTimer(torch, args.runs)
    ctimer = CupyTimer(cp, args.runs) if cp is not None else None
    dense, sparse = collect_cases(ewise)
    meta = {"device": props.name, "torch": torch.__version__,
            "torch_cuda": torch.version.cuda, "cupy": cp.__version__ if cp is not None else None,
            "python": platform.python_version(), "ewise_commit": ewise["meta"].get("commit"),
            "ewise_device": ewise["meta"].get("device"), "runs": max(args.runs, 20),
            "l2_bytes": l2}
    log(f"peers: {props.name}, torch {torch.__version__}, cupy {meta['cupy']}; "
        f"{len(dense)} dense and {len(sparse)} sparse cases")
    results, rows = [], []
    t0 = time.time()
    total = len(dense) + len(sparse)
    for k, (key, case) in enumerate(list(dense.items()) + list(sparse.items())):
        r = case["record"]
        label = f"{r['suite']}/{r['name']} {r['dtype']}"
        log(f"[peers {k + 1}/{total}, {time.time() - t0:.1f} s] {label}")
        entry = {"key": list(key), "suite": r["suite"], "name": r["name"], "dtype": r["dtype"],
                 "params": r["params"], "ewise_ms": case["ewise_ms"], "peers": {}}
        try:
            if key[0] == "dense":
                entry["peers"]["torch"] = run_dense_torch(torch, ttimer, key, l2)
                if cp is not None:
                    entry["peers"]["cupy"] = run_dense_cupy(cp, ctimer, key, l2)
            else:
                entry["peers"] = run_sparse(torch, cp, ttimer, ctimer, key)
        except Exception as e:  # noqa: BLE001 - record and go on
            entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            log("  error:", entry["error"])
        torch.cuda.empty_cache()
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
        results.append(entry)
        row = drawn_row(key, case, entry)
        rows.append(row)
        log("  ewise {} ms | torch {} ms ({}) | cupy {} ms ({}) {}".format(
            fmt_ms(row["ewise_ms"]), fmt_ms(row.get("torch_ms")), fmt_ratio(row.get("torch_ratio")),
            fmt_ms(row.get("cupy_ms")), fmt_ratio(row.get("cupy_ratio")), row["notes"]))
    # the structures and union suites, on identical inputs, in worker processes
    torch.cuda.empty_cache()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()
    with tempfile.TemporaryDirectory() as tmp:
        tasks, sres = input_peers(ewise, args.runs, args.torch_huge, tmp)
    for t in tasks:
        r, res = t["record"], sres.get(t["id"], {})
        entry = {"key": [r["suite"], r["name"], t["op"], t["dense"]], "suite": r["suite"],
                 "name": r["name"], "dtype": r["dtype"], "params": r["params"],
                 "ewise_ms": r["median_ms"], "peers": {k: res[k] for k in ("torch", "cupy") if k in res}}
        if "error" in res:
            entry["error"] = res["error"]
        results.append(entry)
        rows.append(input_row(r, res))
    with open(os.path.join(args.record, record.PEERS), "w") as f:
        json.dump({"meta": meta, "cases": results, "ratios": rows}, f, indent=1)
    write_table(os.path.join(args.record, "peers.md"), props.name, meta, rows)
    log(f"peers: wrote {args.record}/peers.json and peers.md in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
