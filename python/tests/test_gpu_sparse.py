"""ewise's sparse operations on CUDA arrays from PyTorch and CuPy (cupyx): results of the
producer's framework on its current stream, without device synchronization; and ewise.torch's
autograd and torch.compile on CUDA tensors. Fixtures: gpu_frameworks.py.
"""
import gc

import numpy as np
import pytest

import ewise
from gpu_frameworks import LONG_KERNEL_CYCLES, cupy, require, torch  # noqa: F401
from sparse_inputs import random_torch_sparse


def assert_torch_canonical(torch, c, shape, dtype):
    assert c.layout is torch.sparse_coo and c.is_coalesced() and c.dtype == dtype
    assert c.device.type == "cuda" and tuple(c.shape) == shape
    key = c._indices()[0] * shape[1] + c._indices()[1]
    assert bool((key[1:] > key[:-1]).all())


def test_torch_sparse(torch):
    g = torch.Generator().manual_seed(1)
    shape = (300, 200)
    for dtype in (torch.float16, torch.float32, torch.float64, torch.int32, torch.int64):
        a = random_torch_sparse(torch, g, shape, dtype, 3000, "cuda")
        b = random_torch_sparse(torch, g, shape, dtype, 2000, "cuda")
        ad, bd = a.to_dense(), b.to_dense()
        for x in (a, a.coalesce()):  # a coalesced operand goes in as canonical
            c = ewise.sparse.multiply(x, b)
            assert_torch_canonical(torch, c, shape, dtype)
            assert torch.equal(c.to_dense(), ad * bd)
        for name, fn in [("add", torch.add), ("sub", torch.sub), ("minimum", torch.minimum),
                         ("maximum", torch.maximum)]:
            c = getattr(ewise.sparse, name)(a, b)
            assert_torch_canonical(torch, c, shape, dtype)
            assert torch.equal(c.to_dense(), fn(ad, bd)), name
        row = torch.randint(-4, 5, (shape[1],), generator=g).to(dtype).cuda()
        c = ewise.sparse.multiply(a, row)
        assert_torch_canonical(torch, c, shape, dtype)
        assert torch.equal(c.to_dense(), ad * row)
        assert torch.equal(ewise.sparse.add(a, row), ad + row)
        out = torch.empty(shape, dtype=dtype, device="cuda")
        assert ewise.sparse.sub(a, row, out=out) is out and torch.equal(out, ad - row)
        w = torch.randint(-4, 5, shape, generator=g).to(dtype).cuda()
        want = w + ad
        assert ewise.sparse.accumulate("add", w, a) is w and torch.equal(w, want)
    empty = ewise.sparse.multiply(a, torch.sparse_coo_tensor(
        torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0, dtype=a.dtype), shape,
        check_invariants=True).cuda())
    assert_torch_canonical(torch, empty, shape, a.dtype)
    assert empty._nnz() == 0
    for x in (a.to_sparse_csr(), a.to_sparse_csc()):  # the result in x's layout
        for c, want in ((ewise.sparse.multiply(x, b), a.to_dense() * b.to_dense()),
                        (ewise.sparse.add(x, b), a.to_dense() + b.to_dense())):
            assert c.layout is x.layout and c.device.type == "cuda"
            assert torch.equal(c.to_dense(), want)
    with pytest.raises(ValueError, match="different devices"):
        ewise.sparse.multiply(a, a.cpu())
    with pytest.raises(ValueError, match="different devices"):
        ewise.sparse.add(a, torch.ones(shape, dtype=a.dtype))
    with pytest.raises(ValueError, match="different devices"):
        ewise.sparse.accumulate("add", torch.ones(shape, dtype=a.dtype), a)


