"""Mixed dtypes, Python scalars and NumPy's binary operations on NumPy arrays (the CPU backend)
against NumPy 2 itself, with ml_dtypes' bfloat16.

Every op x every pair of the 13 dtypes (bool, the eight integers, float16, bfloat16, float32,
float64) x the scalar forms (Python bool, int and float on either side, NumPy scalars, 0-d
arrays): the result dtype is NumPy's (ewise allocates it by the C++ library's NumPy rule, so
this checks that rule), the values NumPy's bit for bit, NaN compared as NaN; minimum, maximum,
fmin and fmax by value (+0 and -0 compare equal: NumPy's choice between them varies); power on
floats within 1 ulp (ewise computes it in f64 and rounds once; NumPy and ml_dtypes call powf,
ewise/ops.hpp). Where NumPy raises, ewise raises the same class (TypeError for its
UFuncTypeError, OverflowError for a Python integer out of bounds); NumPy-undefined cases are
left out (an integer to a negative integer power raises ValueError in NumPy). Inputs are drawn
fresh (a printed seed) with each dtype's edge values, in random broadcast shapes and strided,
negative-stride and empty views; out= of every dtype the result casts to, in place with a wider
operand. Skips without ml_dtypes.
"""
import os
import sys
import warnings

import numpy as np
import pytest

import ewise
from ewise._ops import ALIASES, FUNCTIONS

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed (bfloat16)")

SEED = int(os.environ.get("EWISE_SEED", "20240615"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                np.float64)] + [BF16]
OPS = [name for name, _ in FUNCTIONS]
BY_VALUE = {"minimum", "maximum", "fmin", "fmax"}  # +0 and -0 compare equal
COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
PYTHON_SCALARS = [True, False, 0, 3, -3, 127, 300, -1, 2**40, 2**63 + 5, 2.5, -0.0, 1e300,
                  float("nan"), float("-inf")]


def is_float(dtype):
    return dtype.kind == "f" or dtype == BF16


