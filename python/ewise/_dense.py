"""The dense call, under the dense API (ewise.binary) and the PyTorch operators (ewise.torch):
the framework's route for a plain call (_interop.routes: torch's; NumPy's arrays through
_ewise.numpy_binary, their buffers read in C++), else the general path through DLPack,
which takes every operand kind, promotes by the first array's framework and gives every error
its message. Dask arrays: _dask, a lazy Dask array whose blocks are calls of this."""
import numpy

from . import _dask, _ewise
from ._interop import (KDL_CPU, Call, adapter, check_devices, check_writable, is_scalar, routes,
                       types)
from ._interop.numpy import numpy_result


def call(op, a, b, out, kernel, autograd):
    """out = a op b with broadcasting (op by its C++ name; a or b may be a Python scalar);
    returns out, allocated like the first array when None (its adapter's empty and result), of
    the result dtype of that array's framework (_interop.types). autograd(op, a, b, out,
    kernel): what runs a call whose torch operand requires a gradient while grad mode is on
    (ewise.torch.binary, which autograd records; DLPack would refuse the tensor); None for calls
    that never have one."""
    # The fast paths first: each returns None for anything but its own framework's plain
    # arrays and Python scalars (a Dask array among them), and a small call's time is mostly
    # this function's (the three Dask tests cost 0.5 us, a third of a 16-element NumPy call).
    result = routes.torch(op, a, b, out, kernel)
    if result is not None:
        return result
    result = _ewise.numpy_binary(op, a, b, out, kernel)
    if result is not None:
        return result if out is not None else numpy_result(result)
    if _dask.is_dask(a) or _dask.is_dask(b) or _dask.is_dask(out):
        return _dask.binary(lambda x, y: call(op, x, y, None, kernel, None), a, b, out,
                            f"ewise-{op}")
    a, b = (adapter(x).operand(x) for x in (a, b))  # NumPy scalars become 0-d arrays
    first = b if is_scalar(a) else a
    if is_scalar(first):
        raise TypeError("ewise: a and b are both Python scalars: at least one must be an array")
    if autograd is not None and type(first) is not numpy.ndarray and (
            getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        import torch
        if torch.is_grad_enabled():
            return autograd(op, a, b, out, kernel)
    operands = {what: x for what, x in (("a", a), ("b", b), ("out", out))
                if x is not None and not is_scalar(x)}
    device = check_devices(**operands)
    like = adapter(first)
    if out is not None:
        check_writable(out, "out")
        result, promotion = out, like.promotion
    else:
        dtype, promotion = types(op, first, a, b)
        shape = _ewise.broadcast_shape(*(() if is_scalar(x) else tuple(x.shape) for x in (a, b)))
        result = like.empty(first, tuple(shape), device, dtype)
    with Call(first, device) as run:
        _ewise.binary(op, run.array(a), run.array(b), run.array(result), kernel, run.stream,
                      promotion)
        run.finish()
    return result if out is not None else like.result(result)