def test_torch_compressed_layouts(torch):
    """sparse_csr and sparse_csc CUDA tensors go in as they are (both operands compressed) and
    come out in the first operand's layout, with both index dtypes; the dense forms and
    accumulate read them too; a broken CSR invariant is refused."""
    g = torch.Generator().manual_seed(2)
    shape = (300, 200)
    for dtype in (torch.float32, torch.bfloat16, torch.int64):
        a = random_torch_sparse(torch, g, shape, dtype, 3000, "cuda").coalesce()
        b = random_torch_sparse(torch, g, shape, dtype, 2000, "cuda").coalesce()
        ad, bd = a.to_dense(), b.to_dense()
        row = torch.randint(-4, 5, (shape[1],), generator=g).to(dtype).cuda()
        def compressed(m, layout, index):
            """m as a sparse_csr or sparse_csc tensor with indices of dtype index."""
            csr = layout == "csr"
            m = m.to_sparse_csr() if csr else m.to_sparse_csc()
            offsets = m.crow_indices() if csr else m.ccol_indices()
            indices = m.col_indices() if csr else m.row_indices()
            make = torch.sparse_csr_tensor if csr else torch.sparse_csc_tensor
            return make(offsets.to(index), indices.to(index), m.values(), shape)

        for index in (torch.int64, torch.int32):
            for layout_a in ("csr", "csc"):
                x = compressed(a, layout_a, index)
                for layout_b in ("csr", "csc"):
                    y = compressed(b, layout_b, index)
                    for c, want in ((ewise.sparse.multiply(x, y), ad * bd),
                                    (ewise.sparse.add(x, y), ad + bd),
                                    (ewise.sparse.minimum(x, y), torch.minimum(ad, bd))):
                        assert c.layout is x.layout and c.device.type == "cuda"
                        assert torch.equal(c.to_dense(), want)
                for c, want in ((ewise.sparse.multiply(x, row), ad * row),
                                (ewise.sparse.multiply(x, 2), ad * 2)):
                    assert c.layout is x.layout and torch.equal(c.to_dense(), want)
                assert torch.equal(ewise.sparse.maximum(x, row), torch.maximum(ad, row))
                w = torch.randint(-4, 5, shape, generator=g).to(dtype).cuda()
                want = w + ad
                assert ewise.sparse.accumulate("add", w, x) is w and torch.equal(w, want)
    crow = torch.tensor([0, 2, 2], device="cuda")
    bad = torch.sparse_csr_tensor(crow, torch.tensor([3, 1], device="cuda"),
                                  torch.ones(2, device="cuda"), (2, 5), check_invariants=False)
    with pytest.raises(ValueError, match="in row 0 entry 1 .column 1. does not come after"):
        ewise.sparse.multiply(bad, bad)


def test_torch_compressed_pairs_of_mixed_dtypes(torch):
    """Pairs the fast route declines (index dtypes that differ) and ones it takes with values of
    two dtypes: the result dtype is torch.result_type's, the values its."""
    g = torch.Generator().manual_seed(3)
    shape = (300, 200)
    a = random_torch_sparse(torch, g, shape, torch.float32, 3000, "cuda").coalesce()
    b = random_torch_sparse(torch, g, shape, torch.float64, 2000, "cuda").coalesce()
    ad, bd = a.to_dense(), b.to_dense()
    x = a.to_sparse_csr()
    for index in (torch.int32, torch.int64):
        m = b.to_sparse_csr()
        y = torch.sparse_csr_tensor(m.crow_indices().to(index), m.col_indices().to(index),
                                    m.values(), shape)
        for c, want in ((ewise.sparse.multiply(x, y), ad * bd), (ewise.sparse.add(y, x), bd + ad)):
            assert c.layout is torch.sparse_csr and c.dtype == torch.float64
            assert torch.equal(c.to_dense(), want)


def test_torch_coalesced_times_dense_keeps_the_pattern(torch):
    """A coalesced tensor ⊙ dense (full, row, column, scalar): torch's values, the same indices
    tensor (shared, no copy), coalesced; an index out of range is still a ValueError."""
    g = torch.Generator().manual_seed(4)
    for dtype in (torch.float16, torch.float32, torch.float64, torch.int64):
        a = random_torch_sparse(torch, g, (300, 200), dtype, 4000, "cuda").coalesce()
        for dense_shape in ((300, 200), (200,), (300, 1), ()):
            d = torch.randint(-3, 4, dense_shape, generator=g).to(dtype).cuda()
            got = ewise.sparse.multiply(a, d)
            assert got.is_coalesced() and got._indices().data_ptr() == a._indices().data_ptr()
            assert torch.equal(got._values(), a._values() * d.expand(300, 200)[
                a._indices()[0], a._indices()[1]]), (dtype, dense_shape)
    idx = torch.tensor([[0, 5], [1, 1]], device="cuda")
    bad = torch.sparse_coo_tensor(idx, torch.ones(2, device="cuda"), (3, 4), is_coalesced=True,
                                  check_invariants=False)
    with pytest.raises(ValueError, match="outside its 3x4 shape"):
        ewise.sparse.multiply(bad, torch.ones(3, 4, device="cuda"))


