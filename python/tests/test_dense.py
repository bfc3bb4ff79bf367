"""ewise's dense operations on NumPy arrays (CPU backend) against NumPy: the original six
operations on the original dtypes in every layout (test_dtypes.py has every operation and dtype
pair, scalars and out= casts).

Every op and dtype bit for bit: integers and f32/f64 add, subtract, multiply, divide, minimum,
maximum are exact in both; f16 is computed in f32 and rounded once by both. divide is true
division (integers give float64, as numpy.divide).
"""
import os
import sys

import numpy as np
import pytest

import ewise
from dlpack_producer import Producer
from ewise._interop.views import interface_view

SEED = int(os.environ.get("EWISE_SEED", "20240615"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)

DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64]
OPS = ["add", "sub", "mul", "div", "minimum", "maximum"]
NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "minimum": np.minimum, "maximum": np.maximum}


def reference(op, a, b):
    with np.errstate(all="ignore"):
        return NUMPY[op](a, b)


def random(rng, shape, dtype, nonzero=False):
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-1000, 1000, size=shape).astype(dtype)
    else:
        x = (rng.standard_normal(size=shape) * 8).astype(dtype)
    if nonzero:
        x[x == 0] = 3
    return x


def check(op, a, b, **kwargs):
    got = getattr(ewise, op)(a, b, **kwargs)
    want = reference(op, a, b)
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)
    return got


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", OPS)
def test_op_dtype(op, dtype):
    rng = np.random.default_rng(SEED)
    a = random(rng, (37, 61), dtype)
    b = random(rng, (37, 61), dtype, nonzero=(op == "div"))
    check(op, a, b)


def test_binary_by_name_and_kernel():
    rng = np.random.default_rng(SEED)
    a, b = random(rng, (8, 16), np.float32), random(rng, (16,), np.float32)
    for name, fn in [("add", np.add), ("min", np.minimum), ("maximum", np.maximum)]:
        np.testing.assert_array_equal(ewise.binary(name, a, b), fn(a, b))
    assert "general" in ewise.kernels() and ewise.kernels()[0] == "automatic"
    for kernel in ewise.kernels():
        if kernel in ("automatic", "general", "vectorized", "row_vectorized"):
            np.testing.assert_array_equal(ewise.add(a, b, kernel=kernel), a + b)


SHAPES = [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((), (5,)), ((5,), ()),
          ((0, 4), (4,)), ((5, 1, 3), (1, 4, 1)), ((1,), (7,)), ((2, 1, 3, 1, 2, 1, 2, 1),
                                                                   (1, 2, 1, 3, 1, 2, 1, 2))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16], ids=lambda t: t.__name__)
def test_broadcasting(shapes, dtype):
    rng = np.random.default_rng(SEED)
    a, b = random(rng, shapes[0], dtype), random(rng, shapes[1], dtype)
    for op in ("add", "mul", "maximum"):
        check(op, a, b)


def views(rng, dtype):
    """Non-contiguous views of a (6, 10) and a (10, 6) base, all of shape (6, 5)."""
    base = random(rng, (12, 20), dtype)
    yield "sliced", base[::2, 1:20:4]
    yield "transposed", random(rng, (5, 6), dtype).T
    yield "negative", base[::-2, ::-4]
    yield "reversed_transposed", random(rng, (10, 6), dtype)[::-2].T[::-1]
    yield "fortran", np.asfortranarray(random(rng, (6, 5), dtype))
    yield "broadcast_to", np.broadcast_to(random(rng, (5,), dtype), (6, 5))  # read-only, stride 0
    yield "offset", base[3:9, 7:12]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_non_contiguous(dtype):
    rng = np.random.default_rng(SEED)
    left = dict(views(rng, dtype))
    right = dict(views(rng, dtype))
    for la, a in left.items():
        for lb, b in right.items():
            for op in ("sub", "div"):
                if op == "div":
                    b = np.where(b == 0, np.ones_like(b), b)
                got = getattr(ewise, op)(a, b)
                np.testing.assert_array_equal(got, reference(op, a, b), err_msg=f"{la} {op} {lb}")


