"""Where the Python layer's time goes in CSR calls on cupyx operands (diagnostic)."""
import cProfile, pstats, sys, time, io
sys.path.insert(0, "bench")
import cupy as cp
import ewise
from ewise import _ewise, _sparse
from ewise._interop import Call, adapter, check_devices
from compressed_peers import structure, gpu_ms, raw

def cpu_us(fn, n=300):
    for _ in range(20): fn()
    cp.cuda.Device().synchronize()
    s = time.perf_counter()
    for _ in range(n): fn()
    e = time.perf_counter()
    cp.cuda.Device().synchronize()
    return (e - s) / n * 1e6

for kind in sys.argv[1:]:
    a, b = structure(kind, 1, 1.0), structure(kind, 2, 1.0)
    r = raw("multiply", a, b)
    opts = _sparse._options(a.data)
    def body():
        oa, ob = _sparse._sparse_pair(a, b)
        device = check_devices(a=oa.vals, b=ob.vals)
        with Call(a, device) as run:
            arrays = _sparse._form(oa, "multiply")(_sparse._coo(run, oa), _sparse._coo(run, ob),
                                                   opts, run.stream, run.stream_owner)
        return oa, arrays, device
    oa, arrays, device = body()
    wrap = lambda: _sparse._result(a, oa, arrays, device)
    def views():
        oa, ob = _sparse._sparse_pair(a, b)
        device = check_devices(a=oa.vals, b=ob.vals)
        with Call(a, device) as run:
            return _sparse._coo(run, oa), _sparse._coo(run, ob)
    print(kind, "nnz", a.nnz, b.nnz, "result", arrays[1].shape if hasattr(arrays[1], "shape") else "?")
    for name, fn in (("raw", r), ("python", lambda: ewise.sparse.multiply(a, b)),
                     ("body (no wrap)", body), ("raw + wrap", lambda: (r(), wrap())),
                     ("unchecked python", lambda: ewise.sparse.multiply(a, b, validate_indices=False))):
        print(f"  {name:18s} gpu {gpu_ms(fn, 30):.4f} ms   cpu-per-call {cpu_us(fn, 30):8.1f} us")
    for name, fn in (("pair", lambda: _sparse._sparse_pair(a, b)), ("views", views), ("wrap", wrap),
                     ("options", lambda: _sparse._options(a.data))):
        print(f"  {name:18s} cpu {cpu_us(fn):8.1f} us")
    p = cProfile.Profile(); p.enable()
    for _ in range(100): ewise.sparse.multiply(a, b)
    p.disable(); s = io.StringIO(); pstats.Stats(p, stream=s).sort_stats("tottime").print_stats(22)
    print(s.getvalue())
