"""ewise's dense operations on Dask arrays of NumPy chunks (CPU backend) against NumPy: every
operation over chunks that do not line up, broadcasting against Dask and NumPy arrays and Python
scalars, mixed dtypes by NumPy 2's rules, errors at graph build, results on the threaded
scheduler and on a LocalCluster of two processes; importing ewise imports no Dask.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import ewise

da = pytest.importorskip("dask.array")

SEED = int(os.environ.get("EWISE_SEED", "20261128"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)


def same(got, want):
    """Equal values and dtype, NaN where NaN."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def numpy_op(name):
    return getattr(np, name)


def operands(rng, dtype, shape):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(1, 50, size=shape).astype(dtype)
    x = (rng.standard_normal(size=shape) * 4).astype(dtype)
    x.flat[::7] = 0.0
    return x


def test_import_does_not_import_dask():
    code = "import sys, ewise; ewise.add; sys.exit('dask' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("op", [name for name, _ in ewise._ops.FUNCTIONS])
def test_every_op_over_unaligned_chunks(op):
    rng = np.random.default_rng(SEED)
    dtype = np.int32 if op.startswith("bitwise") else np.float32
    a, b = operands(rng, dtype, (37, 29)), operands(rng, dtype, (37, 29))
    x = da.from_array(a, chunks=(10, 7))
    y = da.from_array(b, chunks=(16, 13))  # chunks that do not line up with x's
    got = getattr(ewise, op)(x, y)
    assert isinstance(got, da.Array)
    with np.errstate(all="ignore"):
        want = numpy_op(op)(a, b)
        if op == "power":  # ewise's f32 power is f64 pow's rounded once (ops.hpp), NumPy's powf
            want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    assert got.dtype == want.dtype
    same(got.compute(), want)


def test_broadcasting_mixed_dtypes_and_scalars():
    rng = np.random.default_rng(SEED + 1)
    a = operands(rng, np.float32, (40, 24))
    bias = operands(rng, np.int32, (24,))
    col = operands(rng, np.float64, (40, 1))
    x = da.from_array(a, chunks=(9, 10))
    same(ewise.add(x, bias).compute(), a + bias)  # a NumPy array beside: f32 + i32 -> f64
    same(ewise.multiply(da.from_array(col, chunks=(7, 1)), x).compute(), col * a)
    same(ewise.multiply(x, 0.5).compute(), a * 0.5)  # a weak scalar keeps f32
    same(ewise.subtract(3, x).compute(), 3 - a)
    same(ewise.greater(x, 1.0).compute(), a > 1.0)
    half = operands(rng, np.float16, (40, 24))
    same(ewise.maximum(da.from_array(half, chunks=8), x).compute(), np.maximum(half, a))
    zero_d = da.from_array(np.float64(2.5))
    same(ewise.minimum(x, zero_d).compute(), np.minimum(a, np.float64(2.5)))  # a 0-d Dask array


def test_errors_at_graph_build():
    x = da.ones((6, 4), chunks=3, dtype=np.float32)
    with pytest.raises(ValueError):
        ewise.add(x, da.ones((5,), chunks=2, dtype=np.float32))  # shapes do not broadcast
    with pytest.raises(TypeError, match="bool"):
        ewise.subtract(da.ones(4, chunks=2, dtype=bool), da.ones(4, chunks=2, dtype=bool))
    with pytest.raises(TypeError, match="immutable"):
        ewise.add(x, 1.0, out=x)
    with pytest.raises(TypeError):
        ewise.add(x, np.ones(4, dtype=np.complex64))  # a dtype ewise does not take


def test_empty_and_single_chunk():
    x = da.zeros((0, 5), chunks=(2, 5), dtype=np.float64)
    same(ewise.add(x, 1.0).compute(), np.zeros((0, 5)) + 1.0)
    a = np.arange(6, dtype=np.int64)
    same(ewise.multiply(da.from_array(a, chunks=6), a).compute(), a * a)


def test_on_a_cluster_of_two_processes():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(SEED + 2)
    a, b = operands(rng, np.float32, (64, 48)), operands(rng, np.float32, (48,))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        x = da.from_array(a, chunks=(16, 48))
        got = client.compute(ewise.add(ewise.multiply(x, 2.0), b)).result()
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    same(got, a * np.float32(2.0) + b)
