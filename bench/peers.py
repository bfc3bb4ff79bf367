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
  * sparse COO ⊙ dense (sparse suite): PyTorch sparse * dense, CuPy csr.multiply(dense).
Inputs are drawn the way ewise_bench draws them (every cell stored independently with the
case's density, values uniform in [-4, 4] away from zero), not the same bits: nnz agrees to
sampling noise, which the table shows. A peer's output that differs from ewise's (PyTorch pads
its product with explicit zeros to an operand's nnz; CuPy may return another format) is noted
with its nnz.

Timing as in ewise_bench: 3 warm-up calls (the last timed to size the batch), then the median
over >= 20 samples timed with CUDA events; a sample is a batch of back-to-back calls long enough (>= 100 us) for the events, and
dense inputs rotate through enough sets to exceed 3x the L2 cache when one set is smaller.
"""
import argparse
import json
import math
import os
import platform
import sys
import time

import record


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# timing


class Timer:
    """Median-of-samples timing with one library's CUDA events."""

    def __init__(self, event_cls, sync, runs):
        self.event_cls, self.sync, self.runs = event_cls, sync, max(runs, 20)

    def _elapsed(self, fn, count, start_i):
        e0, e1 = self.event_cls(), self.event_cls()
        e0.record()
        for j in range(count):
            fn(start_i + j)
        e1.record()
        e1.synchronize()
        return self._ms(e0, e1)

    def __call__(self, fn):
        # warm-up: 3 calls, the last timed; calls under 100 us are re-estimated over 5
        fn(0)
        fn(1)
        self.sync()
        i = 2
        est = self._elapsed(fn, 1, i)
        i += 1
        if est < 0.1:
            est = max(self._elapsed(fn, 5, i) / 5, 1e-4)
            i += 5
        batch = int(min(max(math.ceil(0.1 / est), 1), 4096))
        pairs = []
        for _ in range(self.runs):
            e0, e1 = self.event_cls(), self.event_cls()
            e0.record()
            for _ in range(batch):
                fn(i)
                i += 1
            e1.record()
            pairs.append((e0, e1))
        self.sync()
        t = sorted(self._ms(a, b) / batch for a, b in pairs)
        n = len(t)
        med = t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])
        return {"median_ms": med, "min_ms": t[0], "max_ms": t[-1], "runs": n, "batch": batch}


class TorchTimer(Timer):
    def __init__(self, torch, runs):
        super().__init__(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize, runs)

    @staticmethod
    def _ms(a, b):
        return a.elapsed_time(b)


class CupyTimer(Timer):
    def __init__(self, cp, runs):
        self.cp = cp
        super().__init__(cp.cuda.Event, cp.cuda.Device().synchronize, runs)

    def _ms(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b)


def sets_for(footprint, l2_bytes):
    target = 3 * l2_bytes
    if footprint >= target:
        return 1
    return int(min(math.ceil(target / max(footprint, 1)), 4096))


# ---------------------------------------------------------------------------------------------
# cases from ewise's JSON


def dense_key(r):
    p = r["params"]
    return ("dense", r["suite"], r["name"], r["dtype"], p["op"], tuple(p["a_shape"]),
            tuple(p["b_shape"]), bool(p["a_transposed"]), int(p.get("offset", 0)))


def sparse_key(r):
    p = r["params"]  # no suite: the crossover suite repeats some of the sparse suite's cases
    return ("sparse", p["op"], p["rows"], p["cols"], p["density"], p["input"],
            p.get("dense", ""), r["dtype"])


def collect_cases(ewise):
    """One entry per distinct case: its key, a label and ewise's automatic time."""
    dense, sparse = {}, {}
    for r in ewise["results"]:
        if r["status"] != "ok":
            continue
        p = r["params"]
        if r["suite"] in ("patterns", "ml_shapes", "schedules", "crossover") and "a_shape" in p:
            if r["impl"] != "automatic" or (r["suite"] == "schedules" and p.get("nt", 0) != 0):
                continue
            dense[dense_key(r)] = {"ewise_ms": r["median_ms"], "record": r}
        elif (p.get("op") == "coo*coo" and r["impl"] == "automatic") or p.get("op") == "coo*dense":
            sparse.setdefault(sparse_key(r), {"ewise_ms": r["median_ms"], "record": r})
    return dense, sparse


