#!/usr/bin/env python3
"""Draws the figures of one benchmark record from its ewise.json (and peers.json when there is
one) into its plots/ directory.

    python3 bench/plot.py RECORD          e.g. bench/results/h200

Figures (each only when its suite is in the JSON):
  paper_bandwidth.png      GB/s vs the matrix's second dimension per kernel (paper Figs 6-8)
  paper_sliding_factor.png GB/s vs sliding factor (sliding, sliding_shared)
  schedules.png            d2ltvm broadcast add: GB/s vs size, and the nt x nb sweep
  patterns.png             GB/s per broadcast pattern and kernel, per dtype, against cub
  sparse.png               COO multiply time vs density per algorithm
  crossover.png            dense vs COO multiply time vs density, crossover marked
  peers_dense.png, peers_sparse.png  ewise time / peer time per case (below 1: ewise faster)
"""
import argparse
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import record  # noqa: E402

KERNEL_STYLE = {
    "baseline": ("tab:gray", "o"), "sliding": ("tab:blue", "s"),
    "sliding_shared": ("tab:cyan", "^"), "general": ("tab:red", "v"),
    "automatic": ("tab:green", "D"), "vectorized": ("tab:purple", "P"),
    "row_vectorized": ("tab:olive", "X"), "tiled": ("tab:brown", "*"),
    "continuous": ("tab:orange", "<"), "alternate": ("tab:pink", ">"),
    "sort_search": ("tab:blue", "s"), "merge": ("tab:orange", "o"),
    "linear_search": ("tab:gray", "x"), "automatic_novalidate": ("tab:olive", "D"),
}


def ok(rows, suite):
    return [r for r in rows if r["suite"] == suite and r["status"] == "ok"]


def title_of(meta):
    return f"{meta.get('device', '?')} · ewise {meta.get('commit', '?')}"


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print("wrote", path)


def finish(fig, out, name, title, meta):
    """Titles the figure (with the record's device and commit), lays it out and saves it."""
    fig.suptitle(f"{title} — {title_of(meta)}", fontsize=10)
    fig.tight_layout()
    save(fig, out, name)


def density_axes(ax, ylabel):
    """Log-log axes of a time against the density."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("density")
    ax.set_ylabel(ylabel)


def copy_line(ax, rows):
    copy = max((r["copy_gbps"] for r in rows if r.get("copy_gbps")), default=None)
    if copy:
        ax.axhline(copy, color="k", ls=":", lw=1, label=f"D2D copy ({copy:.0f} GB/s)")


def copy_curve(ax, rows, x_of):
    """The same-run device-to-device copy of each point's bytes, as GB/s against x."""
    pts = sorted({x_of(r): r["copy_gbps"] for r in rows if r.get("copy_gbps")}.items())
    if pts:
        ax.plot(*zip(*pts), color="k", ls=":", lw=1, label="D2D copy, same bytes")


def plot_paper(rows, meta, out):
    rows = ok(rows, "paper")
    if not rows:
        return
    base = [r for r in rows if r["params"].get("sliding_factor", 0) == 0]
    orients = sorted({r["params"]["orient"] for r in base}, reverse=True)
    lengths = sorted({r["params"]["vector_length"] for r in base})
    fig, axes = plt.subplots(len(orients), len(lengths), squeeze=False,
                             figsize=(4.5 * len(lengths), 3.6 * len(orients)), sharey=True)
    for i, orient in enumerate(orients):
        for j, n in enumerate(lengths):
            ax = axes[i][j]
            sel = [r for r in base if r["params"]["orient"] == orient
                   and r["params"]["vector_length"] == n]
            for impl in ["baseline", "sliding", "sliding_shared", "general", "automatic"]:
                pts = sorted((r["params"]["reuse"], r["gbps"]) for r in sel if r["impl"] == impl)
                if pts:
                    c, m = KERNEL_STYLE[impl]
                    ax.plot(*zip(*pts), marker=m, color=c, label=impl)
            copy_curve(ax, sel, lambda r: r["params"]["reuse"])
            ax.set_xscale("log", base=2)
            shape = f"({'M'},{n})+(1,{n})" if orient == "row" else f"({n},M)+({n},1)"
            ax.set_title(f"vector {n}, {orient}: {shape}", fontsize=9)
            ax.set_xlabel("M (matrix's second dimension = reuse)")
            ax.set_ylabel("effective GB/s")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    finish(fig, out, "paper_bandwidth.png", "Vector over matrix, f32 add (paper Figs 6-8)", meta)

    sweep = [r for r in rows if r["params"].get("sliding_factor", 0) > 0]
    cases = list(dict.fromkeys(r["name"] for r in sweep))
    if cases:
        fig, axes = plt.subplots(1, len(cases), figsize=(5.2 * len(cases), 3.6), squeeze=False,
                                 sharey=True)
        for ax, name in zip(axes[0], cases):
            sel = [r for r in sweep if r["name"] == name]
            for impl in ["sliding", "sliding_shared"]:
                pts = sorted((r["params"]["sliding_factor"], r["gbps"]) for r in sel
                             if r["impl"] == impl)
                if pts:
                    c, m = KERNEL_STYLE[impl]
                    ax.plot(*zip(*pts), marker=m, color=c, label=impl)
            for impl in ["baseline", "sliding", "automatic"]:
                same = [r for r in base if r["impl"] == impl and r["name"] == name]
                if same:
                    ax.axhline(same[0]["gbps"], color=KERNEL_STYLE[impl][0], ls="--", lw=1,
                               label=f"{impl} (automatic factor)" if impl == "sliding" else impl)
            copy_line(ax, sel)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("sliding factor")
            ax.set_ylabel("effective GB/s")
            ax.set_title(name, fontsize=9)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        finish(fig, out, "paper_sliding_factor.png", "Sliding factor sweep, f32 add", meta)


