"""ewise.sparse on row-sparse operands (RowSparse of NumPy arrays) on the CPU backend:
accumulate into a table, union of two row-sparse operands, against np.add.at; and coalesce of
every sparse kind (RowSparse, SciPy COO, CSR, CSC) against np.add.at and SciPy's
sum_duplicates. The torch hybrid forms are in test_torch.py.
"""
import os
import sys

import numpy as np
import pytest

import ewise

sp = pytest.importorskip("scipy.sparse")

SEED = int(os.environ.get("EWISE_SEED", "20240615"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)


@pytest.mark.parametrize("op", ["add", "sub", "minimum", "maximum"])
@pytest.mark.parametrize("row_shape", [(6,), (), (2, 3)], ids=str)
def test_accumulate_row_sparse(op, row_shape):
    """A RowSparse of NumPy arrays: each stored row index's rows summed in storage order (f32,
    as np.add.at sums them), then op applied once; rows not stored untouched."""
    rng = np.random.default_rng(SEED)
    nrows, nnz = 50, 40
    rows = rng.integers(0, nrows // 4, size=nnz)  # many duplicates
    vals = rng.standard_normal((nnz, *row_shape)).astype(np.float32)
    table = rng.standard_normal((nrows, *row_shape)).astype(np.float32)
    sums = np.zeros((nrows, *row_shape), np.float32)
    np.add.at(sums, rows, vals)
    stored = np.zeros(nrows, bool)
    stored[rows] = True
    fn = {"add": np.add, "sub": np.subtract, "minimum": np.minimum, "maximum": np.maximum}[op]
    want = table.copy()
    want[stored] = fn(table[stored], sums[stored])
    got = table.copy()
    a = ewise.sparse.RowSparse(rows, vals, nrows)
    assert ewise.sparse.accumulate(op, got, a) is got
    np.testing.assert_array_equal(got, want)
    # canonical: the distinct rows in order
    distinct = np.unique(rows)
    got = table.copy()
    ewise.sparse.accumulate(op, got, ewise.sparse.RowSparse(distinct, sums[distinct], nrows,
                                                            canonical=True))
    np.testing.assert_array_equal(got, want)


def test_accumulate_row_sparse_mixed_and_errors():
    rng = np.random.default_rng(SEED)
    rows = np.array([3, 1, 3], np.int32)
    vals = rng.standard_normal((3, 4)).astype(np.float32)
    table = np.zeros((5, 4), np.float64)  # f64 += f32: f64, the values converted, then summed
    ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(rows, vals, 5))
    np.testing.assert_array_equal(table[3], vals[0].astype(np.float64) + vals[2])
    np.testing.assert_array_equal(table[[0, 2, 4]], 0)
    with pytest.raises(ValueError, match="dense has shape"):
        ewise.sparse.accumulate("add", np.zeros((5, 3)), ewise.sparse.RowSparse(rows, vals, 5))
    with pytest.raises(ValueError, match="row index 3, outside"):
        ewise.sparse.accumulate("add", np.zeros((3, 4)), ewise.sparse.RowSparse(rows, vals, 3))
    with pytest.raises(ValueError, match="marked canonical"):
        ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(rows, vals, 5, True))
    with pytest.raises(ValueError, match="dense is float32|needs that dtype|f32"):
        ewise.sparse.accumulate("add", np.zeros((5, 4), np.float32),
                                ewise.sparse.RowSparse(rows, vals.astype(np.float64), 5))
    with pytest.raises(TypeError, match="rows is a list, not an array"):
        ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse([3, 1], vals[:2], 5))
    with pytest.raises(ValueError, match="values of shape"):
        ewise.sparse.accumulate("add", table, ewise.sparse.RowSparse(rows[:2], vals, 5))
    split = np.zeros((5, 3, 2), np.float32).transpose(0, 2, 1)  # rows of (2, 3), not one block
    with pytest.raises(ValueError, match="not one block"):
        ewise.sparse.accumulate("add", split, ewise.sparse.RowSparse(
            rows, np.zeros((3, 2, 3), np.float32), 5))


