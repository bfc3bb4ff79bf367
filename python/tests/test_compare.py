"""ewise.compare (the C++ ewise::compare) on the CPU backend: rows, crossovers and verdicts
against the rows' own speedups, seeds, SciPy matrices, refusals and the plot. On the GPU:
test_gpu_sparse.py's test_compare_on_gpu."""
import numpy as np
import pytest

import ewise

pytest.importorskip("scipy.sparse")


def expected_crossover(rows, key):
    """The density where rows' speedup `key` crosses 1, interpolated in log-log (or None)."""
    import math
    for r0, r1 in zip(rows, rows[1:]):
        s0, s1 = math.log(r0[key]), math.log(r1[key])
        if (s0 >= 0) != (s1 >= 0) and s0 != s1:
            d0, d1 = math.log(r0["density"]), math.log(r1["density"])
            return math.exp(d0 - s0 * (d1 - d0) / (s1 - s0))
    return None


@pytest.mark.parametrize("op", ["multiply", "add", "maximum"])
def test_compare_rows_crossover_and_verdict(op):
    rows = ewise.compare((96, 80), "float64", op, (0.5, 0.01, 0.1), device="cpu", seed=7)
    assert [r["density"] for r in rows] == [0.01, 0.1, 0.5]  # sorted
    assert rows.device == "CPU" and rows.shape == (96, 80) and rows.dtype == "float64"
    assert rows.op == op and rows.seed == 7
    for r in rows:
        assert r["verified"] is True
        # drawn at the density: nnz within a wide band of density * cells, both operands
        for n in (r["nnz_a"], r["nnz_b"]):
            assert abs(n - r["density"] * 96 * 80) <= 0.5 * r["density"] * 96 * 80 + 10
        assert r["nnz_c"] <= (min if op == "multiply" else sum)((r["nnz_a"], r["nnz_b"]))
        for key in ("dense_ms", "coo_ms", "coo_dense_ms", "to_coo_ms", "to_dense_ms"):
            assert r[key] > 0
        assert r["speedup"] == pytest.approx(r["dense_ms"] / r["coo_ms"], rel=1e-6)
        assert r["speedup_converting"] == pytest.approx(
            r["dense_ms"] / (r["to_coo_ms"] + r["coo_ms"] + r["to_dense_ms"]), rel=1e-6)
    for attr, key in (("crossover", "speedup"), ("crossover_converting", "speedup_converting")):
        want = expected_crossover(rows, key)
        got = getattr(rows, attr)
        assert (got is None) == (want is None)
        if want is not None:
            assert got == pytest.approx(want, rel=1e-6)
            assert 0.01 <= got <= 0.5
    form = "COO*COO" if op == "multiply" else "COO+COO"
    assert rows.verdict.startswith(form + " is ")
    assert rows.verdict_converting.startswith(form + " with the conversions is ")
    # The same seed draws the same operands.
    again = ewise.compare((96, 80), "float64", op, (0.01, 0.1, 0.5), device="cpu", seed=7)
    assert [(r["nnz_a"], r["nnz_b"], r["nnz_c"]) for r in again] == \
        [(r["nnz_a"], r["nnz_b"], r["nnz_c"]) for r in rows]


def test_compare_scipy_matrices():
    import scipy.sparse as sp
    a = sp.random(60, 50, density=0.2, format="csr", dtype=np.float32, random_state=3)
    b = sp.random(60, 50, density=0.1, format="csc", dtype=np.float32, random_state=4)
    rows = ewise.compare(a=a, b=b, op="subtract", device="cpu")
    assert len(rows) == 1 and rows.shape == (60, 50) and rows.dtype == "float32"
    (r,) = rows
    assert r["density"] == pytest.approx(a.nnz / 3000) and r["verified"] is True
    assert (r["nnz_a"], r["nnz_b"]) == (a.nnz, b.nnz)
    assert r["nnz_c"] == (a - b).nnz  # no cancellation in random values
    # A alone: B drawn at A's density; duplicates of a COO input summed first.
    dup = sp.coo_matrix((np.ones(4), ([1, 1, 2, 3], [2, 2, 0, 1])), shape=(5, 5))
    (r,) = ewise.compare(a=dup, device="cpu", seed=1)
    assert r["nnz_a"] == 3 and r["density"] == pytest.approx(4 / 25) and r["verified"] is True
    assert rows.verdict.startswith("COO+COO is ")


def test_compare_refusals():
    import scipy.sparse as sp
    bad = [({"shape": (8, 8), "density": 0}, "density 0 is not in (0, 1]"),
           ({"shape": (8, 8), "density": (0.1, 1.5)}, "density 1.5 is not in (0, 1]"),
           ({"shape": (8, 8), "dtype": "uint8"}, "u8 is not a COO value dtype"),
           ({"shape": (8, 8), "dtype": "float7"}, "unknown dtype 'float7'"),
           ({"shape": (8, 8), "op": "divide"}, "divide is not an operation COO runs"),
           ({"shape": (8, 8), "op": "foo"}, "unknown operation 'foo'"),
           ({"shape": (8, 0)}, "the shape 8x0 is not positive"),
           ({"shape": (8,)}, "shape is (rows, cols)"),
           ({"shape": (3000000, 3000000), "dtype": "float64"}, "the dense forms need"),
           ({"shape": (8, 8), "device": "tpu"}, "device is 'cpu', 'gpu' or None"),
           ({"a": sp.eye(4), "b": sp.eye(5)}, "A is f64 4x4 but B is f64 5x5"),
           ({"a": sp.eye(4), "shape": (4, 4)}, "shape is a's when a is given"),
           ({"b": sp.eye(4), "shape": (4, 4)}, "b is given without a")]
    for kwargs, message in bad:
        kwargs.setdefault("device", "cpu")
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ewise.compare(**kwargs)
    with pytest.raises(TypeError, match="SciPy sparse matrices or arrays, not ndarray"):
        ewise.compare(a=np.eye(3), device="cpu")


def test_compare_plot(tmp_path):
    path = tmp_path / "compare.png"
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ModuleNotFoundError, match="needs matplotlib"):
            ewise.compare((32, 32), density=(0.1, 0.5), device="cpu", plot=path)
        assert not path.exists()
        return
    rows = ewise.compare((64, 64), density=(0.01, 0.1, 0.5), device="cpu", plot=path)
    assert len(rows) == 3
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
