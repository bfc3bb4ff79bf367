"""ewise.sparse on SciPy matrices (CPU backend) against SciPy and dense NumPy references, with
operands of one dtype, of different dtypes (promoted as SciPy and NumPy 2 do) and Python scalars.

Inputs are unsorted and hold duplicate coordinates and stored zeros; values are small integers
(also as floats) so that sums of duplicates are exact in any order. SciPy drops zeros from its
results, ewise keeps them unless drop_zeros: results are compared with drop_zeros=True entry
for entry, and without it as dense arrays plus the pattern ewise must give.
"""
import os
import sys

import numpy as np
import pytest

import ewise
from dlpack_producer import Producer

sp = pytest.importorskip("scipy.sparse")

SEED = int(os.environ.get("EWISE_SEED", "20240615"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)

DTYPES = [np.float32, np.float64, np.int32, np.int64]
SHAPE = (23, 31)


def random_coo(rng, dtype, nnz=120, index=np.int32, shape=SHAPE, kind=sp.coo_matrix):
    """Unsorted entries, about a fifth of them duplicates, values in -4..4 (zeros included)."""
    rows = rng.integers(0, min(shape[0], 1000), size=nnz).astype(index)
    cols = rng.integers(0, shape[1], size=nnz).astype(index)
    dup = rng.choice(nnz, size=nnz // 5, replace=False)
    rows[dup[1:]], cols[dup[1:]] = rows[dup[:-1]], cols[dup[:-1]]
    vals = rng.integers(-4, 5, size=nnz).astype(dtype)
    m = kind((vals, (rows, cols)), shape=shape)
    assert not m.has_canonical_format
    return m


def pattern(m):
    """The set of coordinates a matrix stores (duplicates once)."""
    c = m.tocoo()
    return set(zip(c.row.tolist(), c.col.tolist()))


def assert_canonical(c, like, index):
    assert isinstance(c, (sp.coo_matrix, sp.coo_array))
    assert isinstance(c, sp.coo_array) == isinstance(like, sp.coo_array)
    assert c.has_canonical_format
    assert c.row.dtype == index and c.col.dtype == index
    key = c.row.astype(np.int64) * c.shape[1] + c.col
    assert (np.diff(key) > 0).all()


def assert_same_entries(got, want):
    """Entry for entry after SciPy's canonicalization (zeros dropped)."""
    want = want.tocoo()
    want.sum_duplicates()
    want.eliminate_zeros()
    np.testing.assert_array_equal(got.row, want.row)
    np.testing.assert_array_equal(got.col, want.col)
    np.testing.assert_array_equal(got.data, want.data.astype(got.dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_multiply(dtype):
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, dtype), random_coo(rng, dtype)
    c = ewise.sparse.multiply(a, b)
    assert_canonical(c, a, np.int32)
    assert c.dtype == dtype
    assert pattern(c) == pattern(a) & pattern(b)  # zeros kept: the structural intersection
    np.testing.assert_array_equal(c.toarray(), a.toarray() * b.toarray())
    assert_same_entries(ewise.sparse.multiply(a, b, drop_zeros=True), a.multiply(b))
    for algorithm in ("merge", "sort_search", "bitmap_merge", "linear_search", "hash_merge"):
        d = ewise.sparse.multiply(a, b, algorithm=algorithm)
        np.testing.assert_array_equal(d.toarray(), c.toarray())


def test_int64_indices_kept():
    """SciPy stores int32 indices whenever they fit, so int64 ones come with a tall matrix; its
    entries are those of a small matrix (SciPy's own ops would allocate per row: not used)."""
    rng = np.random.default_rng(SEED)
    tall = (2**31 + 7, 31)
    small = [random_coo(rng, np.float64) for _ in range(2)]
    a, b = (sp.coo_matrix((m.data, (m.row.astype(np.int64), m.col)), shape=tall) for m in small)
    assert a.row.dtype == np.int64
    for name in ("multiply", "add"):
        c = getattr(ewise.sparse, name)(a, b)
        want = getattr(ewise.sparse, name)(*small)
        assert_canonical(c, a, np.int64)
        assert c.shape == tall
        for x, y in [(c.row, want.row), (c.col, want.col), (c.data, want.data)]:
            np.testing.assert_array_equal(x, y)


UNION = [("add", lambda a, b: a + b, np.add), ("sub", lambda a, b: a - b, np.subtract),
         ("minimum", lambda a, b: a.minimum(b), np.minimum),
         ("maximum", lambda a, b: a.maximum(b), np.maximum)]


@pytest.mark.parametrize("op", UNION, ids=lambda o: o[0])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_union(op, dtype):
    name, scipy_op, numpy_op = op
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, dtype), random_coo(rng, dtype, index=np.int32)
    c = getattr(ewise.sparse, name)(a, b)
    assert_canonical(c, a, np.int32)
    assert pattern(c) == pattern(a) | pattern(b)
    np.testing.assert_array_equal(c.toarray(), numpy_op(a.toarray(), b.toarray()))
    assert_same_entries(getattr(ewise.sparse, name)(a, b, drop_zeros=True), scipy_op(a, b))


def test_union_fills():
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, np.float64), random_coo(rng, np.float64)
    c = ewise.sparse.sub(a, b, fill_a=10, fill_b=-1)
    in_a = a.toarray() != 0
    in_a |= sp.coo_matrix((np.ones(a.nnz), (a.row, a.col)), shape=SHAPE).toarray() != 0
    in_b = sp.coo_matrix((np.ones(b.nnz), (b.row, b.col)), shape=SHAPE).toarray() != 0
    x = np.where(in_a, a.toarray(), 10.0)
    y = np.where(in_b, b.toarray(), -1.0)
    want = np.where(in_a | in_b, x - y, 0.0)
    np.testing.assert_array_equal(c.toarray(), want)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr"])
@pytest.mark.parametrize("other", ["csr", "csc", "coo"])
def test_formats_and_kinds(fmt, other):
    """A result of the first operand's kind, and of its format for CSR, CSC and COO (a
    canonical COO for the others), whatever the second operand's format."""
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, np.float64), random_coo(rng, np.float64).asformat(other)
    for x in (a.asformat(fmt), sp.coo_array(a).asformat(fmt)):
        want_format = fmt if fmt in ("csr", "csc", "coo") else "coo"
        calls = [(ewise.sparse.multiply(x, b), x.multiply(b)),
                 (ewise.sparse.multiply(x, 2.5), x * 2.5),
                 (ewise.sparse.add(x, b), x + b), (ewise.sparse.subtract(x, b), x - b),
                 (ewise.sparse.minimum(x, b), x.minimum(b)),
                 (ewise.sparse.maximum(x, b), x.maximum(b)),
                 (ewise.sparse.multiply(x, np.arange(SHAPE[1], dtype=np.float64)),
                  x.multiply(np.arange(SHAPE[1], dtype=np.float64)))]
        for c, want in calls:
            assert c.format == want_format
            assert isinstance(c, sp.sparray) == isinstance(x, sp.sparray)
            assert c.has_canonical_format
            np.testing.assert_array_equal(c.toarray(), want.toarray())


