"""CSR operands from Python against CuPy's CSR calls, same run, on the GPU (issue 35's
targets): CSR ⊙ CSR and CSR + CSR on four structures of about 10M entries (power-law graph,
wide matrix, bag of words with Zipf columns, uniform mask), and CSR ⊙ dense. (PyTorch's
sparse_csr * sparse_csr on these operands ended the process with a floating point exception on
an H200 with torch 2.11: not timed.)

Each call is timed two ways: GPU time back to back (events around n calls) and wall time with a
synchronization after each call (median). ewise is also timed through its extension entry
point with the operands' views made once (`ewise raw`: the C++ call and its binding, without
the Python layer's reading of the operands), so the Python layer's own cost shows. Results are
checked against CuPy's before timing.

`ewise unchecked` is the call with validate_indices=False (the caller vouches for the
operands, as CuPy and PyTorch assume): no index check and no synchronization in the call.
PyTorch's sparse_csr * dense is timed beside them where the installed torch has it.

    python3 bench/compressed_peers.py [--json OUT.json] [--scale S] [--dense-only]
"""
import argparse
import json
import statistics
import time

import cupy as cp
import cupyx.scipy.sparse as cs

import ewise
from ewise import _ewise, _sparse


def structure(kind, seed, scale):
    """A canonical cupyx CSR matrix of a structure kind (f32 values in [-4, 4], never zero)."""
    rng = cp.random.RandomState(seed)
    n = int(12_000_000 * scale)
    if kind == "graph":  # power-law rows (Zipf), uniform columns, duplicate edges summed
        shape = (1 << 22, 1 << 22)
        rows = (rng.zipf(1.6, n) - 1) % shape[0]
        cols = rng.randint(0, shape[1], n)
    elif kind == "wide":
        shape = (1024, 1 << 24)
        rows, cols = rng.randint(0, shape[0], n), rng.randint(0, shape[1], n)
    elif kind == "words":  # documents x vocabulary, Zipf columns
        shape = (500_000, 1 << 17)
        rows = rng.randint(0, shape[0], n)
        cols = (rng.zipf(1.3, n) - 1) % shape[1]
    else:  # mask: 8192^2 at about 16%
        shape = (8192, 8192)
        rows, cols = rng.randint(0, shape[0], n), rng.randint(0, shape[1], n)
    vals = rng.randint(1, 9, n).astype(cp.float32) * cp.where(rng.random_sample(n) < 0.5, -0.5,
                                                               0.5)
    m = cs.coo_matrix((vals.astype(cp.float32), (rows.astype(cp.int32), cols.astype(cp.int32))),
                      shape=shape).tocsr()
    m.sum_duplicates()
    return m


def gpu_ms(fn, n):
    for _ in range(3):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / n


