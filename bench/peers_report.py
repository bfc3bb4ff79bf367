"""What bench/peers.py reports: the progress log, one ratio row per case (ewise time / peer
time in both call patterns) and the markdown table of peers.md."""


def log(*a):
    print(*a, flush=True)


PEER_FOR = {  # which peer timings an ewise row is compared with
    ("coo*coo", "unsorted"): [("torch", "torch_raw"), ("cupy", "cupy_coo")],
    ("coo*coo", "canonical"): [("torch", "torch_coalesced"), ("cupy", "cupy_csr")],
}


def fmt_ms(x):
    return "-" if x is None else (f"{x:.4f}" if x < 1 else f"{x:.3f}")


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}"


def pattern_fields(prefix, st):
    """The two call patterns' times of one timing (ewise record or peer result) as row fields."""
    return {f"{prefix}_ms": st.get("median_ms"), f"{prefix}_wall_ms": st.get("wall_ms"),
            f"{prefix}_sync_gpu_ms": st.get("sync_gpu_ms"),
            f"{prefix}_sync_wall_ms": st.get("sync_wall_ms")}


def ratio(x, y):
    return x / y if x and y else None


def input_row(r, res):
    """The ratio row of one record of the INPUT_SUITES: both patterns, both peers."""
    p = r["params"]
    dense = p.get("dense", "")
    row = {"suite": r["suite"], "case": f"{r['name']} {p['op']}" + (f" {dense}" if dense else ""),
           "name": r["name"], "op": p["op"], "dense": dense, "impl": r["impl"],
           "dtype": r["dtype"], "ewise_nnz": p.get("nnz_out")}
    row.update(pattern_fields("ewise", r))
    notes = []
    for lib in ("torch", "cupy"):
        pr = res.get(lib, {})
        row.update(pattern_fields(lib, pr))
        row[f"{lib}_variant"] = pr.get("variant")
        row[f"{lib}_ratio"] = ratio(row["ewise_ms"], row[f"{lib}_ms"])
        row[f"{lib}_sync_ratio"] = ratio(row["ewise_sync_wall_ms"], row[f"{lib}_sync_wall_ms"])
        if "skipped" in pr:
            notes.append(f"{lib}: {pr['skipped']}")
        elif pr.get("output_nnz") is not None:
            nz = pr.get("output_nonzero")
            notes.append(f"{lib} ({pr.get('variant')}) nnz {pr['output_nnz']}" +
                         (f" ({nz} nonzero)" if nz is not None and nz != pr["output_nnz"] else "") +
                         (", not coalesced" if pr.get("output_coalesced") is False else ""))
    if "error" in res:
        notes.append(res["error"])
    row["notes"] = "; ".join(notes)
    return row


def drawn_row(key, case, entry):
    """The ratio row of one case whose inputs were drawn again (entry: its peers' results)."""
    r, p = case["record"], case["record"]["params"]
    if key[0] == "dense":
        pairs = [("torch", "torch"), ("cupy", "cupy")]
    elif p["op"] == "coo*coo":
        pairs = PEER_FOR[(p["op"], p["input"])]
    else:
        pairs = [("torch", "torch"), ("cupy", "cupy")]
    row = {"suite": r["suite"], "case": r["name"], "dtype": r["dtype"],
           "ewise_nnz": p.get("nnz_out"),
           "torch_host_us": entry["peers"].get("torch", {}).get("host_us_per_call")}
    row.update(pattern_fields("ewise", r))
    notes = []
    for lib, variant in pairs:
        pr = entry["peers"].get(variant, {})
        ms = pr.get("median_ms")
        row.update(pattern_fields(lib, pr))
        row[f"{lib}_variant"] = variant
        row[f"{lib}_ratio"] = case["ewise_ms"] / ms if ms else None
        row[f"{lib}_sync_ratio"] = ratio(row["ewise_sync_wall_ms"], row[f"{lib}_sync_wall_ms"])
        if "skipped" in pr:
            notes.append(f"{lib}: {pr['skipped']}")
        if pr.get("output_nnz") is not None and p.get("nnz_out") is not None:
            nz = pr.get("output_nonzero")
            notes.append(f"{lib} nnz {pr['output_nnz']}" +
                         (f" ({nz} nonzero)" if nz is not None and nz != pr["output_nnz"] else "") +
                         (f", {pr['output_format']}" if pr.get("output_format") else "") +
                         (", not coalesced" if pr.get("output_coalesced") is False else ""))
    if "error" in entry:
        notes.append(entry["error"])
    row["notes"] = "; ".join(notes)
    return row


def write_table(path, device, meta, rows):
    """peers.md: the ratio rows as one markdown table."""
    with open(path, "w") as f:
        f.write(f"# ewise vs peers ({device})\n\n")
        f.write(f"ewise commit {meta['ewise_commit']}, torch {meta['torch']}, cupy {meta['cupy']}. "
                "Ratio = ewise time / peer time (below 1: ewise faster). Back to back: GPU time "
                f"(events), median of {meta['runs']} samples; sync: host wall time of one call "
                "followed by a stream synchronization, median.\n\n")
        f.write("| suite | case | dtype | ewise ms | torch ms | ewise/torch | cupy ms | ewise/cupy "
                "| sync ewise ms | sync ewise/torch | sync ewise/cupy | notes |\n")
        f.write("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
        for r in rows:
            tv = f" ({r['torch_variant']})" if r.get("torch_variant") not in (None, "torch") else ""
            cv = f" ({r['cupy_variant']})" if r.get("cupy_variant") not in (None, "cupy") else ""
            f.write(f"| {r['suite']} | {r['case']} | {r['dtype']} | {fmt_ms(r['ewise_ms'])} | "
                    f"{fmt_ms(r.get('torch_ms'))}{tv} | {fmt_ratio(r.get('torch_ratio'))} | "
                    f"{fmt_ms(r.get('cupy_ms'))}{cv} | {fmt_ratio(r.get('cupy_ratio'))} | "
                    f"{fmt_ms(r.get('ewise_sync_wall_ms'))} | {fmt_ratio(r.get('torch_sync_ratio'))} | "
                    f"{fmt_ratio(r.get('cupy_sync_ratio'))} | {r['notes']} |\n")
