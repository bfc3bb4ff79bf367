"""ewise's two routes for plain torch tensors (python-api: _ewise.torch_binary; native:
_ewise_torch, where the package was built with it) on CPU tensors: which is active, what each
takes and declines, its results and errors against torch's, and the sign of negative-stride
views. Skips without torch; the CUDA side is in test_gpu.py.
"""
import gc
import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import ewise
from sparse_inputs import random_torch_sparse

torch = pytest.importorskip("torch", reason="torch is not installed (CI runs without it)")
from torch_inputs import DTYPES, SEED, TORCH_OPS, random  # noqa: E402


NATIVE_BUILT = importlib.util.find_spec("ewise._ewise_torch") is not None
NOT_BUILT = "ewise._ewise_torch was not built (EWISE_TORCH_NATIVE, python/CMakeLists.txt)"


@pytest.fixture(params=["python-api", "native"])
def path(request):
    """The path's (fast, host) functions."""
    if request.param == "python-api":
        return ewise._ewise.torch_binary, ewise._ewise.torch_binary_host
    if not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    from ewise import _ewise_torch
    return _ewise_torch.binary, _ewise_torch.binary_host


def test_native_path_is_active():
    """Where the package has _ewise_torch, it imports with this torch and ewise.binary takes it."""
    if not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    assert ewise.routes()["torch"] == "libtorch", ewise._interop.torch.libtorch_error