def test_out_and_in_place():
    rng = np.random.default_rng(SEED)
    a, b = random(rng, (6, 7), np.float64), random(rng, (7,), np.float64)
    want = a * b
    out = np.full((6, 7), np.nan)
    assert ewise.mul(a, b, out=out) is out
    np.testing.assert_array_equal(out, want)
    strided = np.full((12, 7), np.nan)[::-2]  # a non-contiguous out
    ewise.mul(a, b, out=strided)
    np.testing.assert_array_equal(strided, want)
    outT = np.full((7, 6), np.nan).T
    ewise.mul(a, b, out=outT)
    np.testing.assert_array_equal(outT, want)
    c = a.copy()
    assert ewise.mul(c, b, out=c) is c  # in place on a
    np.testing.assert_array_equal(c, want)
    d = a.copy()
    ewise.sub(b, d, out=d)  # in place on b (the second operand)
    np.testing.assert_array_equal(d, b - a)
    v = np.arange(12, dtype=np.int32).reshape(3, 4)
    ewise.add(v[:, ::2], np.int32(100), out=v[:, ::2])  # in place on a strided view
    np.testing.assert_array_equal(v, [[100, 1, 102, 3], [104, 5, 106, 7], [108, 9, 110, 11]])


def test_integer_edge_cases():
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, 7, -7, 7, -7, 0, info.min], dtype=dtype)
        b = np.array([-1, 1, 2, 2, -2, -2, 0, 0], dtype=dtype)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(ewise.div(a, b), a / b, strict=True)  # true division
            # floored, MIN // -1 wraps to MIN, x // 0 is 0: NumPy's values
            np.testing.assert_array_equal(ewise.floor_divide(a, b), a // b, strict=True)
            np.testing.assert_array_equal(ewise.remainder(a, b), a % b, strict=True)
        np.testing.assert_array_equal(ewise.add(a, b), a + b)  # wraps, as NumPy's
        np.testing.assert_array_equal(ewise.mul(a, b), a * b)


def test_nan_canonical_and_min_max():
    a = np.array([np.nan, 1.0, -np.nan, 2.0, -0.0, 0.0], dtype=np.float32)
    b = np.array([1.0, np.nan, 3.0, -np.inf, 0.0, -0.0], dtype=np.float32)
    for op in ("minimum", "maximum", "add"):
        got = getattr(ewise, op)(a, b)
        np.testing.assert_array_equal(got[:4], getattr(np, op if op != "add" else "add")(a, b)[:4])
        assert (got[:3].view(np.uint32) == 0x7FFFFFFF).all()  # the canonical NaN
    # equal operands (+0 and -0) give the first
    assert np.signbit(ewise.minimum(a, b)[4]) and not np.signbit(ewise.minimum(a, b)[5])


def test_results_and_empty():
    a = np.ones((0, 3), np.float32)
    r = ewise.add(a, np.ones(3, np.float32))
    assert r.shape == (0, 3) and r.dtype == np.float32
    s = ewise.add(np.full((), 2.0), np.ones(()))  # rank 0
    assert s.shape == () and s == 3
    # 0-d results as NumPy's ufuncs give them: a NumPy scalar of the result dtype (through the
    # buffer route and the general path); with out=, out itself
    for x, y in ((np.full((), 2.0), np.ones(())), (np.float32(2), 1), (np.int8(3), np.int8(4)),
                 (np.array(1.5, np.float16), 2), (np.uint8(200), np.uint8(100))):
        got, want = ewise.add(x, y), np.add(x, y)
        assert type(got) is type(want) and got == want, (x, y, got, want)
    o = np.empty(())
    assert ewise.add(np.ones(()), 1.0, out=o) is o and o == 2
    assert type(ewise.add(np.ones((1, 1)), 1.0)) is np.ndarray
    np.testing.assert_array_equal(ewise.mul(np.ones(3, np.float32), np.float32(0.5)), [0.5] * 3)


def test_errors():
    a = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"cannot broadcast \(3,4\) with \(5,4\)"):
        ewise.add(a, np.ones((5, 4), np.float32))
    with pytest.raises(ValueError, match=r"\(3,4\)"):
        ewise.add(a, a, out=np.empty((4, 3), np.float32))  # out of the wrong shape
    with pytest.raises(TypeError, match="f32.* i32"):
        ewise.add(a, a, out=np.empty((3, 4), np.int32))  # a float result into an int out
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    with pytest.raises(ValueError, match="overlap"):
        ewise.add(x[:, :-1], x[:, :-1], out=x[:, 1:])  # partial overlap with an input
    revisiting = np.lib.stride_tricks.as_strided(np.empty(4, np.float32), (3, 4), (0, 4))
    with pytest.raises(ValueError, match="overlap"):
        ewise.add(a, a, out=revisiting)  # an out that revisits its elements
    for dtype in (np.complex64, np.float128, object):
        with pytest.raises(TypeError, match="unsupported dtype"):
            ewise.add(np.ones(3, dtype), np.ones(3, dtype))
    with pytest.raises(ValueError, match="unknown op"):
        ewise.binary("pow", a, a)
    with pytest.raises(ValueError, match="kernel"):
        ewise.add(a, a, kernel="fastest")
    with pytest.raises(TypeError, match="DLPack"):
        ewise.add([1.0, 2.0], a)
    with pytest.raises(TypeError, match="DLPack"):
        ewise.add(a, [1.0, 2.0], out=a)
    with pytest.raises(ValueError, match="rank"):
        ewise.add(np.ones((1,) * 9, np.float32), np.ones((1,) * 9, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        ewise.add(a, a, out=np.broadcast_to(np.float32(0), (3, 4)))


def test_bfloat16_from_a_producer():
    """bf16 (DLPack kDLBfloat), which NumPy cannot export: ewise computes it in f32, rounds
    once; bf16 is the upper half of an f32, so the reference is f32 math rounded to nearest
    even on the upper 16 bits."""
    def to_bf16(x):
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)

    def from_bf16(h):
        return (h.astype(np.uint32) << 16).view(np.float32)

    rng = np.random.default_rng(SEED)
    a, b = to_bf16(rng.standard_normal(100)), to_bf16(rng.standard_normal(100))
    out = np.zeros(100, np.uint16)
    views = [Producer(x.ctypes.data, 100, 1, 4, 16) for x in (a, b, out)]
    ewise.mul(*views[:2], out=views[2])
    np.testing.assert_array_equal(out, to_bf16(from_bf16(a) * from_bf16(b)))


def test_device_arrays_checked_not_crashing():
    """A CUDA array (kDLCUDA) with a host array raises ValueError; one whose pointer is no
    device memory (or on a machine without a GPU) raises, never faults."""
    host = np.ones(4, np.float32)
    fake = Producer(0x1000, 4, 2, 2, 32)  # an f32 "CUDA" array at a bogus address
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(fake, host)
    with pytest.raises(ValueError, match="ewise: "):  # the C++ check, under the Python one
        ewise._ewise.binary("add", fake, host, np.empty(4, np.float32), None, 0, "numpy")
    with pytest.raises((ValueError, RuntimeError), match="ewise: "):
        ewise._ewise.binary("add", fake, Producer(0x2000, 4, 2, 2, 32),
                            Producer(0x3000, 4, 2, 2, 32), None, 0, "numpy")
    with pytest.raises(ValueError, match="DLPack device"):
        ewise._ewise.binary("add", Producer(0x1000, 4, 10, 2, 32), host, host, None, 0,
                            "numpy")
    if "built without CUDA" in ewise.gpu_unavailable_reason():  # EWISE_WITH_CUDA=OFF
        with pytest.raises(RuntimeError, match="built without CUDA"):
            ewise.add(fake, Producer(0x2000, 4, 2, 2, 32), out=Producer(0x3000, 4, 2, 2, 32))


def test_negative_strides_through_an_array_interface():
    """The path CuPy arrays with negative strides take (their DLPack export is wrong): a view
    built from the array interface's byte strides. Checked here with NumPy's interface."""
    rng = np.random.default_rng(SEED)
    x = random(rng, (6, 8), np.float32)[::-1, ::-2]
    b = random(rng, (4,), np.float32)
    out = np.empty((6, 4), np.float32)
    view = interface_view(x, x.__array_interface__, (1, 0))
    assert ewise.add(view, b, out=out) is out
    np.testing.assert_array_equal(out, x + b, strict=True)
    target = np.empty((6, 8), np.float32)[:, ::-2]  # a negative-stride out as well
    ewise.mul(b, view, out=interface_view(target, target.__array_interface__, (1, 0)))
    np.testing.assert_array_equal(target, b * x, strict=True)


def test_jax_arrays():
    """JAX arrays in (DLPack), JAX arrays out (ewise allocates, JAX imports); immutable: no
    out=. Skips without jax."""
    jax = pytest.importorskip("jax", reason="jax is not installed")
    jnp = jax.numpy
    # On the CPU backend: a JAX that defaults to a GPU would put these arrays there, where
    # mixing them with NumPy operands is a ValueError (test_gpu.py covers JAX on the GPU).
    with jax.default_device(jax.devices("cpu")[0]):
        rng = np.random.default_rng(SEED)
        for dtype in (np.float16, np.float32, np.int32):
            a, b = random(rng, (5, 7), dtype), random(rng, (7,), dtype, nonzero=True)
            for op in ("add", "divide", "maximum", "less"):
                got = getattr(ewise, op)(jnp.asarray(a), jnp.asarray(b))
                want = getattr(jnp, op)(jnp.asarray(a), jnp.asarray(b))  # JAX's dtype: int32
                assert isinstance(got, jax.Array) and got.shape == (5, 7)  # / int32 is float32
                if op == "divide":
                    # XLA's CPU divides through an approximate reciprocal: within 1 ulp of
                    # ewise's correctly rounded quotient, which is NumPy's in JAX's dtype.
                    assert got.dtype == want.dtype
                    np.testing.assert_array_max_ulp(np.asarray(got), np.asarray(want), 1)
                    t = want.dtype
                    np.testing.assert_array_equal(np.asarray(got), a.astype(t) / b.astype(t),
                                                  strict=True)
                    continue
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want), strict=True)
            got = ewise.multiply(jnp.asarray(a), 0.5)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(jnp.asarray(a) * 0.5),
                                          strict=True)
        x = jnp.arange(12, dtype=jnp.bfloat16).reshape(3, 4)
        got = ewise.mul(x, x)
        assert got.dtype == jnp.bfloat16
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(x * x, np.float32))
        np.testing.assert_array_equal(np.asarray(ewise.sub(jnp.asarray(a), b)), a - b)
        with pytest.raises(ValueError, match="immutable"):
            ewise.add(jnp.asarray(a), jnp.asarray(a), out=jnp.asarray(a))


