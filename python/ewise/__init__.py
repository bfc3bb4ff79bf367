"""ewise: element-wise operations on dense arrays and sparse COO matrices.

Dense operations take any arrays that export DLPack (NumPy, PyTorch, CuPy, ...), with any
strides, and broadcast as NumPy does. Operands share one dtype: float16, bfloat16, float32,
float64, int32 or int64 (there is no type promotion). Host arrays run on ewise's CPU backend,
CUDA arrays on the GPU on the producer's current stream, without synchronizing. The result is
an array of the first operand's framework (NumPy for a host producer ewise does not know), or
`out`, which may be an operand (in place).

    ewise.add(a, b)                      # a + b, broadcast
    ewise.maximum(a, b, out=a)           # in place
    ewise.binary("mul", a, b, kernel="tiled")

Errors: ValueError for invalid arguments (shapes, dtypes that differ, overlapping out, mixed
devices), TypeError for an unsupported dtype, RuntimeError for CUDA errors; the message is the
C++ library's. Sparse matrices: ewise.sparse; PyTorch operators: ewise.torch. routes() names
the route a plain call takes for each framework.

The package in layers (docs/design.md, "Python binding"): the API modules (this one, sparse,
torch) over the calls (_dense, _sparse) over the interop layer (_interop: each framework's
arrays, devices, streams and results) over the extensions (_ewise, _ewise_torch).
"""
from . import _dense, _ewise, _ops, sparse
from ._interop import routes as _routes

__all__ = ["add", "sub", "mul", "div", "minimum", "maximum", "binary", "gpu_available",
           "kernels", "routes", "sparse"]


def gpu_available():
    """True when ewise can use a CUDA device."""
    return _ewise.gpu_available()


def kernels():
    """The names `kernel=` accepts (see the README, "Dense kernels")."""
    return list(_ewise.kernels())


def routes():
    """The route a plain dense call takes, by framework: "dlpack" (the general path: DLPack in,
    the framework's array out) for "numpy", "cupy" and "jax"; for "torch", the extension that
    runs a call on plain CUDA tensors: "libtorch" (ewise._ewise_torch, built against libtorch,
    where it imports with this torch) or "python-api" (through PyTorch's Python API). torch's
    is chosen the first time ewise meets torch (ewise never imports it): None until then."""
    return _routes.names()


def _differentiable(op, a, b, out, kernel):
    """binary recorded for autograd (ewise.torch, imported on first use: it imports torch)."""
    from .torch import binary as differentiable
    return differentiable(op, a, b, out=out, kernel=kernel)


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting. op: "add", "sub", "mul", "div", "minimum" ("min"),
    "maximum" ("max"). kernel: a name from kernels() (GPU; checked, not run, on the CPU).
    Returns out, allocated like a when None (for JAX operands, a new JAX array). A torch
    operand that requires a gradient (grad mode on) takes ewise.torch.binary, which autograd
    records."""
    return _dense.call(_ops.op(op), a, b, out, kernel, _differentiable)


def _function(op):
    def function(a, b, out=None, kernel=None):
        return _dense.call(op, a, b, out, kernel, _differentiable)
    return function


_ops.define(globals(), _function)


def __getattr__(name):
    """ewise.torch is imported on first use (it imports torch)."""
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'ewise' has no attribute {name!r}")
