#!/usr/bin/env python3
"""Markdown tables of one benchmark record (docs/benchmarks.md quotes them): reads the
record's ewise.json (and peers.json when there is one), writes its summary.md.

    python3 bench/summarize.py RECORD          e.g. bench/results/h200

Tables: the dense issue's broadcast patterns (automatic against cub, the copy and PyTorch), the
paper's workload (sliding vs baseline), the d2ltvm schedules, COO multiply by algorithm with
the sparse issue's peer targets, COO ⊙ dense, the crossover densities, the structure kinds
(issue 13) and the union operations on them (issue 14) in both call patterns: back to back and
synchronizing after each call.
"""
import argparse
import os

import record


def ok(rows, suite):
    return [r for r in rows if r["suite"] == suite and r["status"] == "ok"]


def f(x, nd=3):
    return "-" if x is None else f"{x:.{nd}f}"


def pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def patterns(rows, peers):
    rows = ok(rows, "patterns")
    if not rows:
        return []
    torch = {(p["case"], p["dtype"]): p for p in peers if p["suite"] == "patterns"}
    out = ["### Broadcast patterns (`patterns`, automatic kernel)", "",
           "| pattern | dtype | kernel | ms | GB/s | of cub add | of copy | PyTorch ms | PyTorch of copy | CuPy ms |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["impl"] != "automatic":
            continue
        p = torch.get((r["name"], r["dtype"]), {})
        tms = p.get("torch_ms")
        tcopy = r["copy_fraction"] * r["median_ms"] / tms if tms else None
        out.append(f"| {r['name']} | {r['dtype']} | {r['note'].replace('selected ', '')} | "
                   f"{f(r['median_ms'])} | {r['gbps']:.0f} | {pct(r['cub_fraction'])} | "
                   f"{pct(r['copy_fraction'])} | {f(tms)} | {pct(tcopy)} | {f(p.get('cupy_ms'))} |")
    out += ["", "Best kernel per pattern (f32): " + "; ".join(
        f"{name}: " + ", ".join(f"{r['impl']} {r['median_ms']:.3f}" for r in sorted(
            [r for r in rows if r["name"] == name and r["dtype"] == "f32"],
            key=lambda r: r["median_ms"])[:3])
        for name in dict.fromkeys(r["name"] for r in rows)), ""]
    return out


def ml_shapes(rows, peers):
    rows = ok(rows, "ml_shapes")
    if not rows:
        return []
    torch = {(p["case"], p["dtype"]): p for p in peers if p["suite"] == "ml_shapes"}
    rowvec = {(r["name"], r["dtype"]): r for r in rows if r["impl"] == "row_vectorized"}
    out = ["### ML shapes: odd widths, 16-bit types, short rows (`ml_shapes`, automatic kernel)", "",
           "| case | dtype | kernel | ms | GB/s | of cub add | of copy | row_vectorized ms | PyTorch ms | x PyTorch | CuPy ms |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["impl"] != "automatic":
            continue
        p = torch.get((r["name"], r["dtype"]), {})
        tms = p.get("torch_ms")
        rv = rowvec.get((r["name"], r["dtype"]), {}).get("median_ms")
        out.append(f"| {r['name']} | {r['dtype']} | {r['note'].replace('selected ', '')} | "
                   f"{f(r['median_ms'])} | {r['gbps']:.0f} | {pct(r['cub_fraction'])} | "
                   f"{pct(r['copy_fraction'])} | {f(rv)} | {f(tms)} | "
                   f"{f(tms / r['median_ms'], 2) if tms else '-'} | {f(p.get('cupy_ms'))} |")
    return out + [""]


def small(rows, peers):
    rows = [r for r in ok(rows, "small") if r["impl"] == "automatic"]
    if not rows:
        return []
    torch = {(p["case"], p["dtype"]): p for p in peers if p["suite"] == "small"}
    out = ["### Small tensors and host cost (`small`, automatic kernel)", "",
           "Host µs: what the calling thread spends on one call, CPU clock over "
           f"{rows[0]['params'].get('host_calls', '?')} back-to-back calls; a bare launch is an "
           "empty kernel's `<<<1, 32>>>`.", "",
           "| case | dtype | kernel | GPU ms | of cub add | sync wall ms | host µs | bare launch µs | "
           "ewise's own µs | PyTorch ms | x PyTorch | PyTorch host µs |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = torch.get((r["name"], r["dtype"]), {})
        host, bare = r["params"].get("host_us_per_call"), r["params"].get("bare_launch_us")
        tms = p.get("torch_ms")
        out.append(f"| {r['name']} | {r['dtype']} | {r['note'].replace('selected ', '')} | "
                   f"{f(r['median_ms'], 4)} | {pct(r['cub_fraction'])} | {f(r.get('sync_wall_ms'), 4)} | "
                   f"{f(host, 2)} | {f(bare, 2)} | {f(host - bare, 2) if host and bare else '-'} | "
                   f"{f(tms, 4)} | {f(tms / r['median_ms'], 2) if tms else '-'} | {f(p.get('torch_host_us'), 2)} |")
    return out + [""]


def paper(rows):
    rows = [r for r in ok(rows, "paper") if r["params"].get("sliding_factor", 0) == 0]
    if not rows:
        return []
    out = ["### Paper workload (`paper`): vector over matrix, f32 add, GB/s", "",
           "| vector | layout | M | baseline | sliding | sliding_shared | general | automatic | sliding / baseline |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(r["params"]["vector_length"], r["params"]["orient"], r["params"]["reuse"])
                   for r in rows}, key=lambda k: (k[1] != "row", k[0], k[2]))
    for n, orient, m in keys:
        g = {r["impl"]: r["gbps"] for r in rows if (r["params"]["vector_length"],
             r["params"]["orient"], r["params"]["reuse"]) == (n, orient, m)}
        ratio = g["sliding"] / g["baseline"] if g.get("baseline") and g.get("sliding") else None
        out.append(f"| {n} | {orient} | {m} | " + " | ".join(
            f"{g[k]:.0f}" if k in g else "-" for k in
            ["baseline", "sliding", "sliding_shared", "general", "automatic"]) +
            f" | {f(ratio, 2)} |")
    return out + [""]


def schedules(rows):
    rows = ok(rows, "schedules")
    if not rows:
        return []
    out = ["### d2ltvm schedules (`schedules`): (n,1)+(n,n) f32, GB/s", "",
           "| n | MB moved | continuous 64x256 | alternate 64x256 | continuous default | alternate default | automatic |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sorted({r["params"]["n"] for r in rows}):
        sel = [r for r in rows if r["params"]["n"] == n]

        def g(impl, nt, nb):
            m = [r["gbps"] for r in sel if r["impl"] == impl and r["params"]["nt"] == nt
                 and r["params"]["nb"] == nb]
            return f"{m[0]:.0f}" if m else "-"
        out.append(f"| {n} | {sel[0]['bytes'] / 1e6:.2f} | {g('continuous', 64, 256)} | "
                   f"{g('alternate', 64, 256)} | {g('continuous', 0, 0)} | {g('alternate', 0, 0)} | "
                   f"{g('automatic', 0, 0)} |")
    sweep = [r for r in rows if r["params"]["nt"] > 0]
    for n in sorted({r["params"]["n"] for r in sweep}):
        for impl in ["continuous", "alternate"]:
            sel = [r for r in sweep if r["params"]["n"] == n and r["impl"] == impl]
            if len(sel) > 2:
                b = max(sel, key=lambda r: r["gbps"])
                w = min(sel, key=lambda r: r["gbps"])
                out.append(f"\nSweep n={n}, {impl}: best nt={b['params']['nt']} nb={b['params']['nb']} "
                           f"{b['gbps']:.0f} GB/s, worst nt={w['params']['nt']} nb={w['params']['nb']} "
                           f"{w['gbps']:.0f} GB/s ({len(sel)} configurations).")
    return out + [""]


def sparse(rows, peers):
    rows = [r for r in ok(rows, "sparse") if r["params"]["op"] == "coo*coo"]
    if not rows:
        return []
    pk = {(p["case"]): p for p in peers if p["suite"] in ("sparse", "crossover")}
    out = ["### COO ⊙ COO (`sparse`), f32, int32 indices, ms from inputs to canonical output", "",
           "| shape | density | input | nnz out | automatic | sort_search | merge | bitmap_merge | hash_merge | linear_search | automatic, no index check | PyTorch | speedup vs PyTorch | CuPy | speedup vs CuPy | automatic, sync wall | sync speedup vs PyTorch |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(r["params"]["rows"], r["params"]["density"], r["params"]["input"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2] != "unsorted"))
    for side, d, order in keys:
        sel = [r for r in rows if (r["params"]["rows"], r["params"]["density"], r["params"]["input"]) == (side, d, order)]
        g = {r["impl"]: r["median_ms"] for r in sel}
        auto = [r for r in sel if r["impl"] == "automatic"]
        name = auto[0]["name"] if auto else ""
        p = pk.get(name, {})
        tv = "raw" if order == "unsorted" else "coalesced"
        cv = "COO" if order == "unsorted" else "CSR"
        tms, cms = p.get("torch_ms"), p.get("cupy_ms")
        out.append(f"| {side}² | {d:g} | {order} | {auto[0]['params'].get('nnz_out', '-') if auto else '-'} | "
                   + " | ".join(f(g.get(k), 4) for k in ["automatic", "sort_search", "merge", "bitmap_merge", "hash_merge",
                                                    "linear_search", "automatic_novalidate"])
                   + f" | {f(tms, 3)} ({tv}) | {f(tms / g['automatic'], 2) if tms and g.get('automatic') else '-'}x"
                   + f" | {f(cms, 3)} ({cv}) | {f(cms / g['automatic'], 2) if cms and g.get('automatic') else '-'}x"
                   + f" | {f(auto[0].get('sync_wall_ms') if auto else None, 4)}"
                   + f" | {f(1 / p['torch_sync_ratio'], 2) + 'x' if p.get('torch_sync_ratio') else '-'} |")
    return out + [""]


def coo_dense(rows, peers):
    rows = [r for r in ok(rows, "sparse") if r["params"]["op"] == "coo*dense"]
    if not rows:
        return []
    pk = {p["case"]: p for p in peers if p["suite"] == "sparse"}
    out = ["### COO ⊙ dense (`sparse`), f32, ms", "",
           "| case | nnz | ewise | PyTorch | ewise / PyTorch | CuPy (CSR) | ewise / CuPy | ewise sync wall | sync: ewise / PyTorch | sync: ewise / CuPy |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = pk.get(r["name"], {})
        out.append(f"| {r['name']} | {r['params']['nnz_a']} | {f(r['median_ms'], 4)} | "
                   f"{f(p.get('torch_ms'), 4)} | {f(p.get('torch_ratio'), 2)} | "
                   f"{f(p.get('cupy_ms'), 4)} | {f(p.get('cupy_ratio'), 2)} | "
                   f"{f(r.get('sync_wall_ms'), 4)} | {f(p.get('torch_sync_ratio'), 2)} | "
                   f"{f(p.get('cupy_sync_ratio'), 2)} |")
    return out + [""]


def crossover(rows):
    sel = ok(rows, "crossover")
    if not sel:
        return []
    dense = [r for r in sel if r["name"] == "dense_mul"]
    out = ["### Dense vs COO multiply (`crossover`), 16384² f32, ms", "",
           f"Dense multiply (automatic): {f(dense[0]['median_ms'])} ms." if dense else "", "",
           "| density | COO unsorted | COO canonical |", "|---:|---:|---:|"]
    pts = sorted({r["params"]["density"] for r in sel if "density" in r["params"]})
    for d in pts:
        g = {r["params"]["input"]: r["median_ms"] for r in sel if r["params"].get("density") == d}
        out.append(f"| {d:g} | {f(g.get('unsorted'), 4)} | {f(g.get('canonical'), 4)} |")
    for s in [r for r in rows if r["suite"] == "crossover" and r["status"] == "summary"]:
        out.append(f"\n**{s['params']['input']}**: {s['note']}.")
    return out + [""]


def kinds_table(rows, peers, suite, title, intro=""):
    """The table of a suite on structure kinds (structures, union): every record in both call
    patterns beside PyTorch and CuPy on identical inputs."""
    rows = ok(rows, suite)
    if not rows:
        return []
    pk = {(p["name"], p["op"], p.get("dense", "")): p for p in peers if p["suite"] == suite}
    out = [f"### {title} (`{suite}`): f32, i32 indices, both call patterns", "",
           intro + "Back to back (b2b): GPU time (events, median) and host wall time per call of calls "
           "issued with no synchronization between them; sync: each call followed by a stream "
           "synchronization, GPU and host wall time per call (medians). x PyTorch / x CuPy = peer "
           "wall time / ewise wall time in the same pattern (above 1: ewise faster). Of roofline = "
           "bytes moved / time (b2b: GPU time; sync: wall time) over the same-run device copy of "
           "the same bytes.", ""]
    kinds = {}
    for r in rows:
        kinds.setdefault(r["params"]["kind"], r)
    for k, r in kinds.items():
        p = r["params"]
        out.append(f"- **{k}** ({p['rows']} x {p['cols']}): {p['generator']}. a: {p['nnz_a']} "
                   f"entries ({p['unique_a']} distinct), b: {p['nnz_b']} ({p['unique_b']}).")
    out += ["", "| case | op | nnz out | pattern | ewise GPU ms | ewise wall ms | PyTorch GPU / wall ms "
            "| x PyTorch | CuPy GPU / wall ms | x CuPy | of roofline |",
            "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = r["params"]
        dense = p.get("dense", "")
        op = p["op"] + (f" {dense}" if dense else "")
        if p["op"] == "coo*coo" and r["impl"] != "automatic":
            op += f" ({r['impl']})"
        if r["impl"].endswith("_novalidate") and p["op"] != "coo*coo":
            op += " (validate_indices off)"
        peer = pk.get((r["name"], p["op"], dense), {})
        for pattern, g, w, tg, tw, cg, cw in (
                ("b2b", "median_ms", "wall_ms", "torch_ms", "torch_wall_ms", "cupy_ms",
                 "cupy_wall_ms"),
                ("sync", "sync_gpu_ms", "sync_wall_ms", "torch_sync_gpu_ms", "torch_sync_wall_ms",
                 "cupy_sync_gpu_ms", "cupy_sync_wall_ms")):
            ew = r.get(w)
            time_for_roof = r["median_ms"] if pattern == "b2b" else ew
            roof = r["copy_fraction"] * r["median_ms"] / time_for_roof if time_for_roof else None
            tx = peer.get(tw) / ew if peer.get(tw) and ew else None
            cx = peer.get(cw) / ew if peer.get(cw) and ew else None
            out.append(f"| {r['name']} | {op} | {p.get('nnz_out', '-')} | {pattern} | "
                       f"{f(r.get(g), 4)} | {f(ew, 4)} | {f(peer.get(tg), 4)} / {f(peer.get(tw), 4)} | "
                       f"{f(tx, 2)} | {f(peer.get(cg), 4)} / {f(peer.get(cw), 4)} | {f(cx, 2)} | "
                       f"{pct(roof)} |")
        if peer.get("notes"):
            out.append(f"|  | *{peer['notes']}* | | | | | | | | | |")
    return out + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="the record directory (holds ewise.json)")
    args = ap.parse_args()
    ewise = record.load_ewise(args.record)
    peers = (record.load_peers(args.record) or {}).get("ratios", [])
    m = ewise["meta"]
    toolchain = ", ".join(f"{k} {m[k]}" for k in ("driver_version", "nvcc", "cxx", "cmake")
                          if m.get(k))
    lines = [f"Device {m['device']} ({m['sm']}, {m['sm_count']} SMs, L2 {m['l2_bytes'] >> 20} MiB, "
             f"SM max {m['sm_clock_max_mhz']} MHz, memory max {m['mem_clock_max_mhz']} MHz), "
             f"driver/runtime {m['driver']}/{m['runtime']}, commit {m['commit']}, {m['started']}, "
             f"{'quick' if m['quick'] else 'full'} mode, median of {m['runs']} samples, "
             f"{m['failures']} failures. nvidia-smi: {m['nvidia_smi']}."
             + (f" Toolchain: {toolchain}." if toolchain else ""), ""]
    rows = ewise["results"]
    union_intro = ("Issue 14's targets (H100 or H200, same run): coo+coo canonical >= 3x CuPy and "
                   ">= 5x PyTorch (coalesced); dense+=coo >= 2x PyTorch's `add_`. ")
    for part in (patterns(rows, peers), ml_shapes(rows, peers), small(rows, peers), paper(rows), schedules(rows), sparse(rows, peers),
                 coo_dense(rows, peers), crossover(rows),
                 kinds_table(rows, peers, "structures", "Structure kinds"),
                 kinds_table(rows, peers, "union", "Union: COO + COO, COO + dense", union_intro)):
        lines += part
    path = os.path.join(args.record, "summary.md")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
