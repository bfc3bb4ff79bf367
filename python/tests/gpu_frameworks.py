"""The GPU frameworks the GPU tests use (test_gpu.py, test_gpu_sparse.py) as pytest fixtures:
each skips with the reason when its framework, or a GPU, is missing; with EWISE_REQUIRE_GPU=1 (GPU
machines) it fails instead. torch_path makes each fast route for plain CUDA torch tensors the one
ewise takes."""
import importlib
import importlib.util
import os

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
        if framework == "jax":
            try:
                module.devices("gpu")
            except RuntimeError as e:  # no GPU backend (a CPU-only jaxlib)
                reason = f"JAX sees no GPU ({e})"
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


@pytest.fixture
def jax():
    return require("jax")


# The two fast paths for plain CUDA torch tensors (test_torch_routes.py has their CPU tests): python-api
# (_ewise.torch_binary) and native (_ewise_torch.binary, where the package was built with it).
NATIVE_BUILT = importlib.util.find_spec("ewise._ewise_torch") is not None
NOT_BUILT = "ewise._ewise_torch was not built (EWISE_TORCH_NATIVE, python/CMakeLists.txt)"


@pytest.fixture(params=["python-api", "native"])
def torch_path(request, torch):
    """Each fast path made the one ewise.binary takes for the test; yields its function. The
    path chosen before is restored after."""
    if request.param == "native" and not NATIVE_BUILT:
        pytest.skip(NOT_BUILT)
    ewise.routes()  # ewise's own choice first, restored after
    before = ewise._interop.routes.torch
    ewise._interop.routes.torch = (ewise._ewise.torch_binary if request.param == "python-api"
                                   else importlib.import_module("ewise._ewise_torch").binary)
    yield ewise._interop.routes.torch
    ewise._interop.routes.torch = before


# torch.cuda._sleep's cycles: about 0.5 s on an H100 (1.98 GHz boost), long enough for every
# call of a test to return while the kernel still runs.
LONG_KERNEL_CYCLES = 1_000_000_000
