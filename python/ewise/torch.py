"""ewise.torch: ewise's dense operations as PyTorch operators, differentiable and traceable by
torch.compile, and COO ⊙ dense with autograd. Imported on first use of `ewise.torch` (it
imports torch; `import ewise` does not).

    import ewise.torch as et
    y = et.add(x, bias)              # torch.ops.ewise.binary: autograd, torch.compile
    et.mul(x, y, out=z)              # torch.ops.ewise.binary_out (mutates out; no autograd)
    s = et.sparse_multiply(a, w)     # torch.sparse_coo a ⊙ dense w: gradients to w and a's values

The dense operators are torch.library custom ops: `ewise::binary(op, a, b, kernel) -> Tensor`
and `ewise::binary_out(op, a, b, out, kernel) -> ()` (mutates out), each with a fake (meta)
implementation, so torch.compile(fullgraph=True) traces them without a graph break; they run
ewise.binary (CPU tensors on the CPU backend, CUDA tensors on the current stream). Operands are
tensors of one dtype and device (no promotion, as ewise.binary); a Python number as b becomes a
0-d tensor of a's dtype and device.

Gradients (torch.autograd, first and higher order: the formulas are torch operations):
add: (g, g); sub: (g, -g); mul: (g·b, g·a); div: (g / b, -g·a / b²); minimum and maximum:
the gradient goes to the selected operand and ties (a == b) give each operand half, as
torch.minimum and torch.maximum do. Each gradient is summed over the dimensions its operand
was broadcast along. The out= form, like torch's own out= forms, does not support autograd:
a RuntimeError when an operand requires a gradient.

sparse_multiply(a, dense): a torch.sparse_coo (2-D) tensor ⊙ a strided tensor that broadcasts
to its shape, the canonical COO result of ewise.sparse.multiply; gradients: to dense,
densify(coalesce(a) ⊙ G) summed over dense's broadcast dimensions (G: the result's gradient,
densified); to a, a coalesced sparse tensor in a's pattern with values G[i, j]·dense[i, j]
(PyTorch gives each stored duplicate of (i, j) that value as its gradient).
ewise.sparse.multiply takes this path itself when a torch operand requires a gradient.
"""
from typing import Optional

import torch

from . import _dense, _ops, _sparse

__all__ = ["binary", "add", "sub", "mul", "div", "minimum", "maximum", "sparse_multiply"]


@torch.library.custom_op("ewise::binary", mutates_args=())
def _binary(op: str, a: torch.Tensor, b: torch.Tensor, kernel: Optional[str]) -> torch.Tensor:
    # detach(): under autograd the op gets its inputs as they are (requires_grad set), and
    # torch refuses to export such tensors through DLPack; the gradient is the op's own.
    return _dense.call(_ops.op(op), a.detach(), b.detach(), None, kernel, None)


@torch.library.custom_op("ewise::binary_out", mutates_args=("out",))
def _binary_out(op: str, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                kernel: Optional[str]) -> None:
    _dense.call(_ops.op(op), a.detach(), b.detach(), out, kernel, None)


def _check(a, b):
    """What the fake implementations can check without running: one dtype, one device."""
    if a.dtype != b.dtype:
        raise ValueError(f"ewise: operands of different dtypes: {a.dtype} and {b.dtype} "
                         "(ewise does not promote)")
    if a.device != b.device:
        raise ValueError(f"ewise: operands on different devices: a on {a.device}, b on "
                         f"{b.device}")


@_binary.register_fake
def _(op, a, b, kernel):
    _check(a, b)
    return a.new_empty(torch.broadcast_shapes(a.shape, b.shape))


@_binary_out.register_fake
def _(op, a, b, out, kernel):
    _check(a, b)
    _check(a, out)


def _reduce(grad, shape):
    """grad summed over the dimensions an operand of `shape` was broadcast along."""
    return grad if grad.shape == shape else grad.sum_to_size(shape)


def _selected(grad, a, b, drop):
    """torch.minimum / torch.maximum's gradient for one operand: grad where it was selected,
    half of grad where a == b, 0 where `drop` (the other operand was selected)."""
    return torch.where(a == b, grad / 2, grad).masked_fill(drop, 0)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    op = ctx.op
    if op == "add":
        ga, gb = grad, grad
    elif op == "sub":
        ga, gb = grad, -grad
    elif op == "mul":
        ga, gb = grad * b, grad * a
    elif op == "div":
        ga, gb = grad / b, -grad * a / (b * b)
    elif op == "min":
        ga, gb = _selected(grad, a, b, a > b), _selected(grad, a, b, a < b)
    else:  # max
        ga, gb = _selected(grad, a, b, a < b), _selected(grad, a, b, a > b)
    return (None,
            _reduce(ga, a.shape) if ctx.needs_input_grad[1] else None,
            _reduce(gb, b.shape) if ctx.needs_input_grad[2] else None,
            None)


def _setup_context(ctx, inputs, output):
    op, a, b, _ = inputs
    ctx.op = op
    ctx.save_for_backward(a, b)


_binary.register_autograd(_backward, setup_context=_setup_context)


def _tensor(x, like, what):
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return torch.tensor(x, dtype=like.dtype, device=like.device)
    raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a torch.Tensor or a number")


def binary(op, a, b, out=None, kernel=None):
    """out = a op b with broadcasting, as ewise.binary, through the torch.library operators
    (see the module comment): differentiable without out=, traceable by torch.compile.
    Returns out, a new tensor when None."""
    op = _ops.op(op)
    if not isinstance(a, torch.Tensor):
        raise TypeError(f"ewise: a is a {type(a).__name__}, not a torch.Tensor")
    b = _tensor(b, a, "b")
    if out is None:
        return _binary(op, a, b, kernel)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"ewise: out is a {type(out).__name__}, not a torch.Tensor")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad or out.requires_grad):
        raise RuntimeError("ewise: out= does not support autograd (as torch's out= forms): "
                           "an operand requires a gradient; call without out=")
    _binary_out(op, a, b, out, kernel)
    return out


def _function(op):
    def function(a, b, out=None, kernel=None):
        return binary(op, a, b, out=out, kernel=kernel)
    return function


_ops.define(globals(), _function)


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
                gd = _reduce(_sparse.multiply(a.detach(), g).to_dense(), dense.shape)
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