def test_csr_results_row_offsets():
    """A CSR result's row offsets (found from the canonical result's rows): empty rows at
    either end and inside, an empty result, both index dtypes, SciPy's own checks passing."""
    rng = np.random.default_rng(SEED)
    for index in (np.int32, np.int64):
        a = sp.coo_matrix((np.arange(1.0, 5.0), (np.array([1, 1, 4, 6], index),
                                                  np.array([0, 3, 2, 5], index))), shape=(8, 6))
        for b in (a.tocsr(), sp.random(8, 6, density=0.5, format="csr", random_state=1),
                  sp.csr_matrix((8, 6))):
            c = ewise.sparse.add(a.tocsr(), b)
            c.check_format(full_check=True)
            assert c.format == "csr" and c.has_canonical_format and c.indptr.size == 9
            np.testing.assert_array_equal(c.toarray(), a.toarray() + b.toarray())
            d = ewise.sparse.multiply(a.tocsr(), b)
            d.check_format(full_check=True)
            np.testing.assert_array_equal(d.toarray(), a.toarray() * b.toarray())
    empty = ewise.sparse.multiply(sp.csr_matrix((3, 4)),
                                  random_coo(rng, np.float64, shape=(3, 4)).tocsr())
    assert empty.format == "csr" and empty.nnz == 0 and list(empty.indptr) == [0, 0, 0, 0]


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_compressed_operands_read_and_made_as_they_are(index, monkeypatch):
    """CSR and CSC operands go to the C++ library's compressed forms as they are (no tocoo, no
    format conversion of the result), with unsorted slices and duplicates (SciPy's
    has_canonical_format unset) as with canonical ones; the result in the first operand's
    format and kind, passing SciPy's full check."""
    rng = np.random.default_rng(SEED)
    coo = [random_coo(rng, np.float64, index=index) for _ in range(2)]
    mats = {f: [sp.csr_matrix if f == "csr" else sp.csc_matrix][0](
        (m.data, (m.row, m.col)), shape=SHAPE) for f in ("csr", "csc") for m in coo[:1]}
    # SciPy's constructor from triplets sums duplicates; keep them with raw arrays instead.
    raw = {}
    for f in ("csr", "csc"):
        major, minor = (coo[1].row, coo[1].col) if f == "csr" else (coo[1].col, coo[1].row)
        order = np.argsort(major, kind="stable")
        indptr = np.searchsorted(major[order], np.arange(SHAPE[f == "csc"] + 1)).astype(index)
        kind = sp.csr_matrix if f == "csr" else sp.csc_matrix
        raw[f] = kind((coo[1].data[order], minor[order].astype(index), indptr), shape=SHAPE)
        assert not raw[f].has_canonical_format
    operands = {f: [(a, a.toarray(), pattern_of(a)) for a in (
        mats[f], raw[f], (sp.csr_array if f == "csr" else sp.csc_array)(mats[f]))]
        for f in ("csr", "csc")}
    dense_b = {f: raw[f].toarray() for f in ("csr", "csc")}
    d = rng.integers(-3, 4, size=SHAPE).astype(np.float64)
    results = []  # checked after the conversions are allowed again (toarray may use them)
    with monkeypatch.context() as patched:
        for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
            patched.setattr(cls, "tocoo", lambda *a, **k: pytest.fail("converted to COO"))
            patched.setattr(cls, "asformat", lambda *a, **k: pytest.fail("converted"))
            patched.setattr(cls, "tocsr", lambda *a, **k: pytest.fail("converted to CSR"))
        for fa in ("csr", "csc"):
            for a, dense_a, stored in operands[fa]:
                for fb in ("csr", "csc"):
                    b, db = raw[fb], dense_b[fb]
                    results += [(a, ewise.sparse.multiply(a, b), dense_a * db),
                                (a, ewise.sparse.add(a, b), dense_a + db),
                                (a, ewise.sparse.maximum(a, b), np.maximum(dense_a, db))]
                results += [(a, ewise.sparse.multiply(a, d), dense_a * d),
                            (a, ewise.sparse.multiply(a, d[0]), dense_a * d[0]),
                            (a, ewise.sparse.multiply(a, 2.5), dense_a * 2.5)]
                np.testing.assert_array_equal(ewise.sparse.subtract(a, d), dense_a - d)
                w = np.asfortranarray(d.copy())
                ewise.sparse.accumulate("add", w, a)
                mask = np.zeros(SHAPE, bool)
                mask[tuple(np.array(sorted(stored)).T)] = True
                np.testing.assert_array_equal(w, np.where(mask, d + dense_a, d))
    for a, c, want in results:
        assert c.format == a.format and type(c) is type(a)
        assert c.indptr.dtype == c.indices.dtype  # SciPy's choice of its index dtype
        assert c.has_canonical_format
        c.check_format(full_check=True)
        np.testing.assert_array_equal(c.toarray(), want)


