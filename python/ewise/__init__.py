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
import sys

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
    """The package an array comes from: "numpy", "torch", "cupy", "cupyx", "scipy", "jax"."""
    framework = type(x).__module__.partition(".")[0]
    return "jax" if framework == "jaxlib" else framework


def _array(x):
    """An input operand as ewise imports it: NumPy scalars (numpy.float32(2)) as 0-d arrays, a
    torch tensor with the negative bit (torch._neg_view) as a tensor of its values (DLPack
    exports the memory without the bit, so the values would arrive with the wrong sign);
    anything else as it is."""
    if isinstance(x, numpy.generic):
        return numpy.asarray(x)
    return x.resolve_neg() if _negative_view(x) else x


def _negative_view(x):
    """True for a torch tensor whose negative bit is set."""
    return type(x).__module__.startswith("torch") and x.is_neg()


def _device(x, what):
    """The operand's DLPack device (type, id)."""
    if not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"ewise: {what} is a {type(x).__name__}, not an array that exports "
                        "DLPack (NumPy, PyTorch, CuPy, JAX, ...)")
    device_type, device_id = x.__dlpack_device__()
    return int(device_type), int(device_id)


def _check_writable(x, what):
    """A read-only NumPy array, a JAX array or a torch tensor with the negative bit as `out` is
    a ValueError here, not a failed DLPack import or values of the wrong sign."""
    if isinstance(x, numpy.ndarray) and not x.flags.writeable:
        raise ValueError(f"ewise: {what} is a read-only array")
    if _framework(x) == "jax":
        raise ValueError(f"ewise: {what} is a JAX array, and JAX arrays are immutable: leave "
                         "out=None for a new one")
    if _negative_view(x):
        raise ValueError(f"ewise: {what} is a torch tensor with the negative bit set "
                         "(torch._neg_view): ewise writes memory as it is and cannot write "
                         "through the bit; pass a plain tensor (resolve_neg() copies)")


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


# NumPy's dtype names as ewise names them (JAX's bfloat16 is ml_dtypes', named so too).
_DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
                "int32": "i32", "int64": "i64"}


def _empty(like, shape, device):
    """An uninitialized array of `like`'s framework, dtype and device. JAX arrays are
    immutable: for them the array is ewise's own (host or GPU), made a JAX array by _jax_array
    once written."""
    framework = _framework(like)
    if framework == "torch":
        import torch
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if framework == "cupy":
        import cupy
        with like.device:
            return cupy.empty(shape, dtype=like.dtype)
    if framework == "jax":
        name = _DTYPE_NAMES.get(str(like.dtype))
        if name is None:
            raise TypeError(f"ewise: unsupported dtype {like.dtype}: ewise supports "
                            f"{', '.join(_DTYPE_NAMES)}")
        return _ewise.empty(name, list(shape), *device)
    if device[0] == _KDL_CPU:
        return numpy.empty(shape, dtype=numpy.from_dlpack(like).dtype if framework != "numpy"
                           else like.dtype)
    raise TypeError(f"ewise: cannot allocate a result like a {type(like).__name__} on the GPU "
                    "(PyTorch, CuPy and JAX are known): pass out=")


def _jax_array(result):
    """A result ewise allocated for a JAX operand (see _empty) as a JAX array, imported through
    DLPack (without a copy where JAX accepts the memory as it is)."""
    import jax.numpy
    return jax.numpy.from_dlpack(result)