def test_numpy_route():
    """Plain NumPy arrays (and Python scalars with them) take _ewise.numpy_binary, the buffer
    route, with NumPy's results; everything else it leaves to the general path (None), which
    gives the same results and errors."""
    fast = ewise._ewise.numpy_binary
    assert ewise.routes()["numpy"] == "buffer"
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    cases = [(a, a.T.copy().T), (a, a[0]), (a[::-1, ::2], a[0, ::2]), (a, 2.5), (3, a),
             (a.astype(np.int8), 300 // 3), (a.astype(np.uint8), True), (np.float32(2) * a, a[:, :1]),
             (np.array(1.5), np.array(2, np.int64)), (a[:0], a[0]), (a.astype(np.float16), a)]
    for x, y in cases:
        got = fast("add", x, y, None, None)
        want = np.add(x, y)
        assert got is not None and got.dtype == want.dtype and np.array_equal(got, want), (x, y)
        out = np.empty_like(want)
        assert fast("multiply", x, y, out, None) is out and np.array_equal(out, np.multiply(x, y))
    # a cast into out where same_kind allows it, in place with a wider operand
    h = a.astype(np.float16)
    assert fast("add", h, a, h, None) is h and np.array_equal(h, np.add(a.astype(np.float16), a,
                                                                   dtype=np.float32).astype(np.float16))
    import ml_dtypes
    declined = [(np.float64(2.0), a, None), (a, np.float32(2.0), None), (2.0, 3.0, None),
                (a, 2 ** 70, None), (a.tolist(), a, None), (a.view(np.matrix), a, None),
                (a.astype(ml_dtypes.bfloat16), a, None), (a.astype(">f4"), a, None),
                (a, a, np.empty((6, 8), np.int32)), (a.astype(np.complex64), a, None)]
    ro = np.empty((6, 8), np.float32)
    ro.flags.writeable = False
    declined.append((a, a, ro))
    for x, y, out in declined:
        assert fast("add", x, y, out, None) is None, (type(x), type(y))
    # the route's errors are the general path's
    with pytest.raises(OverflowError, match="300 out of bounds"):
        fast("add", a.astype(np.uint8), 300, None, None)
    with pytest.raises(ValueError, match="cannot broadcast"):
        fast("add", a, a[:, :3], None, None)
    assert fast("bitwise_and", a, a, None, None) is None  # undefined: the general path says so
    with pytest.raises(TypeError):
        ewise.bitwise_and(a, a)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_cpu_threads_after_fork_and_from_python_threads():
    """A call large enough for the CPU backend's threads, then the same in a forked child (whose
    pool threads did not come along: it runs on the calling thread, no hang) and from four
    Python threads at once (one holds the pool, the others run on their own threads)."""
    import threading
    n = 1 << 21
    x, y = np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)
    want = x * y
    assert np.array_equal(ewise.multiply(x, y), want)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if np.array_equal(ewise.multiply(x, y), want) else 3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    results = []

    def work():
        for _ in range(10):
            results.append(np.array_equal(ewise.multiply(x, y), want))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 40


def test_gpu_unavailable_reason_says_why_exactly_when_no_gpu():
    reason = ewise.gpu_unavailable_reason()
    assert isinstance(reason, str)
    assert (reason == "") == ewise.gpu_available()