def test_compressed_index_dtypes_mixed():
    """CSR operands with int32 and int64 indices are taken together (both as int64, as SciPy
    does)."""
    a = sp.random(50, 40, density=0.2, format="csr", random_state=1, dtype=np.float64)
    b = sp.random(50, 40, density=0.2, format="csr", random_state=2, dtype=np.float64)
    b.indptr, b.indices = b.indptr.astype(np.int64), b.indices.astype(np.int64)
    for x, y in ((a, b), (b, a), (a.tocsc(), b)):
        c = ewise.sparse.add(x, y)
        assert c.format == x.format
        np.testing.assert_array_equal(c.toarray(), x.toarray() + y.toarray())


def pattern_of(m):
    """The coordinates a CSR or CSC matrix stores, read from its own arrays."""
    major = np.repeat(np.arange(m.indptr.size - 1), np.diff(m.indptr))
    pairs = zip(major, m.indices) if m.format == "csr" else zip(m.indices, major)
    return {(int(r), int(c)) for r, c in pairs}


@pytest.mark.parametrize("sorted_indices", [True, False])
def test_csr_read_as_canonical_when_scipy_says_so(sorted_indices):
    """A CSR matrix with has_canonical_format is read as canonical (nothing sorted; the promise
    checked), one without it as any COO; a false promise is refused naming the entries."""
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, np.float64).tocsr(), random_coo(rng, np.float64).tocsr()
    if not sorted_indices:  # each row's entries reversed: same matrix, indices not sorted
        for r in range(a.shape[0]):
            lo, hi = a.indptr[r], a.indptr[r + 1]
            a.indices[lo:hi] = a.indices[lo:hi][::-1].copy()
            a.data[lo:hi] = a.data[lo:hi][::-1].copy()
        a.has_sorted_indices = False
    assert a.has_canonical_format == sorted_indices
    c = ewise.sparse.multiply(a, b)
    assert c.format == "csr" and c.has_canonical_format
    np.testing.assert_array_equal(c.toarray(), a.multiply(b).toarray())
    if not sorted_indices:
        a.has_canonical_format = True  # a false promise
        with pytest.raises(ValueError, match="marked canonical"):
            ewise.sparse.multiply(a, b)


