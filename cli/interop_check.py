#!/usr/bin/env python3
"""Checks that `ewise` reads what NumPy/SciPy write and writes what they read.

usage: interop_check.py /path/to/ewise [--device cpu|gpu]

.npy: arrays of every NumPy dtype ewise supports, C and Fortran order, format versions 1.0, 2.0
and 3.0, saved by NumPy, combined by `ewise dense`, loaded back with np.load and compared
bit for bit with NumPy's own result. Mixed dtypes: operands of every pair of twelve dtypes and
Python scalars (a number on the command line), through NumPy's binary operations: ewise gives
NumPy 2's result dtype and values, and refuses what NumPy refuses. bf16 (NumPy has no such type) travels as the raw 2-byte
type 'V2', checked against torch's bfloat16 rounding when torch is installed.
.mtx: matrices written by scipy.io.mmwrite (general, symmetric, integer, pattern), multiplied by
`ewise sparse mul`, read back with scipy.io.mmread and compared with SciPy's product.
Exit status: 0 all passed, 1 a mismatch, 77 NumPy is not installed (skipped).
"""
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
except ImportError:
    print("skipped: NumPy is not installed")
    sys.exit(77)


def run(ewise, args, cwd):
    r = subprocess.run([ewise] + args + ["--quiet"], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED: ewise {' '.join(args)}: {r.stderr.strip()}")


def save(path, arr, version):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=version)


def check_dense(ewise, device, tmp):
    rng = np.random.default_rng(1234)
    checked = 0
    for dtype in ["<f2", "<f4", "<f8", "<i4", "<i8"]:
        for order in ["C", "F"]:
            for version in [(1, 0), (2, 0), (3, 0)]:
                for op, fn in [("add", np.add), ("mul", np.multiply), ("max", np.maximum)]:
                    a = np.asarray(rng.integers(-50, 50, size=(7, 5, 3)), dtype=dtype, order=order)
                    b = np.asarray(rng.integers(1, 9, size=(5, 1)), dtype=dtype, order=order)
                    if dtype.startswith("<f"):
                        a = (a / np.asarray(4, dtype=dtype)).astype(dtype, order=order)
                    save(os.path.join(tmp, "a.npy"), a, version)
                    save(os.path.join(tmp, "b.npy"), b, version)
                    run(ewise, ["dense", op, "a.npy", "b.npy", "-o", "c.npy", "--device", device], tmp)
                    c = np.load(os.path.join(tmp, "c.npy"))
                    want = fn(a, b)
                    if c.dtype != want.dtype or c.shape != want.shape or not np.array_equal(c, want):
                        raise SystemExit(f"FAILED: dense {op} {dtype} {order} {version}: "
                                         f"got {c.dtype}{c.shape} want {want.dtype}{want.shape}")
                    checked += 1
    print(f"npy: {checked} NumPy-written inputs combined and read back by np.load: identical")


def attempt(ewise, args, cwd):
    """True when `ewise args` succeeded, False when it failed with the one-line error."""
    r = subprocess.run([ewise] + args + ["--quiet"], cwd=cwd, capture_output=True, text=True)
    if r.returncode not in (0, 1) or (r.returncode == 1 and r.stderr.count("\n") != 1):
        raise SystemExit(f"FAILED: ewise {' '.join(args)}: status {r.returncode}: {r.stderr}")
    return r.returncode == 0


def numpy_value(fn, a, b):
    """fn(a, b) as NumPy 2 gives it, or None where NumPy refuses it."""
    with np.errstate(all="ignore"):
        try:
            return np.asarray(fn(a, b))
        except (TypeError, OverflowError):
            return None


MIXED_DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"]
ALL_OPS = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
           "minimum", "maximum", "fmin", "fmax", "equal", "not_equal", "less", "less_equal",
           "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
           "bitwise_and", "bitwise_or", "bitwise_xor"]


def mixed_operand(rng, dtype, shape, divisor):
    """Small values of `dtype`; a divisor or exponent is in 0..3 (zeros included)."""
    x = rng.integers(0, 4, size=shape) if divisor else rng.integers(-9, 10, size=shape)
    if dtype.startswith("f"):
        x = x / 4 if not divisor else x
    return np.asarray(x).astype(dtype)


def check_mixed(ewise, device, tmp):
    rng = np.random.default_rng(4321)
    pairs = [(x, y) for x in MIXED_DTYPES for y in MIXED_DTYPES]
    # Every pair through three operations; every operation through a spread of pairs.
    cases = [(op, x, y) for op in ["add", "divide", "less"] for x, y in pairs]
    cases += [(op, x, y) for op in ALL_OPS for x, y in pairs[::13]]
    checked = refused = 0

    def compare(what, args, want):
        nonlocal checked, refused
        ok = attempt(ewise, args, tmp)
        if want is None:
            if ok:
                raise SystemExit(f"FAILED: {what}: NumPy refuses it, ewise did not")
            refused += 1
            return
        if not ok:
            raise SystemExit(f"FAILED: {what}: ewise refused it, NumPy gives {want.dtype}")
        c = np.load(os.path.join(tmp, "c.npy"))
        equal_nan = want.dtype.kind == "f"
        if c.dtype != want.dtype or not np.array_equal(c, want, equal_nan=equal_nan):
            raise SystemExit(f"FAILED: {what}: got {c.dtype} {c.ravel()[:8]}, NumPy gives "
                             f"{want.dtype} {want.ravel()[:8]}")
        checked += 1

    for op, x, y in cases:
        a = mixed_operand(rng, x, (4, 5), False)
        b = mixed_operand(rng, y, (5,), True)
        np.save(os.path.join(tmp, "a.npy"), a)
        np.save(os.path.join(tmp, "b.npy"), b)
        compare(f"dense {op} {x} {y}",
                ["dense", op, "a.npy", "b.npy", "-o", "c.npy", "--device", device],
                numpy_value(getattr(np, op), a, b))
    # Python scalars, weak as in NEP 50 (300 does not fit int8: NumPy raises OverflowError for
    # arithmetic, and compares by value).
    for x in MIXED_DTYPES:
        a = mixed_operand(rng, x, (6,), False)
        np.save(os.path.join(tmp, "a.npy"), a)
        for op in ["add", "multiply", "divide", "less", "maximum"]:
            for text, value in [("3", 3), ("-1", -1), ("300", 300), ("2.5", 2.5),
                                ("True", True)]:
                fn = getattr(np, op)
                compare(f"dense {op} {x} {text}",
                        ["dense", op, "a.npy", text, "-o", "c.npy", "--device", device],
                        numpy_value(fn, a, value))
                compare(f"dense {op} {text} {x}",
                        ["dense", op, text, "a.npy", "-o", "c.npy", "--device", device],
                        numpy_value(fn, value, a))
    print(f"mixed: {checked} results equal to NumPy's (dtype and values), {refused} refused "
          f"where NumPy refuses")


