"""ewise on Dask arrays of GPU chunks (issue 39, the GPU half): CuPy chunks (dense) and cupyx CSR
chunks in row blocks, on the threaded scheduler and on a dask_cuda.LocalCUDACluster of two
workers, one per GPU: a bias add with broadcasting, mask ⊙ dense, sparse ⊙ dense, sparse ⊙ and ⊕
sparse, accumulate of a sparse and of a row-sparse gradient into a table in row blocks; results
against CuPy (or NumPy / SciPy) computed directly, each block's result on its worker's GPU.

Each test skips with the reason when CuPy, a GPU, Dask, distributed or dask_cuda is missing, or
(the cluster tests) when fewer than two GPUs are visible; with EWISE_REQUIRE_GPU=1 (GPU machines)
such a skip is a failure. Run it from a directory other than the repository root (its sparse/
folder would shadow pydata's sparse, which dask.array tries to import).
"""
import importlib
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import ewise
from gpu_frameworks import require

SEED = int(os.environ.get("EWISE_SEED", "20261128"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)


def unavailable(reason):
    """Skip, or fail under EWISE_REQUIRE_GPU=1."""
    if os.environ.get("EWISE_REQUIRE_GPU") == "1":
        pytest.fail(f"EWISE_REQUIRE_GPU=1 but {reason}")
    pytest.skip(reason)


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        unavailable(f"{module} is not installed ({e}; pip install dask distributed dask-cuda, "
                    "or their wheels where no registry is reached)")


@pytest.fixture
def cupy():
    return require("cupy")  # CuPy and a GPU that CuPy and ewise see (skip or fail)


@pytest.fixture
def da(cupy):
    return need("dask.array")


@pytest.fixture(scope="module")
def cuda_client():
    """A distributed.Client of a LocalCUDACluster with two workers, one per GPU (each sees its
    GPU as device 0: dask_cuda sets CUDA_VISIBLE_DEVICES per worker)."""
    cupy = require("cupy")
    need("dask.array")
    distributed = need("distributed")
    dask_cuda = need("dask_cuda")
    count = cupy.cuda.runtime.getDeviceCount()
    if count < 2:
        unavailable(f"{count} GPU visible: the LocalCUDACluster tests need two")
    with dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES=[0, 1], n_workers=2,
                                    threads_per_worker=1, dashboard_address=None,
                                    protocol="tcp") as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        yield client


# ---- data

def dense(rng, shape, dtype=np.float32):
    x = (rng.standard_normal(size=shape) * 4).astype(dtype)
    x.flat[::7] = 0.0
    return x


def integral(rng, shape, dtype=np.float32):
    """Small integers: sums exact in any order (accumulate with duplicate rows)."""
    return rng.integers(-9, 9, size=shape).astype(dtype)


def csr(seed, shape=(90, 40), dtype=np.float32):
    return sp.random(*shape, density=0.15, format="csr", dtype=dtype, random_state=seed)


def on_gpu(da, cupy, host, chunks):
    """A Dask array of CuPy chunks from a NumPy array: each block made on the GPU of the worker
    that computes it (map_blocks(cupy.asarray): what a dask-cuda graph does)."""
    return da.from_array(host, chunks=chunks).map_blocks(
        cupy.asarray, dtype=host.dtype, meta=cupy.empty((0,) * host.ndim, dtype=host.dtype))


def sparse_on_gpu(da, cupy, host, rows):
    """A Dask array of cupyx CSR chunks in row blocks of `rows` from a SciPy matrix."""
    import cupyx.scipy.sparse as cusparse
    meta = cusparse.csr_matrix((0, 0), dtype=host.dtype)
    return da.from_array(host, chunks=(rows, host.shape[1]), asarray=False).map_blocks(
        cusparse.csr_matrix, dtype=host.dtype, meta=meta)


# ---- checks

def host(x):
    """A result (CuPy, NumPy, cupyx or SciPy) on the host, dense."""
    if hasattr(x, "toarray"):
        x = x.toarray()
    return x.get() if hasattr(x, "get") else np.asarray(x)