def test_torch_sparse_stream_and_no_device_synchronization(torch):
    """The sparse calls run on the current (side) stream, behind a long kernel that fills
    their dense operand; COO ⊙ COO synchronizes its stream for nnz, but not the device: a long
    kernel on another stream still runs when it returns. The calls run once before: CUDA loads
    a kernel at its first launch in the process (lazy loading, CUDA_MODULE_LOADING=LAZY, the
    default), and loading synchronizes the device (H100: each call of a fresh process waited
    for the other stream's 0.5-s kernel; none did with CUDA_MODULE_LOADING=EAGER)."""
    g = torch.Generator().manual_seed(2)
    shape = (500, 400)
    a = random_torch_sparse(torch, g, shape, torch.float32, 5000, "cuda")
    b = random_torch_sparse(torch, g, shape, torch.float32, 5000, "cuda")
    dense = torch.zeros(shape, device="cuda")
    ewise.sparse.multiply(a, dense), ewise.sparse.add(a, dense), ewise.sparse.multiply(a, b)
    torch.cuda.synchronize()
    s, other = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(other):
        torch.cuda._sleep(LONG_KERNEL_CYCLES)
    with torch.cuda.stream(s):
        torch.cuda._sleep(LONG_KERNEL_CYCLES // 4)
        dense.fill_(2.0)
        scaled = ewise.sparse.multiply(a, dense)
        summed = ewise.sparse.add(a, dense)
        both = ewise.sparse.multiply(a, b)
        assert not other.query(), "ewise synchronized the device"
    s.synchronize()
    assert torch.equal(scaled.to_dense(), a.to_dense() * 2.0)
    assert torch.equal(summed, a.to_dense() + 2.0)
    assert torch.equal(both.to_dense(), a.to_dense() * b.to_dense())
    other.synchronize()


def test_torch_autograd_and_compile_on_cuda(torch):
    g = torch.Generator(device="cuda").manual_seed(3)
    for op in ("add", "sub", "mul", "div", "minimum", "maximum"):
        a = torch.randn(4, 1, 5, generator=g, device="cuda", dtype=torch.float64,
                        requires_grad=True)
        b = (torch.rand(3, 1, generator=g, device="cuda", dtype=torch.float64) + 0.5
             ).requires_grad_()
        assert torch.autograd.gradcheck(getattr(ewise.torch, op), (a, b)), op
    idx = torch.tensor([[0, 2, 1, 2, 0], [1, 0, 1, 0, 3]], device="cuda")  # a duplicate
    vals = torch.randn(5, generator=g, device="cuda", dtype=torch.float64, requires_grad=True)
    for dense_shape in ((3, 4), (4,), (3, 1)):
        dense = torch.randn(dense_shape, generator=g, device="cuda", dtype=torch.float64,
                            requires_grad=True)
        fn = lambda v, d: ewise.sparse.multiply(  # noqa: E731
            torch.sparse_coo_tensor(idx, v, (3, 4), check_invariants=True), d).to_dense()
        assert torch.autograd.gradcheck(fn, (vals, dense)), dense_shape

    def step(x, w, bias):
        return ewise.torch.maximum(ewise.torch.add(ewise.torch.mul(x, w), bias), 0.0) * 2

    x, w = (torch.randn(64, 32, generator=g, device="cuda") for _ in range(2))
    bias = torch.randn(32, generator=g, device="cuda")
    got = torch.compile(step, fullgraph=True)(x, w, bias)
    assert torch.equal(got, torch.maximum(x * w + bias, torch.tensor(0.0, device="cuda")) * 2)


def cupyx_matrices(cupy, scipy_sparse, rng, dtype):
    """A pair of SciPy COO matrices (unsorted, duplicates) and their cupyx copies."""
    def one(nnz):
        rows = rng.integers(0, 300, nnz).astype(np.int32)
        cols = rng.integers(0, 200, nnz).astype(np.int32)
        rows[nnz // 2:nnz // 2 + nnz // 5] = rows[:nnz // 5]
        cols[nnz // 2:nnz // 2 + nnz // 5] = cols[:nnz // 5]
        return scipy_sparse.coo_matrix((rng.integers(-4, 5, nnz).astype(dtype), (rows, cols)),
                                       shape=(300, 200))
    import cupyx.scipy.sparse as cusparse
    host = [one(3000), one(2000)]
    return host, [cusparse.coo_matrix((cupy.asarray(m.data), (cupy.asarray(m.row),
                                                            cupy.asarray(m.col))),
                                      shape=m.shape) for m in host]


def test_cupyx_sparse(cupy):
    scipy_sparse = pytest.importorskip("scipy.sparse")
    import cupyx.scipy.sparse as cusparse
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):  # cupyx's value dtypes
        (ha, hb), (a, b) = cupyx_matrices(cupy, scipy_sparse, rng, dtype)
        for x in (a, a.tocsr(), a.tocsc()):  # the result in x's format
            c = ewise.sparse.multiply(x, b)
            assert c.format == x.format and c.has_canonical_format
            key = c.tocoo().row.get().astype(np.int64) * 200 + c.tocoo().col.get()
            assert np.unique(key).size == key.size
            if x.format == "coo":
                assert isinstance(c, cusparse.coo_matrix) and (np.diff(key) > 0).all()
            np.testing.assert_array_equal(c.toarray().get(), ha.toarray() * hb.toarray())
            np.testing.assert_array_equal(ewise.sparse.add(x, b).toarray().get(),
                                          ha.toarray() + hb.toarray())
        for name, fn in [("add", np.add), ("sub", np.subtract), ("minimum", np.minimum),
                         ("maximum", np.maximum)]:
            c = getattr(ewise.sparse, name)(a, b)
            assert isinstance(c, cusparse.coo_matrix) and c.has_canonical_format
            np.testing.assert_array_equal(c.toarray().get(), fn(ha.toarray(), hb.toarray()))
        col = cupy.asarray(rng.integers(-4, 5, (300, 1)).astype(dtype))
        c = ewise.sparse.multiply(a, col)
        np.testing.assert_array_equal(c.toarray().get(), ha.toarray() * col.get())
        np.testing.assert_array_equal(ewise.sparse.maximum(a, col).get(),
                                      np.maximum(ha.toarray(), col.get()))
        w = cupy.asarray(rng.integers(-4, 5, (300, 200)).astype(dtype))
        want = w.get() + ha.toarray()
        ewise.sparse.accumulate("add", w, a)
        np.testing.assert_array_equal(w.get(), want)
        with pytest.raises(ValueError, match="different devices"):
            ewise.sparse.multiply(a, np.ones((300, 200), dtype))
        with pytest.raises(ValueError, match="different devices"):
            ewise.sparse.add(a, ha)


def test_cupyx_compressed(cupy):
    """cupyx CSR and CSC matrices go in as they are and come out in the first one's format,
    whether cupyx knows them canonical or not (then sorted)."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(6)
    (ha, hb), (a, b) = cupyx_matrices(cupy, scipy_sparse, rng, np.float32)
    da, db = ha.toarray(), hb.toarray()
    for fa in ("csr", "csc"):
        for fb in ("csr", "csc"):
            x, y = a.asformat(fa), b.asformat(fb)
            for known in (True, False):
                x._has_canonical_format = known
                for c, want in ((ewise.sparse.multiply(x, y), da * db),
                                (ewise.sparse.add(x, y), da + db),
                                (ewise.sparse.maximum(x, y), np.maximum(da, db))):
                    assert c.format == fa and c.has_canonical_format
                    np.testing.assert_array_equal(c.toarray().get(), want)
        x = a.asformat(fa)
        col = cupy.asarray(rng.integers(-4, 5, (300, 1)).astype(np.float32))
        c = ewise.sparse.multiply(x, col)
        assert c.format == fa
        np.testing.assert_array_equal(c.toarray().get(), da * col.get())
        np.testing.assert_array_equal(ewise.sparse.subtract(x, col).get(), da - col.get())
        w = cupy.asarray(rng.integers(-4, 5, (300, 200)).astype(np.float32))
        want = w.get() + da
        ewise.sparse.accumulate("add", w, x)
        np.testing.assert_array_equal(w.get(), want)


def test_cupyx_empty_results_have_the_result_dtype(cupy):
    """An empty device result has the dtype a non-empty one would (NumPy's promotion of both
    operands), not the first operand's: its values are made in Python, not by the call."""
    import cupyx.scipy.sparse as cusparse
    rows = cupy.arange(0, 300, 2, dtype=cupy.int32)
    a = cusparse.coo_matrix((cupy.ones(150, cupy.float32), (rows, rows % 200)), shape=(300, 200))
    b = cusparse.coo_matrix((cupy.ones(150, cupy.float64), (rows + 1, rows % 200)),
                            shape=(300, 200))
    for fmt in ("coo", "csr", "csc"):
        x, y = a.asformat(fmt), b.asformat(fmt)
        for c in (ewise.sparse.multiply(x, y), ewise.sparse.multiply(y, x)):
            assert c.nnz == 0 and c.format == fmt and c.dtype == np.float64
        assert ewise.sparse.multiply(x, y * 0, drop_zeros=True).dtype == np.float64
    empty = cusparse.coo_matrix((300, 200), dtype=cupy.float32)
    for c in (ewise.sparse.add(empty, empty.astype(cupy.float64)),
              ewise.sparse.multiply(empty, cupy.ones((300, 200), cupy.float64)),
              ewise.sparse.multiply(empty.tocsr(), cupy.ones((1, 200), cupy.float64))):
        assert c.nnz == 0 and c.dtype == np.float64


def test_torch_empty_results_have_the_result_dtype(torch):
    """As for cupyx, by PyTorch's promotion (an int32 tensor times 2.5 is float32)."""
    i = torch.arange(0, 300, 2, device="cuda")
    a = torch.sparse_coo_tensor(torch.stack((i, i % 200)), torch.ones(150, device="cuda"),
                                (300, 200)).coalesce()
    b = torch.sparse_coo_tensor(torch.stack((i + 1, i % 200)),
                                torch.ones(150, dtype=torch.float64, device="cuda"),
                                (300, 200)).coalesce()
    for x, y in ((a, b), (a.to_sparse_csr(), b.to_sparse_csr()),
                 (a.to_sparse_csc(), b.to_sparse_csc())):
        c = ewise.sparse.multiply(x, y)
        assert c.layout is x.layout and c.dtype == torch.float64
        assert c._nnz() == 0
    none = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64, device="cuda"),
                                   torch.zeros(0, dtype=torch.int32, device="cuda"), (300, 200))
    for c in (ewise.sparse.multiply(none, 2.5), ewise.sparse.multiply(none.to_sparse_csr(), 2.5)):
        assert c._nnz() == 0 and c.dtype == torch.float32