def draw(rng, dtype, shape):
    """Random values of dtype, with its edge values mixed in (integers: min, max, 0, +-1;
    floats: NaN, +-inf, +-0, values beyond float16's range)."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -40), min(info.max, 40), n, endpoint=True)
        edges = np.array([info.min, info.max, 0, 1, max(info.min, -1)], dtype=dtype)
        x = x.astype(dtype)
    else:
        x = rng.standard_normal(n) * rng.choice([1.0, 8.0, 1e3, 1e5], n)
        edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 7e4])
    picks = rng.random(n) < 0.2
    x[picks] = rng.choice(edges, int(picks.sum()))
    with np.errstate(over="ignore"):  # 7e4 is inf in float16
        return x.astype(dtype).reshape(shape)


def shapes(rng):
    """Two shapes that broadcast (ranks 0..3, extents 0..4, each dim of b 1 or a's)."""
    rank = int(rng.integers(0, 4))
    a = tuple(int(n) for n in rng.integers(1, 5, rank))
    if rank and rng.random() < 0.1:
        a = a[:-1] + (0,)  # empty
    b = tuple(1 if rng.random() < 0.3 else n for n in a)[int(rng.integers(0, rank + 1)):]
    return (a, b) if rng.random() < 0.5 else (b, a)


def view(rng, x):
    """x as it is, or as a strided view of a larger array: every other element, reversed
    (negative strides), or transposed."""
    kind = rng.integers(0, 4)
    if kind == 0 or x.ndim == 0:
        return x
    if kind == 1:
        base = np.empty(tuple(2 * n for n in x.shape), x.dtype)
        base[(slice(None, None, 2),) * x.ndim] = x
        return base[(slice(None, None, 2),) * x.ndim]
    if kind == 2:
        base = x[(slice(None, None, -1),) * x.ndim].copy()
        return base[(slice(None, None, -1),) * x.ndim]
    return np.ascontiguousarray(x.T).T


def run(fn, *args, **kwargs):
    """fn's result, or the exception it raised (NumPy's warnings silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, OverflowError) as e:
            return e


def float_bits(x):
    """The bit patterns of a float array (its unsigned view) and where it is NaN."""
    bits = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
    return bits, np.isnan(x.astype(np.float64))


def ulp_keys(bits):
    """Float bit patterns as integers in the order of the floats (neighbours differ by 1)."""
    width = 8 * bits.dtype.itemsize
    s = bits.view(np.int64) if width == 64 else bits.astype(np.int64)
    magnitude = s & np.int64(2 ** (width - 1) - 1)
    negative = s < 0 if width == 64 else (s >> (width - 1)) == 1
    return np.where(negative, -magnitude, magnitude)


def power_close(got, want):
    """Within 1 ulp of the dtype the power was computed in: got's own, or a narrower float both
    values are exact in (a result widened into out= of a wider dtype)."""
    same = np.zeros(got.shape, bool)
    for narrow in (got.dtype, np.float32, np.float16):
        if np.dtype(narrow).itemsize > got.dtype.itemsize:
            continue
        g, w = got.astype(narrow), want.astype(narrow)
        exact = (g.astype(got.dtype) == got) & (w.astype(got.dtype) == want)
        gb, _ = float_bits(g)
        wb, _ = float_bits(w)
        same |= exact & (np.abs(ulp_keys(gb) - ulp_keys(wb)) <= 1)
    return same


def mismatch(op, got, want):
    """None when ewise's result `got` is NumPy's `want` as this file's docstring says, else
    what differs."""
    if isinstance(want, Exception):
        kind = next(k for k in (OverflowError, TypeError, ValueError) if isinstance(want, k))
        if isinstance(got, kind):
            return None
        return f"NumPy raised {type(want).__name__} ({want}), ewise gave {got!r}"
    if isinstance(got, Exception):
        return f"ewise raised {type(got).__name__}: {got}"
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{got.shape} instead of NumPy's {want.dtype}{want.shape}"
    if not is_float(want.dtype):
        bad = got != want
    else:
        (gb, gn), (wb, wn) = float_bits(got), float_bits(want)
        if op in BY_VALUE:
            same = got.astype(np.float64) == want.astype(np.float64)
        elif op == "power":
            same = power_close(got, want)
        else:
            same = gb == wb
        bad = (gn != wn) | (~gn & ~same)
    if not bad.any():
        return None
    i = np.flatnonzero(bad.ravel())[0]
    return (f"{int(bad.sum())} of {bad.size} values differ, first at flat index {i}: "
            f"{got.ravel()[i]!r} instead of {want.ravel()[i]!r}")


def undefined(want):
    """True where NumPy leaves the case undefined or differs from ewise by design: an integer
    to a negative integer power (NumPy raises ValueError; ewise gives PyTorch's value),
    ml_dtypes' refusal to cast bfloat16 to float16 under same_kind (ewise casts a float to a
    float) and to convert a Python int beyond int64 to bfloat16 (a TypeError)."""
    text = str(want) if isinstance(want, Exception) else ""
    return "negative integer powers" in text or ("bfloat16" in text and "'float16'" in text) \
        or "expected number, got int" in text


def out_of_range_comparison(op, dtype, s):
    """A comparison of an integer array with a Python int its dtype cannot hold, which NumPy 2
    computes exactly (test_comparisons_with_out_of_range_python_ints)."""
    if op not in COMPARISONS or dtype.kind not in "iu" or isinstance(s, (bool, float)):
        return False
    info = np.iinfo(dtype)
    return not info.min <= s <= info.max


def describe(x):
    return f"{x.dtype}{x.shape}" if isinstance(x, np.ndarray) else f"{type(x).__name__} {x!r}"


def check(failures, op, a, b, out=None):
    """Runs op on (a, b) in ewise and in NumPy (out=: a copy of out for NumPy); records a
    mismatch with its inputs. In place when out is a or b."""
    kwargs = {} if out is None else {"out": out.copy()}
    want = run(getattr(np, op), *(kwargs["out"] if x is out else x for x in (a, b)), **kwargs)
    if undefined(want):
        return
    got = run(getattr(ewise, op), a, b, **({} if out is None else {"out": out}))
    if out is not None and not isinstance(got, Exception):
        if got is not out:
            failures.append(f"{op}: out= returned another array")
            return
        got = got.copy()
    why = mismatch(op, got, want)
    if why:
        failures.append(f"{op}({describe(a)}, {describe(b)}"
                        f"{'' if out is None else ', out=' + describe(out)}): {why}")


def report(failures):
    assert not failures, f"{len(failures)} cases differ from NumPy:\n" + "\n".join(failures[:25])


@pytest.mark.parametrize("op", OPS)
def test_every_pair_of_dtypes(op):
    """op on arrays of every pair of dtypes, in random broadcast shapes and strided views."""
    rng = np.random.default_rng([SEED, OPS.index(op)])
    failures = []
    for da in DTYPES:
        for db in DTYPES:
            sa, sb = shapes(rng)
            a, b = view(rng, draw(rng, da, sa)), view(rng, draw(rng, db, sb))
            check(failures, op, a, b)
    report(failures)


@pytest.mark.parametrize("op", OPS)
def test_scalars(op):
    """op with an array of every dtype and a Python scalar (weak) on either side, a NumPy
    scalar or a 0-d array of every dtype (not weak)."""
    rng = np.random.default_rng([SEED, 100 + OPS.index(op)])
    failures = []
    for dtype in DTYPES:
        x = draw(rng, dtype, (3, 4))
        for s in PYTHON_SCALARS:
            if not out_of_range_comparison(op, dtype, s):
                check(failures, op, x, s)
                check(failures, op, s, x)
        for other in DTYPES:
            s = draw(rng, other, ())
            check(failures, op, x, s)                  # a 0-d array
            check(failures, op, s[()], x)              # a NumPy scalar
    report(failures)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                "less", "bitwise_or", "logical_xor"])
def test_out_of_every_dtype(op):
    """out= of every dtype (NumPy's same_kind rule decides which), and in place on an operand
    with the other one wider (x_f16 += y_f32)."""
    rng = np.random.default_rng([SEED, 200 + OPS.index(op)])
    failures = []
    for da in DTYPES:
        for db in DTYPES:
            sa, _ = shapes(rng)
            a, b = draw(rng, da, sa), draw(rng, db, sa[1:])
            for do in DTYPES:
                check(failures, op, a, b, out=view(rng, np.zeros(sa, do)))
            x = a.copy()
            check(failures, op, x, b, out=x)  # in place
    report(failures)


def test_aliases_and_names():
    assert set(ewise.__all__) >= set(OPS) | set(ALIASES)
    a, b = np.arange(1, 7, dtype=np.int32), np.int32(4)
    for alias, name in ALIASES.items():
        assert getattr(ewise, alias) is getattr(ewise, name)
        np.testing.assert_array_equal(ewise.binary(alias, a, b), getattr(np, name)(a, b),
                                      strict=True)
    assert ewise.div(a, b).dtype == np.float64  # true division, as numpy.divide
    assert ewise.div.__name__ == "divide" and "true division" in ewise.divide.__doc__


def test_errors_name_the_dtypes():
    f32, i32 = np.ones(4, np.float32), np.ones(4, np.int32)
    with pytest.raises(TypeError, match=r"f64.* i32"):
        ewise.add(f32, np.ones(4), out=i32)  # a float result into an integer out
    with pytest.raises(TypeError, match=r"f64.* u8"):
        ewise.multiply(i32, 0.5, out=np.empty(4, np.uint8))
    with pytest.raises(TypeError, match=r"subtract.*bool"):
        ewise.subtract(np.ones(4, bool), np.zeros(4, bool))
    with pytest.raises(TypeError, match=r"bitwise_and.*f32"):
        ewise.bitwise_and(f32, i32)
    with pytest.raises(TypeError, match="bitwise_xor"):
        ewise.bitwise_xor(i32, 1.5)
    for dtype in (np.complex64, object):
        for a, b in ((np.ones(4, dtype), f32), (f32, np.ones(4, dtype))):
            with pytest.raises(TypeError, match=np.dtype(dtype).name):
                ewise.add(a, b)
    with pytest.raises(OverflowError, match="300"):
        ewise.add(np.ones(3, np.int8), 300)
    with pytest.raises(OverflowError, match="-1"):
        ewise.multiply(-1, np.ones(3, np.uint8))
    with pytest.raises(TypeError, match="both Python scalars"):
        ewise.add(1, 2.5)
    with pytest.raises(TypeError, match="DLPack"):
        ewise.add(f32, 1j)
    with pytest.raises(ValueError, match="unknown op"):
        ewise.binary("pow", f32, f32)


def test_large_strided_and_in_place_mixed():
    """Past the small shapes: 2-D views of a few thousand elements, bf16 in place with an f32
    operand, and an i64 array with a float scalar."""
    rng = np.random.default_rng([SEED, 300])
    x = draw(rng, BF16, (64, 96))[::-1, ::2]
    y = draw(rng, np.dtype(np.float32), (48,))
    want = run(np.add, x, y, out=x.copy())
    assert ewise.add(x, y, out=x) is x
    assert mismatch("add", x, want) is None
    z = draw(rng, np.dtype(np.int64), (50, 70)).T
    assert mismatch("multiply", ewise.multiply(z, 0.1), np.multiply(z, 0.1)) is None
    assert mismatch("less", ewise.less(z, 2.5), np.less(z, 2.5)) is None


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_with_out_of_range_python_ints(op):
    """NumPy 2 compares an integer array with a Python int its dtype cannot hold exactly
    (int8 < 300 is True everywhere, uint8 == -1 False), where arithmetic raises OverflowError."""
    rng = np.random.default_rng([SEED, 400 + COMPARISONS.index(op)])
    failures = []
    for dtype in DTYPES:
        x = draw(rng, dtype, (3, 4))
        for s in PYTHON_SCALARS:
            if out_of_range_comparison(op, dtype, s):
                check(failures, op, x, s)
                check(failures, op, s, x)
    report(failures)


@pytest.mark.parametrize("op", COMPARISONS)
def test_signed_uint64_comparisons(op):
    """NumPy 2 compares a signed integer with uint64 exactly (their common dtype, float64, would
    not: 2**63 - 1 and 2**63 are one float64)."""
    b = np.array([2**63, 2**64 - 1, 0, 2**63, 5, 2**63 - 1, 2**53 + 1], np.uint64)
    failures = []
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dtype)
        a = np.array([info.max, -1, 0, info.min, 5, info.max, 2**53 if dtype == np.int64 else 7],
                     dtype)
        check(failures, op, a, b)
        check(failures, op, b, a)
    report(failures)


def test_casts_into_bfloat16_as_ml_dtypes():
    """A float64 or int64 result cast into a bfloat16 out= rounds as ml_dtypes casts (NumPy's
    bfloat16): a float64 through float32 (1 + 2**-8 + 2**-30 rounds to 1, onto a bfloat16 tie,
    not to 1 + 2**-7), an int64 to float32 directly. Values near bfloat16's ties, bit for bit
    against NumPy's own add into the same out."""
    rng = np.random.default_rng([SEED, 900])
    m = rng.integers(1 << 7, 1 << 8, 4096).astype(np.float64)  # a bfloat16 significand
    tie = (2 * m + 1) * np.exp2(rng.integers(-140, 120, m.size).astype(np.float64) - 8)
    off = rng.choice([-1.0, 1.0], m.size) * np.exp2(-rng.integers(20, 40, m.size).astype(np.float64))
    floats = np.concatenate([tie, tie * (1 + off), [1 + 2.0**-8 + 2.0**-30, np.nan, -np.inf, -0.0]])
    k = rng.integers(1, 1 << 8, 4096, dtype=np.int64)
    shift = rng.integers(8, 55, k.size)
    ints = (((2 * k + 1) << shift) + rng.integers(-(1 << 20), 1 << 20, k.size)) * rng.choice([-1, 1], k.size)
    ints = np.concatenate([ints, [2**62 + 2**54 + 2**38 + 1, 2**63 - 1, -2**63]]).astype(np.int64)
    for x in (floats, ints):
        want = np.zeros(x.shape, BF16)
        got = np.zeros(x.shape, BF16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.add(x, np.zeros_like(x), out=want)
        ewise.add(x, np.zeros_like(x), out=got)
        bad = np.flatnonzero(want.view(np.uint16) != got.view(np.uint16))
        bad = [i for i in bad if not (np.isnan(want[i].astype(np.float32)) and np.isnan(got[i].astype(np.float32)))]
        assert not bad, [(x[i], want[i], got[i]) for i in bad[:5]]
