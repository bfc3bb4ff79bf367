"""Where the Python layer's time goes in CSR calls on cupyx operands (diagnostic, round 2):
median wall ms per call (each call synchronizes inside; a device sync after each), variants
interleaved over rounds."""
import statistics, sys, time
sys.path.insert(0, "bench")
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise import _ewise, _sparse
from ewise._interop import Call, adapter, check_devices
from compressed_peers import structure

class Raw:
    @staticmethod
    def array(x): return x

def variants(a, b):
    opts = _sparse._options(a.data)
    st = cp.cuda.get_current_stream()
    oa = _sparse._sparse_operand(a, "a"); oa, ob = _sparse._sparse_pair(a, oa, b)
    dev = check_devices(a=oa.vals, b=ob.vals)
    raw_a, raw_b = _sparse._coo(Raw, oa), _sparse._coo(Raw, ob)
    with Call(a, dev) as run:
        cap_a, cap_b = _sparse._coo(run, oa), _sparse._coo(run, ob)
    call_only = []
    def fresh_timed():
        with Call(a, dev) as run:
            x, y = _sparse._coo(run, oa), _sparse._coo(run, ob)
            t = time.perf_counter()
            r = _ewise.compressed_multiply(x, y, opts, run.stream, run.stream_owner)
            call_only.append(time.perf_counter() - t)
        return r
    def raw_wrap():
        arrays = _ewise.compressed_multiply(raw_a, raw_b, opts, st.ptr, st)
        return _sparse._result(a, oa, arrays, dev)
    return {
        "raw (views of arrays, once)": lambda: _ewise.compressed_multiply(raw_a, raw_b, opts, st.ptr, st),
        "views of capsules, once": lambda: _ewise.compressed_multiply(cap_a, cap_b, opts, st.ptr, st),
        "fresh capsule views": fresh_timed,
        "raw + cupyx result": raw_wrap,
        "python": lambda: ewise.sparse.multiply(a, b),
    }, call_only

def measure(fns, rounds=7, n=15):
    got = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            for _ in range(3): fn()
            cp.cuda.Device().synchronize()
            for _ in range(n):
                t = time.perf_counter(); fn(); cp.cuda.Device().synchronize()
                got[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in got.items()}

tiny = lambda s: cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=s)
for kind in sys.argv[1:]:
    if kind == "tiny":
        a, b = tiny(1), tiny(2); a.sum_duplicates(); b.sum_duplicates()
    else:
        a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    fns, call_only = variants(a, b)
    res = measure(fns)
    print(kind, a.shape, a.nnz)
    for k, v in res.items():
        print(f"  {k:30s} {v:8.4f} ms")
    print(f"  {'fresh: C++ call alone':30s} {statistics.median(call_only) * 1e3:8.4f} ms")
