"""ewise: element-wise operations on dense arrays and sparse COO matrices.

Dense operations take any arrays that export DLPack (NumPy, PyTorch, CuPy, ...), with any
strides, and Python scalars, and broadcast as NumPy does. NumPy's binary operations by NumPy's
names (add, subtract, ..., bitwise_xor; the short names sub, mul, div, min, max as aliases) on
operands of any of bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16,
bfloat16, float32 and float64, mixed: the result dtype is the first array's framework's (NumPy 2
for NumPy and CuPy, torch.result_type for PyTorch, JAX's own for JAX; Python scalars are weak),
computed in one pass, the operands converted inside the kernel. Host arrays run on ewise's CPU
backend, CUDA arrays on the GPU on the producer's current stream, without synchronizing. The
result is an array of the first array's framework (NumPy for a host producer ewise does not
know), or `out`, which may be an operand (in place) of any dtype the result casts to under
NumPy's casting="same_kind".

    ewise.add(a, b)                      # a + b, broadcast
    ewise.multiply(x, 0.5)               # a Python scalar: x's dtype
    ewise.maximum(a, b, out=a)           # in place
    ewise.binary("less", a, b, kernel="general")   # bool

Errors: TypeError for dtypes an operation or out= does not take (naming them) and unsupported
dtypes, OverflowError for a Python integer the operation's dtype cannot hold (NumPy's rule),
ValueError for other invalid arguments (shapes, overlapping out, mixed devices),
RuntimeError for CUDA errors; the message is the C++ library's. Sparse matrices: ewise.sparse;
PyTorch operators: ewise.torch; dense or COO for a shape or a matrix: compare(). routes() names the route a plain call takes for each
framework.

The package in layers (docs/design.md, "Python binding"): the API modules (this one, sparse,
torch) over the calls (_dense, _sparse) over the interop layer (_interop: each framework's
arrays, devices, streams and results) over the extensions (_ewise, _ewise_torch).
"""
from . import _runtime  # the CUDA runtime first, where a wheel holds it

try:
    from . import _ewise
except ImportError as e:
    raise (_runtime.missing(e) or e) from e
from . import _dense, _ops, sparse
from ._compare import compare
from ._interop import routes as _routes

__all__ = [*_ops.NAMES, "binary", "compare", "gpu_available", "gpu_unavailable_reason", "kernels",
           "routes", "sparse"]


def gpu_available():
    """True when ewise can use a CUDA device."""
    return _ewise.gpu_available()


def gpu_unavailable_reason():
    """Why ewise can use no CUDA device (no driver, no GPU, a build without CUDA); "" when it can."""
    return _ewise.gpu_unavailable_reason()


def kernels():
    """The names `kernel=` accepts (see the README, "Dense kernels")."""
    return list(_ewise.kernels())


def routes():
    """The route a plain dense call takes, by framework: "buffer" for "numpy" (plain arrays read
    through the buffer protocol in C++, anything else the general path), "dlpack" (the general
    path: DLPack in, the framework's array out) for "cupy" and "jax"; for "torch", the extension that
    runs a call on plain CUDA tensors: "libtorch" (ewise._ewise_torch, built against libtorch,
    where it imports with this torch) or "python-api" (through PyTorch's Python API). torch's
    is chosen the first time ewise meets torch (ewise never imports it): None until then."""
    return _routes.names()


def _differentiable(op, a, b, out, kernel):
    """binary recorded for autograd (ewise.torch, imported on first use: it imports torch)."""
    from .torch import binary as differentiable
    return differentiable(op, a, b, out=out, kernel=kernel)


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting. op: an operation's NumPy name ("add", "subtract", ...,
    "bitwise_xor") or a short alias ("sub", "mul", "div", "min", "max"). a, b: arrays or Python
    scalars (bool, int, float; one at least an array). kernel: a name from kernels() (GPU;
    checked, not run, on the CPU). Returns out, allocated like the first array when None, of
    its framework's result dtype (for JAX operands, a new JAX array). A torch operand that
    requires a gradient (grad mode on) takes ewise.torch.binary, which autograd records."""
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
