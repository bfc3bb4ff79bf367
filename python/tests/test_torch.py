"""ewise with PyTorch CPU tensors: the plain dense and sparse API on torch tensors, the
ewise.torch operators (autograd checked by torch.autograd.gradcheck in float64, torch.compile
with fullgraph=True, torch.library.opcheck), and sparse ⊙ dense with autograd. Values are
checked against torch's own operations (integers and floats exactly: both round once).
Skips without torch; the same checks on CUDA tensors are in test_gpu.py, the routes of plain
tensors in test_torch_routes.py.
"""
import numpy as np
import pytest

import ewise
from sparse_inputs import random_torch_sparse

torch = pytest.importorskip("torch", reason="torch is not installed (CI runs without it)")

from torch_inputs import DTYPES, SEED, SHAPES, TORCH_OPS, random  # noqa: E402


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_plain_api_on_torch_tensors(dtype):
    g = torch.Generator().manual_seed(SEED)
    a, b = random(g, (6, 8), dtype), random(g, (8,), dtype)
    for name, fn in TORCH_OPS.items():
        got = getattr(ewise, name)(a.t().contiguous().t(), b)  # strided a, broadcast b
        assert isinstance(got, torch.Tensor) and got.dtype == dtype
        assert torch.equal(got, fn(a, b)), name
        via_op = getattr(ewise.torch, name)(a, b)
        assert torch.equal(via_op, fn(a, b)), name


def test_operators_are_registered():
    g = torch.Generator().manual_seed(SEED)
    a, b = random(g, (3, 4), torch.float32), random(g, (4,), torch.float32)
    assert torch.equal(torch.ops.ewise.binary("mul", a, b, None, None), a * b)
    assert torch.equal(torch.ops.ewise.binary("mul", None, b, 2.5, None), 2.5 * b)
    out = torch.empty(3, 4)
    torch.ops.ewise.binary_out("sub", a, b, None, out, None)
    assert torch.equal(out, a - b)
    for shapes in SHAPES:
        x = random(g, shapes[0], torch.float64).requires_grad_()
        y = random(g, shapes[1], torch.float64).requires_grad_()
        torch.library.opcheck(torch.ops.ewise.binary.default, ("max", x, y, None, None))
        torch.library.opcheck(torch.ops.ewise.binary.default, ("mul", x, None, 3, None))
    torch.library.opcheck(torch.ops.ewise.binary.default, ("add", a, b.double(), None, None))
    torch.library.opcheck(torch.ops.ewise.binary_out.default, ("add", a, b, None, out, None))


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "minimum", "maximum", "fmin", "fmax",
                                "power"])