def wall_ms(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def same(got, want):
    got, want = got.tocsr(), want.tocsr()
    got.sum_duplicates()
    want.sum_duplicates()
    want.eliminate_zeros()
    got.eliminate_zeros()
    return (got.nnz == want.nnz and bool((got.indptr == want.indptr).all())
            and bool((got.indices == want.indices).all()) and bool((got.data == want.data).all()))


def raw(form, a, b):
    """The extension's entry point compressed_<form> with the operands' views made once (b: a
    CSR matrix, or a dense array for multiply_dense)."""
    from ewise._interop import adapter

    class Run:  # what _sparse._coo asks of a call: its arrays as DLPack exporters
        @staticmethod
        def array(x):
            return x

    options, stream = _ewise.SparseOptions(), cp.cuda.get_current_stream()
    view = lambda m: _sparse._coo(Run(), adapter(m).compressed(m, "a"))  # noqa: E731
    fn = getattr(_ewise, "compressed_" + form)
    ca = view(a)
    if form == "multiply_dense":
        return lambda: fn(ca, b, options, stream.ptr, stream)
    cb = view(b)
    if form == "combine":
        return lambda: fn("add", ca, cb, options, stream.ptr, stream)
    return lambda: fn(ca, cb, options, stream.ptr, stream)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--dense-only", action="store_true", help="only CSR ⊙ dense")
    args = p.parse_args()
    rows = []
    print(f"{'case':28s} {'call':12s} {'gpu ms':>8s} {'wall ms':>8s}  ratio to CuPy gpu / wall")
    for kind in () if args.dense_only else ("graph", "wide", "words", "mask"):
        a, b = structure(kind, 1, args.scale), structure(kind, 2, args.scale)
        for op, ew, cu in (("multiply", ewise.sparse.multiply, lambda x, y: x.multiply(y)),
                           ("add", ewise.sparse.add, lambda x, y: x + y)):
            assert same(ew(a, b), cu(a, b)), (kind, op)
            calls = {"ewise": lambda: ew(a, b),
                     "ewise raw": raw("multiply" if op == "multiply" else "combine", a, b),
                     "cupy": lambda: cu(a, b)}
            times = {name: (gpu_ms(fn, args.runs), wall_ms(fn, args.runs))
                     for name, fn in calls.items()}
            case = f"{kind} {a.shape[0]}x{a.shape[1]} nnz {a.nnz / 1e6:.1f}M/{b.nnz / 1e6:.1f}M"
            for name, (g, w) in times.items():
                cg, cw = times["cupy"]
                print(f"{case:28s} {op + ' ' + name:22s} {g:8.3f} {w:8.3f}  {cg / g:6.2f}x "
                      f"{cw / w:6.2f}x", flush=True)
                rows.append({"kind": kind, "shape": list(a.shape), "nnz_a": int(a.nnz),
                             "nnz_b": int(b.nnz), "op": op, "impl": name, "gpu_ms": g,
                             "wall_sync_ms": w})
    # CSR ⊙ dense: the mask times a dense weight of its shape
    a = structure("mask", 3, args.scale)
    w = cp.random.RandomState(4).standard_normal(a.shape, dtype=cp.float32)
    assert same(ewise.sparse.multiply(a, w), a.multiply(w))
    calls = {"ewise": lambda: ewise.sparse.multiply(a, w), "ewise raw": raw("multiply_dense", a, w),
             "ewise unchecked": lambda: ewise.sparse.multiply(a, w, validate_indices=False),
             "cupy": lambda: a.multiply(w)}
    try:
        import torch
        ta = torch.sparse_csr_tensor(torch.from_dlpack(a.indptr), torch.from_dlpack(a.indices),
                                     torch.from_dlpack(a.data), a.shape)
        tw = torch.from_dlpack(w)
        got = ewise.sparse.multiply(ta, tw)
        want = (ta * tw).to_sparse_csr()
        assert torch.equal(got.crow_indices(), want.crow_indices()) and torch.equal(
            got.col_indices(), want.col_indices()) and torch.equal(got.values(), want.values())
        calls["ewise torch"] = lambda: ewise.sparse.multiply(ta, tw)
        calls["torch"] = lambda: ta * tw
    except Exception as e:  # noqa: BLE001 (a torch without CSR * dense: said, not timed)
        print(f"torch sparse_csr * dense not timed: {type(e).__name__}: {e}")
    times = {name: (gpu_ms(fn, args.runs), wall_ms(fn, args.runs)) for name, fn in calls.items()}
    for name, (g, wl) in times.items():
        cg, cw = times["cupy"]
        print(f"{'mask * dense ' + str(a.nnz):28s} {'multiply ' + name:22s} {g:8.3f} {wl:8.3f}"
              f"  {cg / g:6.2f}x {cw / wl:6.2f}x")
        rows.append({"kind": "mask", "shape": list(a.shape), "nnz_a": int(a.nnz), "op":
                     "multiply_dense", "impl": name, "gpu_ms": g, "wall_sync_ms": wl})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                       "cupy": cp.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
