"""The dense call, under the dense API (ewise.binary) and the PyTorch operators (ewise.torch):
the framework's route for a plain call (_interop.routes), else the general path through DLPack,
which takes every operand kind and gives every error its message."""
import numpy

from . import _ewise
from ._interop import KDL_CPU, Call, adapter, check_devices, check_writable, routes


def call(op, a, b, out, kernel, autograd):
    """out = a op b with broadcasting (op by its C++ name); returns out, allocated like a when
    None (its adapter's empty and result). autograd(op, a, b, out, kernel): what runs a call
    whose torch operand requires a gradient while grad mode is on (ewise.torch.binary, which
    autograd records; DLPack would refuse the tensor); None for calls that never have one."""
    result = routes.torch(op, a, b, out, kernel)
    if result is not None:
        return result
    like = adapter(a)
    a, b = like.operand(a), adapter(b).operand(b)
    if autograd is not None and type(a) is not numpy.ndarray and (
            getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        import torch
        if torch.is_grad_enabled():
            return autograd(op, a, b, out, kernel)
    operands = {"a": a, "b": b} if out is None else {"a": a, "b": b, "out": out}
    device = check_devices(**operands)
    if out is not None:
        check_writable(out, "out")
        result = out
    else:
        result = like.empty(a, tuple(_ewise.broadcast_shape(tuple(a.shape), tuple(b.shape))),
                            device)
    if device[0] == KDL_CPU:
        _ewise.binary(op, a, b, result, kernel, 0)
    else:
        with Call(a, device) as run:
            _ewise.binary(op, run.array(a), run.array(b), run.array(result), kernel,
                          run.stream)
            run.finish()
    return result if out is not None else like.result(result)