def check_bf16(ewise, device, tmp):
    try:
        import torch
    except ImportError:
        print("bf16: skipped (torch not installed)")
        return
    a = torch.randn(64, 33).to(torch.bfloat16)
    b = torch.randn(33).to(torch.bfloat16)
    # NumPy has no bfloat16: store the raw 2-byte patterns as the void type V2 (as np.save does
    # for ml_dtypes.bfloat16).
    np.save(os.path.join(tmp, "a.npy"), a.view(torch.int16).numpy().view("V2"))
    np.save(os.path.join(tmp, "b.npy"), b.view(torch.int16).numpy().view("V2"))
    run(ewise, ["dense", "add", "a.npy", "b.npy", "-o", "c.npy", "--device", device], tmp)
    c = np.load(os.path.join(tmp, "c.npy"))
    if c.dtype != np.dtype("V2"):
        raise SystemExit(f"FAILED: bf16 result has dtype {c.dtype}, expected V2")
    got = torch.from_numpy(c.view(np.int16).copy()).view(torch.bfloat16)
    want = (a.float() + b.float()).to(torch.bfloat16)  # computed in f32, rounded once
    if not torch.equal(got.view(torch.int16), want.view(torch.int16)):
        raise SystemExit("FAILED: bf16 add differs from torch's")
    print("bf16: V2 files from NumPy, result identical to torch bfloat16")


def check_mtx(ewise, device, tmp):
    try:
        import scipy.io
        import scipy.sparse
    except ImportError:
        print("mtx: skipped (SciPy not installed)")
        return
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # scipy's spmatrix notice
    rng = np.random.default_rng(99)
    cases = []
    a = scipy.sparse.random(40, 30, density=0.3, random_state=1, format="coo")
    b = scipy.sparse.random(40, 30, density=0.3, random_state=2, format="coo")
    cases.append(("general real", a, b, {}, {}))
    s = scipy.sparse.random(25, 25, density=0.2, random_state=3, format="coo")
    s = (s + s.T).tocoo()
    t = scipy.sparse.random(25, 25, density=0.5, random_state=4, format="coo")
    cases.append(("symmetric", s, t, {"symmetry": "symmetric"}, {}))
    i = scipy.sparse.coo_matrix(rng.integers(-9, 9, size=(20, 15)) * (rng.random((20, 15)) < 0.3))
    j = scipy.sparse.coo_matrix(rng.integers(-9, 9, size=(20, 15)) * (rng.random((20, 15)) < 0.5))
    cases.append(("integer", i, j, {"field": "integer"}, {"field": "integer"}))
    p = scipy.sparse.random(30, 20, density=0.4, random_state=5, format="coo")
    cases.append(("pattern", p, a.tocsr()[:30, :20].tocoo(), {"field": "pattern"}, {}))
    for name, x, y, xo, yo in cases:
        scipy.io.mmwrite(os.path.join(tmp, "x.mtx"), x, **xo)
        scipy.io.mmwrite(os.path.join(tmp, "y.mtx"), y, **yo)
        run(ewise, ["sparse", "mul", "x.mtx", "y.mtx", "-o", "z.mtx", "--device", device], tmp)
        z = scipy.io.mmread(os.path.join(tmp, "z.mtx")).toarray()
        xd = (x.toarray() != 0).astype(float) if xo.get("field") == "pattern" else x.toarray()
        want = xd * y.toarray()
        if z.shape != want.shape or not np.array_equal(z, want):
            raise SystemExit(f"FAILED: sparse mul {name}: max diff {np.abs(z - want).max()}")
    # COO * dense row vector from NumPy.
    v = rng.standard_normal(30)
    np.save(os.path.join(tmp, "v.npy"), v)
    scipy.io.mmwrite(os.path.join(tmp, "x.mtx"), a)
    run(ewise, ["sparse", "mul", "x.mtx", "v.npy", "-o", "z.mtx", "--device", device], tmp)
    z = scipy.io.mmread(os.path.join(tmp, "z.mtx")).toarray()
    if not np.array_equal(z, a.toarray() * v):
        raise SystemExit("FAILED: sparse mul by a row vector")
    print(f"mtx: {len(cases) + 1} SciPy-written products read back by scipy.io.mmread: identical")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    ewise = os.path.abspath(sys.argv[1])
    device = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--device" else "cpu"
    with tempfile.TemporaryDirectory() as tmp:
        check_dense(ewise, device, tmp)
        check_mixed(ewise, device, tmp)
        check_bf16(ewise, device, tmp)
        check_mtx(ewise, device, tmp)


if __name__ == "__main__":
    main()
