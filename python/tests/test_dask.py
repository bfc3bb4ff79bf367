"""ewise on Dask arrays (CPU backend): the dense operations over NumPy chunks against NumPy and
the sparse ones over SciPy CSR chunks against SciPy: every dense operation over chunks that do
not line up, broadcasting against Dask and NumPy arrays and Python scalars, mixed dtypes by
NumPy 2's rules, sparse ⊙ and ⊕ sparse, dense and scalars, accumulate (of a sparse and of a
row-sparse operand into a table in blocks), errors at graph build,
results on the threaded scheduler and on a LocalCluster of two processes; importing ewise
imports no Dask.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

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


def sparse_pair(seed, dtypes=(np.float32, np.float32), shape=(60, 45)):
    """Two random CSR matrices and Dask arrays of them in blocks that do not line up (rows and
    columns)."""
    a = sp.random(*shape, density=0.15, format="csr", dtype=dtypes[0], random_state=seed)
    b = sp.random(*shape, density=0.15, format="csr", dtype=dtypes[1], random_state=seed + 1)
    b = b + a.multiply(a > 0.5)  # some coordinates in both
    x = da.from_array(a, chunks=(17, 20), asarray=False)
    y = da.from_array(b.tocsr(), chunks=(11, 45), asarray=False)
    return a, b.tocsr(), x, y


def same_sparse(got, want):
    assert sp.issparse(got), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    assert got.nnz == want.nnz


def test_sparse_with_sparse_over_unaligned_blocks():
    a, b, x, y = sparse_pair(SEED % 1000, (np.float32, np.float64))
    got = ewise.sparse.multiply(x, y, drop_zeros=True)
    assert isinstance(got, da.Array) and got.dtype == np.float64
    same_sparse(got.compute(), a.multiply(b))
    for op, want in (("add", a + b), ("subtract", a - b), ("minimum", a.minimum(b)),
                     ("maximum", a.maximum(b))):
        same_sparse(getattr(ewise.sparse, op)(x, y, drop_zeros=True).compute(), want.tocsr())
    same_sparse(ewise.sparse.multiply(x, b, drop_zeros=True).compute(), a.multiply(b))


def test_sparse_with_dense_and_scalars():
    rng = np.random.default_rng(SEED + 3)
    a, _, x, _ = sparse_pair(SEED % 1000 + 7)
    d = rng.standard_normal((60, 45)).astype(np.float32)
    row = rng.standard_normal(45).astype(np.float32)
    dd = da.from_array(d, chunks=(9, 16))
    same_sparse(ewise.sparse.multiply(x, dd).compute(), a.multiply(d).tocsr())
    same_sparse(ewise.sparse.multiply(x, row).compute(), a.multiply(row).tocsr())
    same_sparse(ewise.sparse.multiply(x, 2.5).compute(), a * np.float32(2.5))
    same(ewise.sparse.add(x, dd).compute(), a.toarray() + d)
    same(ewise.sparse.maximum(x, d).compute(), np.maximum(a.toarray(), d))


def test_accumulate_returns_the_updated_array():
    a, _, x, _ = sparse_pair(SEED % 1000 + 11)
    table = np.ones((60, 45), np.float32)
    t = da.from_array(table, chunks=(25, 45))
    got = ewise.sparse.accumulate("add", t, x)
    assert isinstance(got, da.Array)
    same(got.compute(), table + a.toarray())
    same(t.compute(), table)  # the input array is not touched
    same(ewise.sparse.accumulate("max", t, x).compute(), np.maximum(table, a.toarray(),
                                                                    where=a.toarray() != 0,
                                                                    out=table.copy()))
    with pytest.raises(TypeError, match="Dask"):
        ewise.sparse.accumulate("add", table, x)
    with pytest.raises(ValueError, match="dtype"):  # dense not of the result dtype: at graph build
        ewise.sparse.accumulate("add", da.from_array(table.astype(np.int32), chunks=25), x)
    with pytest.raises(TypeError, match="immutable"):
        ewise.sparse.add(x, t, out=t)


def test_row_sparse_gradient_into_a_table_in_blocks():
    rng = np.random.default_rng(SEED + 4)
    table = rng.integers(-9, 9, size=(100, 16)).astype(np.float32)
    t = da.from_array(table, chunks=(30, 6))  # row and column blocks
    rows = rng.integers(0, 100, size=40)  # duplicates among them, unsorted
    vals = rng.integers(-5, 5, size=(40, 16)).astype(np.float32)  # (sums exact in any order)
    got = ewise.sparse.accumulate("add", t, ewise.sparse.RowSparse(rows, vals, 100))
    want = table.copy()
    np.add.at(want, rows, vals)
    same(got.compute(), want)
    same(t.compute(), table)
    with pytest.raises(ValueError, match="outside"):
        ewise.sparse.accumulate("add", t, ewise.sparse.RowSparse(np.array([100]), vals[:1], 100))
    with pytest.raises(ValueError, match="rows"):
        ewise.sparse.accumulate("add", t, ewise.sparse.RowSparse(rows, vals, 99))
    with pytest.raises(TypeError, match="Dask"):
        ewise.sparse.accumulate("add", t, ewise.sparse.RowSparse(da.from_array(rows), vals, 100))
    with pytest.raises(ValueError, match="dtype"):  # at graph build
        ewise.sparse.accumulate("add", t.astype(np.int32), ewise.sparse.RowSparse(rows, vals, 100))


def test_on_a_cluster_of_two_processes():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(SEED + 2)
    a, b = operands(rng, np.float32, (64, 48)), operands(rng, np.float32, (48,))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        x = da.from_array(a, chunks=(16, 48))
        got = client.compute(ewise.add(ewise.multiply(x, 2.0), b)).result()
        sa, sb, sx, sy = sparse_pair(SEED % 1000 + 13)
        product = client.compute(ewise.sparse.multiply(sx, sy, drop_zeros=True)).result()
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    same(got, a * np.float32(2.0) + b)
    same_sparse(product, sa.multiply(sb))