@pytest.mark.parametrize("dense_shape", [SHAPE, (SHAPE[1],), (SHAPE[0], 1), (1, SHAPE[1]), ()],
                         ids=str)
def test_sparse_dense(dense_shape):
    rng = np.random.default_rng(SEED)
    a = random_coo(rng, np.float64)
    d = rng.integers(-3, 4, size=dense_shape).astype(np.float64)
    full = np.broadcast_to(d, SHAPE)
    c = ewise.sparse.multiply(a, d)  # a's pattern
    assert_canonical(c, a, np.int32)
    assert pattern(c) == pattern(a)
    np.testing.assert_array_equal(c.toarray(), a.toarray() * full)
    if dense_shape == ():
        scalar = ewise.sparse.multiply(a, np.float64(d))  # a NumPy scalar
        np.testing.assert_array_equal(scalar.toarray(), c.toarray())
    for name, _, numpy_op in UNION:
        e = getattr(ewise.sparse, name)(a, d)
        assert isinstance(e, np.ndarray) and e.shape == SHAPE
        np.testing.assert_array_equal(e, numpy_op(a.toarray(), full))


def test_sparse_dense_out_and_in_place():
    rng = np.random.default_rng(SEED)
    a = random_coo(rng, np.float32)
    d = rng.standard_normal(SHAPE).astype(np.float32)
    want = a.toarray() + d
    out = np.full((SHAPE[1], SHAPE[0]), np.nan, np.float32).T  # a transposed out
    assert ewise.sparse.add(a, d, out=out) is out
    np.testing.assert_array_equal(out, want)
    ewise.sparse.add(a, d, out=d)  # in place: d = a + d
    np.testing.assert_array_equal(d, want)


