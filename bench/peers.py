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
import math
import os
import platform
import sys
import tempfile
import time

import record


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# timing


SYNC_BUDGET_MS = 1000  # the synchronizing pattern times `runs` calls unless that takes longer,
MIN_SYNC_RUNS = 5      # and then no fewer than this (as ewise_bench's harness)


def median(t):
    t = sorted(t)
    n = len(t)
    return t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])


class Timer:
    """Median-of-samples timing with one library's CUDA events, in both call patterns: back to
    back (GPU time per call from events, median of samples; host wall time per call around all
    samples' calls with one synchronization at the end) and synchronizing (each call followed
    by a synchronization of the current stream: host wall and GPU time per call, medians)."""

    def __init__(self, event_cls, sync, runs, stream_sync=None):
        self.event_cls, self.sync, self.runs = event_cls, sync, max(runs, 20)
        self.stream_sync = stream_sync or sync

    def _elapsed(self, fn, count, start_i):
        e0, e1 = self.event_cls(), self.event_cls()
        e0.record()
        for j in range(count):
            fn(start_i + j)
        e1.record()
        e1.synchronize()
        return self._ms(e0, e1)

    def __call__(self, fn, sync_pattern=True):
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
        w0 = time.perf_counter()
        for _ in range(self.runs):
            e0, e1 = self.event_cls(), self.event_cls()
            e0.record()
            for _ in range(batch):
                fn(i)
                i += 1
            e1.record()
            pairs.append((e0, e1))
        self.sync()
        wall = (time.perf_counter() - w0) * 1e3 / (self.runs * batch)
        t = sorted(self._ms(a, b) / batch for a, b in pairs)
        out = {"median_ms": median(t), "min_ms": t[0], "max_ms": t[-1], "runs": len(t),
               "batch": batch, "wall_ms": wall}
        if sync_pattern:
            n = int(min(max(SYNC_BUDGET_MS // max(out["median_ms"], 1e-4), MIN_SYNC_RUNS),
                        self.runs))
            e0, e1 = self.event_cls(), self.event_cls()
            gpu, wall = [], []
            for _ in range(n):
                e0.record()
                t0 = time.perf_counter()
                fn(i)
                i += 1
                e1.record()
                self.stream_sync()
                wall.append((time.perf_counter() - t0) * 1e3)
                gpu.append(self._ms(e0, e1))
            out.update(sync_gpu_ms=median(gpu), sync_wall_ms=median(wall), sync_runs=n)
        return out


class TorchTimer(Timer):
    def __init__(self, torch, runs):
        super().__init__(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize, runs,
                         lambda: torch.cuda.current_stream().synchronize())

    @staticmethod
    def _ms(a, b):
        return a.elapsed_time(b)


class CupyTimer(Timer):
    def __init__(self, cp, runs):
        self.cp = cp
        super().__init__(cp.cuda.Event, cp.cuda.Device().synchronize, runs,
                         lambda: cp.cuda.get_current_stream().synchronize())

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
        if r["suite"] in INPUT_SUITES:  # their own path: input_peers
            continue
        if r["suite"] in ("patterns", "ml_shapes", "small", "schedules", "crossover") and "a_shape" in p:
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
    if suite == "small":
        st["host_us_per_call"] = host_us_per_call(lambda: fn(a, b, out=c), torch.cuda.synchronize)
    return st


HOST_CALLS = 20000  # as ewise's small suite


def host_us_per_call(call, synchronize):
    """What the calling thread spends on one call, microseconds: a CPU clock around HOST_CALLS
    back-to-back calls, synchronized before and after but not inside (as ewise's small suite)."""
    call()
    synchronize()
    t0 = time.perf_counter()
    for _ in range(HOST_CALLS):
        call()
    took = time.perf_counter() - t0
    synchronize()
    return took * 1e6 / HOST_CALLS


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
# structures and union suites: identical inputs from .npy files, in a worker process

TORCH_HUGE = 1 << 37  # PyTorch's CUDA sparse mul can die with SIGFPE from about 2^38 cells
INPUT_SUITES = ("structures", "union")  # suites whose inputs ewise_bench writes as .npy


def input_tasks(ewise):
    """One task per timed record of the INPUT_SUITES: what the worker needs to rebuild the
    call."""
    tasks = []
    for r in ewise["results"]:
        if r["suite"] not in INPUT_SUITES or r["status"] != "ok":
            continue
        p = r["params"]
        if (p["op"] == "coo*coo" and r["impl"] != "automatic") or r["impl"].endswith("_novalidate"):
            continue  # algorithm and unchecked variants share the default row's peer figures
        tasks.append({"id": len(tasks), "suite": r["suite"], "name": r["name"], "op": p["op"],
                      "kind": p["kind"],
                      "form": p["form"], "input": p["input"], "rows": p["rows"], "cols": p["cols"],
                      "inputs": p["inputs"], "dense": p.get("dense", ""),
                      "dense_input": p.get("dense_input", ""), "record": r})
    return tasks


def load_form(np, torch, cp, inputs_dir, stem):
    """The a and b of one form as torch tensors ((2, nnz) int64 indices, f32 values) and CuPy
    arrays (int32 rows and columns, f32 values)."""
    out = {}
    for m in ("a", "b"):
        arr = {f: np.load(os.path.join(inputs_dir, f"{stem}_{m}_{f}.npy"))
               for f in ("rows", "cols", "vals")}
        rows_t = torch.from_numpy(arr["rows"]).cuda()
        cols_t = torch.from_numpy(arr["cols"]).cuda()
        out[m] = {"idx": torch.stack([rows_t.long(), cols_t.long()]),
                  "vals": torch.from_numpy(arr["vals"]).cuda(), "rows": rows_t, "cols": cols_t}
        if cp is not None:
            out[m]["cp"] = {f: cp.asarray(arr[f]) for f in ("rows", "cols", "vals")}
    return out


def cupy_csr(cp, cps, m, shape, canonical):
    """A CSR matrix of m's entries (duplicates summed when not canonical); not timed."""
    r, c, v = m["rows"], m["cols"], m["vals"]
    if canonical:
        indptr = cp.zeros(shape[0] + 1, dtype=cp.int32)
        indptr[1:] = cp.cumsum(cp.bincount(r, minlength=shape[0])).astype(cp.int32)
        return cps.csr_matrix((v, c, indptr), shape=shape)
    return cps.coo_matrix((v, (r, c)), shape=shape).tocsr()


def sparse_out(c):
    if getattr(c, "is_sparse", False):
        return {"output_nnz": int(c._nnz()), "output_coalesced": bool(c.is_coalesced()),
                "output_format": "torch.sparse_coo"}
    if hasattr(c, "nnz"):
        return {"output_nnz": int(c.nnz), "output_format": type(c).__name__}
    return {"output_format": f"{type(c).__name__} {tuple(c.shape)}"}


def prepare_inputs(np, torch, cp, t, cache, inputs_dir):
    """Loads the task's inputs (kept in `cache` while the next task uses the same ones)."""
    key = (t["inputs"], t["dense_input"])
    if cache.get("key", (None,))[0] != t["inputs"]:
        cache.clear()
        torch.cuda.empty_cache()
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
        cache["form"] = load_form(np, torch, cp, inputs_dir, t["inputs"])
    if t["dense_input"] and cache.get("key", (None, None))[1] != t["dense_input"]:
        d = np.load(os.path.join(inputs_dir, t["dense_input"] + ".npy"))
        cache["dense"] = torch.from_numpy(d).cuda()
        cache["dense_cp"] = cp.asarray(d) if cp is not None else None
    cache["key"] = key
    torch.cuda.synchronize()


def torch_huge_skip(t, what):
    """The skip record of a PyTorch sparse call on a shape where it can die, or None."""
    if t["rows"] * t["cols"] < TORCH_HUGE:
        return None
    return {"skipped": f"nrows*ncols = 2^{math.log2(t['rows'] * t['cols']):.1f} >= 2^37, where "
                       f"PyTorch's CUDA sparse {what} can die with SIGFPE (not run; peers.py "
                       "--torch-huge runs it)"}


def structures_torch(torch, ttimer, t, cache, torch_huge):
    """PyTorch on one structures case."""
    a, b = cache["form"]["a"], cache["form"]["b"]
    shape, canonical = (t["rows"], t["cols"]), t["input"] == "canonical"
    try:
        if t["op"] == "values*dense":  # what a PyTorch user writes for the pattern-kept product
            d = cache["dense"]
            if t["dense"] == "row":
                row, cols = d.reshape(-1), a["idx"][1]
                fn = lambda i: a["vals"] * row[cols]
            else:
                rr, cc = a["idx"][0], a["idx"][1]
                fn = lambda i: a["vals"] * d[rr, cc]
            c = fn(0)
            return dict(ttimer(fn), variant="gather", output_format=f"values {tuple(c.shape)}")
        skip = torch_huge_skip(t, "mul")
        if skip and not torch_huge:
            return skip
        if t["op"] == "coo*coo":
            if canonical:
                A = torch.sparse_coo_tensor(a["idx"], a["vals"], shape).coalesce()
                B = torch.sparse_coo_tensor(b["idx"], b["vals"], shape).coalesce()
                fn, variant = (lambda i: A * B), "coalesced"
            else:
                def fn(i):  # from raw indices: construction, coalescing (inside *) and product
                    A = torch.sparse_coo_tensor(a["idx"], a["vals"], shape, check_invariants=False)
                    B = torch.sparse_coo_tensor(b["idx"], b["vals"], shape, check_invariants=False)
                    return A * B
                variant = "raw"
            c = fn(0)
            info = sparse_out(c)
            info["output_nonzero"] = int((c._values() != 0).sum().item())
            del c
            return dict(ttimer(fn), variant=variant, **info)
        # coo*dense
        A = torch.sparse_coo_tensor(a["idx"], a["vals"], shape, check_invariants=False)
        if canonical:
            A = A.coalesce()
        d = cache["dense"]
        c = A * d
        info = sparse_out(c)
        del c
        return dict(ttimer(lambda i: A * d), variant="coalesced" if canonical else "raw", **info)
    except Exception as e:  # noqa: BLE001 - record what PyTorch refuses
        return {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    finally:
        torch.cuda.synchronize()


def structures_cupy(cp, ctimer, t, cache):
    """CuPy on one structures case: CSR-ready (conversion not timed), .multiply(other)."""
    a, b = cache["form"]["a"], cache["form"]["b"]
    shape, canonical = (t["rows"], t["cols"]), t["input"] == "canonical"
    try:
        import cupyx.scipy.sparse as cps
        if t["op"] == "values*dense":
            r, c_, v = a["cp"]["rows"], a["cp"]["cols"], a["cp"]["vals"]
            dc = cache["dense_cp"]
            if t["dense"] == "row":
                row = dc.ravel()
                fn = lambda i: v * row[c_]
            else:
                fn = lambda i: v * dc[r, c_]
            c = fn(0)
            return dict(ctimer(fn), variant="gather", output_format=f"values {c.shape}")
        A = cupy_csr(cp, cps, a["cp"], shape, canonical)
        other = (cupy_csr(cp, cps, b["cp"], shape, canonical) if t["op"] == "coo*coo"
                 else cache["dense_cp"])
        cp.cuda.Device().synchronize()
        c = A.multiply(other)
        info = sparse_out(c)
        del c
        return dict(ctimer(lambda i: A.multiply(other)),
                    variant="CSR" if canonical else "CSR (duplicates summed)", **info)
    except Exception as e:  # noqa: BLE001 - record what CuPy refuses
        return {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    finally:
        cp.cuda.Device().synchronize()


def union_torch(torch, ttimer, t, cache, torch_huge):
    """PyTorch on one union case: sparse operands made once (coalesced for the canonical form,
    raw for the natural one), not timed."""
    a, b = cache["form"]["a"], cache["form"]["b"]
    shape, canonical = (t["rows"], t["cols"]), t["input"] == "canonical"
    skip = torch_huge_skip(t, "add")
    if skip and not torch_huge:
        return skip
    try:
        def sparse(m):
            A = torch.sparse_coo_tensor(m["idx"], m["vals"], shape, check_invariants=False)
            return A.coalesce() if canonical else A
        A = sparse(a)
        variant = "coalesced" if canonical else "raw"
        if t["op"] == "coo+coo":
            B = sparse(b)
            fn, variant = (lambda i: (A + B).coalesce()), variant + ", (A + B).coalesce()"
        elif t["op"] == "dense+=coo":
            work = cache["dense"].clone()
            fn, variant = (lambda i: work.add_(A)), variant + ", D.add_(A)"
        else:
            d = cache["dense"]
            fn, variant = (lambda i: d + A), variant + ", D + A"
        c = fn(0)
        info = sparse_out(c)
        if getattr(c, "is_sparse", False):
            info["output_nonzero"] = int((c._values() != 0).sum().item())
        del c
        return dict(ttimer(fn), variant=variant, **info)
    except Exception as e:  # noqa: BLE001 - record what PyTorch refuses
        return {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    finally:
        torch.cuda.synchronize()


def union_cupy(cp, ctimer, t, cache):
    """CuPy on one union case: CSR-ready (conversion not timed)."""
    a, b = cache["form"]["a"], cache["form"]["b"]
    shape, canonical = (t["rows"], t["cols"]), t["input"] == "canonical"
    try:
        import cupyx.scipy.sparse as cps
        A = cupy_csr(cp, cps, a["cp"], shape, canonical)
        variant = "CSR" if canonical else "CSR (duplicates summed)"
        if t["op"] == "coo+coo":
            B = cupy_csr(cp, cps, b["cp"], shape, canonical)
            fn, variant = (lambda i: A + B), variant + ", A + B"
        elif t["op"] == "dense+=coo":
            box = [cache["dense_cp"].copy()]
            before = box[0]

            def iadd(i):
                box[0] += A
                return box[0]
            try:
                iadd(0)
                fn = iadd
                variant += (", D += A (in place)" if box[0] is before
                            else ", D += A (rebinds D to a new array)")
            except Exception as e:  # noqa: BLE001 - then the allocating form
                D = cache["dense_cp"]
                fn = lambda i: A + D
                variant += f", A + D (D += A raised {type(e).__name__})"
        else:
            D = cache["dense_cp"]
            fn, variant = (lambda i: A + D), variant + ", A + D"
        cp.cuda.Device().synchronize()
        c = fn(0)
        info = sparse_out(c)
        del c
        return dict(ctimer(fn), variant=variant, **info)
    except Exception as e:  # noqa: BLE001 - record what CuPy refuses
        return {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    finally:
        cp.cuda.Device().synchronize()


PEER_FNS = {"structures": (structures_torch, structures_cupy), "union": (union_torch, union_cupy)}


def input_worker(tasks_path, out_path, runs, torch_huge):
    """The worker process: runs the tasks in order, one JSON line before each ("start"), after
    its CuPy part ("partial") and after its PyTorch part ("result"), so that the parent knows
    which task a crash took down and keeps what it had measured."""
    import numpy as np
    import torch
    try:
        import cupy as cp
        import cupyx.scipy.sparse  # noqa: F401
    except Exception:  # noqa: BLE001
        cp = None
    with open(tasks_path) as f:
        job = json.load(f)
    ttimer = TorchTimer(torch, runs)
    ctimer = CupyTimer(cp, runs) if cp is not None else None
    cache = {}
    with open(out_path, "a") as out:
        for t in job["tasks"]:
            out.write(json.dumps({"id": t["id"], "start": True}) + "\n")
            out.flush()
            log(f"[peers {t['suite']} {t['id'] + 1}/{job['total']}] {t['name']} {t['op']} "
                f"{t['dense']}")
            prepare_inputs(np, torch, cp, t, cache, job["inputs_dir"])
            torch_fn, cupy_fn = PEER_FNS[t["suite"]]
            res = {}
            if cp is not None:
                res["cupy"] = cupy_fn(cp, ctimer, t, cache)
                out.write(json.dumps({"id": t["id"], "partial": res}) + "\n")
                out.flush()
            res["torch"] = torch_fn(torch, ttimer, t, cache, torch_huge)
            for lib in ("cupy", "torch"):
                x = res.get(lib, {})
                log(f"  {lib}: " + (x["skipped"] if "skipped" in x else
                                    f"{fmt_ms(x.get('median_ms'))} ms b2b, "
                                    f"{fmt_ms(x.get('sync_wall_ms'))} ms sync wall"))
            out.write(json.dumps({"id": t["id"], "result": res}) + "\n")
            out.flush()
    return 0


def input_peers(ewise, runs, torch_huge, tmpdir):
    """Runs the tasks of the INPUT_SUITES in worker processes; a worker that dies (PyTorch's
    SIGFPE) costs only the task it was on: the next worker starts after it. Returns
    {id: result}."""
    import signal
    import subprocess
    tasks = input_tasks(ewise)
    if not tasks:
        return tasks, {}
    inputs_dir = ewise["meta"].get("inputs_dir", "")
    if not inputs_dir or not os.path.isdir(inputs_dir):
        why = f"no inputs (ewise_bench --inputs DIR; meta.inputs_dir = {inputs_dir!r})"
        log(f"peers: {'/'.join(INPUT_SUITES)}: {why}")
        return tasks, {t["id"]: {"error": why} for t in tasks}
    results, todo = {}, list(tasks)
    out_path = os.path.join(tmpdir, "inputs_out.jsonl")
    while todo:
        tasks_path = os.path.join(tmpdir, "inputs_tasks.json")
        with open(tasks_path, "w") as f:
            json.dump({"tasks": [{k: v for k, v in t.items() if k != "record"} for t in todo],
                       "total": len(tasks), "inputs_dir": inputs_dir}, f)
        if os.path.exists(out_path):
            os.remove(out_path)
        cmd = [sys.executable, os.path.abspath(__file__), "--input-worker", tasks_path,
               out_path, "--runs", str(runs)] + (["--torch-huge"] if torch_huge else [])
        try:
            rc = subprocess.run(cmd, timeout=900).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout (900 s)"
        started, done, partial = None, set(), {}
        if os.path.exists(out_path):
            with open(out_path) as f:
                for line in f:
                    e = json.loads(line)
                    if "start" in e:
                        started = e["id"]
                    elif "partial" in e:
                        partial[e["id"]] = e["partial"]
                    else:
                        results[e["id"]] = e["result"]
                        done.add(e["id"])
        if rc == 0:
            break
        if isinstance(rc, int) and rc < 0:
            try:
                why = f"worker killed by {signal.Signals(-rc).name}"
            except ValueError:
                why = f"worker killed by signal {-rc}"
        else:
            why = f"worker exited with {rc}"
        crashed = started if started is not None and started not in done else None
        log(f"peers: input worker: {why}" + (f" on task {crashed}" if crashed is not None else ""))
        if crashed is None:  # died outside a task: nothing to skip, so do not loop forever
            for t in todo:
                if t["id"] not in results:
                    results[t["id"]] = {"error": why}
            break
        results[crashed] = dict(partial.get(crashed, {}),
                                error=f"{why} (PyTorch" + (" or CuPy" if crashed not in partial
                                                           else "") + " on this case)")
        todo = [t for t in todo if t["id"] not in results]
    return tasks, results


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
        # ratio rows
        p = r["params"]
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
    with open(os.path.join(args.record, "peers.md"), "w") as f:
        f.write(f"# ewise vs peers ({props.name})\n\n")
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
    log(f"peers: wrote {args.record}/peers.json and peers.md in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