def test_gradcheck(op, shapes):
    g = torch.Generator().manual_seed(SEED)
    a = torch.randn(shapes[0], generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(shapes[1], generator=g, dtype=torch.float64, requires_grad=True)
    if op == "div":
        b = (b.detach().abs() + 0.5).requires_grad_()  # away from 0
    if op == "power":
        a = (a.detach().abs() + 0.5).requires_grad_()  # a real power
    fn = getattr(ewise.torch, op)
    assert torch.autograd.gradcheck(fn, (a, b))
    assert torch.autograd.gradgradcheck(fn, (a, b))
    # the plain API records the same operator when an operand requires a gradient
    y = getattr(ewise, op)(a, b)
    assert y.requires_grad and "ewise_binary" in type(y.grad_fn).__name__


# Mixed pairs (a's dtype, b's dtype) that torch promotes, and the operators of each op for a
# Python number on the left (torch's functions take a tensor first).
MIXED = [(torch.bfloat16, torch.float32), (torch.float16, torch.bfloat16),
         (torch.int32, torch.float32), (torch.int64, torch.float16), (torch.uint8, torch.int8),
         (torch.bool, torch.float32), (torch.int16, torch.bool), (torch.float64, torch.int8)]
REFLECTED = {"add": "__radd__", "subtract": "__rsub__", "multiply": "__rmul__",
             "divide": "__rtruediv__", "floor_divide": "__rfloordiv__",
             "remainder": "__rmod__", "power": "__rpow__", "bitwise_and": "__rand__",
             "bitwise_or": "__ror__", "bitwise_xor": "__rxor__"}


def operand(g, shape, dtype, op):
    """A random operand of op: nonzero integers for the divisions (torch's CPU raises on
    integer division by zero), exponents 0..4 for an integer power."""
    x = random(g, shape, dtype)
    if op == "power" and not dtype.is_floating_point:
        return torch.randint(0, 5, shape, generator=g).to(dtype)
    if op in ("floor_divide", "remainder", "divide") and not dtype.is_floating_point:
        return torch.where(x == 0, torch.ones_like(x), x)
    return x


def attempt(fn, *args):
    try:
        return fn(*args)
    except (TypeError, RuntimeError) as e:
        return e


def assert_as_torch(got, want, what):
    """ewise's result `got` against torch's `want` (unless torch raised): torch's dtype and
    values, floats to the last bit except divide and power (torch's CUDA divides by a scalar
    through its reciprocal; CPU pow calls powf): 1 ulp there."""
    if isinstance(want, Exception):  # torch refuses it (floor_divide on bools, ...); ewise
        return                         # may define it (NumPy's value)
    assert not isinstance(got, Exception), (what, got)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if got.dtype.is_floating_point:
        rtol = torch.finfo(got.dtype).eps if what[0] in ("divide", "power") else 0
        torch.testing.assert_close(got, want, rtol=rtol, atol=0, equal_nan=True, msg=str(what))
    else:
        assert torch.equal(got, want), what


@pytest.mark.parametrize("op", [name for name, _ in ewise._ops.FUNCTIONS])
def test_mixed_dtypes_and_scalars_as_torch(op):
    """ewise.f(x, y) gives torch.f(x, y)'s dtype (torch.result_type: Python numbers weak, 0-d
    tensors below tensors with dims) and values, for mixed pairs, Python numbers on either side
    and 0-d tensors; ewise.torch.f too."""
    g = torch.Generator().manual_seed(SEED)
    fn = {"power": torch.pow, "equal": torch.eq}.get(op) or getattr(torch, op)
    for da, db in MIXED:
        a, b = operand(g, (4, 5), da, op), operand(g, (5,), db, op)
        want = attempt(fn, a, b)
        assert_as_torch(attempt(getattr(ewise, op), a, b), want, (op, da, db))
        assert_as_torch(attempt(getattr(ewise.torch, op), a, b), want, (op, da, db, "torch"))
        zero_dim = operand(g, (), db, op)
        assert_as_torch(attempt(getattr(ewise, op), a, zero_dim), attempt(fn, a, zero_dim),
                        (op, da, db, "0-d"))
    for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.int32, torch.uint8,
                  torch.bool):
        x = operand(g, (3, 4), dtype, op)
        for number in (2, 3, 2.5, True):
            want = attempt(fn, x, number)
            assert_as_torch(attempt(getattr(ewise, op), x, number), want, (op, dtype, number))
            assert_as_torch(attempt(getattr(ewise.torch, op), x, number), want,
                            (op, dtype, number, "torch"))
            if op in REFLECTED:
                want = attempt(getattr(x, REFLECTED[op]), number)
                assert_as_torch(attempt(getattr(ewise, op), number, x), want,
                                (op, number, dtype))


def test_mixed_dtype_gradients():
    """A bf16 tensor times an f32 one: f32 result, each gradient in its operand's dtype, as
    torch's own multiply gives them."""
    g = torch.Generator().manual_seed(SEED)
    a = torch.randn(4, 5, generator=g).bfloat16().requires_grad_()
    b = torch.randn(5, generator=g).requires_grad_()
    got = torch.autograd.grad(ewise.torch.multiply(a, b).sum(), (a, b))
    want = torch.autograd.grad(torch.multiply(a, b).sum(), (a, b))
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and torch.equal(x, y)
    (ga,) = torch.autograd.grad(ewise.torch.power(a, 2.0).sum(), (a,))
    assert ga.dtype == torch.bfloat16


def test_min_max_gradient_ties_and_broadcast():
    """Ties give each operand half, as torch.minimum / torch.maximum; broadcast dims summed."""
    a = torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], dtype=torch.float64,
                     requires_grad=True)
    b = torch.tensor([2.0, 2.0, 2.0], dtype=torch.float64, requires_grad=True)
    for name, reference in [("minimum", torch.minimum), ("maximum", torch.maximum)]:
        got = torch.autograd.grad(getattr(ewise.torch, name)(a, b).sum(), (a, b))
        want = torch.autograd.grad(reference(a, b).sum(), (a, b))
        for x, y in zip(got, want):
            assert torch.equal(x, y), name
    assert torch.equal(got[1], torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64))


