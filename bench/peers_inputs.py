"""The structures and union suites for bench/peers.py, on identical inputs: ewise_bench --inputs
DIR wrote each case's operands as .npy files; a worker process (peers.py --input-worker) times
PyTorch and CuPy on them, so that a peer that dies (PyTorch's SIGFPE) costs only its case."""
import json
import math
import os
import sys

from peers_report import fmt_ms, log
from peers_timing import CupyTimer, TorchTimer

PEERS_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers.py")

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


def case_form(t, cache):
    """The case's loaded a and b, its shape and whether its form is canonical."""
    return (cache["form"]["a"], cache["form"]["b"], (t["rows"], t["cols"]),
            t["input"] == "canonical")


def guarded(peer_fn, synchronize, *args):
    """peer_fn(*args), whose exception (what the library refuses) is recorded as the case's
    skip reason; the device synchronized after, either way."""
    try:
        return peer_fn(*args)
    except Exception as e:  # noqa: BLE001 - record what the library refuses
        return {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    finally:
        synchronize()


def structures_torch(torch, ttimer, t, cache, torch_huge):
    """PyTorch on one structures case."""
    a, b, shape, canonical = case_form(t, cache)
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


def structures_cupy(cp, ctimer, t, cache):
    """CuPy on one structures case: CSR-ready (conversion not timed), .multiply(other)."""
    a, b, shape, canonical = case_form(t, cache)
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


def union_torch(torch, ttimer, t, cache, torch_huge):
    """PyTorch on one union case: sparse operands made once (coalesced for the canonical form,
    raw for the natural one), not timed."""
    a, b, shape, canonical = case_form(t, cache)
    skip = torch_huge_skip(t, "add")
    if skip and not torch_huge:
        return skip

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


def union_cupy(cp, ctimer, t, cache):
    """CuPy on one union case: CSR-ready (conversion not timed)."""
    a, b, shape, canonical = case_form(t, cache)
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
                res["cupy"] = guarded(cupy_fn, cp.cuda.Device().synchronize, cp, ctimer, t, cache)
                out.write(json.dumps({"id": t["id"], "partial": res}) + "\n")
                out.flush()
            res["torch"] = guarded(torch_fn, torch.cuda.synchronize, torch, ttimer, t, cache,
                                   torch_huge)
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
        cmd = [sys.executable, PEERS_SCRIPT, "--input-worker", tasks_path,
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

