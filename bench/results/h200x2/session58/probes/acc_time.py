# Row-sparse accumulate of small gradients into a 2^22 x 128 f32 table block: ewise (validated and
# not) against cupyx.scatter_add; GPU ms by events over 50 back-to-back calls, wall ms (median of
# 50 calls each followed by a synchronization).
import statistics, time, sys
import cupy, cupyx, numpy as np, ewise
nb, cols = 1 << 22, 128
table = cupy.zeros((nb, cols), dtype=cupy.float32)
rng = np.random.default_rng(7)
def case(n, hot):
    rows = rng.integers(0, nb, size=n)
    if hot:
        rows[::2] = rng.zipf(1.3, size=(n + 1) // 2) % 100
    return cupy.asarray(rows.astype(np.int64)), cupy.asarray(rng.standard_normal((n, cols)).astype(np.float32))
def timeit(f, reps=50):
    f(); cupy.cuda.runtime.deviceSynchronize()
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    s.record()
    for _ in range(reps): f()
    e.record(); e.synchronize()
    gpu = cupy.cuda.get_elapsed_time(s, e) / reps
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); cupy.cuda.runtime.deviceSynchronize(); walls.append((time.perf_counter() - t0) * 1e3)
    return gpu, statistics.median(walls)
print(f"{'n':>6} {'hot':>4} {'impl':<22} {'GPU ms':>8} {'wall ms':>8}")
for n, hot in [(2000, False), (2000, True), (4096, False), (4096, True), (5000, False), (5000, True), (262144, True)]:
    rows, vals = case(n, hot)
    a = ewise.sparse.RowSparse(rows, vals, nb)
    for name, f in [("ewise", lambda: ewise.sparse.accumulate("add", table, a)),
                    ("ewise unvalidated", lambda: ewise.sparse.accumulate("add", table, a, validate_indices=False)),
                    ("cupyx.scatter_add", lambda: cupyx.scatter_add(table, rows, vals))]:
        g, w = timeit(f)
        print(f"{n:>6} {str(hot):>4} {name:<22} {g:>8.4f} {w:>8.4f}", flush=True)