class _GpuCall:
    """For CUDA operands: the device of the operands made current and the stream the call runs
    on, as the DLPack protocol asks (consumers pass the stream they will use to __dlpack__,
    which orders the producer's pending work before it). PyTorch and CuPy (cupyx) name their
    current stream, which ewise uses and never synchronizes; other producers (JAX) have none:
    their calls run on the legacy default stream and `synchronize` is set, for the caller to
    wait for the result before handing it to a framework that cannot wait on a stream.
    `stream_owner`: the Python object of the stream, kept alive with sparse results that are
    freed on it."""

    def __init__(self, like, device):
        framework = _framework(like)
        self.synchronize = False
        self._restore = None
        self._framework = framework
        if framework == "torch":
            import torch
            self._device = torch.cuda.device(device[1])
            self.stream_owner = torch.cuda.current_stream(device[1])
            self.stream = self.stream_owner.cuda_stream
        elif framework in ("cupy", "cupyx"):
            import cupy
            self._device = cupy.cuda.Device(device[1])
            with self._device:
                self.stream_owner = cupy.cuda.get_current_stream()
            self.stream = self.stream_owner.ptr
        else:
            self._device = None
            self.stream_owner = None
            self.stream = 0
            self.synchronize = True
        self._device_id = device[1]

    def __enter__(self):
        if self._device is not None:
            self._device.__enter__()
        else:
            self._restore = _ewise.set_device(self._device_id)
        return self

    def __exit__(self, *exc):
        if self._device is not None:
            return self._device.__exit__(*exc)
        _ewise.set_device(self._restore)
        return False

    def capsule(self, x):
        """x's DLPack capsule, ordered on the call's stream. DLPack's stream numbers: 1 is the
        legacy default stream (handle 0), 0 is not allowed. A plain torch tensor of a call on
        PyTorch's stream is passed as a view of its pointer (_torch_view). CuPy exports
        negative strides wrongly (it divides the byte stride by the item size as unsigned
        numbers: -2 bytes of float16 become 2^63 - 1 elements): such an array is passed as a
        view with the byte strides of its __cuda_array_interface__, ordered after CuPy's
        current stream by an event when the call runs on another stream."""
        if self._framework == "torch":
            parts = _torch_parts()
            if type(x) is parts[0] and not x.is_neg():
                view = _torch_view(x, parts[1], self._device_id)
                if view is not None:
                    return view
        if type(x).__module__.startswith("cupy") and any(s < 0 for s in x.strides):
            import cupy
            current = cupy.cuda.get_current_stream()
            if current.ptr != self.stream:
                cupy.cuda.ExternalStream(self.stream).wait_event(current.record())
            return _interface_view(x, x.__cuda_array_interface__, (2, self._device_id))
        return x.__dlpack__(stream=self.stream if self.stream != 0 else 1)

    def finish(self):
        """Waits for the call's stream when the producer cannot (see the class comment)."""
        if self.synchronize:
            _ewise.synchronize(self.stream)


# DLPack's (code, bits) of ewise's dtypes.
_DLPACK_DTYPES = {"f16": (2, 16), "bf16": (4, 16), "f32": (2, 32), "f64": (2, 64), "i32": (0, 32),
                  "i64": (0, 64)}


def _torch_view(x, names, device_id):
    """A DLPack-exporting view of a plain CUDA torch tensor on the call's stream (PyTorch's
    current one): its pointer, shape and strides as they are. PyTorch's own export with a
    stream costs 18.9 us a tensor on the H100 machines' host (a sparse call exports three to
    five), this view 1.0 us. None for a dtype ewise does not take (the DLPack export then
    reports it)."""
    name = names.get(x.dtype)
    if name is None:
        return None
    code, bits = _DLPACK_DTYPES[name]
    return _ewise.strided_view(x.data_ptr(), code, bits, list(x.shape), list(x.stride()), 2,
                               device_id, x)


# DLPack's dtype codes by NumPy's dtype kinds; bfloat16 (ml_dtypes' kind 'V') by its name.
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


