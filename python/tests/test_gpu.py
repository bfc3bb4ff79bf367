"""ewise on CUDA arrays from PyTorch and CuPy: results of the producer's framework, on its
current stream, and the device checks. Each framework's tests skip with the reason when it, or
a GPU, is missing; with EWISE_REQUIRE_GPU=1 (GPU machines) they fail instead.
"""
import importlib
import os

import numpy as np
import pytest

import ewise


def require(framework):
    """The framework module when it and a GPU can be used; else skip (or fail, see above)."""
    reason = None
    try:
        module = importlib.import_module(framework)
    except ImportError:
        reason = f"{framework} is not installed"
    else:
        if framework == "torch" and not module.cuda.is_available():
            reason = "torch sees no CUDA device"
        if framework == "cupy":
            try:
                module.cuda.runtime.getDeviceCount()
            except Exception as e:  # CuPy raises its CUDARuntimeError without a device
                reason = f"CuPy sees no CUDA device ({e})"
    if reason is None and not ewise.gpu_available():
        reason = "ewise sees no CUDA device"
    if reason is not None:
        if os.environ.get("EWISE_REQUIRE_GPU") == "1":
            pytest.fail(f"EWISE_REQUIRE_GPU=1 but {reason}")
        pytest.skip(reason)
    return module


@pytest.fixture
def torch():
    return require("torch")


@pytest.fixture
def cupy():
    return require("cupy")


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


def test_torch_stream_out_and_in_place(torch):
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


def test_torch_device_checks(torch):
    a = torch.ones(4, device="cuda")
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, a, out=torch.empty(4))
    with pytest.raises(TypeError, match="unsupported dtype"):
        ewise.add(a.to(torch.complex64), a.to(torch.complex64))


def test_cupy_dense(cupy):
    for dtype in (cupy.float16, cupy.float32, cupy.float64, cupy.int32, cupy.int64):
        a = cupy.arange(48, dtype=dtype).reshape(6, 8)
        b = cupy.arange(1, 9, dtype=dtype)
        got = ewise.maximum(a[:, ::-1], b)
        assert isinstance(got, cupy.ndarray)
        assert (got == cupy.maximum(a[:, ::-1], b)).all()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.random.standard_normal((300, 200), dtype=cupy.float32)
        c = ewise.mul(a.T, a.T)
    s.synchronize()
    assert (c == a.T * a.T).all()
    with pytest.raises(ValueError, match="different devices"):
        ewise.add(a, np.ones((300, 200), np.float32))
