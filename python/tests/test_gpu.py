"""ewise on CUDA arrays from PyTorch, CuPy and JAX, dense: results of the producer's framework,
on its current stream (checked by queueing work behind a long kernel on a side stream), without
device synchronization, and the device checks. Sparse results and ewise.torch's autograd and
torch.compile on CUDA: test_gpu_sparse.py. Fixtures: gpu_frameworks.py.
"""
import numpy as np
import pytest

import ewise
from gpu_frameworks import (LONG_KERNEL_CYCLES, NATIVE_BUILT, NOT_BUILT, cupy, jax,  # noqa: F401
                            torch, torch_path)


def test_torch_native_path_is_active(torch):
    """Where the package has _ewise_torch, it imports with this torch and ewise.binary takes it."""
    if not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    assert ewise.routes()["torch"] == "libtorch", ewise._interop.torch.libtorch_error


def test_torch_dense(torch):
    dtypes = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
              torch.int64]
    for dtype in dtypes:
        a = torch.arange(48, device="cuda").reshape(6, 8).to(dtype)
        b = torch.arange(1, 9, device="cuda").to(dtype)
        for name, fn in [("add", torch.add), ("mul", torch.mul), ("maximum", torch.maximum)]:
            got = getattr(ewise, name)(a.t().contiguous().t(), b)  # strided a, broadcast b
            assert isinstance(got, torch.Tensor) and got.device == a.device
            assert torch.equal(got, fn(a, b))


def test_torch_stream_out_and_in_place(torch, torch_path):
    a = torch.randn(512, 256, device="cuda")
    b = torch.randn(256, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # runs on the producer's current stream
        c = ewise.sub(a, b)
        out = torch.empty_like(a)
        assert ewise.sub(a, b, out=out) is out
        d = a.clone()
        ewise.sub(d, b, out=d)
    s.synchronize()
    for x in (c, out, d):
        assert torch.equal(x, a - b)


def test_torch_tensors_of_every_layout(torch, torch_path):
    """Plain torch CUDA tensors through each fast path (torch_path): strided, transposed,
    sliced (storage offsets), expanded (stride 0) and empty operands, out= and in place, every
    dtype, against torch's own result; the errors are the general path's."""
    g = torch.Generator(device="cuda").manual_seed(5)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
                  torch.int64):
        def rand(*shape):
            x = torch.randint(-8, 9, shape, generator=g, device="cuda").to(dtype)
            return torch.where(x == 0, torch.ones_like(x), x)  # no division by zero
        a = rand(37, 65)
        cases = [(a, rand(37, 65)), (a.t(), rand(65, 37)), (a[3:, 1::2], rand(32)),
                 (a[:, :1].expand(37, 9), rand(1, 9)), (rand(5, 1, 7), rand(6, 1)),
                 (rand(0, 4), rand(4)), (rand(2, 3)[1], rand(1))]
        for x, y in cases:
            for name, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
                             ("maximum", torch.maximum)]:
                want = fn(x, y)
                got = getattr(ewise, name)(x, y)
                assert got.dtype == dtype and torch.equal(got, want), (name, dtype, x.shape)
                out = torch.full_like(want, 7)
                assert getattr(ewise, name)(x, y, out=out) is out and torch.equal(out, want)
        x, y = rand(37, 65), rand(65)
        want = x * y
        assert ewise.mul(x, y, out=x) is x and torch.equal(x, want)  # in place
    base = torch.ones(30, device="cuda")
    a = base[:20].view(4, 5)
    wide = torch.ones(5, device="cuda", dtype=torch.float64)
    assert torch.equal(ewise.add(a, wide), a + wide)  # mixed dtypes: torch's float64
    with pytest.raises(ValueError, match="broadcast"):
        ewise.add(a, torch.ones(3, device="cuda"))
    with pytest.raises(ValueError, match="partially overlaps"):
        ewise.add(a, a, out=base[1:21].view(4, 5))
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, torch.ones(5))
    assert torch.equal(base, torch.ones(30, device="cuda"))  # nothing written