@pytest.mark.parametrize("op", ["add", "subtract", "minimum", "maximum"])
@pytest.mark.parametrize("row_shape", [(6,), (), (2, 3)], ids=str)
def test_union_of_row_sparse(op, row_shape):
    """RowSparse op RowSparse: a canonical RowSparse over the union of the stored rows, each
    row index's rows summed in storage order per operand (f32: np.add.at's order), then op once,
    0 for an operand that stores no row there (fill_a/fill_b otherwise)."""
    rng = np.random.default_rng(SEED)
    nrows = 40
    fn = {"add": np.add, "subtract": np.subtract, "minimum": np.minimum,
          "maximum": np.maximum}[op]

    def operand(nnz, dtype):
        rows = rng.integers(0, nrows // 2, size=nnz)  # many duplicates
        vals = rng.standard_normal((nnz, *row_shape)).astype(dtype)
        sums = np.zeros((nrows, *row_shape), dtype)
        np.add.at(sums, rows, vals)
        stored = np.zeros(nrows, bool)
        stored[rows] = True
        return ewise.sparse.RowSparse(rows, vals, nrows), sums, stored

    a, sa, ka = operand(30, np.float32)
    b, sb, kb = operand(25, np.float32)
    for fill_a, fill_b in ((0.0, 0.0), (1.5, -2.0)):
        got = getattr(ewise.sparse, op)(a, b, fill_a=fill_a, fill_b=fill_b)
        assert isinstance(got, ewise.sparse.RowSparse) and got.canonical
        want_rows = np.flatnonzero(ka | kb)
        np.testing.assert_array_equal(got.rows, want_rows)
        x = np.where(ka[want_rows].reshape(-1, *[1] * len(row_shape)), sa[want_rows], fill_a)
        y = np.where(kb[want_rows].reshape(-1, *[1] * len(row_shape)), sb[want_rows], fill_b)
        np.testing.assert_array_equal(got.values, fn(x.astype(np.float32), y.astype(np.float32)))
        assert got.values.shape == (len(want_rows), *row_shape)
    # mixed dtypes: NumPy's promotion (f32 with f64: f64), a's values converted before they
    # are summed (as the COO forms do)
    c, sc, kc = operand(10, np.float64)
    got = ewise.sparse.add(a, c)
    assert got.values.dtype == np.float64
    sa64 = np.zeros((nrows, *row_shape))
    np.add.at(sa64, a.rows, a.values.astype(np.float64))
    both = np.flatnonzero(ka | kc)
    np.testing.assert_array_equal(got.values, sa64[both] + sc[both])


def test_union_of_row_sparse_errors_and_empty():
    rows = np.array([3, 1, 3], np.int64)
    vals = np.ones((3, 4), np.float32)
    a = ewise.sparse.RowSparse(rows, vals, 5)
    empty = ewise.sparse.RowSparse(np.zeros(0, np.int64), np.zeros((0, 4), np.float32), 5)
    got = ewise.sparse.add(empty, empty)
    assert got.rows.shape == (0,) and got.values.shape == (0, 4)
    got = ewise.sparse.subtract(empty, a)
    np.testing.assert_array_equal(got.rows, [1, 3])
    np.testing.assert_array_equal(got.values, [[-1] * 4, [-2] * 4])
    with pytest.raises(ValueError, match="different shapes"):
        ewise.sparse.add(a, ewise.sparse.RowSparse(rows, np.ones((3, 5), np.float32), 5))
    with pytest.raises(ValueError, match="different shapes"):
        ewise.sparse.add(a, ewise.sparse.RowSparse(rows, vals, 6))
    with pytest.raises(ValueError, match="b: stored row 1 has row index 9, outside"):
        ewise.sparse.add(a, ewise.sparse.RowSparse(np.array([0, 9, 1]), vals, 5))
    with pytest.raises(ValueError, match="drop_zeros"):
        ewise.sparse.add(a, a, drop_zeros=True)
    with pytest.raises(ValueError, match="out= is for a dense b"):
        ewise.sparse.add(a, a, out=np.zeros((5, 4), np.float32))


def test_coalesce_of_each_kind():
    """ewise.sparse.coalesce: a RowSparse's rows in order with each row index's rows summed in
    storage order (np.add.at's f32 order); SciPy COO, CSR and CSC with duplicates and unsorted
    slices as sum_duplicates gives them, in the same format and kind."""
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, 12, size=30)
    vals = rng.standard_normal((30, 2, 3)).astype(np.float32)
    got = ewise.sparse.coalesce(ewise.sparse.RowSparse(rows, vals, 20))
    want = np.zeros((20, 2, 3), np.float32)
    np.add.at(want, rows, vals)
    np.testing.assert_array_equal(got.rows, np.unique(rows))
    np.testing.assert_array_equal(got.values, want[np.unique(rows)])
    assert got.canonical
    r, c = rng.integers(0, 9, size=40), rng.integers(0, 7, size=40)
    v = rng.standard_normal(40)

    def compressed(kind, major, minor, extent):
        """kind's (data, indices, indptr) with duplicates and unsorted slices, as given."""
        order = np.argsort(major, kind="stable")
        indptr = np.concatenate(([0], np.cumsum(np.bincount(major, minlength=extent))))
        return kind((v[order], minor[order], indptr), shape=(9, 7))

    for m in (sp.coo_matrix((v, (r, c)), shape=(9, 7)), sp.coo_array((v, (r, c)), shape=(9, 7)),
              compressed(sp.csr_matrix, r, c, 9), compressed(sp.csr_array, r, c, 9),
              compressed(sp.csc_matrix, c, r, 7)):
        assert not m.has_canonical_format
        result = ewise.sparse.coalesce(m)
        assert type(result) is type(m) and result.format == m.format
        expect = m.copy()
        expect.sum_duplicates()
        assert result.nnz == expect.nnz
        np.testing.assert_array_equal(result.toarray(), expect.toarray())
    with pytest.raises(ValueError, match="row index 12, outside"):
        ewise.sparse.coalesce(ewise.sparse.RowSparse(np.array([3, 12]), np.ones((2, 4)), 12))