def test_out_and_errors():
    g = torch.Generator().manual_seed(SEED)
    a, b = random(g, (5, 4), torch.float32), random(g, (4,), torch.float32)
    out = torch.empty(5, 4)
    assert ewise.torch.div(a, b, out=out) is out
    assert torch.equal(out, a / b)
    c = a.clone()
    ewise.torch.maximum(c, b, out=c)  # in place
    assert torch.equal(c, torch.maximum(a, b))
    assert torch.equal(ewise.torch.add(a, 2), a + 2)  # a number: weak, as torch takes it
    with pytest.raises(RuntimeError, match="out= does not support autograd"):
        ewise.torch.add(a.requires_grad_(), b, out=out)
    a.requires_grad_(False)
    with pytest.raises(ValueError, match="unknown op"):
        ewise.torch.binary("pow", a, b)
    with pytest.raises(TypeError, match="bitwise_and.*f32"):
        ewise.torch.bitwise_and(a, b)
    with pytest.raises(ValueError, match=r"cannot broadcast \(5,4\) with \(3,\)"):
        ewise.torch.add(a, torch.ones(3))
    with pytest.raises(TypeError, match="not a torch.Tensor"):
        ewise.torch.add(np.ones(3, np.float32), b)
    with pytest.raises(TypeError, match="not a torch.Tensor or a number"):
        ewise.torch.add(a, "1")


def test_compile_fullgraph():
    """torch.compile(fullgraph=True) raises at the first graph break: there is none."""
    def step(x, w, bias, out):
        y = ewise.torch.maximum(ewise.torch.add(ewise.torch.mul(x, w), bias), 0.0)
        ewise.torch.sub(y, bias, out=out)
        return y * 2, out

    compiled = torch.compile(step, fullgraph=True)
    g = torch.Generator().manual_seed(SEED)
    x, w, bias = (random(g, s, torch.float32) for s in ((16, 32), (16, 32), (32,)))
    out = torch.empty(16, 32)
    y, got_out = compiled(x, w, bias, out)
    want = torch.maximum(x * w + bias, torch.tensor(0.0))
    assert torch.equal(y, want * 2)
    assert got_out is out and torch.equal(out, want - bias)
    # and its backward, through the registered autograd formulas
    xg = x.double().requires_grad_()
    loss = torch.compile(lambda t: ewise.torch.mul(t, t).sum(), fullgraph=True)(xg)
    (grad,) = torch.autograd.grad(loss, xg)
    assert torch.allclose(grad, 2 * xg.detach())


def assert_canonical(c, shape, dtype):
    assert c.layout is torch.sparse_coo and c.is_coalesced() and c.dtype == dtype
    assert tuple(c.shape) == shape
    key = c._indices()[0] * shape[1] + c._indices()[1]
    assert bool((key[1:] > key[:-1]).all())


def stored(x):
    """The coordinates a sparse tensor stores (duplicates once)."""
    return set(map(tuple, x._indices().t().tolist()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64],
                         ids=str)