def test_torch_mixed_dtypes_and_scalars(torch):
    """Mixed dtypes and Python scalars on CUDA tensors (the general path, which converts in the
    kernel): torch's result dtype and values, in place with a wider operand (x_bf16 += y_f32),
    a bool mask times a Python float."""
    g = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(64, 33, generator=g, device="cuda").bfloat16()
    y = torch.randn(33, generator=g, device="cuda")
    mask = torch.rand(64, 33, generator=g, device="cuda") > 0.5
    cases = [(ewise.add(x, y), x + y), (ewise.multiply(x, 0.5), x * 0.5),
             (ewise.subtract(2, x), 2 - x), (ewise.less(x, y), x < y),
             (ewise.add(x.int(), 2.5), x.int() + 2.5), (ewise.multiply(mask, -1e9), mask * -1e9),
             (ewise.divide(x.int(), x.int() + 100), x.int() / (x.int() + 100)),
             (ewise.floor_divide(x.long(), 3), x.long() // 3)]
    for i, (got, want) in enumerate(cases):
        assert got.dtype == want.dtype and torch.equal(got, want), i
    z = x.clone()
    assert ewise.add(z, y, out=z) is z and torch.equal(z, (x + y).bfloat16())


def test_torch_device_checks(torch):
    a = torch.ones(4, device="cuda")
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, a, out=torch.empty(4))
    with pytest.raises(TypeError, match="unsupported dtype"):
        ewise.add(a.to(torch.complex64), a.to(torch.complex64))


def test_torch_fast_path(torch, torch_path):
    """A fast path for plain CUDA torch tensors: taken (not None) for every dtype and layout, and
    its results against torch's and the python-api path's: values, dtype, shape, the result's
    layout (empty_like of the operand whose shape it has), out= and in place."""
    fast = torch_path
    g = torch.Generator(device="cuda").manual_seed(7)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.int64):
        def rand(*shape):
            return torch.randint(-8, 9, shape, generator=g, device="cuda").to(dtype)
        a = rand(64, 64)
        cases = [(a, rand(64)), (a, rand(64, 64)), (rand(64), a), (a.t(), rand(64, 64)),
                 (a.t(), rand(64)), (a[1:, ::2], rand(32)), (a[:, :1].expand(64, 9), rand(9)),
                 (rand(5, 1, 7), rand(6, 1)), (rand(0, 4), rand(4)), (rand(), rand())]
        for x, y in cases:
            want = torch.add(x, y)
            got = fast("add", x, y, None, None)
            assert got is not None, (dtype, x.shape, y.shape)
            assert got.dtype == dtype and got.shape == want.shape and got.device == x.device
            assert torch.equal(got, want), (dtype, x.shape, y.shape)
            like = x if got.shape == x.shape else y if got.shape == y.shape else None
            if like is not None:
                assert got.stride() == torch.empty_like(like).stride()
            assert got.stride() == ewise._ewise.torch_binary("add", x, y, None, None).stride()
            out = torch.full_like(want, 7)
            assert fast("max", x, y, out, None) is out
            assert torch.equal(out, torch.maximum(x, y))
            assert ewise.sub(x, y, out=out) is out and torch.equal(out, x - y)
        x, y = rand(64, 64), rand(64)
        want = x * y
        assert fast("mul", x, y, x, None) is x and torch.equal(x, want)  # in place


def test_torch_fast_path_grad_and_declines(torch, torch_path):
    """Tensors that require a gradient take the fast path under no_grad and ewise.torch's
    autograd otherwise; CPU operands, subclasses, negative views and an out the result does not
    cast to are declined (None); mixed dtypes and Python scalars are not."""
    fast = torch_path
    a = torch.randn(64, 64, device="cuda", requires_grad=True)
    b = torch.randn(64, device="cuda")
    with torch.no_grad():
        got = fast("add", a, b, None, None)
        assert got is not None and not got.requires_grad and torch.equal(got, a + b)
        assert torch.equal(ewise.add(a, b), a + b)
    assert fast("add", a, b, None, None) is None
    got = ewise.add(a, b)
    assert got.grad_fn is not None
    got.sum().backward()
    assert torch.equal(a.grad, torch.ones_like(a))
    x = a.detach()
    for y, out in [(b.cpu(), None), (b, x.cpu()), (torch.nn.Parameter(b), None),
                   (torch._neg_view(b), None), (b, torch.empty_like(x, dtype=torch.int32))]:
        assert fast("add", x, y, out, None) is None
    # mixed dtypes, Python scalars and an out the result casts to run fast, as torch computes
    for y in (b.double(), b.to(torch.uint8), 2.5, 3, True):
        got, want = fast("add", x, y, None, None), x + y
        assert got is not None and got.dtype == want.dtype and torch.equal(got, want)
    out = torch.empty_like(x, dtype=torch.float64)
    assert fast("add", x, b, out, None) is out and torch.equal(out, (x + b).double())