def same(got, want):
    got, want = host(got), host(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def close(got, want):
    """Sparse results: equal up to the order of a sum (cupyx's own ops may differ in the last
    bit from ewise's)."""
    got, want = host(got), host(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def check_gpu_chunks(result, cupy, sparse=False):
    """result is a lazy Dask array whose meta and computed blocks are CuPy (or cupyx)."""
    if sparse:
        import cupyx.scipy.sparse as cusparse
        assert cusparse.issparse(result._meta), type(result._meta)
    else:
        assert isinstance(result._meta, cupy.ndarray), type(result._meta)


def where(block):
    """Per block, a (1, 1) int64 array: 1000 * (the block's CUDA device id, +1 when it is not
    the thread's current device) + the physical GPU index, the first of CUDA_VISIBLE_DEVICES
    (dask_cuda: the worker's GPU; -1 when unset)."""
    import cupy
    data = block.data if hasattr(block, "data") and not isinstance(block, cupy.ndarray) else block
    device = data.device.id
    mismatch = int(device != cupy.cuda.runtime.getDevice())
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    physical = int(visible.split(",")[0]) if visible and visible.split(",")[0].isdigit() else -1
    return np.full((1,) * len(block.shape), 1000 * (device + mismatch) + physical, np.int64)


def assert_on_worker_gpus(client, x):
    """Every block of x lives on device 0 of its worker, the thread's current device there, and
    the blocks are spread over both workers' GPUs (two different physical GPUs)."""
    codes = client.compute(x.map_blocks(
        where, dtype=np.int64, chunks=tuple((1,) * len(c) for c in x.chunks),
        meta=np.empty((0,) * x.ndim, np.int64))).result()
    codes = np.asarray(codes).ravel()
    devices, physical = codes // 1000, codes % 1000
    assert (devices == 0).all(), f"a block not on its worker's device 0: {codes}"
    assert len(set(physical.tolist())) == 2, f"blocks not on both GPUs: {codes}"


# ---- threaded scheduler (one process, CuPy chunks on the current device)

def test_dense_bias_add_and_mask_on_cupy_chunks(cupy, da):
    rng = np.random.default_rng(SEED)
    a, bias = dense(rng, (70, 48)), dense(rng, (48,))
    mask = rng.integers(0, 2, size=(70, 48)).astype(bool)
    x = on_gpu(da, cupy, a, (16, 20))
    b = on_gpu(da, cupy, bias, 13)  # chunks that do not line up with x's
    m = on_gpu(da, cupy, mask, (25, 48))
    ca, cbias, cmask = cupy.asarray(a), cupy.asarray(bias), cupy.asarray(mask)
    got = ewise.add(x, b)
    check_gpu_chunks(got, cupy)
    computed = got.compute(scheduler="threads")
    assert isinstance(computed, cupy.ndarray)
    same(computed, ca + cbias)
    same(ewise.add(x, cbias).compute(scheduler="threads"), ca + cbias)  # a CuPy array beside
    # a weak scalar keeps f32
    same(ewise.add(x, 0.5).compute(scheduler="threads"), ca + np.float32(0.5))
    product = ewise.multiply(m, x)
    check_gpu_chunks(product, cupy)
    same(product.compute(scheduler="threads"), cmask * ca)
    same(ewise.multiply(x, m).compute(scheduler="threads"), ca * cmask)
    half = on_gpu(da, cupy, dense(rng, (70, 48), np.float16), 30)  # f16 with f32: f32
    same(ewise.maximum(half, x).compute(scheduler="threads"),
         cupy.maximum(half.compute(scheduler="threads"), ca))


def test_sparse_on_cupyx_row_blocks(cupy, da):
    import cupyx.scipy.sparse as cusparse
    rng = np.random.default_rng(SEED + 1)
    ha, hb = csr(SEED % 1000), csr(SEED % 1000 + 1)
    hb = (hb + ha.multiply(ha > 0.5)).tocsr()  # some coordinates in both
    a, b = cusparse.csr_matrix(ha), cusparse.csr_matrix(hb)
    x, y = sparse_on_gpu(da, cupy, ha, 20), sparse_on_gpu(da, cupy, hb, 33)  # unaligned rows
    d = dense(rng, ha.shape)
    dd, cd = on_gpu(da, cupy, d, (25, 40)), cupy.asarray(d)

    got = ewise.sparse.multiply(x, dd)  # sparse ⊙ dense
    check_gpu_chunks(got, cupy, sparse=True)
    result = got.compute(scheduler="threads")
    assert cusparse.issparse(result), type(result)
    same(result, a.multiply(cd))
    same(ewise.sparse.multiply(x, y).compute(scheduler="threads"), a.multiply(b))  # ⊙ sparse
    for op, want in (("add", ha + hb), ("subtract", ha - hb), ("maximum", ha.maximum(hb))):
        got = getattr(ewise.sparse, op)(x, y)  # ⊕ sparse
        check_gpu_chunks(got, cupy, sparse=True)
        close(got.compute(scheduler="threads"), want)
    dense_sum = ewise.sparse.add(x, dd)  # sparse ⊕ dense: dense
    check_gpu_chunks(dense_sum, cupy)
    same(dense_sum.compute(scheduler="threads"), cupy.asarray(ha.toarray()) + cd)
    same(ewise.sparse.multiply(x, 2.5).compute(scheduler="threads"), a * np.float32(2.5))
    same(ewise.sparse.multiply(x, b).compute(scheduler="threads"), a.multiply(b))  # cupyx beside


def test_accumulate_on_cupy_chunks(cupy, da):
    rng = np.random.default_rng(SEED + 2)
    ha = csr(SEED % 1000 + 3)
    table = integral(rng, ha.shape)
    t = on_gpu(da, cupy, table, (25, 40))
    got = ewise.sparse.accumulate("add", t, sparse_on_gpu(da, cupy, ha, 30))
    check_gpu_chunks(got, cupy)
    same(got.compute(scheduler="threads"), cupy.asarray(table + ha.toarray()))
    same(t.compute(scheduler="threads"), table)  # not touched

    rows = rng.integers(0, 90, size=50)  # duplicates, unsorted
    vals = integral(rng, (50, 40))
    grad = ewise.sparse.RowSparse(cupy.asarray(rows), cupy.asarray(vals), 90)
    t = on_gpu(da, cupy, table, (20, 16))  # row and column blocks
    got = ewise.sparse.accumulate("add", t, grad)
    check_gpu_chunks(got, cupy)
    want = table.copy()
    np.add.at(want, rows, vals)
    same(got.compute(scheduler="threads"), want)
    with pytest.raises(ValueError, match="outside"):
        ewise.sparse.accumulate("add", t, ewise.sparse.RowSparse(
            cupy.asarray([90]), cupy.asarray(vals[:1]), 90))


# ---- LocalCUDACluster: two workers, one per GPU

def test_cluster_dense(cuda_client, cupy):
    import dask.array as da
    rng = np.random.default_rng(SEED + 3)
    a, bias = dense(rng, (256, 96)), dense(rng, (96,))
    mask = rng.integers(0, 2, size=(256, 96)).astype(bool)
    x = on_gpu(da, cupy, a, (32, 96))  # eight row blocks over two workers
    b = on_gpu(da, cupy, bias, 96)
    m = on_gpu(da, cupy, mask, (32, 96))
    biased = ewise.add(x, b)
    check_gpu_chunks(biased, cupy)
    assert_on_worker_gpus(cuda_client, biased)
    got = cuda_client.compute(biased).result()
    assert isinstance(got, cupy.ndarray)
    same(got, cupy.asarray(a) + cupy.asarray(bias))
    masked = ewise.multiply(m, biased)  # mask ⊙ dense after the bias add: one graph
    assert_on_worker_gpus(cuda_client, masked)
    same(cuda_client.compute(masked).result(), cupy.asarray(mask * (a + bias)))


def test_cluster_sparse(cuda_client, cupy):
    import dask.array as da
    rng = np.random.default_rng(SEED + 4)
    ha, hb = csr(SEED % 1000 + 5, (160, 50)), csr(SEED % 1000 + 6, (160, 50))
    x, y = sparse_on_gpu(da, cupy, ha, 20), sparse_on_gpu(da, cupy, hb, 20)
    d = dense(rng, ha.shape)
    dd = on_gpu(da, cupy, d, (20, 50))
    product = ewise.sparse.multiply(x, dd)
    assert_on_worker_gpus(cuda_client, product)
    same(cuda_client.compute(product).result(), sp.csr_matrix(ha.multiply(d)))
    sparse_product = ewise.sparse.multiply(x, y)
    assert_on_worker_gpus(cuda_client, sparse_product)
    same(cuda_client.compute(sparse_product).result(), ha.multiply(hb))
    total = ewise.sparse.add(x, y)
    assert_on_worker_gpus(cuda_client, total)
    close(cuda_client.compute(total).result(), ha + hb)


def test_cluster_row_sparse_gradient_into_a_table_over_two_gpus(cuda_client, cupy):
    import dask.array as da
    rng = np.random.default_rng(SEED + 5)
    table = integral(rng, (400, 32))
    t = on_gpu(da, cupy, table, (50, 32)).persist()  # the table in row blocks over the workers
    rows = rng.integers(0, 400, size=300)
    vals = integral(rng, (300, 32))
    got = ewise.sparse.accumulate(
        "add", t, ewise.sparse.RowSparse(cupy.asarray(rows), cupy.asarray(vals), 400))
    check_gpu_chunks(got, cupy)
    assert_on_worker_gpus(cuda_client, got)
    want = table.copy()
    np.add.at(want, rows, vals)
    same(cuda_client.compute(got).result(), want)
    ha = csr(SEED % 1000 + 7, (400, 32))  # a sparse gradient in row blocks
    got = ewise.sparse.accumulate("add", t, sparse_on_gpu(da, cupy, ha, 80))
    assert_on_worker_gpus(cuda_client, got)
    same(cuda_client.compute(got).result(), table + ha.toarray())