def test_sparse_torch_cpu(dtype):
    g = torch.Generator().manual_seed(SEED)
    shape = (13, 17)
    a = random_torch_sparse(torch, g, shape, dtype)
    b = random_torch_sparse(torch, g, shape, dtype)
    ad, bd = a.to_dense(), b.to_dense()
    for coalesced in (False, True):  # a coalesced operand is passed as canonical
        x = a.coalesce() if coalesced else a
        c = ewise.sparse.multiply(x, b)
        assert_canonical(c, shape, dtype)
        assert stored(c) == stored(a) & stored(b)
        assert torch.equal(c.to_dense(), ad * bd)
    for name, fn in [("add", torch.add), ("sub", torch.sub), ("minimum", torch.minimum),
                     ("maximum", torch.maximum)]:
        c = getattr(ewise.sparse, name)(a, b)
        assert_canonical(c, shape, dtype)
        assert stored(c) == stored(a) | stored(b)
        assert torch.equal(c.to_dense(), fn(ad, bd)), name
    for dense in (random(g, shape, dtype), random(g, (shape[1],), dtype),
                  random(g, (shape[0], 1), dtype)):
        c = ewise.sparse.multiply(a, dense)
        assert_canonical(c, shape, dtype)
        assert stored(c) == stored(a)
        assert torch.equal(c.to_dense(), ad * dense)
        assert torch.equal(ewise.sparse.add(a, dense), ad + dense)
        out = torch.empty(shape, dtype=dtype)
        assert ewise.sparse.maximum(a, dense, out=out) is out
        assert torch.equal(out, torch.maximum(ad, dense))
    w = random(g, shape, dtype)
    want = w + ad
    assert ewise.sparse.accumulate("add", w, a) is w
    assert torch.equal(w, want)
    empty = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64),
                                    torch.zeros(0, dtype=dtype), shape, check_invariants=True)
    c = ewise.sparse.multiply(a, empty)
    assert_canonical(c, shape, dtype)
    assert c._nnz() == 0


