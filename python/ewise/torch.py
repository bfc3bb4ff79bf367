"""ewise.torch: ewise's dense operations as PyTorch operators, differentiable and traceable by
torch.compile, and COO ⊙ dense with autograd. Imported on first use of `ewise.torch` (it
imports torch; `import ewise` does not).

    import ewise.torch as et
    y = et.add(x, bias)              # torch.ops.ewise.binary: autograd, torch.compile
    y = et.multiply(x_bf16, 0.5)     # a Python scalar, weak as torch takes it: bf16
    et.mul(x, y, out=z)              # torch.ops.ewise.binary_out (mutates out; no autograd)
    s = et.sparse_multiply(a, w)     # torch.sparse_coo a ⊙ dense w: gradients to w and a's values

The dense operators are torch.library custom ops: `ewise::binary(op, a, b, scalar, kernel) ->
Tensor` and `ewise::binary_out(op, a, b, scalar, out, kernel) -> ()` (mutates out), where a and
b are tensors, or one of them None and `scalar` (a Python number) stands for it; each has a fake
(meta) implementation, so torch.compile(fullgraph=True) traces them without a graph break; they
run ewise.binary (CPU tensors on the CPU backend, CUDA tensors on the current stream). Operands
of any of ewise's dtypes, mixed: the result dtype is torch.result_type's (Python scalars weak,
0-d tensors below tensors with dims), computed in one pass.

Gradients (torch.autograd, first and higher order: the formulas are torch operations), each cast
to its operand's dtype and summed over the dimensions that operand was broadcast along:
add: (g, g); subtract: (g, -g); multiply: (g·b, g·a); divide: (g / b, -g·a / b²); power:
(g·b·a^(b-1), 0 where b = 0; g·a^b·log a, 0 where a = 0 and b >= 0); remainder:
(g, -g·⌊a/b⌋); floor_divide: zero; minimum and maximum: the gradient goes to the selected
operand and ties (a == b) give each operand half, as torch.minimum and torch.maximum do; fmin
and fmax: to the selected operand, ties to a, a NaN operand's to the other, as torch.fmin and
torch.fmax.
Comparisons, logical and bitwise operations give bool or integer results, which have none. The
out= form, like torch's own out= forms, does not support autograd: a RuntimeError when an
operand requires a gradient.

sparse_multiply(a, dense): a torch.sparse_coo (2-D) tensor ⊙ a strided tensor that broadcasts
to its shape, the canonical COO result of ewise.sparse.multiply; gradients: to dense,
densify(coalesce(a) ⊙ G) summed over dense's broadcast dimensions (G: the result's gradient,
densified); to a, a coalesced sparse tensor in a's pattern with values G[i, j]·dense[i, j]
(PyTorch gives each stored duplicate of (i, j) that value as its gradient).
ewise.sparse.multiply takes this path itself when a torch operand requires a gradient.
"""
from typing import Optional

import torch
from torch.types import Number

from . import _dense, _ops, _sparse
from ._interop import types
from ._interop.torch import torch_dtype

__all__ = ["binary", *_ops.NAMES, "sparse_multiply"]


def _operands(a, b, scalar):
    """a and b as ewise.binary takes them: the scalar for the one that is None; detached (under
    autograd the op gets its inputs as they are, requires_grad set, and torch refuses to export
    such tensors through DLPack; the gradient is the op's own)."""
    return (scalar if a is None else a.detach()), (scalar if b is None else b.detach())


@torch.library.custom_op("ewise::binary", mutates_args=())
def _binary(op: str, a: Optional[torch.Tensor], b: Optional[torch.Tensor],
            scalar: Optional[Number], kernel: Optional[str]) -> torch.Tensor:
    return _dense.call(_ops.op(op), *_operands(a, b, scalar), None, kernel, None)


@torch.library.custom_op("ewise::binary_out", mutates_args=("out",))
def _binary_out(op: str, a: Optional[torch.Tensor], b: Optional[torch.Tensor],
                scalar: Optional[Number], out: torch.Tensor, kernel: Optional[str]) -> None:
    _dense.call(_ops.op(op), *_operands(a, b, scalar), out, kernel, None)


def _check_devices(*tensors):
    """What the fake implementations check of the devices: one for every tensor."""
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1:
        raise ValueError("ewise: operands on different devices: "
                         + ", ".join(str(d) for d in sorted(devices, key=str)))


@_binary.register_fake
def _(op, a, b, scalar, kernel):
    _check_devices(a, b)
    x, y = (scalar if a is None else a), (scalar if b is None else b)
    like = b if a is None else a
    dtype, _ = types(_ops.op(op), like, x, y)  # TypeError where op refuses the dtypes
    shapes = [t.shape for t in (a, b) if t is not None]
    return like.new_empty(torch.broadcast_shapes(*shapes), dtype=torch_dtype(dtype))


@_binary_out.register_fake
def _(op, a, b, scalar, out, kernel):
    _check_devices(a, b, out)


def _reduce(grad, like):
    """grad cast to like's dtype and summed over the dimensions like was broadcast along."""
    grad = grad if grad.shape == like.shape else grad.sum_to_size(like.shape)
    return grad.to(like.dtype)


def _selected(grad, a, b, drop):
    """torch.minimum / torch.maximum's gradient for one operand: grad where it was selected,
    half of grad where a == b, 0 where `drop` (the other operand was selected)."""
    return torch.where(a == b, grad / 2, grad).masked_fill(drop, 0)