def test_cupyx_row_sparse_conversions(cupy):
    """to_coo of a RowSparse of CuPy arrays (duplicated, unsorted rows): a canonical cupyx COO
    matrix with every column of each coalesced row; to_row_sparse of it, and of cupyx CSR and
    CSC matrices, gives coalesce's rows back as CuPy arrays, all equal to the NumPy path's."""
    rng = np.random.default_rng(8)
    rows = rng.integers(0, 40, 60).astype(np.int64)
    vals = (rng.standard_normal((60, 5)) * 8).astype(np.float32)
    want = ewise.sparse.coalesce(ewise.sparse.RowSparse(rows, vals, 40))
    m = ewise.sparse.to_coo(ewise.sparse.RowSparse(cupy.asarray(rows), cupy.asarray(vals), 40))
    assert m.format == "coo" and m.has_canonical_format and m.shape == (40, 5)
    np.testing.assert_array_equal(m.row.get(), np.repeat(want.rows, 5))
    np.testing.assert_array_equal(m.col.get(), np.tile(np.arange(5), want.rows.size))
    np.testing.assert_array_equal(m.data.get(), want.values.reshape(-1))
    for x in (m, m.tocsr(), m.tocsc()):
        r = ewise.sparse.to_row_sparse(x)
        assert isinstance(r.values, cupy.ndarray) and r.canonical and r.nrows == 40
        np.testing.assert_array_equal(r.rows.get(), want.rows)
        np.testing.assert_array_equal(r.values.get(), want.values)


