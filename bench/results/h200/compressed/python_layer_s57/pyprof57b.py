"""Where the tiny/mask cupyx CSR multiply's Python time goes: the C++ call timed inside the
Python path (wrapped), _result timed, gc on/off, raw call."""
import gc, statistics, sys, time
sys.path.insert(0, "bench")
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise import _ewise, _sparse
from compressed_peers import structure, raw

inner = {"cpp": [], "result": []}
real_cm = _ewise.compressed_multiply
real_result = _sparse._result
class Wrap:
    def __getattr__(self, name):
        f = getattr(_ewise, name)
        if name != "compressed_multiply": return f
        def timed(*a):
            t = time.perf_counter(); r = f(*a); inner["cpp"].append(time.perf_counter() - t); return r
        return timed
def timed_result(*a):
    t = time.perf_counter(); r = real_result(*a); inner["result"].append(time.perf_counter() - t); return r

def wall(fn, n=300):
    for _ in range(20): fn()
    cp.cuda.Device().synchronize()
    got = []
    for _ in range(n):
        t = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); got.append(time.perf_counter() - t)
    return statistics.median(got) * 1e6

tiny = lambda s: cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=s)
for kind in ("tiny", "mask"):
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    r = raw("multiply", a, b)
    py = lambda: ewise.sparse.multiply(a, b)
    for rnd in range(3):
        res = {"raw": wall(r), "python": wall(py)}
        gc.disable(); res["python gc off"] = wall(py); gc.enable()
        _sparse._ewise = Wrap(); _sparse._result = timed_result
        inner["cpp"].clear(); inner["result"].clear()
        res["python wrapped"] = wall(py)
        res["  C++ call inside"] = statistics.median(inner["cpp"]) * 1e6
        res["  _result inside"] = statistics.median(inner["result"]) * 1e6
        _sparse._ewise = _ewise; _sparse._result = real_result
        print(kind, rnd, "  ".join(f"{k} {v:.1f}" for k, v in res.items()), flush=True)
