# One block's row-sparse accumulate (the Dask gradient case's block), to list its kernels.
import cupy, numpy as np, ewise
nb, cols = 1 << 22, 128
rng = np.random.default_rng(7)
rows = cupy.asarray(rng.integers(0, 1 << 26, size=1 << 15).astype(np.int64))
vals = cupy.asarray(rng.standard_normal((1 << 15, cols)).astype(np.float32))
table = cupy.zeros((nb, cols), dtype=cupy.float32)
kept = rows < nb
local, cut = rows[kept], vals[kept]
print("rows in block", int(local.size))
for _ in range(3):
    ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(local, cut, nb))
cupy.cuda.runtime.deviceSynchronize()
cupy.cuda.runtime.profilerStart()
ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(local, cut, nb))
cupy.cuda.runtime.deviceSynchronize()
ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(local, cut, nb), validate_indices=False)
cupyx_t = cupy.cuda.runtime.deviceSynchronize()
import cupyx
cupyx.scatter_add(table, local, cut)
cupy.cuda.runtime.deviceSynchronize()
cupy.cuda.runtime.profilerStop()