def _gradients(op, grad, a, b):
    """(gradient to a, gradient to b) of op at (a, b) (tensors), before _reduce."""
    if op == "add":
        return grad, grad
    if op == "subtract":
        return grad, -grad
    if op == "multiply":
        return grad * b, grad * a
    if op == "divide":
        return grad / b, -grad * a / (b * b)
    if op == "power":
        ga = torch.where(b == 0, torch.zeros_like(grad), grad * b * a.pow(b - 1))
        gb = torch.where((a == 0) & (b >= 0), torch.zeros_like(grad), grad * a.pow(b) * a.log())
        return ga, gb
    if op == "remainder":
        return grad, -grad * torch.floor_divide(a, b)
    if op == "floor_divide":
        return torch.zeros_like(grad), torch.zeros_like(grad)
    if op == "minimum":
        return _selected(grad, a, b, a > b), _selected(grad, a, b, a < b)
    if op == "maximum":
        return _selected(grad, a, b, a < b), _selected(grad, a, b, a > b)
    if op in ("fmin", "fmax"):
        a_wins = (a <= b if op == "fmin" else a >= b) | b.isnan()
        return grad.masked_fill(~a_wins, 0), grad.masked_fill(a_wins, 0)
    raise RuntimeError(f"ewise: {op} has no gradient")


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    # A scalar operand as a 0-d tensor for the formulas; it gets no gradient.
    x, y = (torch.as_tensor(ctx.scalar, device=grad.device) if t is None else t for t in (a, b))
    ga, gb = _gradients(ctx.op, grad, x, y)
    return (None,
            _reduce(ga, a) if ctx.needs_input_grad[1] else None,
            _reduce(gb, b) if ctx.needs_input_grad[2] else None,
            None, None)


def _setup_context(ctx, inputs, output):
    op, a, b, scalar, _ = inputs
    ctx.op = _ops.op(op)
    ctx.scalar = scalar
    ctx.save_for_backward(a, b)


_binary.register_autograd(_backward, setup_context=_setup_context)


def _split(a, b):
    """(a, b, scalar) as the operators take them: a Python number operand as `scalar`."""
    for what, x in (("a", a), ("b", b)):
        if not isinstance(x, (torch.Tensor, bool, int, float)):
            raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a torch.Tensor or a "
                            "number")
    if not isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor):
            raise TypeError("ewise: a and b are both numbers: at least one must be a tensor")
        return None, b, a
    if not isinstance(b, torch.Tensor):
        return a, None, b
    return a, b, None


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting, as ewise.binary (a or b may be a Python number), through
    the torch.library operators (see the module comment): differentiable without out=,
    traceable by torch.compile. Returns out, a new tensor when None."""
    op = _ops.op(op)
    a, b, scalar = _split(a, b)
    if out is None:
        return _binary(op, a, b, scalar, kernel)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"ewise: out is a {type(out).__name__}, not a torch.Tensor")
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (a, b, out)):
        raise RuntimeError("ewise: out= does not support autograd (as torch's out= forms): "
                           "an operand requires a gradient; call without out=")
    _binary_out(op, a, b, scalar, out, kernel)
    return out


def _function(op):
    def function(a, b, out=None, kernel=None):
        return binary(op, a, b, out=out, kernel=kernel)
    return function


_ops.define(globals(), _function)


def _tensor(x, like, what):
    """A number as a 0-d tensor of like's dtype and device (sparse_multiply's dense operand)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return torch.tensor(x, dtype=like.dtype, device=like.device)
    raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a torch.Tensor or a number")


class _SparseMultiply(torch.autograd.Function):
    """a ⊙ dense for torch.autograd (see sparse_multiply)."""

    @staticmethod
    def forward(ctx, a, dense, validate_indices):
        with torch.no_grad():
            result = _sparse.multiply(a.detach(), dense.detach(),
                                      validate_indices=validate_indices)
        # The result's indices are a's coalesced pattern: where a's gradient lives.
        ctx.save_for_backward(a, dense, result._indices())
        return result

    @staticmethod
    def backward(ctx, grad):
        a, dense, pattern = ctx.saved_tensors
        g = grad.to_dense() if grad.layout != torch.strided else grad
        ga = gd = None
        if ctx.needs_input_grad[0]:
            rows, cols = pattern[0], pattern[1]
            values = g[rows, cols] * dense.expand(a.shape)[rows, cols]
            ga = torch.sparse_coo_tensor(pattern, values, a.shape, is_coalesced=True,
                                         check_invariants=False)
        if ctx.needs_input_grad[1]:
            with torch.no_grad():
                gd = _reduce(_sparse.multiply(a.detach(), g).to_dense(), dense)
        return ga, gd, None


def sparse_multiply(a, dense, *, drop_zeros=False, validate_indices=True):
    """a ⊙ dense in a's pattern (a: a 2-D torch.sparse_coo tensor, dense: a strided tensor of
    its dtype and device that broadcasts to a's shape), recorded for autograd (see the module
    comment). drop_zeros is refused when a gradient is needed: the gradient of a dropped entry
    would be lost. Returns a coalesced torch.sparse_coo tensor."""
    if not isinstance(a, torch.Tensor) or a.layout is not torch.sparse_coo:
        raise TypeError(f"ewise: a is a {type(a).__name__}"
                        f"{' of layout ' + str(a.layout) if isinstance(a, torch.Tensor) else ''}"
                        ", not a torch.sparse_coo tensor")
    dense = _tensor(dense, a, "dense")
    if not (torch.is_grad_enabled() and (a.requires_grad or dense.requires_grad)):
        return _sparse.multiply(a, dense, drop_zeros=drop_zeros,
                                validate_indices=validate_indices)
    if drop_zeros:
        raise ValueError("ewise: drop_zeros=True with autograd: the gradient of a dropped "
                         "entry would be lost; drop zeros from the result after the backward "
                         "pass instead")
    return _SparseMultiply.apply(a, dense, validate_indices)