def test_torch_fast_path_devices(torch, torch_path):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs (operands on different devices)")
    fast = torch_path
    a = torch.ones(64, 64, device="cuda:0")
    b1 = torch.ones(64, device="cuda:1")
    assert fast("add", a, b1, None, None) is None
    assert fast("add", a, a, torch.empty(64, 64, device="cuda:1"), None) is None
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, b1)
    # a call on device 1 while device 0 is current: the result on device 1, on its stream, and
    # device 0 current again after it (inside the block: what the process had current before it
    # is not this test's, e.g. Dask's client leaves a worker's device current after a transfer)
    a1 = torch.full((64, 64), 2.0, device="cuda:1")
    with torch.cuda.device(0):
        got = fast("add", a1, b1, None, None)
        assert torch.cuda.current_device() == 0
    assert got is not None and got.device == a1.device and torch.equal(got, a1 + b1)


def test_cupy_dense(cupy):
    """Negative strides included: CuPy's DLPack export gets them wrong (ewise reads them from
    __cuda_array_interface__), so the reference is NumPy's, on the host copies."""
    for dtype in (cupy.float16, cupy.float32, cupy.float64, cupy.int32, cupy.int64):
        a = cupy.arange(48, dtype=dtype).reshape(6, 8)
        b = cupy.arange(1, 9, dtype=dtype)
        got = ewise.maximum(a[:, ::-1], b)
        assert isinstance(got, cupy.ndarray)
        np.testing.assert_array_equal(got.get(), np.maximum(a.get()[:, ::-1], b.get()),
                                      strict=True)
        got = ewise.sub(a[::-2, 1::3], b[::-3])  # negative strides on both operands
        np.testing.assert_array_equal(got.get(), a.get()[::-2, 1::3] - b.get()[::-3],
                                      strict=True)
        out = cupy.zeros((6, 8), dtype=dtype)
        ewise.add(a, b, out=out[::-1, ::-1])  # and on out
        np.testing.assert_array_equal(out.get()[::-1, ::-1], a.get() + b.get(), strict=True)
    a, b = cupy.arange(-24, 24, dtype=cupy.int32).reshape(6, 8), cupy.ones(8, cupy.float32)
    for got, want in [(ewise.add(a, b), np.add(a.get(), b.get())),  # NumPy 2's float64
                      (ewise.multiply(b, 0.5), b.get() * 0.5),        # weak: float32
                      (ewise.less(a, 3), a.get() < 3)]:
        assert isinstance(got, cupy.ndarray)
        np.testing.assert_array_equal(got.get(), want, strict=True)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.random.standard_normal((300, 200), dtype=cupy.float32)
        c = ewise.mul(a.T, a.T)
    s.synchronize()
    assert (c == a.T * a.T).all()
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, np.ones((300, 200), np.float32))


def test_torch_current_stream_without_synchronizing(torch, torch_path):
    """Work queued on a side stream behind a long kernel (plain tensors: each fast path,
    torch_path): ewise must run after it on that stream (else it reads b before the fill),
    allocating, into out= and in place, and return while the kernel still runs."""
    a = torch.randn(1024, 512, device="cuda")
    b = torch.zeros(512, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(LONG_KERNEL_CYCLES)
        b.fill_(3.0)
        c = ewise.add(a, b)
        out = torch.empty_like(a)
        assert ewise.mul(a, b, out=out) is out
        d = a.clone()
        ewise.sub(d, b, out=d)  # in place
        assert not s.query(), "ewise synchronized the stream of a dense call"
    s.synchronize()
    assert torch.equal(c, a + 3.0) and torch.equal(out, a * 3.0) and torch.equal(d, a - 3.0)


def test_jax_on_gpu(jax):
    """JAX arrays on the GPU in and out: ewise allocates, runs on the legacy default stream,
    waits for it (JAX does not share a stream), and JAX imports the result."""
    jnp = jax.numpy
    gpu = jax.devices("gpu")[0]
    a = jax.device_put(jnp.arange(48, dtype=jnp.float32).reshape(6, 8), gpu)
    b = jax.device_put(jnp.arange(1, 9, dtype=jnp.float32), gpu)
    for name, fn in [("add", jnp.add), ("mul", jnp.multiply), ("maximum", jnp.maximum)]:
        got = getattr(ewise, name)(a, b)
        assert isinstance(got, jax.Array) and got.devices() == {gpu}
        np.testing.assert_array_equal(np.asarray(got), np.asarray(fn(a, b)))
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, np.ones(8, np.float32))