@pytest.mark.parametrize("op", ["add", "sub", "minimum", "maximum"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_accumulate(op, dtype):
    rng = np.random.default_rng(SEED)
    g = random_coo(rng, dtype)
    w = rng.integers(-9, 10, size=SHAPE).astype(dtype)
    stored = sp.coo_matrix((np.ones(g.nnz), (g.row, g.col)), shape=SHAPE).toarray() != 0
    fn = {"add": np.add, "sub": np.subtract, "minimum": np.minimum, "maximum": np.maximum}[op]
    want = np.where(stored, fn(w, g.toarray()), w)  # only where g stores an entry
    view = np.asfortranarray(w)
    assert ewise.sparse.accumulate(op, view, g) is view
    np.testing.assert_array_equal(view, want)


def test_empty_and_structural_zeros():
    a = sp.coo_matrix(SHAPE, dtype=np.float64)
    b = sp.coo_matrix((np.array([1.0, -1.0]), (np.array([2, 2]), np.array([3, 3]))), shape=SHAPE)
    assert ewise.sparse.multiply(a, b).nnz == 0
    c = ewise.sparse.add(a, b)  # duplicates summing to zero: a stored zero ...
    assert c.nnz == 1 and c.data[0] == 0
    assert ewise.sparse.add(a, b, drop_zeros=True).nnz == 0  # ... unless drop_zeros


def test_errors():
    rng = np.random.default_rng(SEED)
    a = random_coo(rng, np.float64)
    with pytest.raises(ValueError, match="23x31|shape"):
        ewise.sparse.multiply(a, random_coo(rng, np.float64, shape=(23, 30)))
    with pytest.raises(ValueError, match="algorithm"):
        ewise.sparse.multiply(a, a, algorithm="fastest")
    with pytest.raises(ValueError):
        ewise.sparse.add(a, np.ones(SHAPE), drop_zeros=True)  # dense results keep zeros
    with pytest.raises(ValueError):
        ewise.sparse.add(a, np.ones((5, 5)))
    with pytest.raises(ValueError):
        ewise.sparse.accumulate("div", np.ones(SHAPE), a)
    with pytest.raises(ValueError, match="dense is f32 but the result of dense and a .f64. is f64"):
        ewise.sparse.accumulate("add", np.ones(SHAPE, np.float32), a)
    with pytest.raises(ValueError, match="read-only"):
        ewise.sparse.accumulate("add", np.broadcast_to(np.zeros(SHAPE[1]), SHAPE), a)
    fake_cuda = Producer(0x1000, SHAPE[0] * SHAPE[1], 2, 2, 64)
    with pytest.raises(ValueError, match="different devices: a on cpu, b on cuda:0"):
        ewise.sparse.multiply(a, fake_cuda)
    with pytest.raises(ValueError, match="different devices: dense on cuda:0, a on cpu"):
        ewise.sparse.accumulate("add", fake_cuda, a)
    with pytest.raises(TypeError, match="scipy.sparse"):
        ewise.sparse.multiply(a.toarray(), a)
    with pytest.raises(TypeError, match="unsupported dtype"):
        ewise.sparse.multiply(a.astype(np.complex128), a.astype(np.complex128))


MIXED = [(np.float32, np.float64), (np.int32, np.float32), (np.int64, np.int32),
         (np.float64, np.int64)]


@pytest.mark.parametrize("ta,tb", MIXED, ids=lambda t: np.dtype(t).name)
def test_mixed_dtypes_promote_as_scipy_does(ta, tb):
    rng = np.random.default_rng(SEED)
    a, b = random_coo(rng, ta), random_coo(rng, tb)
    want = np.result_type(ta, tb)  # NumPy 2, and SciPy's upcast
    c = ewise.sparse.multiply(a, b)
    assert c.dtype == want == a.multiply(b).dtype
    np.testing.assert_array_equal(c.toarray(), a.toarray() * b.toarray())
    assert_same_entries(ewise.sparse.multiply(a, b, drop_zeros=True), a.multiply(b))
    for name, scipy_op, numpy_op in UNION:
        u = getattr(ewise.sparse, name)(a, b, drop_zeros=True)
        assert u.dtype == scipy_op(a, b).dtype == want
        assert_same_entries(u, scipy_op(a, b))
    d = rng.integers(-3, 4, size=SHAPE[1]).astype(tb)
    s = ewise.sparse.multiply(a, d)
    assert s.dtype == want and pattern(s) == pattern(a)
    np.testing.assert_array_equal(s.toarray(), a.toarray() * d)
    e = ewise.sparse.add(a, d)  # a new dense array of the result dtype
    assert e.dtype == want
    np.testing.assert_array_equal(e, a.toarray() + d)
    # accumulate writes dense in place: dense must hold the result dtype.
    w = np.zeros(SHAPE, want)
    ewise.sparse.accumulate("add", w, b)
    np.testing.assert_array_equal(w, b.toarray())


def test_python_scalars_are_weak_and_keep_the_pattern():
    rng = np.random.default_rng(SEED)
    a, i = random_coo(rng, np.float32), random_coo(rng, np.int32)
    for m, value in [(a, 2.5), (i, 2.5), (i, 3), (a, True), (i, -2), (a, 0.0)]:
        c = ewise.sparse.multiply(m, value)
        want = m * value  # SciPy: NumPy 2's dtype for a Python scalar
        assert c.dtype == want.dtype, (m.dtype, value)
        assert pattern(c) == pattern(m)  # zeros kept, a * 0.0 too
        np.testing.assert_array_equal(c.toarray(), want.toarray())
    # A NumPy scalar is not weak: f32 * float64(2) is f64, as in NumPy and SciPy.
    assert ewise.sparse.multiply(a, np.float64(2)).dtype == a.multiply(np.float64(2)).dtype
    # a + 0 and a - 0 are a; SciPy refuses a nonzero scalar (NotImplementedError), so does ewise.
    for name in ("add", "subtract", "sub"):
        z = getattr(ewise.sparse, name)(a, 0)
        assert z.dtype == np.float32
        assert_canonical(z, a, np.int32)
        np.testing.assert_array_equal(z.toarray(), (a + 0).toarray())
    with pytest.raises(NotImplementedError):
        a + 1.5
    with pytest.raises(ValueError, match="add of a COO matrix and the nonzero scalar 1.5"):
        ewise.sparse.add(a, 1.5)
    with pytest.raises(ValueError, match="minimum of a COO matrix and a scalar is not sparse"):
        ewise.sparse.min(a, 0)
    with pytest.raises(OverflowError):
        ewise.sparse.multiply(i, 2**70)
    with pytest.raises(ValueError, match="out="):
        ewise.sparse.add(a, 0, out=np.zeros(SHAPE, np.float32))


def test_malformed_scipy_offsets_refused():
    """A SciPy CSR or CSC operand's compressed offsets are read directly: offsets that decrease,
    or that reach past the stored indices, are refused naming them, before anything is made."""
    import scipy.sparse as sp
    for fmt, kind in (("CSR", sp.csr_matrix), ("CSC", sp.csc_matrix)):
        m = kind((3, 3), dtype=np.float32)
        m.indptr = np.array([0, 2, 1, 3], np.int32)
        m.indices = np.array([0, 1, 2], np.int32)
        m.data = np.ones(3, np.float32)
        with pytest.raises(ValueError, match=rf"{fmt} .*offsets decrease: offsets\[1\] = 2 > "
                                             r"offsets\[2\] = 1"):
            ewise.sparse.multiply(m, m)
        m.indptr = np.array([0, 1, 2, 5], np.int32)
        m.indices = np.array([0, 1], np.int32)
        m.data = np.ones(2, np.float32)
        with pytest.raises(ValueError, match=rf"{fmt} .*offsets run from 0 to 5 \(offsets\[3\]\), "
                                             "not from 0 to nnz = 2"):
            ewise.sparse.add(m, m)


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_conversions_between_row_sparse_and_coo(index, dtype):
    """to_coo of a RowSparse of NumPy arrays (unsorted, duplicated rows, a row shape of two
    dims): a canonical SciPy coo_array, every column of each coalesced row, the values of
    coalesce's rows; to_row_sparse of it gives coalesce's rows back, and of SciPy COO (shuffled,
    duplicates), CSR and CSC matrices a canonical RowSparse equal to the dense rows where a has
    entries. Empty operands; the refusals."""
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, 40, 60).astype(index)
    vals = (rng.standard_normal((60, 3, 2)) * 8).astype(dtype)
    c = ewise.sparse.coalesce(ewise.sparse.RowSparse(rows, vals, 40))
    m = ewise.sparse.to_coo(ewise.sparse.RowSparse(rows, vals, 40))
    assert isinstance(m, sp.coo_array) and m.shape == (40, 6) and m.has_canonical_format
    assert m.dtype == dtype and m.row.dtype == index and m.nnz == c.values.shape[0] * 6
    assert np.array_equal(m.row, np.repeat(c.rows, 6))
    assert np.array_equal(m.col, np.tile(np.arange(6), c.rows.size))
    assert np.array_equal(m.data, c.values.reshape(-1))
    back = ewise.sparse.to_row_sparse(m)
    assert back.canonical and back.nrows == 40
    assert np.array_equal(back.rows, c.rows) and np.array_equal(back.values, c.values.reshape(-1, 6))
    coo = sp.random(50, 9, density=0.2, format="coo", dtype=np.float64, random_state=3)
    order = rng.permutation(coo.nnz)
    shuffled = sp.coo_matrix((np.concatenate([coo.data[order], coo.data[:5]]).astype(dtype),
                              (np.concatenate([coo.row[order], coo.row[:5]]).astype(index),
                               np.concatenate([coo.col[order], coo.col[:5]]).astype(index))),
                             shape=coo.shape)
    for x in (shuffled, shuffled.tocsr(), shuffled.tocsc()):
        r = ewise.sparse.to_row_sparse(x)
        dense = x.toarray()
        stored = np.unique(shuffled.row)
        assert isinstance(r, ewise.sparse.RowSparse) and r.canonical and r.nrows == 50
        assert np.array_equal(r.rows, stored) and np.array_equal(r.values, dense[stored])
        assert r.values.dtype == dtype
    empty = ewise.sparse.to_coo(ewise.sparse.RowSparse(rows[:0], vals[:0], 40))
    assert empty.nnz == 0 and empty.shape == (40, 6)
    assert ewise.sparse.to_row_sparse(sp.coo_matrix((7, 3), dtype=dtype)).rows.size == 0


def test_conversion_errors():
    rows = np.array([0, 2])
    with pytest.raises(TypeError, match="to_coo: .*float16"):
        ewise.sparse.to_coo(ewise.sparse.RowSparse(rows, np.ones((2, 3), np.float16), 4))
    with pytest.raises(TypeError, match="not a row-sparse operand"):
        ewise.sparse.to_coo(sp.coo_matrix((3, 3)))
    with pytest.raises(TypeError, match="not a sparse matrix"):
        ewise.sparse.to_row_sparse(np.ones((3, 3)))
    with pytest.raises(ValueError, match="row index 4"):
        ewise.sparse.to_coo(ewise.sparse.RowSparse(np.array([0, 4]), np.ones((2, 3)), 4))