def test_native_path_refuses_another_torch():
    """Under a torch of another version than the one it was built against, _ewise_torch does
    not import and ewise.binary keeps the python-api path."""
    if not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    code = ("import torch\n"
            "torch.__version__ = '0.0.0'\n"
            "import ewise\n"
            "assert ewise.routes()['torch'] == 'python-api'\n"
            "assert 'built against torch' in ewise._interop.torch.libtorch_error, "
            "ewise._interop.torch.libtorch_error\n"
            "assert torch.equal(ewise.add(torch.ones(3), torch.ones(3)), torch.full((3,), 2.0))\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fast_path_leaves_cpu_tensors_to_the_general_path(path):
    fast, _ = path
    a, b = torch.ones(3, 4), torch.ones(4)
    assert fast("add", a, b, None, None) is None
    assert fast("add", a, b, torch.empty(3, 4), None) is None
    assert fast("add", np.ones(4, np.float32), b, None, None) is None
    assert fast("add", a, np.ones(4, np.float32), None, None) is None


def layout_cases(dtype):
    """Operand pairs for every way the result is allocated: like a (a's layout), like b (a
    broadcasts into b), or new and contiguous; transposed, sliced, expanded (stride 0), 0-d and
    zero-size operands."""
    g = torch.Generator().manual_seed(SEED)
    a = random(g, (6, 8), dtype)
    return [(a, random(g, (6, 8), dtype)), (a.t(), random(g, (8, 6), dtype)),
            (a, random(g, (8,), dtype)), (random(g, (8,), dtype), a),
            (a.t(), random(g, (6,), dtype)), (a[1:, ::3], random(g, (3,), dtype)),
            (a[:, :1].expand(6, 5), random(g, (1, 5), dtype)),
            (random(g, (5, 1, 7), dtype), random(g, (6, 1), dtype)),
            (random(g, (), dtype), random(g, (), dtype)), (a, random(g, (), dtype)),
            (random(g, (0, 4), dtype), random(g, (4,), dtype)),
            (random(g, (3, 1), dtype), random(g, (0,), dtype))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_native_path_matches_python_api(dtype):
    """The two paths' results are the same: values, dtype, shape and strides, allocating and
    into out=."""
    if not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    from ewise import _ewise_torch
    for x, y in layout_cases(dtype):
        for op in ("add", "sub", "mul", "min", "max"):
            got = _ewise_torch.binary_host(op, x, y, None, None)
            want = ewise._ewise.torch_binary_host(op, x, y, None, None)
            assert torch.equal(got, want) and got.stride() == want.stride(), (op, x.shape)
            out = torch.full_like(want, 7)
            assert _ewise_torch.binary_host(op, x, y, out, None) is out
            assert torch.equal(out, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fast_path_results(path, dtype):
    """Values, dtype, shape and layout of the result against torch's for layout_cases; out= and
    in place."""
    _, host = path
    g = torch.Generator().manual_seed(SEED)
    for x, y in layout_cases(dtype):
        for name, fn in TORCH_OPS.items():
            op = {"minimum": "min", "maximum": "max"}.get(name, name)
            want = fn(x, y)
            got = host(op, x, y, None, None)
            assert got is not None and got.dtype == dtype and got.shape == want.shape
            assert torch.equal(got, want), (name, x.shape, y.shape)
            out = torch.full_like(want, 7)
            assert host(op, x, y, out, None) is out and torch.equal(out, want)
            out_t = torch.full_like(want.t() if want.dim() == 2 else want, 7)
            out_t = out_t.t() if want.dim() == 2 else out_t
            assert host(op, x, y, out_t, "general") is out_t and torch.equal(out_t, want)
        got = host("add", x, y, None, None)
        like = x if got.shape == x.shape else y if got.shape == y.shape else None
        if like is not None:  # empty_like's layout of that operand
            assert got.stride() == torch.empty_like(like).stride(), (x.shape, y.shape)
        else:
            assert got.is_contiguous()
    x, y = random(g, (6, 8), dtype), random(g, (8,), dtype)
    want = x * y
    assert host("mul", x, y, x, None) is x and torch.equal(x, want)  # in place


def test_fast_path_declines(path):
    """Every case the fast path leaves to the general path (None), and that ewise.binary then
    gives the general path's result or error."""
    _, host = path
    a, b = torch.ones(3, 4), torch.ones(4)
    assert host("add", a, b, None, None) is not None

    class Sub(torch.Tensor):
        pass
    declined = [
        (a.as_subclass(Sub), b, None), (a, b.as_subclass(Sub), None),
        (a, b, torch.empty(3, 4).as_subclass(Sub)), (torch.nn.Parameter(a.clone()), b, None),
        (a, b, np.empty((3, 4), np.float32)), (np.ones(4, np.float32), b, None),
        (2.0, 3.0, None), (a, 2 ** 70, None), (2 ** 63, b, None), (a, "2", None),
        (a.clone().requires_grad_(), b, None), (a, b.clone().requires_grad_(), None),
        (torch._neg_view(a), b, None), (a, torch._neg_view(b), None),
        (a, b, torch._neg_view(torch.empty(3, 4))),
        (a.to(torch.complex64), b.to(torch.complex64), None),
        (a, b, torch.empty(3, 4, dtype=torch.int32)),  # float into int: same_kind refuses
        (a.to(torch.uint16), b.to(torch.uint16), None),
        (a, torch.ones(4, device="meta"), None), (a, b, torch.empty(3, 4, device="meta")),
        (a.to_sparse(), b, None), (a, b.to_sparse(), None),
        (torch.ones((1,) * 9), torch.ones(1), None),
    ]
    for x, y, out in declined:
        assert host("add", x, y, out, None) is None, (type(x), type(y), type(out))
    # with no gradient to record, tensors that require one take the fast path
    with torch.no_grad():
        got = host("add", a.clone().requires_grad_(), b.clone().requires_grad_(), None, None)
        assert got is not None and not got.requires_grad and torch.equal(got, a + b)
    # the general path for a declined call: autograd, and its errors
    x = a.clone().requires_grad_()
    got = ewise.add(x, b)
    assert got.requires_grad and got.grad_fn is not None and torch.equal(got, a + b)
    # an out of another dtype than the result's: cast into where same_kind allows, else refused
    out = torch.empty(3, 4, dtype=torch.float64)
    assert host("add", a, b, out, None) is out and torch.equal(out, (a + b).double())
    x16 = torch.ones(3, 4, dtype=torch.bfloat16)
    assert host("add", x16, b, x16, None) is x16 and torch.equal(x16, torch.full((3, 4), 2.0,
                                                                                  dtype=torch.bfloat16))
    with pytest.raises((TypeError, ValueError), match="same_kind"):
        ewise.add(a, b, out=torch.empty(3, 4, dtype=torch.int32))
    with pytest.raises(TypeError, match="unsupported dtype"):
        ewise.add(a.to(torch.complex64), b.to(torch.complex64))


MIXED_DTYPES = DTYPES + [torch.bool, torch.int8, torch.uint8, torch.int16]
MIXED_OPS = {"add": torch.add, "multiply": torch.mul, "divide": torch.div,
             "maximum": torch.maximum, "less": torch.lt, "equal": torch.eq,
             "floor_divide": torch.floor_divide, "bitwise_and": torch.bitwise_and}


def torch_or_error(fn, x, y):
    try:
        return fn(x, y)
    except (RuntimeError, TypeError):
        return None


@pytest.mark.parametrize("dtype", MIXED_DTYPES, ids=str)
def test_fast_path_mixed_dtypes_and_scalars(path, dtype):
    """Operands of two dtypes, 0-d tensors and Python scalars on either side run fast with
    PyTorch's result dtype and values (torch.result_type: a 0-d tensor ranks below tensors with
    dims, a Python scalar is weak). Where torch refuses a call, or ewise's rule has no result
    for it, the fast path may leave it to the general path (None), which reports it."""
    _, host = path
    g = torch.Generator().manual_seed(SEED)
    x = random(g, (4, 6), dtype) if dtype != torch.bool else random(g, (4, 6), torch.int32) > 0
    others = [random(g, (6,), d) if d != torch.bool else random(g, (6,), torch.int32) > 0
              for d in MIXED_DTYPES]
    others += [random(g, (), torch.float64), random(g, (), torch.int16), 3, -2.5, True, 0]
    fast = 0
    for name, fn in MIXED_OPS.items():
        for y in others:
            for p, q in ((x, y), (y, x)):
                want = torch_or_error(fn, p, q)
                got = host(name, p, q, None, None)
                if got is None or want is None:
                    # the arithmetic and comparisons torch takes all run fast
                    assert want is None or name in ("floor_divide", "bitwise_and"), (name, p, q)
                    continue
                fast += 1
                assert got.dtype == want.dtype and got.shape == want.shape, (name, p, q)
                if want.dtype.is_floating_point:
                    # PyTorch's own choices differ in the last bit: a scalar divisor by its
                    # reciprocal, 16-bit floor_divide rounded once from f32 (ops.hpp)
                    tol = 1e-2 if want.element_size() == 2 else 1e-5
                    assert torch.allclose(got, want, rtol=tol, atol=tol, equal_nan=True), \
                        (name, p, q)
                else:
                    assert torch.equal(got, want), (name, p, q)
                out = torch.empty_like(want)
                assert host(name, p, q, out, None) is out
                assert torch.allclose(out, got, rtol=0, atol=0, equal_nan=True) \
                    if got.dtype.is_floating_point else torch.equal(out, got)
    assert fast > 100


def test_fast_path_errors(path):
    """Errors after the checks are the general path's: the broadcast, the kernel name, overlap."""
    _, host = path
    a, b = torch.ones(3, 4), torch.ones(3)
    for fn in (host, lambda *args: ewise.binary(*args[:3], out=args[3], kernel=args[4])):
        with pytest.raises(ValueError, match=r"cannot broadcast \(3,4\) with \(3,\)"):
            fn("add", a, b, None, None)
        with pytest.raises(ValueError, match="unknown kernel"):
            fn("add", a, torch.ones(4), None, "no-such-kernel")
        base = torch.ones(30)
        with pytest.raises(ValueError, match="partially overlaps"):
            fn("add", base[:20].view(4, 5), torch.ones(5), base[1:21].view(4, 5), None)


def test_fast_path_references(path):
    """No reference is kept or lost: the operands', out's, the dtypes' and the result's counts
    are unchanged over many calls (the declined, allocating, out= and failing forms), and no
    result is leaked."""
    fast, host = path
    a, b, c = torch.ones(8, 4), torch.ones(4), torch.empty(8, 4)
    x, y = torch.ones(2, 1, 3), torch.ones(5, 1)
    neg = torch._neg_view(torch.ones(4))
    watched = [a, b, c, x, y, neg, torch.float32, torch.int64]
    for _ in range(10):  # the first calls fill the extension's cache
        host("add", a, b, None, None)
    gc.collect()
    before = [sys.getrefcount(o) for o in watched]
    # Every tensor holds a reference to its type: a leaked result would add one a call.
    tensors_before = sys.getrefcount(torch.Tensor)
    for _ in range(2000):
        r = host("add", a, b, None, None)
        assert sys.getrefcount(r) == 2  # r and getrefcount's argument
        host("add", b, a, None, None)
        host("add", x, y, None, None)
        host("add", a, b, c, "general")
        host("add", a, neg, None, None)
        fast("add", a, b, None, None)
        with pytest.raises(ValueError):
            host("add", a, torch.ones(3), None, None)
    del r
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before
    assert sys.getrefcount(torch.Tensor) - tensors_before < 100


def test_import_without_torch():
    """ewise never imports torch for a call without a torch operand, even for an array type
    named Tensor."""
    code = ("import sys, numpy as np, ewise\n"
            "class Tensor(np.ndarray): pass\n"
            "a = np.ones(4, np.float32)\n"
            "assert ewise._ewise.torch_binary('add', a.view(Tensor), a, None, None) is None\n"
            "assert (ewise.add(a, a) == 2).all()\n"
            "assert ewise.routes()['torch'] is None\n"
            "assert 'torch' not in sys.modules and 'ewise._ewise_torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_negative_views_keep_their_sign():
    """A tensor with the negative bit (torch._neg_view) holds -x in memory x: DLPack exports the
    memory without the bit, so ewise takes such an input by its values and refuses it as an
    output (it would write memory whose values the tensor reads with the other sign)."""
    g = torch.Generator().manual_seed(SEED)
    a, b = random(g, (5, 4), torch.float32), random(g, (4,), torch.float32)
    for x, y in ((a, torch._neg_view(b)), (torch._neg_view(a), b),
                 (torch._neg_view(a), torch._neg_view(b))):
        assert torch.equal(ewise.add(x, y), x + y)
        assert torch.equal(ewise.maximum(x, y, out=torch.empty(5, 4)), torch.maximum(x, y))
    with pytest.raises(ValueError, match="negative bit"):
        ewise.add(a, b, out=torch._neg_view(torch.empty(5, 4)))
    shape = (13, 17)
    s = random_torch_sparse(torch, g, shape, torch.float32)
    d = random(g, shape, torch.float32)
    assert torch.equal(ewise.sparse.multiply(s, torch._neg_view(d)).to_dense(),
                       s.to_dense() * -d)
    assert torch.equal(ewise.sparse.add(s, torch._neg_view(d)), s.to_dense() - d)
    with pytest.raises(ValueError, match="negative bit"):
        ewise.sparse.add(s, d, out=torch._neg_view(torch.empty(shape)))
    with pytest.raises(ValueError, match="negative bit"):
        ewise.sparse.accumulate("add", torch._neg_view(d.clone()), s)
    negative_values = torch.sparse_coo_tensor(s._indices(), torch._neg_view(s._values()), shape,
                                              check_invariants=False)
    assert torch.equal(ewise.sparse.multiply(negative_values, d).to_dense(),
                       -s.to_dense() * d)


class _Tagged(torch.Tensor):
    """A torch.Tensor subclass from a package ewise has no module for (as torchvision's
    tv_tensors are)."""


_Tagged.__module__ = "tensorpkg"


def test_negative_views_of_tensor_subclasses_keep_their_sign():
    """A tensor subclass from another package is read as any DLPack producer's array, its
    negative bit resolved (refused as out) as for torch's own tensors."""
    g = torch.Generator().manual_seed(SEED)
    a, b = random(g, (5, 4), torch.float32), random(g, (4,), torch.float32)
    negative_b = torch._neg_view(b).as_subclass(_Tagged)
    assert torch.equal(ewise.add(a, negative_b), a - b)
    assert np.array_equal(ewise.add(negative_b, a), (a - b).numpy())
    with pytest.raises(ValueError, match="negative bit"):
        ewise.add(a, b, out=torch._neg_view(torch.empty(5, 4)).as_subclass(_Tagged))
