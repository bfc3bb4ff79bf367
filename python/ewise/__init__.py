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
C++ library's. Sparse matrices: ewise.sparse.
"""
import numpy

from . import _ewise

__all__ = ["add", "sub", "mul", "div", "minimum", "maximum", "binary", "gpu_available",
           "kernels", "sparse"]

# The ops by the names the Python API accepts: NumPy's for min and max, the C++ ones too.
_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "min": "min", "max": "max",
        "minimum": "min", "maximum": "max"}

_KDL_CPU = 1  # DLPack kDLCPU; every other device type ewise takes is a CUDA one


def gpu_available():
    """True when ewise can use a CUDA device."""
    return _ewise.gpu_available()


def kernels():
    """The names `kernel=` accepts (see the README, "Dense kernels")."""
    return list(_ewise.kernels())


def _op(op):
    try:
        return _OPS[op]
    except (KeyError, TypeError):
        raise ValueError(f"ewise: unknown op {op!r}: expected one of {sorted(_OPS)}") from None


def _framework(x):
    return type(x).__module__.partition(".")[0]


def _array(x):
    """NumPy scalars (numpy.float32(2)) as 0-d arrays; anything else as it is."""
    return numpy.asarray(x) if isinstance(x, numpy.generic) else x


def _device(x, what):
    """The operand's DLPack device (type, id)."""
    if not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"ewise: {what} is a {type(x).__name__}, not an array that exports "
                        "DLPack (NumPy, PyTorch, CuPy, ...)")
    device_type, device_id = x.__dlpack_device__()
    return int(device_type), int(device_id)


def _check_writable(x, what):
    """A read-only NumPy array as `out` is a ValueError here, not a failed DLPack import."""
    if isinstance(x, numpy.ndarray) and not x.flags.writeable:
        raise ValueError(f"ewise: {what} is a read-only array")


def _device_name(device):
    return "cpu" if device[0] == _KDL_CPU else f"cuda:{device[1]}"


def _check_devices(**operands):
    """Every operand on the first one's device (host and each GPU apart); returns that device."""
    devices = {what: _device(x, what) for what, x in operands.items()}
    first = next(iter(devices.values()))
    for what, device in devices.items():
        if (device[0] == _KDL_CPU) != (first[0] == _KDL_CPU) or (
                device[0] != _KDL_CPU and device[1] != first[1]):
            where = ", ".join(f"{w} on {_device_name(d)}" for w, d in devices.items())
            raise ValueError(f"ewise: operands on different devices: {where}")
    return first


def _empty(like, shape, device):
    """An uninitialized array of `like`'s framework, dtype and device."""
    framework = _framework(like)
    if framework == "torch":
        import torch
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if framework == "cupy":
        import cupy
        with like.device:
            return cupy.empty(shape, dtype=like.dtype)
    if device[0] == _KDL_CPU:
        return numpy.empty(shape, dtype=numpy.from_dlpack(like).dtype if framework != "numpy"
                           else like.dtype)
    raise TypeError(f"ewise: cannot allocate a result like a {type(like).__name__} on the GPU "
                    "(PyTorch and CuPy are known): pass out=")


class _GpuCall:
    """For CUDA operands: the producer's device made current and its current stream, as the
    DLPack protocol asks (consumers pass the stream they will use to __dlpack__, which orders
    the producer's pending work before it)."""

    def __init__(self, like):
        framework = _framework(like)
        if framework == "torch":
            import torch
            self._device = torch.cuda.device(like.device)
            self.stream = torch.cuda.current_stream(like.device).cuda_stream
        elif framework == "cupy":
            import cupy
            self._device = like.device
            with like.device:
                self.stream = cupy.cuda.get_current_stream().ptr
        else:
            raise TypeError(f"ewise: a {type(like).__name__} on the GPU: only PyTorch and CuPy "
                            "arrays tell ewise their stream")

    def __enter__(self):
        self._device.__enter__()
        return self

    def __exit__(self, *exc):
        return self._device.__exit__(*exc)

    def capsule(self, x):
        # DLPack's stream numbers: 1 is the legacy default stream (handle 0), 0 is not allowed.
        return x.__dlpack__(stream=self.stream if self.stream != 0 else 1)


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting. op: "add", "sub", "mul", "div", "minimum" ("min"),
    "maximum" ("max"). kernel: a name from kernels() (GPU; checked, not run, on the CPU).
    Returns out, allocated like a when None."""
    op = _op(op)
    a, b = _array(a), _array(b)
    operands = {"a": a, "b": b} if out is None else {"a": a, "b": b, "out": out}
    device = _check_devices(**operands)
    if out is not None:
        _check_writable(out, "out")
    if out is None:
        out = _empty(a, tuple(_ewise.broadcast_shape(tuple(a.shape), tuple(b.shape))), device)
    if device[0] == _KDL_CPU:
        _ewise.binary(op, a, b, out, kernel, 0)
    else:
        with _GpuCall(a) as call:
            _ewise.binary(op, call.capsule(a), call.capsule(b), call.capsule(out), kernel,
                          call.stream)
    return out


def add(a, b, out=None, kernel=None):
    """a + b (see binary)."""
    return binary("add", a, b, out=out, kernel=kernel)


def sub(a, b, out=None, kernel=None):
    """a - b (see binary)."""
    return binary("sub", a, b, out=out, kernel=kernel)


def mul(a, b, out=None, kernel=None):
    """a * b (see binary)."""
    return binary("mul", a, b, out=out, kernel=kernel)


def div(a, b, out=None, kernel=None):
    """a / b (see binary; integers truncate, x / 0 is 0)."""
    return binary("div", a, b, out=out, kernel=kernel)


def minimum(a, b, out=None, kernel=None):
    """Element-wise minimum, NaN propagating, as numpy.minimum (see binary)."""
    return binary("min", a, b, out=out, kernel=kernel)


def maximum(a, b, out=None, kernel=None):
    """Element-wise maximum, NaN propagating, as numpy.maximum (see binary)."""
    return binary("max", a, b, out=out, kernel=kernel)


from . import sparse  # noqa: E402  (sparse uses the helpers above)