def test_cupyx_result_outlives_its_stream(cupy):
    """A result's arrays are freed on the stream the call ran on; the result keeps that
    stream's object, so destroying the user's reference to the stream first is safe."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(5)
    (ha, hb), (a, b) = cupyx_matrices(cupy, scipy_sparse, rng, np.float32)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        c = ewise.sparse.multiply(a, b)
    s.synchronize()
    del s
    gc.collect()
    np.testing.assert_array_equal(c.toarray().get(), ha.toarray() * hb.toarray())
    del c
    gc.collect()
    cupy.cuda.Device().synchronize()


def test_compare_on_gpu():
    require("numpy")  # a usable GPU is what this needs (skip, or fail under EWISE_REQUIRE_GPU=1)
    for dtype, op in (("float32", "multiply"), ("bfloat16", "add")):
        rows = ewise.compare((512, 384), dtype, op, (0.001, 0.05, 0.5), device="gpu", seed=11)
        assert rows.device != "CPU" and rows.dtype == dtype and len(rows) == 3
        assert all(r["verified"] and r["coo_ms"] > 0 and r["dense_ms"] > 0 for r in rows)
        cpu = ewise.compare((512, 384), dtype, op, (0.001, 0.05, 0.5), device="cpu", seed=11)
        # The same seed draws the same operands on both backends, with the same results.
        assert [(r["nnz_a"], r["nnz_b"], r["nnz_c"]) for r in rows] == \
            [(r["nnz_a"], r["nnz_b"], r["nnz_c"]) for r in cpu]