def _interface_view(x, interface, device):
    """A DLPack-exporting view of x described by its array interface (__array_interface__ or
    __cuda_array_interface__: data pointer, typestr, shape, byte strides or None for C order)
    on `device` (DLPack type, id). The view keeps x alive."""
    dtype = numpy.dtype(interface["typestr"]) if x.dtype.name != "bfloat16" else x.dtype
    code = 4 if dtype.name == "bfloat16" else _DLPACK_CODES.get(dtype.kind, 3)
    shape = [int(n) for n in interface["shape"]]
    strides = interface.get("strides")
    if strides is None:  # C order
        strides, step = [], dtype.itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
    return _ewise.strided_view(interface["data"][0], code, dtype.itemsize * 8, shape,
                               [int(s) // dtype.itemsize for s in strides], device[0],
                               device[1], x)


# PyTorch's pieces for the torch tensor views of the general path (_GpuCall.capsule), taken
# once torch has been imported (ewise never imports it for a call that has no torch operand):
# the plain tensor type and its dtypes by ewise's names.
_torch_fast = None


def _torch_parts():
    global _torch_fast
    if _torch_fast is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        _torch_fast = (torch.Tensor, {getattr(torch, n): e for n, e in _DTYPE_NAMES.items()})
    return _torch_fast


# The fast path for plain CUDA torch tensors (see binary): _ewise_torch.binary, built against
# libtorch (src/torch_native.cpp), where the package has it and it imports with the torch of
# this process; else _ewise.torch_binary (src/torch_binary.cpp, through PyTorch's Python API,
# whose attribute reads and allocation put a small call about 5 us above torch.add's on an H100
# host). Chosen at the first call once torch is imported (ewise never imports torch), None
# until then; _torch_native_error: why _ewise_torch did not import.
_torch_binary = None
_torch_native_error = None


def _choose_torch_path():
    """The fast path's function: chosen once torch is imported; before, _ewise.torch_binary (no
    operand can be a torch tensor)."""
    global _torch_binary, _torch_native_error
    if "torch" not in sys.modules:
        return _ewise.torch_binary
    try:
        from . import _ewise_torch
        _torch_binary = _ewise_torch.binary
    except ImportError as e:  # not built, or built against another torch
        _torch_native_error = str(e)
        _torch_binary = _ewise.torch_binary
    return _torch_binary


def _torch_path(use=None):
    """Which fast path plain CUDA torch tensors take: "native" (_ewise_torch.binary, built
    against libtorch) or "python-api" (_ewise.torch_binary; also while torch is not imported).
    use="native" or "python-api" makes that path the one taken (the benchmark times both);
    "native" raises ImportError where _ewise_torch does not import."""
    global _torch_binary
    if use == "native":
        from . import _ewise_torch
        _torch_binary = _ewise_torch.binary
    elif use == "python-api":
        _torch_binary = _ewise.torch_binary
    elif use is not None:
        raise ValueError(f"ewise: unknown torch path {use!r}: expected 'native' or 'python-api'")
    fast = _torch_binary or _choose_torch_path()
    return "python-api" if fast is _ewise.torch_binary else "native"


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting. op: "add", "sub", "mul", "div", "minimum" ("min"),
    "maximum" ("max"). kernel: a name from kernels() (GPU; checked, not run, on the CPU).
    Returns out, allocated like a when None (for JAX operands, a new JAX array). A torch
    operand that requires a gradient (grad mode on) takes ewise.torch.binary, which autograd
    records."""
    op = _op(op)
    # Plain CUDA torch tensors with no gradient to record, on one device: checked, allocated
    # and run in an extension (_torch_path) on PyTorch's current stream; None when the call
    # needs the path below, which gives every error its message.
    result = (_torch_binary or _choose_torch_path())(op, a, b, out, kernel)
    if result is not None:
        return result
    a, b = _array(a), _array(b)
    if type(a) is not numpy.ndarray and (getattr(a, "requires_grad", False)
                                         or getattr(b, "requires_grad", False)):
        import torch
        if torch.is_grad_enabled():  # recorded for autograd (DLPack would refuse the tensor)
            from .torch import binary as differentiable
            return differentiable(op, a, b, out=out, kernel=kernel)
    operands = {"a": a, "b": b} if out is None else {"a": a, "b": b, "out": out}
    device = _check_devices(**operands)
    if out is not None:
        _check_writable(out, "out")
    result = out if out is not None else _empty(
        a, tuple(_ewise.broadcast_shape(tuple(a.shape), tuple(b.shape))), device)
    if device[0] == _KDL_CPU:
        _ewise.binary(op, a, b, result, kernel, 0)
    else:
        with _GpuCall(a, device) as call:
            _ewise.binary(op, call.capsule(a), call.capsule(b), call.capsule(result), kernel,
                          call.stream)
            call.finish()
    return result if out is not None or _framework(a) != "jax" else _jax_array(result)


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


def __getattr__(name):
    """ewise.torch is imported on first use (it imports torch)."""
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'ewise' has no attribute {name!r}")
