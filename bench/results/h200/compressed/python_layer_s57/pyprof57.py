"""cProfile of ewise.sparse.multiply on tiny cupyx and torch CSR operands (device)."""
import cProfile, pstats, io, sys, time, statistics
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise import _ewise, _sparse

a = cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=1); a.sum_duplicates()
b = cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=2); b.sum_duplicates()
import torch
ta = torch.sparse_csr_tensor(torch.from_dlpack(a.indptr), torch.from_dlpack(a.indices), torch.from_dlpack(a.data), a.shape)
tb = torch.sparse_csr_tensor(torch.from_dlpack(b.indptr), torch.from_dlpack(b.indices), torch.from_dlpack(b.data), b.shape)

def wall(fn, n=400):
    for _ in range(20): fn()
    cp.cuda.Device().synchronize()
    got = []
    for _ in range(n):
        t = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); got.append(time.perf_counter() - t)
    return statistics.median(got) * 1e6

def nosync(fn, n=2000):
    for _ in range(20): fn()
    t = time.perf_counter()
    for _ in range(n): fn()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t) / n * 1e6

for name, x, y in (("cupyx", a, b), ("torch", ta, tb)):
    fn = lambda: ewise.sparse.multiply(x, y)
    print(f"{name}: wall+sync {wall(fn):.1f} us, back to back {nosync(fn):.1f} us")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(2000): fn()
    pr.disable()
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s); st.sort_stats("tottime").print_stats(35)
    print(s.getvalue())
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s); st.sort_stats("cumulative").print_stats(45)
    print(s.getvalue())