def plot_schedules(rows, meta, out):
    rows = ok(rows, "schedules")
    if not rows:
        return
    sweeps = sorted({r["params"]["n"] for r in rows
                     if r["params"]["nt"] not in (0, 64) or r["params"]["nb"] not in (0, 256)})
    fig = plt.figure(figsize=(11, 4.2 * (1 + len(sweeps))))
    spec = fig.add_gridspec(1 + len(sweeps), 2)
    ax = fig.add_subplot(spec[0, :])
    variants = [("continuous", 64, 256, "-"), ("alternate", 64, 256, "-"),
                ("continuous", 0, 0, "--"), ("alternate", 0, 0, "--"), ("automatic", 0, 0, "-")]
    for impl, nt, nb, ls in variants:
        pts = sorted((r["bytes"] / 1e6, r["gbps"]) for r in rows if r["impl"] == impl
                     and r["params"]["nt"] == nt and r["params"]["nb"] == nb)
        if pts:
            c, m = KERNEL_STYLE[impl]
            lab = impl if impl == "automatic" else f"{impl} nt={nt or 'def'} nb={nb or 'def'}"
            ax.plot(*zip(*pts), marker=m, ls=ls, color=c, label=lab)
    copy_curve(ax, [r for r in rows if r["impl"] == "automatic"], lambda r: r["bytes"] / 1e6)
    ax.set_xscale("log")
    ax.set_xlabel("data size (MB: (n,1)+(n,n) -> (n,n), f32)")
    ax.set_ylabel("effective GB/s")
    ax.set_title("d2ltvm broadcast add", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    for row, n in enumerate(sweeps, start=1):
        for col, impl in enumerate(["continuous", "alternate"]):
            ax = fig.add_subplot(spec[row, col])
            sel = [r for r in rows if r["params"]["n"] == n and r["impl"] == impl
                   and r["params"]["nt"] > 0]
            nts = sorted({r["params"]["nt"] for r in sel})
            nbs = sorted({r["params"]["nb"] for r in sel})
            grid = [[math.nan] * len(nbs) for _ in nts]
            for r in sel:
                grid[nts.index(r["params"]["nt"])][nbs.index(r["params"]["nb"])] = r["gbps"]
            im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
            ax.set_xticks(range(len(nbs)), [str(b) for b in nbs], fontsize=7)
            ax.set_yticks(range(len(nts)), [str(t) for t in nts], fontsize=7)
            for i in range(len(nts)):
                for j in range(len(nbs)):
                    if not math.isnan(grid[i][j]):
                        ax.text(j, i, f"{grid[i][j]:.0f}", ha="center", va="center", fontsize=6,
                                color="w")
            ax.set_xlabel("nb (blocks)")
            ax.set_ylabel("nt (threads/block)")
            ax.set_title(f"{impl}, n={n}: GB/s", fontsize=9)
            fig.colorbar(im, ax=ax)
    finish(fig, out, "schedules.png", "Schedules", meta)


def plot_patterns(rows, meta, out):
    rows = ok(rows, "patterns")
    if not rows:
        return
    dtypes = [d for d in ["f32", "bf16", "f16", "f64"] if any(r["dtype"] == d for r in rows)]
    names = list(dict.fromkeys(r["name"] for r in rows))
    impls = [k for k in KERNEL_STYLE if any(r["impl"] == k for r in rows)]
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(13, 3.2 * len(dtypes)), squeeze=False)
    width = 0.8 / max(len(impls), 1)
    for i, dt in enumerate(dtypes):
        ax = axes[i][0]
        for k, impl in enumerate(impls):
            xs, ys = [], []
            for j, name in enumerate(names):
                m = [r for r in rows if r["dtype"] == dt and r["name"] == name and r["impl"] == impl]
                if m:
                    xs.append(j + (k - len(impls) / 2 + 0.5) * width)
                    ys.append(m[0]["gbps"])
            if xs:
                ax.bar(xs, ys, width, color=KERNEL_STYLE[impl][0], label=impl)
        cub = max((r["cub_gbps"] for r in rows if r["dtype"] == dt and r.get("cub_gbps")), default=None)
        if cub:
            ax.axhline(cub, color="k", ls="--", lw=1, label=f"cub same-shape add ({cub:.0f})")
            ax.axhline(0.9 * cub, color="k", ls=":", lw=1, label="90% of cub")
        ax.set_xticks(range(len(names)), names, fontsize=8)
        ax.set_ylabel(f"{dt}: effective GB/s")
        ax.grid(alpha=0.3, axis="y")
        if i == 0:
            ax.legend(fontsize=7, ncol=4)
    finish(fig, out, "patterns.png", "Broadcast patterns", meta)