def test_sparse_torch_layouts_and_errors():
    g = torch.Generator().manual_seed(SEED)
    a = random_torch_sparse(torch, g, (6, 5), torch.float64)
    for x in (a.to_sparse_csr(), a.to_sparse_csc()):  # read as COO, the result in x's layout
        for c, want in ((ewise.sparse.add(x, a), 2 * a.to_dense()),
                        (ewise.sparse.multiply(x, a), a.to_dense() ** 2),
                        (ewise.sparse.multiply(x, 2.5), 2.5 * a.to_dense()),
                        (ewise.sparse.multiply(x, torch.ones(5, dtype=torch.float64)),
                         a.to_dense())):
            assert c.layout is x.layout and c.dtype == torch.float64
            assert torch.equal(c.to_dense(), want)
    assert ewise.sparse.add(a, a.to_sparse_csr()).layout is torch.sparse_coo  # a's layout
    hybrid = torch.sparse_coo_tensor(a._indices(), torch.ones(a._nnz(), 3), (6, 5, 3))
    with pytest.raises(ValueError, match="2 sparse and 1 dense dimensions"):
        ewise.sparse.multiply(hybrid, hybrid)
    mixed = ewise.sparse.multiply(a, torch.ones(6, 5, dtype=torch.float32))  # promotes to f64
    assert mixed.dtype == torch.float64 and torch.equal(mixed.to_dense(), a.to_dense())
    bad = torch.sparse_coo_tensor(torch.tensor([[3, 1], [0, 0]]),
                                  torch.ones(2, dtype=torch.float64), (6, 5), is_coalesced=True,
                                  check_invariants=False)  # a false promise
    with pytest.raises(ValueError, match="canonical|increasing"):
        ewise.sparse.multiply(bad, a)
    with pytest.raises(TypeError, match="torch.sparse_coo"):
        ewise.torch.sparse_multiply(a.to_dense(), a.to_dense())


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_accumulate_embedding_gradient(device):
    """torch.nn.Embedding(sparse=True)'s gradient (a hybrid sparse_coo tensor, uncoalesced,
    duplicate ids) into a table, read without a copy: PyTorch's table.add_(grad) within
    rounding (its CPU kernel adds each occurrence in turn, ewise sums a row's occurrences first),
    and the same bits on both of ewise's backends."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    torch.manual_seed(SEED)
    emb = torch.nn.Embedding(1000, 16, sparse=True).to(device)
    ids = torch.randint(0, 1000, (64, 20), device=device) % 97  # repeated ids
    (emb(ids) ** 2).sum().backward()
    grad = emb.weight.grad
    assert grad.is_sparse and grad.sparse_dim() == 1 and not grad.is_coalesced()
    table = torch.randn(1000, 16, device=device)
    got = table.clone()
    assert ewise.sparse.accumulate("add", got, grad) is got
    torch.testing.assert_close(got, table.clone().add_(grad), rtol=1e-6, atol=1e-5)
    cpu = table.to("cpu", copy=True)
    ewise.sparse.accumulate("add", cpu, grad.cpu())
    assert torch.equal(got.cpu(), cpu)
    # coalesced: canonical, read in place; and a sparse vector (no dense dimension)
    again = table.clone()
    ewise.sparse.accumulate("add", again, grad.coalesce())
    torch.testing.assert_close(again, got, rtol=1e-6, atol=1e-5)
    vec = torch.sparse_coo_tensor(torch.tensor([[4, 2, 4]]), torch.tensor([1.0, 2.0, 3.0]),
                                  (10,)).to(device)
    dense = torch.zeros(10, device=device)
    ewise.sparse.accumulate("max", dense, vec)
    assert dense.tolist() == [0, 0, 2, 0, 4, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="dense has shape"):
        ewise.sparse.accumulate("add", torch.zeros(1000, 8, device=device), grad)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_union_of_embedding_gradients(device):
    """Two micro-batches' Embedding(sparse=True) gradients added (gradient accumulation): a
    coalesced hybrid sparse_coo tensor, (g1 + g2).coalesce() within rounding (PyTorch sums a
    row's occurrences in its own order), the same bits on both of ewise's backends; an empty
    operand, subtract, a RowSparse of torch tensors, and coalesce."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    torch.manual_seed(SEED)
    emb = torch.nn.Embedding(500, 8, sparse=True).to(device)
    grads = []
    for _ in range(2):
        emb.zero_grad()
        ids = torch.randint(0, 500, (32, 10), device=device) % 61
        (emb(ids) ** 2).sum().backward()
        grads.append(emb.weight.grad.clone())
    g1, g2 = grads
    got = ewise.sparse.add(g1, g2)
    assert got.layout is torch.sparse_coo and got.is_coalesced() and got.sparse_dim() == 1
    assert got.shape == g1.shape and got.device == g1.device
    want = (g1 + g2).coalesce()
    assert torch.equal(got._indices(), want._indices())
    torch.testing.assert_close(got._values(), want._values(), rtol=1e-6, atol=1e-6)
    cpu = ewise.sparse.add(g1.cpu(), g2.cpu())
    assert torch.equal(got._values().cpu(), cpu._values())
    diff = ewise.sparse.subtract(g1, g1.coalesce())
    assert torch.count_nonzero(diff._values().abs() > 1e-6) == 0
    empty = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0, 8),
                                    (500, 8)).to(device)
    alone = ewise.sparse.add(empty, g2)
    torch.testing.assert_close(alone.to_dense(), g2.to_dense(), rtol=1e-6, atol=1e-6)
    assert ewise.sparse.add(empty, empty)._nnz() == 0
    rows = ewise.sparse.maximum(ewise.sparse.RowSparse(g1._indices()[0], g1._values(), 500),
                                ewise.sparse.RowSparse(g2._indices()[0], g2._values(), 500))
    assert isinstance(rows, ewise.sparse.RowSparse) and isinstance(rows.values, torch.Tensor)
    assert rows.values.device == g1.device and rows.canonical
    # coalesce: of the hybrid gradient, and of a plain 2-D COO tensor (its format kept)
    c = ewise.sparse.coalesce(g1)
    assert c.is_coalesced() and torch.equal(c._indices(), g1.coalesce()._indices())
    torch.testing.assert_close(c._values(), g1.coalesce()._values(), rtol=1e-6, atol=1e-6)
    flat = torch.sparse_coo_tensor(torch.tensor([[2, 0, 2], [1, 1, 1]]),
                                   torch.tensor([1.0, 2.0, 3.0]), (3, 2)).to(device)
    cf = ewise.sparse.coalesce(flat)
    assert cf.is_coalesced() and cf._nnz() == 2 and cf.to_dense().tolist() == [[0, 2], [0, 0],
                                                                               [0, 4]]


