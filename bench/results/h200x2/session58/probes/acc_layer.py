# Where a small row-sparse accumulate's host time goes from Python (CuPy arrays, 2,000 rows of 128
# f32 into a 2^22-row table, unvalidated unless noted): host us a call back to back (no sync),
# and wall us with a synchronization after each call. Steps: the full call; the raw extension
# call with the three exports; the exports alone; cupyx.scatter_add.
import statistics, time
import cupy, cupyx, numpy as np, ewise
from ewise import _ewise, _sparse
nb, cols = 1 << 22, 128
rng = np.random.default_rng(7)
table = cupy.zeros((nb, cols), cupy.float32)
rows = cupy.asarray(rng.integers(0, nb, 2000).astype(np.int64))
vals = cupy.asarray(rng.standard_normal((2000, cols)).astype(np.float32))
a = ewise.sparse.RowSparse(rows, vals, nb)
stream = cupy.cuda.get_current_stream(); ptr = stream.ptr; exported = ptr or 1
opts = _sparse._options(vals, validate_indices=False)
optv = _sparse._options(vals, validate_indices=True)
def raw(o=opts):
    _ewise.accumulate_rows("add", table.__dlpack__(stream=exported), rows.__dlpack__(stream=exported),
                           vals.__dlpack__(stream=exported), nb, False, o, ptr)
def exports():
    table.__dlpack__(stream=exported); rows.__dlpack__(stream=exported); vals.__dlpack__(stream=exported)
steps = [("full", lambda: ewise.sparse.accumulate("add", table, a, validate_indices=False)),
         ("full validated", lambda: ewise.sparse.accumulate("add", table, a)),
         ("raw (exports + call)", raw), ("raw validated", lambda: raw(optv)), ("exports", exports),
         ("options", lambda: _sparse._options(vals, validate_indices=False)),
         ("Call context", lambda: _sparse.Call(table, (2, 0)).__enter__().__exit__()),
         ("check_devices", lambda: _sparse.check_devices(dense=table, rows=rows, values=vals)),
         ("_rows_table", lambda: _sparse._rows_table(table, nb, (cols,))),
         ("reshape vals", lambda: vals.reshape(vals.shape[0], cols)),
         ("scatter_add", lambda: cupyx.scatter_add(table, rows, vals))]
for name, f in steps:
    for _ in range(20): f()
    cupy.cuda.runtime.deviceSynchronize()
    hosts, walls = [], []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(100): f()
        hosts.append((time.perf_counter() - t0) * 1e4)
        cupy.cuda.runtime.deviceSynchronize()
    for _ in range(200):
        t0 = time.perf_counter(); f(); cupy.cuda.runtime.deviceSynchronize()
        walls.append((time.perf_counter() - t0) * 1e6)
    print(f"{name:<22} host {statistics.median(hosts):7.1f} us   wall synced {statistics.median(walls):7.1f} us", flush=True)