def plot_sparse(rows, meta, out):
    rows = [r for r in ok(rows, "sparse") if r["params"].get("op") == "coo*coo"]
    if not rows:
        return
    groups = sorted({(r["params"]["rows"], r["params"]["input"]) for r in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(4.6 * len(groups), 3.8), squeeze=False,
                             sharey=True)
    for j, (side, order) in enumerate(groups):
        ax = axes[0][j]
        sel = [r for r in rows if r["params"]["rows"] == side and r["params"]["input"] == order]
        for impl in ["automatic", "automatic_novalidate", "sort_search", "merge", "linear_search"]:
            pts = sorted((r["params"]["density"], r["median_ms"]) for r in sel if r["impl"] == impl)
            if pts:
                c, m = KERNEL_STYLE[impl]
                ax.plot(*zip(*pts), marker=m, color=c, label=impl)
        density_axes(ax, "ms (input to canonical output)")
        ax.set_title(f"{side}x{side}, {order} inputs", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0][0].legend(fontsize=7)
    finish(fig, out, "sparse.png", "COO ⊙ COO, f32", meta)


def plot_crossover(rows, meta, out):
    sel = ok(rows, "crossover")
    summaries = [r for r in rows if r["suite"] == "crossover" and r["status"] == "summary"]
    dense = [r for r in sel if r["name"] == "dense_mul"]
    if not sel:
        return
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colors = {"unsorted": "tab:red", "canonical": "tab:blue"}
    for order in ["unsorted", "canonical"]:
        pts = sorted((r["params"]["density"], r["median_ms"]) for r in sel
                     if r["params"].get("input") == order and "density" in r["params"])
        if pts:
            ax.plot(*zip(*pts), marker="o", color=colors[order], label=f"COO multiply, {order}")
    if dense:
        ax.axhline(dense[0]["median_ms"], color="k", ls="--",
                   label=f"dense multiply ({dense[0]['median_ms']:.3f} ms)")
    for s in summaries:
        x = s["params"].get("crossover_density")
        if x:
            order = s["params"]["input"]
            ax.axvline(x, color=colors[order], ls=":", lw=1)
            ax.annotate(f"{order}: {x:.3g}", (x, dense[0]["median_ms"] if dense else 1),
                        textcoords="offset points", xytext=(4, 6 if order == "unsorted" else -12),
                        fontsize=8, color=colors[order])
    density_axes(ax, "ms")
    ax.set_title(f"Dense vs COO multiply, 16384x16384 f32 — {title_of(meta)}", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, out, "crossover.png")


def plot_peers(peers, out):
    rows = peers.get("ratios", [])
    meta = peers.get("meta", {})
    groups = [("dense", [r for r in rows if r["suite"] in ("patterns", "schedules")
                         or r["case"] == "dense_mul"]),
              ("sparse", [r for r in rows if r["suite"] in ("sparse", "crossover")
                          and r["case"] != "dense_mul"])]
    for kind, sel in groups:
        if not sel:
            continue
        labels = [f"{r['suite'][:5]}/{r['case']} {r['dtype']}" for r in sel]
        fig, ax = plt.subplots(figsize=(7, 0.2 * len(sel) + 1.5))
        y = list(range(len(sel)))
        for k, (lib, color) in enumerate([("torch", "tab:orange"), ("cupy", "tab:purple")]):
            vals = [r.get(f"{lib}_ratio") for r in sel]
            ax.barh([v + (k - 0.5) * 0.4 for v in y], [v if v else 0 for v in vals], 0.4,
                    color=color, label=f"ewise / {lib}")
        ax.axvline(1, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_yticks(y, labels, fontsize=6)
        ax.set_ylim(len(sel) - 0.5, -0.5)
        ax.set_xlabel("ewise time / peer time (below 1: ewise faster)")
        ax.set_title(f"ewise vs peers, {kind} — {meta.get('device', '?')}, torch "
                     f"{meta.get('torch')}, cupy {meta.get('cupy')}", fontsize=8)
        ax.grid(alpha=0.3, axis="x", which="both")
        ax.legend(fontsize=7)
        fig.tight_layout()
        save(fig, out, f"peers_{kind}.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="the record directory (holds ewise.json)")
    args = ap.parse_args()
    out = os.path.join(args.record, "plots")
    os.makedirs(out, exist_ok=True)
    ewise = record.load_ewise(args.record)
    rows, meta = ewise["results"], ewise["meta"]
    plot_paper(rows, meta, out)
    plot_schedules(rows, meta, out)
    plot_patterns(rows, meta, out)
    plot_sparse(rows, meta, out)
    plot_crossover(rows, meta, out)
    peers = record.load_peers(args.record)
    if peers:
        plot_peers(peers, out)


if __name__ == "__main__":
    main()
