"""A/B in one process: ewise.sparse.multiply/add on cupyx CSR through the compressed fast route
and through the general path (the route switched off), against the raw extension call."""
import statistics, sys, time
sys.path.insert(0, "bench")
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise._interop import cupy as cupy_adapter
from compressed_peers import structure, raw

route = cupy_adapter.CuPySparse.compressed_pair
def general(self, *args): return None

def wall(fn, n=60):
    for _ in range(5): fn()
    cp.cuda.Device().synchronize()
    got = []
    for _ in range(n):
        t = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); got.append(time.perf_counter() - t)
    return statistics.median(got) * 1e6

tiny = lambda s: cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=s)
for kind in ("tiny", "graph", "wide", "words", "mask"):
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    for op, fn, form in (("multiply", ewise.sparse.multiply, "multiply"), ("add", ewise.sparse.add, "combine")):
        r = raw(form, a, b)
        res = {"raw": [], "route": [], "general": []}
        for rnd in range(5):
            res["raw"].append(wall(r))
            cupy_adapter.CuPySparse.compressed_pair = route
            res["route"].append(wall(lambda: fn(a, b)))
            cupy_adapter.CuPySparse.compressed_pair = general
            res["general"].append(wall(lambda: fn(a, b)))
        cupy_adapter.CuPySparse.compressed_pair = route
        m = {k: statistics.median(v) for k, v in res.items()}
        print(f"{kind:6s} {op:8s} raw {m['raw']:7.1f}  route {m['route']:7.1f} (+{m['route'] - m['raw']:5.1f})"
              f"  general {m['general']:7.1f} (+{m['general'] - m['raw']:5.1f}) us", flush=True)
