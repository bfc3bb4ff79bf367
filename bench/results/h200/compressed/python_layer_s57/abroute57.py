"""A/B in one process: the compressed fast routes (cupyx and torch) against the general path
(route switched off), beside the raw extension call on the same cupyx arrays."""
import statistics, sys, time, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, "bench")
import cupy as cp
import cupyx.scipy.sparse as cs
import torch
import ewise
from ewise._interop import cupy as cad, torch as tad
from compressed_peers import structure, raw

routes = {"cupyx": (cad.CuPySparse, cad.CuPySparse.compressed_pair),
          "torch": (tad.Torch, tad.Torch.compressed_pair)}
def off(self, *args): return None

def wall(fn, n=40):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    got = []
    for _ in range(n):
        t = time.perf_counter(); fn(); torch.cuda.synchronize(); got.append(time.perf_counter() - t)
    return statistics.median(got) * 1e6

def t_csr(m):
    return torch.sparse_csr_tensor(torch.from_dlpack(m.indptr), torch.from_dlpack(m.indices),
                                   torch.from_dlpack(m.data), m.shape)
tiny = lambda s: cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=s)
for kind in ("tiny", "words", "mask"):
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    ta, tb = t_csr(a), t_csr(b)
    for op, fn, form in (("multiply", ewise.sparse.multiply, "multiply"), ("add", ewise.sparse.add, "combine")):
        r = raw(form, a, b)
        for fw, (x, y) in (("cupyx", (a, b)), ("torch", (ta, tb))):
            cls, route = routes[fw]
            got = {"raw": [], "route": [], "general": []}
            for rnd in range(5):
                got["raw"].append(wall(r))
                cls.compressed_pair = route; got["route"].append(wall(lambda: fn(x, y)))
                cls.compressed_pair = off; got["general"].append(wall(lambda: fn(x, y)))
            cls.compressed_pair = route
            m = {k: statistics.median(v) for k, v in got.items()}
            print(f"{kind:5s} {op:8s} {fw:5s} raw {m['raw']:7.1f}  route {m['route']:7.1f} "
                  f"(+{m['route'] - m['raw']:5.1f})  general {m['general']:7.1f} "
                  f"(+{m['general'] - m['raw']:5.1f}) us", flush=True)