# ---------------------------------------------------------------------------------------------
# dense peers


def torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64}[name]


def rand_uniform_torch(torch, shape, dtype):
    x = torch.rand(shape, device="cuda", dtype=torch.float32) * 8 - 4
    x = torch.where(x.abs() < 0.0625, torch.full_like(x, 0.5), x)
    return x.to(dtype)


def shifted(make, shape, offset):
    """A tensor of `shape` made by `make` that starts `offset` elements into its allocation."""
    if not offset:
        return make(tuple(shape))
    return make((math.prod(shape) + offset,))[offset:].reshape(tuple(shape))


def dense_operands(shape_a, shape_b, transposed, make, offset=0):
    """(a, b) made by `make`, a a transposed view of a contiguous tensor when asked, a starting
    `offset` elements into its allocation."""
    if transposed:
        a = make((shape_a[1], shape_a[0])).T
    else:
        a = shifted(make, shape_a, offset)
    b = make(tuple(shape_b))
    return a, b


def run_dense_torch(torch, timer, key, l2):
    _, suite, name, dt, op, sa, sb, tr, off = key
    dtype = torch_dtype(torch, dt)
    make = lambda s: rand_uniform_torch(torch, s, dtype)
    out_shape = torch.broadcast_shapes(sa, sb)
    elem = torch.empty((), dtype=dtype).element_size()
    numel = lambda s: math.prod(s) if len(s) else 1
    footprint = (numel(sa) + numel(sb) + numel(out_shape)) * elem
    empty = lambda s: torch.empty(s, device="cuda", dtype=dtype)
    sets = [(*dense_operands(sa, sb, tr, make, off), shifted(empty, out_shape, off))
            for _ in range(sets_for(footprint, l2))]
    fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}[op]
    a, b, c = sets[0]
    fn(a, b, out=c)
    note = None
    if numel(out_shape) <= (1 << 26):  # a sanity check of the peer, where it is cheap
        ref = fn(a.double(), b.double())
        note = f"max rel err {((c.double() - ref).abs().max() / ref.abs().max()).item():.1e} vs f64"
        del ref
    st = timer(lambda i: fn(*sets[i % len(sets)][:2], out=sets[i % len(sets)][2]))
    st["note"] = note
    st["sets"] = len(sets)
    return st


def run_dense_cupy(cp, timer, key, l2):
    _, suite, name, dt, op, sa, sb, tr, off = key
    if dt == "bf16":
        return {"skipped": "CuPy has no bfloat16"}
    dtype = {"f16": cp.float16, "f32": cp.float32, "f64": cp.float64}[dt]

    def make(s):
        x = cp.random.uniform(-4, 4, size=s, dtype=cp.float32 if dt != "f64" else cp.float64)
        x = cp.where(cp.abs(x) < 0.0625, 0.5, x)
        return x.astype(dtype)

    out_shape = tuple(cp.broadcast_shapes(sa, sb)) if hasattr(cp, "broadcast_shapes") else \
        tuple(cp.broadcast(cp.empty(sa, dtype=cp.int8), cp.empty(sb, dtype=cp.int8)).shape)
    elem = cp.dtype(dtype).itemsize
    numel = lambda s: math.prod(s) if len(s) else 1
    footprint = (numel(sa) + numel(sb) + numel(out_shape)) * elem
    sets = [(*dense_operands(sa, sb, tr, make, off), shifted(lambda s: cp.empty(s, dtype=dtype), out_shape, off))
            for _ in range(sets_for(footprint, l2))]
    fn = {"add": cp.add, "sub": cp.subtract, "mul": cp.multiply}[op]
    st = timer(lambda i: fn(*sets[i % len(sets)][:2], out=sets[i % len(sets)][2]))
    st["sets"] = len(sets)
    return st


# ---------------------------------------------------------------------------------------------
# sparse peers


