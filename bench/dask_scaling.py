#!/usr/bin/env python3
"""ewise on Dask arrays of CuPy chunks over dask_cuda.LocalCUDACluster, 1 and 2 GPUs (issue 39):
ewise blocks against CuPy's own operations on the same Dask graph, and the 1 -> 2 GPU speedup.

Cases (full sizes; --small divides the data by 64):
  bias      X + b: X a (10,485,760, 4096) float32 array (160 GiB, more than one H200 holds) in
            row blocks of --block-gib GiB (2: 80 blocks), each drawn on its worker's GPU
            (cupy.random), b a
            (4096,) float32 bias; reduced to its sum, so the array never exists whole.
            ewise: ewise.add(X, b).sum(); cupy: (X + b).sum().
  mask      M ⊙ D: D as X, M a bool array of the same shape (a draw < 0.5), reduced to the sum.
            ewise: ewise.multiply(M, D).sum(); cupy: (M * D).sum().
  overhead  the bias case's graph with blocks of one element: as many tasks and the same
            structure, next to no GPU work, so its times are the cluster's own cost of the graph
            (client, scheduler, workers), which does not shrink with more GPUs.
  gradient  a row-sparse gradient (32,768 uniform row ids, duplicates among them, x 128
            float32 values) accumulated into a table of 2^26 x 128 float32 (32 GiB) in 16 row
            blocks, persisted over the workers' GPUs before timing (split over two GPUs on two);
            each block a copy updated by the gradient's rows that fall in it, reduced to the sum.
            ewise: ewise.sparse.accumulate("add", T, RowSparse(rows, values, 2^26)).sum();
            cupy: the same blocks by T.map_blocks with cupyx.scatter_add on the block's cut of
            the gradient (what ewise's Dask layer does, CuPy's scatter in place of ewise's).
Each case also runs its baseline: the same graph without the operation (the same generation and
reduction: X.sum() + b.sum(); D.sum() + M.sum(); each table block copied, with the same gradient
in the graph, and summed). "op" = total - baseline: the operation's share of the wall time.

Per block (before the clusters, on GPU 0 of the client process; not with --cpu): each case's
operation on one block, ewise's call against CuPy's, timed as peers.py times (peers_timing's
CupyTimer): GPU time a call by CUDA events over back-to-back calls, and wall time with a
synchronization after each call (medians).

Times: wall time of client.compute(graph).result() (the whole graph: generation, operation,
reduction, the scheduler), the median of --runs runs after one warm-up run, on a cluster of one
worker per GPU (CUDA_VISIBLE_DEVICES "0", then "0,1"; threads_per_worker --threads (1), protocol
tcp).
Prints a table and writes JSON (--json): "meta" (sizes, versions, GPUs) and "results" (one row per
case, GPU count and implementation: total_s, runs_s, baseline_s, op_s, bytes, op_gbps_per_gpu
= bytes / op_s / GPUs (bytes_of: what the operation moves), value), and "summary" (per
case: ewise/cupy total and op ratios, and the 1 -> 2 GPU speedup of each implementation's total);
each row's "task_stream": one more run under Dask's task stream, each worker's seconds of task
computation beside that run's wall time.

Needs CuPy, dask, distributed, dask_cuda and the ewise package (PYTHONPATH=build/python); run it
from a directory other than the repository root (its sparse/ folder shadows pydata's sparse).

    python3 bench/dask_scaling.py [--small] [--runs 3] [--gpus 1,2] [--cases bias,mask,gradient]
                                  [--block-gib 2] [--json PATH]
    python3 bench/dask_scaling.py --cpu   # the script's own smoke test: NumPy chunks on a
                                          # LocalCluster of processes, tiny sizes (no timing
                                          # worth reading)
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

COLS = 4096  # the dense cases' width
FULL = {"rows": 80 * 131072, "block_rows": 131072,  # 160 GiB of float32, 2 GiB blocks
        "table_rows": 1 << 26, "table_cols": 128, "table_blocks": 16, "grad_rows": 1 << 15}


def sizes(args):
    """The cases' sizes; the dense blocks of --block-gib GiB (whole rows, at least one)."""
    if args.cpu:
        return {"rows": 8 * 256, "block_rows": 256, "table_rows": 1 << 12, "table_cols": 16,
                "table_blocks": 4, "grad_rows": 256}
    if args.small:  # 2.5 GiB dense, 512 MiB table: seconds
        return {"rows": 20 * 8192, "block_rows": 8192, "table_rows": 1 << 20, "table_cols": 128,
                "table_blocks": 8, "grad_rows": 1 << 14}
    n = dict(FULL)
    n["block_rows"] = max(1, min(n["rows"], int(args.block_gib * 2**30) // (COLS * 4)))
    return n


# ---- blocks (run on the workers; this module is __main__, so cloudpickle sends them by value)

def xp_of(name):
    if name == "cupy":
        import cupy
        return cupy
    return np


def draw(xp_name, dtype, block_info=None):
    """A block of uniform [0, 1) float32, or bool (a draw < 0.5), on the worker's GPU."""
    shape = block_info[None]["chunk-shape"]
    if xp_name == "cupy":
        import cupy
        x = cupy.random.random_sample(shape, dtype=cupy.float32)
    else:
        x = np.random.default_rng().random(shape, dtype=np.float32)
    return x < 0.5 if np.dtype(dtype) == np.bool_ else x


def generated(da, xp_name, shape, chunks, dtype):
    xp = xp_of(xp_name)
    x = da.map_blocks(draw, xp_name, np.dtype(dtype).name, dtype=dtype,
                      chunks=da.core.normalize_chunks(chunks, shape),
                      meta=xp.empty((0,) * len(shape), dtype=dtype))
    assert x.shape == tuple(shape), (x.shape, shape)
    return x


def scatter_block(rows, values, op, d, block_info=None):
    """A table block's copy updated by the gradient rows in it: op "cupy" (cupyx.scatter_add /
    np.add.at), or "copy" (the baseline: the copy alone; the gradient still in the graph)."""
    d = d.copy()
    if op == "copy":
        return d
    (r0, r1), *_ = block_info[0]["array-location"]
    kept = (rows >= r0) & (rows < r1)
    local, cut = rows[kept] - r0, values[kept]
    if type(d).__module__.startswith("cupy"):
        import cupyx
        cupyx.scatter_add(d, local, cut)
    else:
        np.add.at(d, local, cut)
    return d


# ---- graphs

def graphs(da, ewise, xp_name, case, n, table=None, grad=None):
    """{"baseline", "ewise", "cupy"}: each a 0-d Dask array (the sum)."""
    if case in ("bias", "mask", "overhead"):
        shape, chunks = (n["rows"], COLS), (n["block_rows"], COLS)
        if case == "overhead":
            shape, chunks = (-(-n["rows"] // n["block_rows"]), 1), (1, 1)
        x = generated(da, xp_name, shape, chunks, np.float32)
        if case in ("bias", "overhead"):
            b = generated(da, xp_name, shape[1:], shape[1:], np.float32)
            return {"baseline": x.sum() + b.sum(), "ewise": ewise.add(x, b).sum(),
                    "cupy": (x + b).sum()}
        m = generated(da, xp_name, shape, chunks, np.bool_)
        return {"baseline": x.sum() + m.sum(), "ewise": ewise.multiply(m, x).sum(),
                "cupy": (m * x).sum()}
    rows, values = grad
    nrows = n["table_rows"]
    out = {"ewise": ewise.sparse.accumulate(
        "add", table, ewise.sparse.RowSparse(rows, values, nrows)).sum()}
    for name, op in (("baseline", "copy"), ("cupy", "cupy")):
        out[name] = table.map_blocks(
            lambda d, block_info=None, op=op: scatter_block(rows, values, op, d, block_info),
            dtype=table.dtype, meta=table._meta).sum()
    return out


def bytes_of(case, n):
    """The bytes the operation moves beyond its baseline: bias: X and b read, the sum written;
    mask: M and D read, the product written; gradient: the values read, the table rows they
    touch read and written, the row ids read by each block (the block copy is the baseline's)."""
    if case == "overhead":
        return 0
    if case == "bias":
        return 2 * n["rows"] * COLS * 4 + COLS * 4
    if case == "mask":
        return n["rows"] * COLS * (4 + 1 + 4)
    return n["grad_rows"] * (3 * n["table_cols"] * 4 + 8 * n["table_blocks"])


# ---- one block on one GPU

def per_block(n, runs=20):
    """Each case's operation on one block on GPU 0 of this process, ewise's call against
    CuPy's: {case: {impl: {"gpu_ms", "wall_ms"}}} by peers_timing's CupyTimer, as peers.py
    times: GPU time a call from events over back-to-back calls (median of `runs` samples), and
    wall time of a call followed by a synchronization (median). The gradient's block: a table
    block, the gradient's rows that fall in it, accumulated in place
    (ewise.sparse.accumulate; cupyx.scatter_add)."""
    import cupy
    import cupyx

    import ewise
    from peers_timing import CupyTimer
    rows, nb = n["block_rows"], n["table_rows"] // n["table_blocks"]
    x = cupy.random.random_sample((rows, COLS), dtype=cupy.float32)
    b = cupy.random.random_sample((COLS,), dtype=cupy.float32)
    m = cupy.random.random_sample((rows, COLS), dtype=cupy.float32) < 0.5
    table = cupy.random.random_sample((nb, n["table_cols"]), dtype=cupy.float32)
    grad_rows, grad_values = gradient("cupy", n)
    kept = grad_rows < nb
    local, cut = grad_rows[kept], grad_values[kept]
    calls = {"bias": {"ewise": lambda: ewise.add(x, b), "cupy": lambda: x + b},
             "mask": {"ewise": lambda: ewise.multiply(m, x), "cupy": lambda: m * x},
             "gradient": {"ewise": lambda: ewise.sparse.accumulate(
                              "add", table, ewise.sparse.RowSparse(local, cut, nb)),
                          "cupy": lambda: cupyx.scatter_add(table, local, cut)}}
    timer = CupyTimer(cupy, runs)
    out = {}
    for case, impls in calls.items():
        out[case] = {}
        for impl, call in impls.items():
            t = timer(lambda i, call=call: call())
            out[case][impl] = {"gpu_ms": t["median_ms"], "wall_ms": t["sync_wall_ms"]}
    del x, b, m, table, grad_rows, grad_values, local, cut
    cupy.get_default_memory_pool().free_all_blocks()
    return out


def per_block_text(blocks, n):
    lines = [f"one block ({n['block_rows']} x {COLS} float32; table block "
             f"{n['table_rows'] // n['table_blocks']} x {n['table_cols']}) on GPU 0, ms:",
             f"  {'case':<9} {'impl':<6} {'GPU':>9} {'wall, synced':>13}"]
    for case, impls in blocks.items():
        for impl, t in impls.items():
            lines.append(f"  {case:<9} {impl:<6} {t['gpu_ms']:>9.4f} {t['wall_ms']:>13.4f}")
        e, c = impls["ewise"], impls["cupy"]
        lines.append(f"  {case:<9} cupy/ewise GPU {c['gpu_ms'] / e['gpu_ms']:.2f}, wall "
                     f"{c['wall_ms'] / e['wall_ms']:.2f}")
    return "\n".join(lines)


# ---- clusters

def cluster(args, gpus):
    import distributed
    if args.cpu:
        return distributed.LocalCluster(n_workers=gpus, threads_per_worker=args.threads,
                                        processes=True,
                                        dashboard_address=None)
    import dask_cuda
    return dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(gpus)),
                                      threads_per_worker=args.threads, dashboard_address=None,
                                      protocol="tcp")


def scheduler_tasks(client):
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


def once(client, graph, before):
    """(graph's value, the wall seconds of client.compute(graph).result()), its keys then
    released and forgotten by the scheduler (tasks back to `before`): a later run of the same
    graph computes it again instead of finding its result."""
    t0 = time.perf_counter()
    future = client.compute(graph)
    value = future.result()
    seconds = time.perf_counter() - t0
    client.cancel(future)
    del future
    deadline = time.perf_counter() + 30
    while scheduler_tasks(client) > before and time.perf_counter() < deadline:
        time.sleep(0.005)
    return value, seconds


def timed(client, graph, runs):
    """(median wall seconds, the runs' seconds, the value) over `runs` runs after one warm-up
    run (kernels, memory pools, the workers' imports)."""
    before = scheduler_tasks(client)
    once(client, graph, before)
    values, times = zip(*(once(client, graph, before) for _ in range(runs)))
    return statistics.median(times), list(times), float(values[-1])


def worker_busy(client, graph):
    """One more run under Dask's task stream: {worker: seconds its tasks computed} and the run's
    wall seconds. A worker busy for most of the wall time bounds it; idle workers mean the
    cluster's own cost (scheduling, transfers) does."""
    import distributed
    before = scheduler_tasks(client)
    with distributed.get_task_stream(client) as stream:
        _, seconds = once(client, graph, before)
    busy = {}
    for task in stream.data:
        for s in task.get("startstops", ()):
            if s["action"] == "compute":
                busy[task["worker"]] = busy.get(task["worker"], 0.0) + s["stop"] - s["start"]
    return {"busy_s": sorted(busy.values(), reverse=True), "wall_s": seconds}


def gradient(xp_name, n, seed=7):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n["table_rows"], size=n["grad_rows"]).astype(np.int64)
    values = rng.standard_normal((n["grad_rows"], n["table_cols"])).astype(np.float32)
    xp = xp_of(xp_name)
    return xp.asarray(rows), xp.asarray(values)


def run_cluster(args, n, gpus, results, emit):
    import dask.array as da
    import distributed

    import ewise
    xp_name = "numpy" if args.cpu else "cupy"
    with cluster(args, gpus) as c, distributed.Client(c) as client:
        client.wait_for_workers(gpus, timeout=180)
        for case in args.cases:
            table = grad = None
            if case == "gradient":
                nb = n["table_rows"] // n["table_blocks"]
                table = generated(da, xp_name, (n["table_rows"], n["table_cols"]),
                                  (nb, n["table_cols"]), np.float32).persist()
                distributed.wait(table)
                grad = gradient(xp_name, n)
            built = graphs(da, ewise, xp_name, case, n, table, grad)
            base_s, base_runs, _ = timed(client, built["baseline"], args.runs)
            for impl in ("ewise", "cupy"):
                total_s, runs_s, value = timed(client, built[impl], args.runs)
                busy = worker_busy(client, built[impl])
                row = {"case": case, "gpus": gpus, "impl": impl, "total_s": total_s,
                       "runs_s": runs_s, "baseline_s": base_s, "baseline_runs_s": base_runs,
                       "op_s": total_s - base_s, "bytes": bytes_of(case, n),
                       "op_gbps_per_gpu": (bytes_of(case, n) / (total_s - base_s) / gpus / 1e9
                                           if total_s > base_s and case != "overhead"
                                           else None),
                       "value": value, "task_stream": busy}
                results.append(row)
                emit()
                print(f"  {case:<9}{gpus} GPU {impl:<6} total {total_s:8.3f} s  baseline "
                      f"{base_s:8.3f} s  op {total_s - base_s:8.3f} s  workers busy "
                      + " ".join(f"{b:.3f}" for b in busy["busy_s"])
                      + f" s of {busy['wall_s']:.3f}", flush=True)
            del table


def summarize(results, gpu_counts):
    out = []
    for case in dict.fromkeys(r["case"] for r in results):
        row = {"case": case}
        by = {(r["gpus"], r["impl"]): r for r in results if r["case"] == case}
        for g in gpu_counts:
            e, c = by.get((g, "ewise")), by.get((g, "cupy"))
            if e and c:
                row[f"cupy_over_ewise_total_{g}gpu"] = c["total_s"] / e["total_s"]
                row[f"cupy_over_ewise_op_{g}gpu"] = (c["op_s"] / e["op_s"]
                                                     if e["op_s"] > 0 and c["op_s"] > 0 else None)
                if case == "gradient":  # the same table and gradient: the same sum
                    row[f"value_rel_diff_{g}gpu"] = (abs(e["value"] - c["value"])
                                                     / max(abs(c["value"]), 1e-30))
        if len(gpu_counts) >= 2:
            lo, hi = gpu_counts[0], gpu_counts[-1]
            for impl in ("ewise", "cupy"):
                a, b = by.get((lo, impl)), by.get((hi, impl))
                if a and b:
                    row[f"speedup_{impl}_{lo}to{hi}"] = a["total_s"] / b["total_s"]
        out.append(row)
    return out


def table_text(results, summary, gpu_counts):
    lines = [f"{'case':<9} {'GPUs':>4} {'impl':<6} {'total s':>9} {'baseline s':>11} "
             f"{'op s':>8} {'op GB/s/GPU':>12}"]
    for r in results:
        lines.append(f"{r['case']:<9} {r['gpus']:>4} {r['impl']:<6} {r['total_s']:>9.3f} "
                     f"{r['baseline_s']:>11.3f} {r['op_s']:>8.3f} "
                     + (f"{r['op_gbps_per_gpu']:>12.1f}" if r["op_gbps_per_gpu"] else f"{'-':>12}"))
    lines.append("")
    lines.append("cupy/ewise: CuPy's time over ewise's (> 1: ewise faster); speedup: "
                 f"{gpu_counts[0]} -> {gpu_counts[-1]} GPUs, whole graph")
    for s in summary:
        parts = [s["case"]]
        for k, v in s.items():
            if k != "case":
                parts.append(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}")
        lines.append("  ".join(parts))
    lines.append("")
    lines.append("issue 39's targets: 1 -> 2 GPU speedup >= 1.8 (ewise, whole graph); ewise no "
                 "slower than CuPy (cupy/ewise total >= 1, within 2% taken as equal)")
    for s in summary:
        speedup = s.get(f"speedup_ewise_{gpu_counts[0]}to{gpu_counts[-1]}")
        ratios = [v for k, v in s.items() if k.startswith("cupy_over_ewise_total_")]
        lines.append(f"  {s['case']:<9} speedup "
                     + (f"{speedup:.2f} {'met' if speedup >= 1.8 else 'NOT met'}"
                        if speedup is not None else "-")
                     + "; cupy/ewise " + (", ".join(f"{r:.2f}" for r in ratios) or "-")
                     + (f" {'met' if all(r >= 0.98 for r in ratios) else 'NOT met'}"
                        if ratios else ""))
    return "\n".join(lines)


def meta(args, n):
    info = {"sizes": n, "cols": COLS, "runs": args.runs, "small": args.small, "cpu": args.cpu,
            "threads_per_worker": args.threads,
            "python": platform.python_version(), "host": platform.node()}
    try:
        info["commit"] = subprocess.run(
            ["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "HEAD"],
            capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    import dask
    import distributed
    info["dask"], info["distributed"] = dask.__version__, distributed.__version__
    if not args.cpu:
        import cupy
        import dask_cuda
        info["dask_cuda"], info["cupy"] = dask_cuda.__version__, cupy.__version__
        info["gpus"] = [cupy.cuda.runtime.getDeviceProperties(i)["name"].decode()
                        for i in range(cupy.cuda.runtime.getDeviceCount())]
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true", help="sizes that run in seconds")
    p.add_argument("--cpu", action="store_true", help="smoke test of the script on NumPy chunks")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--gpus", default="1,2", help="GPU counts, comma-separated")
    p.add_argument("--cases", default="bias,mask,gradient")
    p.add_argument("--threads", type=int, default=1, help="threads per worker")
    p.add_argument("--block-gib", type=float, default=2.0,
                   help="the dense cases' row blocks, GiB (full sizes)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = set(args.cases) - {"bias", "mask", "overhead", "gradient"}
    if unknown:
        p.error(f"unknown cases {sorted(unknown)}")
    gpu_counts = [int(g) for g in args.gpus.split(",")]
    n = sizes(args)
    if not args.cpu:
        import cupy
        have = cupy.cuda.runtime.getDeviceCount()
        if max(gpu_counts) > have:
            sys.exit(f"dask_scaling.py: --gpus {args.gpus} but {have} GPU visible")
    record = {"meta": meta(args, n), "results": [], "summary": []}

    def emit():
        record["summary"] = summarize(record["results"], gpu_counts)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(record, f, indent=1)

    dense_gib = n["rows"] * COLS * 4 / 2**30
    print(f"dense {n['rows']} x {COLS} float32 ({dense_gib:.1f} GiB) in blocks of "
          f"{n['block_rows']} rows; table {n['table_rows']} x {n['table_cols']} float32 "
          f"({n['table_rows'] * n['table_cols'] * 4 / 2**30:.1f} GiB) in {n['table_blocks']} "
          f"blocks, gradient {n['grad_rows']} rows; {args.runs} runs", flush=True)
    if not args.cpu:
        record["per_block"] = per_block(n)
        emit()
        print(per_block_text(record["per_block"], n), flush=True)
    for g in gpu_counts:
        t0 = time.perf_counter()
        run_cluster(args, n, g, record["results"], emit)
        print(f"{g} GPU: {time.perf_counter() - t0:.1f} s with the cluster", flush=True)
    emit()
    print(table_text(record["results"], record["summary"], gpu_counts))


if __name__ == "__main__":
    main()
