"""A/B in one process: torch sparse calls with the adapter's new stream read and capsule imports
(new) and with torch.cuda.current_stream + torch.cuda.device and torch.from_dlpack (old)."""
import statistics, sys, time, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, "bench")
import numpy
import cupy as cp
import cupyx.scipy.sparse as cs
import torch
import ewise
from ewise._interop import torch as tad
from compressed_peers import structure, raw

new_stream, new_imported = tad.Torch.stream, tad._imported
def old_stream(self, device_id):
    current = torch.cuda.current_stream(device_id)
    return torch.cuda.device(device_id), current, current.cuda_stream
def old_imported(x):
    if isinstance(x, torch.Tensor): return x
    return torch.from_numpy(x) if isinstance(x, numpy.ndarray) else torch.from_dlpack(x)
def use(new):
    tad.Torch.stream = new_stream if new else old_stream
    tad._imported = new_imported if new else old_imported

def wall(fn, n=60):
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
for kind in ("tiny", "mask"):
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    ta, tb = t_csr(a), t_csr(b)
    tw = torch.randn(a.shape, device="cuda")
    tcoo = ta.to_sparse_coo().coalesce()
    use(True)
    want = ewise.sparse.multiply(ta, tb).to_dense(); use(False)
    assert torch.equal(ewise.sparse.multiply(ta, tb).to_dense(), want)
    cases = {"CSR*CSR raw(cupyx)": (raw("multiply", a, b), None),
             "CSR*CSR": (lambda: ewise.sparse.multiply(ta, tb), True),
             "CSR+CSR": (lambda: ewise.sparse.add(ta, tb), True),
             "CSR*dense raw(cupyx)": (raw("multiply_dense", a, cp.from_dlpack(tw)), None),
             "CSR*dense": (lambda: ewise.sparse.multiply(ta, tw), True),
             "COO*dense": (lambda: ewise.sparse.multiply(tcoo, tw), True),
             "torch CSR*dense": (lambda: ta * tw, None)}
    for name, (fn, ab) in cases.items():
        if ab is None:
            v = statistics.median([wall(fn) for _ in range(3)])
            print(f"{kind:5s} {name:22s} {v:8.1f} us", flush=True)
            continue
        got = {True: [], False: []}
        for rnd in range(5):
            for new in (True, False):
                use(new); got[new].append(wall(fn))
        use(True)
        n, o = statistics.median(got[True]), statistics.median(got[False])
        print(f"{kind:5s} {name:22s} new {n:8.1f}  old {o:8.1f} us ({n - o:+.1f})", flush=True)