@pytest.mark.parametrize("row_shape", [(6,), (), (2, 3)], ids=str)
@pytest.mark.parametrize("canonical", [False, True])
def test_multiply_row_sparse_by_dense(row_shape, canonical):
    """A RowSparse times a dense factor (the table, a column that scales rows, a row, a 0-d
    array) or a Python scalar: a's coalesced rows (np.add.at's sums, in order of row index, of
    the values converted to NumPy's result dtype first, as for COO), each value times the
    factor at its (row, position)."""
    rng = np.random.default_rng(SEED)
    nrows, nnz = 30, 25
    rows = (np.unique(rng.integers(0, nrows, size=nnz)) if canonical
            else rng.integers(0, nrows // 3, size=nnz))
    vals = rng.standard_normal((rows.size, *row_shape)).astype(np.float32)
    distinct = np.unique(rows)
    a = ewise.sparse.RowSparse(rows, vals, nrows, canonical=canonical)
    ones = (1,) * len(row_shape)
    factors = [rng.standard_normal((nrows, *row_shape)).astype(np.float32),
               rng.standard_normal((nrows, *ones)).astype(np.float32),
               rng.standard_normal((1, *row_shape)),  # f64: the result is f64
               np.array(2.5, np.float32), -1.5, 3]
    for b in factors:
        got = ewise.sparse.multiply(a, b)
        assert isinstance(got, ewise.sparse.RowSparse) and got.canonical
        dtype = np.result_type(vals.dtype, b)
        sums = np.zeros((nrows, *row_shape), dtype)
        np.add.at(sums, rows, vals.astype(dtype))
        want = sums[distinct] * (b if np.ndim(b) == 0 else np.broadcast_to(
            b, (nrows, *row_shape))[distinct])
        np.testing.assert_array_equal(got.rows, distinct)
        assert got.values.dtype == want.dtype, (np.shape(b), got.values.dtype, want.dtype)
        np.testing.assert_array_equal(got.values, want)


def test_multiply_row_sparse_errors():
    rows = np.array([3, 1, 3], np.int32)
    vals = np.ones((3, 2, 4), np.float32)
    a = ewise.sparse.RowSparse(rows, vals, 5)
    with pytest.raises(ValueError, match=r"dense of shape \(4,\)"):
        ewise.sparse.multiply(a, np.ones(4, np.float32))  # broadcasts within a row
    with pytest.raises(ValueError, match="broadcast"):
        ewise.sparse.multiply(a, np.ones((4, 2, 4), np.float32))
    with pytest.raises(TypeError, match="dense or scalar b"):
        ewise.sparse.multiply(a, a)
    with pytest.raises(ValueError, match="row index 3"):
        ewise.sparse.multiply(ewise.sparse.RowSparse(rows, vals, 3), 2.0)