def torch_random_coo(torch, rows, cols, density, unsorted, gen_chunk=1 << 27):
    """Every cell stored independently with probability `density`; int64 (2, nnz) indices."""
    total = rows * cols
    parts = []
    for start in range(0, total, gen_chunk):
        n = min(gen_chunk, total - start)
        parts.append(torch.nonzero(torch.rand(n, device="cuda") < density).flatten() + start)
    flat = torch.cat(parts)
    if unsorted:
        flat = flat[torch.randperm(flat.numel(), device="cuda")]
    idx = torch.stack([flat // cols, flat % cols])
    vals = torch.rand(flat.numel(), device="cuda") * 8 - 4
    vals = torch.where(vals.abs() < 0.0625, torch.full_like(vals, 0.5), vals)
    return idx, vals


def run_sparse(torch, cp, ttimer, ctimer, key):
    _, op, rows, cols, density, order, dense_pat, dt = key
    out = {}
    ia, va = torch_random_coo(torch, rows, cols, density, order == "unsorted")
    out["peer_nnz_a"] = int(va.numel())
    shape = (rows, cols)
    if op == "coo*coo":
        ib, vb = torch_random_coo(torch, rows, cols, density, order == "unsorted")
        out["peer_nnz_b"] = int(vb.numel())
        if order == "unsorted":
            # from raw indices: construction, coalescing (inside *) and product
            def raw(i):
                A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False)
                B = torch.sparse_coo_tensor(ib, vb, shape, check_invariants=False)
                return A * B
            c = raw(0)
            out["torch_raw"] = dict(ttimer(raw), output_nnz=int(c._nnz()),
                                    output_nonzero=int((c._values() != 0).sum().item()),
                                    output_coalesced=bool(c.is_coalesced()))
        else:
            A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False).coalesce()
            B = torch.sparse_coo_tensor(ib, vb, shape, check_invariants=False).coalesce()
            c = A * B
            out["torch_coalesced"] = dict(ttimer(lambda i: A * B), output_nnz=int(c._nnz()),
                                          output_nonzero=int((c._values() != 0).sum().item()),
                                          output_coalesced=bool(c.is_coalesced()))
        del c
        if cp is not None:
            import cupyx.scipy.sparse as cps
            ra, ca_, vA = (cp.asarray(ia[0].to(torch.int32)), cp.asarray(ia[1].to(torch.int32)),
                           cp.asarray(va))
            rb, cb, vB = (cp.asarray(ib[0].to(torch.int32)), cp.asarray(ib[1].to(torch.int32)),
                          cp.asarray(vb))
            torch.cuda.synchronize()
            if order == "unsorted":
                def from_coo(i):
                    A = cps.coo_matrix((vA, (ra, ca_)), shape=shape).tocsr()
                    B = cps.coo_matrix((vB, (rb, cb)), shape=shape).tocsr()
                    return A.multiply(B)
                c = from_coo(0)
                out["cupy_coo"] = dict(ctimer(from_coo), output_nnz=int(c.nnz),
                                       output_format=type(c).__name__)
            else:
                A = cps.coo_matrix((vA, (ra, ca_)), shape=shape).tocsr()
                B = cps.coo_matrix((vB, (rb, cb)), shape=shape).tocsr()
                c = A.multiply(B)
                out["cupy_csr"] = dict(ctimer(lambda i: A.multiply(B)), output_nnz=int(c.nnz),
                                       output_format=type(c).__name__)
    else:  # coo*dense
        dshape = {"full": (rows, cols), "row": (1, cols), "column": (rows, 1), "scalar": ()}[dense_pat]
        d = rand_uniform_torch(torch, dshape, torch.float32)
        A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False)
        if order == "canonical":
            A = A.coalesce()
        torch.cuda.synchronize()
        try:
            c = A * d
            out["torch"] = dict(ttimer(lambda i: A * d),
                                output_nnz=int(c._nnz()) if c.is_sparse else None,
                                output_coalesced=bool(c.is_coalesced()) if c.is_sparse else None,
                                output_format=str(c.layout))
        except RuntimeError as e:
            out["torch"] = {"skipped": f"unsupported: {str(e).splitlines()[0][:120]}"}
        if cp is not None:
            import cupyx.scipy.sparse as cps
            Acsr = cps.coo_matrix((cp.asarray(va), (cp.asarray(ia[0].to(torch.int32)),
                                                    cp.asarray(ia[1].to(torch.int32)))),
                                  shape=shape).tocsr()
            dc = cp.asarray(d)
            try:
                c = Acsr.multiply(dc)
                out["cupy"] = dict(ctimer(lambda i: Acsr.multiply(dc)),
                                   output_nnz=int(c.nnz) if hasattr(c, "nnz") else None,
                                   output_format=type(c).__name__)
            except Exception as e:  # noqa: BLE001 - report whatever CuPy refuses
                out["cupy"] = {"skipped": f"unsupported: {str(e).splitlines()[0][:120]}"}
    return out


