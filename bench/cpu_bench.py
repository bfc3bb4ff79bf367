#!/usr/bin/env python3
"""Times ewise's CPU backend from Python against NumPy and SciPy on the same arrays, in one
process: the cases of the CPU-backend issue (docs/benchmarks.md, "The CPU backend"). Each case
checks that ewise's result equals NumPy's or SciPy's (values, dtype, a sparse result's format;
NaN bits aside) before it is timed, and
reports the median of --runs samples (time.perf_counter; a sample is one call, 2000 for the
small one; ewise's and NumPy's samples alternate) and their ratio. Needs numpy, scipy and the ewise package
(PYTHONPATH=build/python).

    python3 bench/cpu_bench.py [--runs 7] [--json FILE] [--only TEXT[,TEXT...]]

--only keeps the cases whose name contains one of the texts (a thread-scaling sweep times a few;
EWISE_NUM_THREADS sets the CPU backend's threads, read once a process).
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

import ewise


def median_ms(fns, runs, repeat):
    """The median ms a call of each function, their samples alternating (a machine's drift
    falls on both alike)."""
    for fn in fns:
        fn()
    samples = [[] for _ in fns]
    for _ in range(runs):
        for fn, out in zip(fns, samples):
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            out.append((time.perf_counter() - t0) * 1e3 / repeat)
    return [statistics.median(s) for s in samples]


def cases():
    rng = np.random.default_rng(7)
    f32 = lambda *s: rng.standard_normal(s, dtype=np.float32)
    n = 4 << 20
    a, b, c = f32(n), f32(n), np.empty(n, np.float32)
    m, v, mc = f32(2048, 2048), f32(2048), np.empty((2048, 2048), np.float32)
    h, h2, hc = f32(n).astype(np.float16), f32(n).astype(np.float16), np.empty(n, np.float16)
    big = f32(2 * n)
    s1, s2, sc = big[::2], f32(2 * n)[::2], np.empty(n, np.float32)
    t, u, tc = f32(16), f32(16), np.empty(16, np.float32)
    ia, ib = rng.integers(-1000, 1000, n, dtype=np.int32), rng.integers(-1000, 1000, n, dtype=np.int32)
    u8a, u8b = rng.integers(0, 255, n, dtype=np.uint8), rng.integers(0, 255, n, dtype=np.uint8)
    mixed_out = np.empty(n, np.float64)
    base = np.exp2(rng.random(n, dtype=np.float32) * 6 - 4)  # powers: positive bases, [1/16, 4)
    expo = rng.random(n, dtype=np.float32) * 8 - 4
    hbase = base.astype(np.float16)
    return [
        ("f32 add, 4M, out=", lambda: ewise.add(a, b, out=c), lambda: np.add(a, b, out=c), 1),
        ("f32 bias (2048,2048)+(2048,), out=", lambda: ewise.add(m, v, out=mc),
         lambda: np.add(m, v, out=mc), 1),
        ("f16 add, 4M, out=", lambda: ewise.add(h, h2, out=hc), lambda: np.add(h, h2, out=hc), 1),
        ("f32 strided views, 4M, out=", lambda: ewise.add(s1, s2, out=sc),
         lambda: np.add(s1, s2, out=sc), 1),
        ("f32 * 0.5, 4M, out=", lambda: ewise.multiply(a, 0.5, out=c),
         lambda: np.multiply(a, 0.5, out=c), 1),
        ("i32 + i32, 4M", lambda: ewise.add(ia, ib), lambda: np.add(ia, ib), 1),
        ("u8 + u8, 4M", lambda: ewise.add(u8a, u8b), lambda: np.add(u8a, u8b), 1),
        ("i32 + f32 -> f64, 4M, out=", lambda: ewise.add(ia, a, out=mixed_out),
         lambda: np.add(ia, a, out=mixed_out), 1),
        ("f32 > f32, 4M", lambda: ewise.greater(a, b), lambda: np.greater(a, b), 1),
        ("16-element add, out=, per call", lambda: ewise.add(t, u, out=tc),
         lambda: np.add(t, u, out=tc), 2000),
    ] + [(f"{name}, 4M, out=", lambda x=x, y=y, o=o: ewise.power(x, y, out=o),
          lambda x=x, y=y, o=o: np.power(x, y, out=o), 1)
         for name, x, y, o in [("f32 ** f32", base, expo, c), ("f32 ** 0.7", base, 0.7, c),
                               ("f32 ** 3", base, 3, c), ("f32 ** -2", base, -2, c),
                               ("f32 ** 0.5", base, 0.5, c), ("f32 ** -0.5", base, -0.5, c),
                               ("f16 ** 0.5", hbase, 0.5, hc)]
    ] + sparse_cases(rng)


def sparse_cases(rng):
    """SciPy's own operations on canonical csr_matrix operands, f32 (drop_zeros: SciPy drops
    the zeros its results make), and np.add.at for accumulate."""
    import scipy.sparse as sp
    A, B = (sp.random(4096, 4096, density=0.1, format="csr", dtype=np.float32, random_state=s)
            for s in (1, 2))
    S = sp.random(4096, 4096, density=0.01, format="csr", dtype=np.float32, random_state=3)
    row = rng.standard_normal((1, 4096), dtype=np.float32)
    coo = S.tocoo()
    w1, w2 = np.zeros((4096, 4096), np.float32), np.zeros((4096, 4096), np.float32)
    # COO operands in shuffled order (what a pipeline that appends entries holds): SciPy sorts
    # them into CSR and answers CSR; ewise sorts them and answers COO (the first operand's
    # format), compared as CSR outside the timing.
    Au, Bu, Su = (shuffled_coo(M, rng) for M in (A, B, S))
    dense = rng.standard_normal((4096, 4096), dtype=np.float32)
    return [
        ("COO*COO 4096^2 10% (CSR)", lambda: ewise.sparse.multiply(A, B, drop_zeros=True),
         lambda: A.multiply(B), 1),
        ("COO+COO 4096^2 10% (CSR)", lambda: ewise.sparse.add(A, B, drop_zeros=True),
         lambda: A + B, 1),
        ("COO*row 4096^2 1% (CSR)", lambda: ewise.sparse.multiply(S, row, drop_zeros=True),
         lambda: S.multiply(row).tocsr(), 1),
        ("accumulate 1% into dense", lambda: ewise.sparse.accumulate("add", w1, coo),
         lambda: np.add.at(w2, (coo.row, coo.col), coo.data), 1),
        ("COO*COO 4096^2 10% (shuffled COO)",
         lambda: ewise.sparse.multiply(Au, Bu, drop_zeros=True), lambda: Au.multiply(Bu), 1),
        ("COO+COO 4096^2 10% (shuffled COO)",
         lambda: ewise.sparse.add(Au, Bu, drop_zeros=True), lambda: Au + Bu, 1),
        ("COO+dense 4096^2 1% (shuffled COO)", lambda: ewise.sparse.add(Su, dense),
         lambda: np.asarray(Su + dense), 1),
        ("COO+dense 4096^2 10% (shuffled COO)", lambda: ewise.sparse.add(Au, dense),
         lambda: np.asarray(Au + dense), 1),
        ("COO*dense 4096^2 10% (shuffled COO)",
         lambda: ewise.sparse.multiply(Au, dense, drop_zeros=True), lambda: Au.multiply(dense), 1),
        ("accumulate 10% (shuffled COO) into dense", lambda: ewise.sparse.accumulate("add", w1, Au),
         lambda: np.add.at(w2, (Au.row, Au.col), Au.data), 1),
    ]


def shuffled_coo(m, rng):
    """m as a coo_matrix whose entries are in random order."""
    import scipy.sparse as sp
    c = m.tocoo()
    p = rng.permutation(c.nnz)
    return sp.coo_matrix((c.data[p], (c.row[p], c.col[p])), shape=c.shape)


def same(got, want):
    """ewise's result equals the NumPy or SciPy one: values and dtype; a sparse one's format."""
    if hasattr(want, "toarray"):
        if got.format == "coo" and want.format == "csr":  # shuffled COO operands (above)
            got = got.tocsr()
        return got.format == want.format and got.dtype == want.dtype and \
            np.array_equal(got.toarray(), want.toarray(), equal_nan=True)
    if want is None:  # in place (np.add.at): compared by accumulate's own tests
        return True
    return got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--json")
    p.add_argument("--only", help="comma-separated texts; only cases whose name holds one")
    args = p.parse_args()
    only = args.only.split(",") if args.only else None
    rows = []
    print(f"{'case':38s} {'ewise ms':>10s} {'numpy ms':>10s} {'ratio':>7s}")
    for name, e, n, repeat in cases():
        if only and not any(t in name for t in only):
            continue
        got, want = e(), n()
        assert same(got, want), name
        te, tn = median_ms([e, n], args.runs, repeat)
        rows.append({"case": name, "ewise_ms": te, "numpy_ms": tn, "ratio": te / tn})
        print(f"{name:38s} {te:10.4f} {tn:10.4f} {te / tn:7.2f}")
    if args.json:
        meta = {"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                "numpy": np.__version__, "python": platform.python_version(),
                "threads": os.environ.get("EWISE_NUM_THREADS", "")}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
