"""How lean can the Python layer of a cupyx CSR product be with today's extension?"""
import statistics, sys, time
sys.path.insert(0, "bench")
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise import _ewise, _sparse
from compressed_peers import structure, raw

opts = _sparse._options(cp.empty(0, cp.float32))
def lean_arrays(a, b):
    st = cp.cuda.get_current_stream(); s = st.ptr
    ca = _ewise.Compressed(a.indptr.__dlpack__(stream=s), a.indices.__dlpack__(stream=s),
                           a.data.__dlpack__(stream=s), a.shape[0], a.shape[1], "csr",
                           a._has_canonical_format)
    cb = _ewise.Compressed(b.indptr.__dlpack__(stream=s), b.indices.__dlpack__(stream=s),
                           b.data.__dlpack__(stream=s), b.shape[0], b.shape[1], "csr",
                           b._has_canonical_format)
    return _ewise.compressed_multiply(ca, cb, opts, s, st)
def lean(a, b):
    offs, idx, vals = lean_arrays(a, b)
    return cs.csr_matrix._from_parts(cp.from_dlpack(vals), cp.from_dlpack(idx),
                                     cp.from_dlpack(offs), a.shape, has_canonical_format=True)

def wall(fn, n=200):
    for _ in range(10): fn()
    cp.cuda.Device().synchronize()
    got = []
    for _ in range(n):
        t = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); got.append(time.perf_counter() - t)
    return statistics.median(got) * 1e6

tiny = lambda s: cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=s)
for kind in ("tiny", "words", "mask"):
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    print(kind, "canonical flags", getattr(a, "_has_canonical_format", None), getattr(b, "_has_canonical_format", None))
    assert (lean(a, b) != ewise.sparse.multiply(a, b)).nnz == 0
    fns = {"raw": raw("multiply", a, b), "lean arrays": lambda: lean_arrays(a, b),
           "lean": lambda: lean(a, b), "python": lambda: ewise.sparse.multiply(a, b)}
    res = {k: [] for k in fns}
    for rnd in range(5):
        for k, f in fns.items(): res[k].append(wall(f))
    print(kind, "  ".join(f"{k} {statistics.median(v):.1f}" for k, v in res.items()), flush=True)