# ---------------------------------------------------------------------------------------------
# report

PEER_FOR = {  # which peer timings an ewise row is compared with
    ("coo*coo", "unsorted"): [("torch", "torch_raw"), ("cupy", "cupy_coo")],
    ("coo*coo", "canonical"): [("torch", "torch_coalesced"), ("cupy", "cupy_csr")],
}


def fmt_ms(x):
    return "-" if x is None else (f"{x:.4f}" if x < 1 else f"{x:.3f}")


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="the record directory (holds ewise.json)")
    ap.add_argument("--runs", type=int, default=20, help="timed samples per case (>= 20)")
    args = ap.parse_args()
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
        # ratio rows
        p = r["params"]
        if key[0] == "dense":
            pairs = [("torch", "torch"), ("cupy", "cupy")]
        elif p["op"] == "coo*coo":
            pairs = PEER_FOR[(p["op"], p["input"])]
        else:
            pairs = [("torch", "torch"), ("cupy", "cupy")]
        row = {"suite": r["suite"], "case": r["name"], "dtype": r["dtype"],
               "ewise_ms": case["ewise_ms"], "ewise_nnz": p.get("nnz_out")}
        notes = []
        for lib, variant in pairs:
            pr = entry["peers"].get(variant, {})
            ms = pr.get("median_ms")
            row[f"{lib}_variant"] = variant
            row[f"{lib}_ms"] = ms
            row[f"{lib}_ratio"] = case["ewise_ms"] / ms if ms else None
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
        rows.append(row)
        log("  ewise {} ms | torch {} ms ({}) | cupy {} ms ({}) {}".format(
            fmt_ms(row["ewise_ms"]), fmt_ms(row.get("torch_ms")), fmt_ratio(row.get("torch_ratio")),
            fmt_ms(row.get("cupy_ms")), fmt_ratio(row.get("cupy_ratio")), row["notes"]))
    with open(os.path.join(args.record, record.PEERS), "w") as f:
        json.dump({"meta": meta, "cases": results, "ratios": rows}, f, indent=1)
    with open(os.path.join(args.record, "peers.md"), "w") as f:
        f.write(f"# ewise vs peers ({props.name})\n\n")
        f.write(f"ewise commit {meta['ewise_commit']}, torch {meta['torch']}, cupy {meta['cupy']}. "
                "Ratio = ewise time / peer time (below 1: ewise faster). Median of "
                f"{meta['runs']} samples each.\n\n")
        f.write("| suite | case | dtype | ewise ms | torch ms | ewise/torch | cupy ms | ewise/cupy | notes |\n")
        f.write("|---|---|---|---:|---:|---:|---:|---:|---|\n")
        for r in rows:
            tv = f" ({r['torch_variant']})" if r.get("torch_variant") not in (None, "torch") else ""
            cv = f" ({r['cupy_variant']})" if r.get("cupy_variant") not in (None, "cupy") else ""
            f.write(f"| {r['suite']} | {r['case']} | {r['dtype']} | {fmt_ms(r['ewise_ms'])} | "
                    f"{fmt_ms(r.get('torch_ms'))}{tv} | {fmt_ratio(r.get('torch_ratio'))} | "
                    f"{fmt_ms(r.get('cupy_ms'))}{cv} | {fmt_ratio(r.get('cupy_ratio'))} | "
                    f"{r['notes']} |\n")
    log(f"peers: wrote {args.record}/peers.json and peers.md in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