def embedding_gradient(device):
    """An Embedding(300, 8, sparse=True) gradient on device: a hybrid tensor of 160 stored rows,
    their ids below 37 (duplicates), seeded."""
    torch.manual_seed(SEED)
    emb = torch.nn.Embedding(300, 8, sparse=True).to(device)
    (emb(torch.randint(0, 300, (16, 10), device=device) % 37) ** 2).sum().backward()
    return emb.weight.grad


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_row_scaling_of_embedding_gradients(device):
    """An Embedding(sparse=True) gradient times a per-row factor (nrows, 1), a table and a
    scalar: a coalesced hybrid tensor, g.coalesce()'s values times the factor at their rows,
    the same bits on both backends; a gradient that requires grad refused (not recorded)."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    g = embedding_gradient(device)
    c = g.coalesce()
    for factor in (torch.rand(300, 1, device=device), torch.rand(300, 8, device=device), 0.5):
        got = ewise.sparse.multiply(g, factor)
        assert got.layout is torch.sparse_coo and got.is_coalesced() and got.sparse_dim() == 1
        assert torch.equal(got._indices(), c._indices())
        f = factor if isinstance(factor, float) else factor[c._indices()[0]]
        torch.testing.assert_close(got._values(), c._values() * f, rtol=1e-6, atol=1e-6)
        cpu = ewise.sparse.multiply(g.cpu(), factor if isinstance(factor, float) else factor.cpu())
        assert torch.equal(got._values().cpu(), cpu._values())
    with pytest.raises(TypeError, match="autograd"):
        ewise.sparse.multiply(g, torch.rand(300, 1, device=device, requires_grad=True))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_conversions_of_embedding_gradients(device):
    """to_coo of an Embedding(sparse=True) gradient (a hybrid tensor, duplicated rows): a
    coalesced 2-D sparse_coo tensor with every column of each coalesced row, equal to the
    gradient's dense form; to_row_sparse of it (and of a plain 2-D COO tensor) a coalesced
    hybrid tensor with one sparse dimension, its rows back; the same bits on both backends."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    g = embedding_gradient(device)
    c = g.coalesce()
    m = ewise.sparse.to_coo(g)
    assert m.layout is torch.sparse_coo and m.is_coalesced() and m.sparse_dim() == 2
    assert m.shape == (300, 8) and m._nnz() == c._nnz() * 8 and m.device == g.device
    # (PyTorch's coalesce sums duplicates in an order of its own: close, not the same bits)
    torch.testing.assert_close(m._values(), c._values().reshape(-1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(m.to_dense(), c.to_dense(), rtol=1e-6, atol=1e-6)
    back = ewise.sparse.to_row_sparse(m)
    assert back.layout is torch.sparse_coo and back.is_coalesced() and back.sparse_dim() == 1
    assert torch.equal(back._indices(), c._indices())
    assert torch.equal(back._values(), m._values().reshape(-1, 8))
    flat = torch.sparse_coo_tensor(torch.tensor([[2, 0, 2], [1, 1, 0]]),
                                   torch.tensor([1.0, 2.0, 3.0]), (4, 2)).to(device)
    rows = ewise.sparse.to_row_sparse(flat)
    assert rows.sparse_dim() == 1 and rows._indices().tolist() == [[0, 2]]
    assert rows._values().tolist() == [[0.0, 2.0], [3.0, 1.0]]
    if device == "cuda":
        assert torch.equal(ewise.sparse.to_coo(g.cpu())._values(), m._values().cpu())


@pytest.mark.parametrize("dense_shape", [(5, 7), (7,), (5, 1), ()], ids=str)
def test_sparse_multiply_gradcheck(dense_shape):
    g = torch.Generator().manual_seed(SEED)
    a = random_torch_sparse(torch, g, (5, 7), torch.float64, nnz=12)  # with duplicates
    indices = a._indices()
    values = torch.randn(a._nnz(), generator=g, dtype=torch.float64, requires_grad=True)
    dense = torch.randn(dense_shape, generator=g, dtype=torch.float64, requires_grad=True)

    def fn(values, dense):
        x = torch.sparse_coo_tensor(indices, values, (5, 7), check_invariants=True)
        return ewise.sparse.multiply(x, dense).to_dense()

    assert torch.autograd.gradcheck(fn, (values, dense))
    with pytest.raises(ValueError, match="drop_zeros"):
        ewise.torch.sparse_multiply(a.detach().requires_grad_(), dense, drop_zeros=True)


# The extensions' fast paths for plain torch tensors: "python-api", _ewise.torch_binary
# (src/torch_binary.cpp), and "native", _ewise_torch.binary (src/torch_native.cpp, against
# libtorch) where the package was built with it. They take CUDA tensors only (None for CPU
# ones); each has a host form, the same path for CPU tensors on the CPU backend, so that their
# checks, reads and allocation are tested here. Every test of a path runs for both.
