"""ewise's interop layer: the arrays of each framework as ewise reads and makes them. Below the
API modules (ewise, ewise.sparse, ewise.torch), it imports none of them: only the extensions
(_ewise, _ewise_torch) and, lazily, the frameworks.

One module per framework (numpy.py, torch.py, cupy.py, jax.py, scipy.py), each with ADAPTERS:
instances of interface.Adapter by the framework names they serve, imported the first time an
object of that framework is met (never the framework itself: an object of it exists).
Here: the adapter of an object, a dense call's dtypes (types: the result dtype and promotion
rule of the first array's framework), the DLPack device checks, and Call (the device and stream
one call runs on). routes.py: the route of a plain dense call per framework."""
import importlib
import sys

from .. import _ewise
from .interface import KDL_CPU
from .numpy import OTHER

# The adapter module of each package an object's type may come from (jaxlib: JAX's arrays);
# the adapters of the packages met so far.
_MODULES = {"numpy": "numpy", "torch": "torch", "cupy": "cupy", "cupyx": "cupy", "jax": "jax",
            "jaxlib": "jax", "scipy": "scipy"}
_adapters = {}


def _load(package, x):
    """The adapter of x: its framework's, loaded once per package; for a package ewise does not
    know, decided object by object (such a package may hold torch tensors and other arrays, and
    torch may be imported later): torch's FOREIGN for a torch tensor (a subclass such as
    torchvision's tv_tensors: its negative bit must be read), else OTHER (a plain DLPack
    producer)."""
    module = _MODULES.get(package)
    if module is None:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            return importlib.import_module(".torch", __name__).FOREIGN
        return OTHER
    found = _adapters[package] = importlib.import_module(f".{module}", __name__).ADAPTERS[package]
    return found


def adapter(x):
    """The adapter of x's framework: the package its type comes from."""
    package = type(x).__module__.partition(".")[0]
    found = _adapters.get(package)
    return found if found is not None else _load(package, x)


def operand(x):
    """An input operand as ewise imports it (Adapter.operand)."""
    return adapter(x).operand(x)


def is_scalar(x):
    """True for the Python scalars a dense operand may be (weak in promotion, as NumPy 2 and
    PyTorch take them); NumPy's scalars are not (their adapter makes them 0-d arrays)."""
    return isinstance(x, (bool, int, float))


def _operand_type(x, rule):
    """(ewise dtype name, weight) of an operand under a promotion rule: a Python scalar's
    dtype (bool, i64, f64) and "weak"; an array's dtype and "tensor", or "zero_dim" for a 0-d
    tensor under PyTorch's rule (torch.result_type ranks those below tensors with dims)."""
    if isinstance(x, bool):
        return "bool", "weak"
    if isinstance(x, int):
        return "i64", "weak"
    if isinstance(x, float):
        return "f64", "weak"
    return adapter(x).dtype_name(x), "zero_dim" if rule == "torch" and not x.shape else "tensor"


_types = {}


def types(op, like, a, b):
    """(result dtype name, promotion rule) of op(a, b) (op by its C++ name; a and b operands,
    one at least an array) by the rule of like's framework (like: the first array), cached per
    op, framework and operand types. TypeError naming the dtypes where op is not defined for
    them."""
    found = adapter(like)
    key = (op, found, _operand_type(a, found.promotion), _operand_type(b, found.promotion))
    result = _types.get(key)
    if result is None:
        result = _types[key] = found.types(op, key[2], key[3])
    return result


def check_writable(x, what):
    adapter(x).check_writable(x, what)


def _device(x, what):
    """The operand's DLPack device (type, id)."""
    if not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"ewise: {what} is a {type(x).__name__}, not an array that exports "
                        "DLPack (NumPy, PyTorch, CuPy, JAX, ...)")
    device_type, device_id = x.__dlpack_device__()
    return int(device_type), int(device_id)


def _device_name(device):
    return "cpu" if device[0] == KDL_CPU else f"cuda:{device[1]}"


def check_devices(**operands):
    """Every operand on the first one's device (host and each GPU apart); returns that device."""
    devices = {what: _device(x, what) for what, x in operands.items()}
    first = next(iter(devices.values()))
    for what, device in devices.items():
        if (device[0] == KDL_CPU) != (first[0] == KDL_CPU) or (
                device[0] != KDL_CPU and device[1] != first[1]):
            where = ", ".join(f"{w} on {_device_name(d)}" for w, d in devices.items())
            raise ValueError(f"ewise: operands on different devices: {where}")
    return first


class Call:
    """Where one call runs, as a context: on the host, operands passed as they are; on a GPU,
    the operands' device made current and the stream the call runs on, as the DLPack protocol
    asks (consumers pass the stream they will use to __dlpack__, which orders the producer's
    pending work before it). `like`'s framework names that stream (its adapter's stream):
    PyTorch's and CuPy's current one, which ewise uses and never synchronizes; a framework with
    none (JAX) runs on the legacy default stream with `synchronize` set, for finish() to wait
    for the result before handing it to a framework that cannot wait on a stream.
    `stream_owner`: the Python object of the stream, kept alive with sparse results that are
    freed on it."""

    def __init__(self, like, device):
        self.device = device
        self.adapter = None
        self.stream = 0
        self.stream_owner = None
        self.synchronize = False
        self._context = None
        self._restore = None
        if device[0] == KDL_CPU:
            return
        self.adapter = adapter(like)
        current = self.adapter.stream(device[1])
        if current is None:
            self.synchronize = True
        else:
            self._context, self.stream_owner, self.stream = current

    def __enter__(self):
        if self._context is not None:
            self._context.__enter__()
        elif self.adapter is not None:
            self._restore = _ewise.set_device(self.device[1])
        return self

    def __exit__(self, *exc):
        if self._context is not None:
            return self._context.__exit__(*exc)
        if self.adapter is not None:
            _ewise.set_device(self._restore)
        return False

    def array(self, x):
        """x as the call imports it: a Python scalar as it is; an array as its adapter makes it
        for the host (host_view) or for the stream on a GPU (export)."""
        if is_scalar(x):
            return x
        return adapter(x).host_view(x) if self.adapter is None else adapter(x).export(x, self)

    def finish(self):
        """Waits for the call's stream when the producer cannot (see the class comment)."""
        if self.synchronize:
            _ewise.synchronize(self.stream)
