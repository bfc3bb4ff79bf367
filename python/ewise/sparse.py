"""ewise.sparse: element-wise operations on sparse matrices: SciPy's (the CPU backend),
cupyx.scipy.sparse's and PyTorch's sparse tensors (on the GPU for CUDA ones; PyTorch's CPU
tensors on the CPU backend).

Operands may be any scipy.sparse or cupyx.scipy.sparse format (converted to COO), or PyTorch
tensors of layout sparse_coo (also sparse_csr and sparse_csc, converted), 2-D with scalar
values; unsorted and with duplicate coordinates, which stand for their sum. int32 and int64
indices are kept. COO results are canonical (sorted by row, then column; no duplicates) and of
the first operand's kind: scipy.sparse.coo_array for sparse arrays, coo_matrix for matrices
(has_canonical_format set); the same for cupyx; a coalesced torch.sparse_coo tensor (built
with is_coalesced=True, indices stacked into one (2, nnz) tensor) for PyTorch.

    multiply(a, b)        a ⊙ b over the coordinates stored in both              -> COO
    multiply(a, dense)    a ⊙ dense in a's pattern (dense broadcasts: (n, m), (m,), (n, 1),
                          scalar)                                                -> COO
    add, sub, minimum, maximum(a, b)     a op b over the coordinates stored in either, a missing
                          operand counting as fill_a / fill_b (0)                -> COO
    add, sub, minimum, maximum(a, dense[, out=])   op(densify(a), dense)         -> dense
    accumulate(op, dense, a)             dense = op(dense, a) at a's coordinates only, in place
                          (a sparse gradient into a weight: accumulate("add", w, g))

Where it runs: host operands (SciPy, NumPy, PyTorch CPU tensors) on the CPU backend; CUDA
operands (cupyx, CuPy, PyTorch CUDA tensors, any mix of them on one device) on the GPU, on the
current stream of the first operand's framework. Device calls synchronize only where the C++
call does: a COO result's size (nnz) is read on the host, and the index checks
(validate_indices) are read at that point or in a pass of their own. A COO result's arrays are
ewise's own memory handed to CuPy or PyTorch through DLPack without a copy (PyTorch's stacked
indices are the one copy; a coalesced PyTorch tensor ⊙ dense shares the tensor's indices and
gets new values only), freed on the call's stream when the framework lets go of them.
Mixing host and device operands is a ValueError. A dense result is allocated like the dense
operand.

Unlike SciPy, ewise keeps stored zeros (a product or sum that is zero stays an entry) unless
drop_zeros=True: with it, multiply and add/sub/minimum/maximum of two matrices give SciPy's
A.multiply(B), A + B, A - B, A.minimum(B), A.maximum(B). Keywords: drop_zeros, algorithm (COO ⊙
COO on the GPU; checked on the CPU), fill_a, fill_b, validate_indices (host input is always
checked). A coalesced PyTorch operand is passed as canonical (its order is then checked, not
sorted again, unless validate_indices=False, which trusts it; ⊙ dense keeps its pattern, so
only its indices' range is checked there); SciPy's and cupyx's
has_canonical_format flags are not relied on.

Autograd: multiply(torch_sparse, torch_dense) with either requiring a gradient (and grad mode
on) is recorded for torch.autograd (ewise.torch.sparse_multiply): gradients to the dense
operand and to the sparse operand's values.
"""
from collections import namedtuple

import numpy

from . import _KDL_CPU, _GpuCall, _array, _check_devices, _check_writable, _empty, _ewise, \
    _framework, _op

__all__ = ["multiply", "add", "sub", "minimum", "maximum", "accumulate"]


def _scipy_sparse():
    import scipy.sparse
    return scipy.sparse


# A sparse operand in COO form: the framework it came from ("scipy", "cupyx", "torch"), its
# row, column and value arrays (contiguous 1-D arrays of that framework; rows and cols of one
# dtype), its shape, and whether ewise may take it as canonical.
_Operand = namedtuple("_Operand", "framework rows cols vals shape canonical")


def _sparse_framework(x):
    """"scipy", "cupyx" or "torch" for a sparse matrix ewise takes, else None."""
    framework = _framework(x)
    if framework == "scipy" and _scipy_sparse().issparse(x):
        return "scipy"
    if framework == "cupyx":
        import cupyx.scipy.sparse
        if cupyx.scipy.sparse.issparse(x):
            return "cupyx"
    if framework == "torch" and x.layout is not _torch().strided:
        return "torch"
    return None


def _is_sparse(x):
    return _sparse_framework(x) is not None


def _torch():
    import torch
    return torch


def _operand(x, what):
    """x as an _Operand; TypeError for anything but a sparse matrix ewise takes."""
    framework = _sparse_framework(x)
    if framework in ("scipy", "cupyx"):
        if framework == "scipy":
            xp = numpy
        else:
            import cupy as xp
        coo = x.tocoo(copy=False)
        rows, cols, vals = coo.row, coo.col, coo.data
        if rows.dtype != cols.dtype:
            rows, cols = rows.astype(numpy.int64), cols.astype(numpy.int64)
        rows, cols, vals = (xp.ascontiguousarray(v) for v in (rows, cols, vals))
        return _Operand(framework, rows, cols, vals, coo.shape, False)
    if framework == "torch":
        torch = _torch()
        if x.layout in (torch.sparse_csr, torch.sparse_csc):
            x = x.to_sparse_coo()
        if x.layout is not torch.sparse_coo:
            raise TypeError(f"ewise: {what} is a torch tensor of layout {x.layout}: ewise "
                            "takes torch.sparse_coo (and sparse_csr, sparse_csc)")
        if x.sparse_dim() != 2 or x.dense_dim() != 0:
            raise ValueError(f"ewise: {what} has {x.sparse_dim()} sparse and {x.dense_dim()} "
                             "dense dimensions: ewise takes 2-D sparse matrices with scalar "
                             "values")
        indices = x._indices()
        # rows = indices[0], cols = indices[1]: 1-D views of stride 1 when indices is
        # contiguous, as torch makes it (no copy); .contiguous() copies only otherwise.
        rows, cols = indices[0].contiguous(), indices[1].contiguous()
        return _Operand("torch", rows, cols, _array(x._values()).contiguous(), tuple(x.shape),
                        x.is_coalesced())
    raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a sparse matrix ewise takes "
                    "(scipy.sparse, cupyx.scipy.sparse, or a torch.sparse_coo tensor)")


class _Backend:
    """Where one call runs: the CPU backend for host operands (arrays passed as they are), else
    the GPU on the stream of `like`'s framework (arrays exported for that stream, _GpuCall)."""

    def __init__(self, like, device):
        self._gpu = None if device[0] == _KDL_CPU else _GpuCall(like, device)
        self.device = device
        self.stream = 0 if self._gpu is None else self._gpu.stream
        self.stream_owner = None if self._gpu is None else self._gpu.stream_owner

    def __enter__(self):
        if self._gpu is not None:
            self._gpu.__enter__()
        return self

    def __exit__(self, *exc):
        return False if self._gpu is None else self._gpu.__exit__(*exc)

    def array(self, x):
        return x if self._gpu is None else self._gpu.capsule(x)

    def coo(self, op):
        return _ewise.Coo(self.array(op.rows), self.array(op.cols), self.array(op.vals),
                          op.shape[0], op.shape[1], op.canonical)


def _options(drop_zeros=False, algorithm="automatic", fill_a=0.0, fill_b=0.0,
             validate_indices=True):
    o = _ewise.SparseOptions()
    o.drop_zeros = bool(drop_zeros)
    o.algorithm = algorithm
    o.fill_a = float(fill_a)
    o.fill_b = float(fill_b)
    o.validate_indices = bool(validate_indices)
    return o


def _import(framework, array, dtype, device):
    """One of ewise's result arrays as an array of `framework` (no copy): a NumPy array on the
    host (as PyTorch takes it), a DLPack-exporting array on the GPU, or None for an empty
    device result (a new empty array of `dtype`)."""
    if framework == "torch":
        torch = _torch()
        if array is None:
            return torch.empty(0, dtype=dtype, device=f"cuda:{device[1]}")
        return torch.from_numpy(array) if isinstance(array, numpy.ndarray) \
            else torch.from_dlpack(array)
    if framework == "cupyx":
        import cupy
        with cupy.cuda.Device(device[1]):
            return cupy.empty(0, dtype=dtype) if array is None else cupy.from_dlpack(array)
    return array


def _result(like, op, arrays, device):
    """A canonical COO of like's kind over the (rows, cols, vals) ewise returned for operand
    `op` (like's _Operand)."""
    rows, cols, vals = (_import(op.framework, x, dtype, device) for x, dtype in
                        zip(arrays, (op.rows.dtype, op.rows.dtype, op.vals.dtype)))
    if op.framework == "torch":
        torch = _torch()
        return torch.sparse_coo_tensor(torch.stack((rows, cols)), vals, op.shape,
                                       is_coalesced=True, check_invariants=False)
    if op.framework == "cupyx":
        import cupyx.scipy.sparse as module
    else:
        module = _scipy_sparse()
    sparray = getattr(module, "sparray", None)
    kind = module.coo_array if sparray is not None and isinstance(like, sparray) \
        else module.coo_matrix
    if op.framework == "cupyx":
        # cupyx's (data, (row, col)) constructor reads the indices' bounds on the host (a
        # synchronization); ewise checked them: an empty matrix gets the arrays instead.
        result = kind(op.shape, dtype=vals.dtype)
        result.data, result.row, result.col = vals, rows, cols
    else:
        result = kind((vals, (rows, cols)), shape=op.shape, copy=False)
    result.has_canonical_format = True
    return result


def _needs_grad(*tensors):
    """True when a torch operand asks for a gradient and grad mode is on."""
    torch = _torch()
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors
                                           if isinstance(t, torch.Tensor))


def multiply(a, b, *, drop_zeros=False, algorithm="automatic", validate_indices=True):
    """a ⊙ b: a sparse b gives the intersection, a dense one a's pattern (both COO of a's
    kind). Recorded for autograd for torch operands that require a gradient (see the module
    comment)."""
    options = _options(drop_zeros, algorithm, validate_indices=validate_indices)
    oa = _operand(a, "a")
    if _is_sparse(b):
        ob = _operand(b, "b")
        device = _check_devices(a=oa.vals, b=ob.vals)
        with _Backend(a, device) as run:
            arrays = _ewise.multiply(run.coo(oa), run.coo(ob), options, run.stream,
                                     run.stream_owner)
        return _result(a, oa, arrays, device)
    b = _array(b)
    device = _check_devices(a=oa.vals, b=b)
    if oa.framework == "torch" and _needs_grad(a, b):
        from .torch import sparse_multiply
        return sparse_multiply(a, b, drop_zeros=drop_zeros, validate_indices=validate_indices)
    if oa.framework == "torch" and oa.canonical and not drop_zeros and \
            a.layout is _torch().sparse_coo:
        # A coalesced tensor keeps its pattern: only the values are computed (multiply_values),
        # and the result shares a's indices, as PyTorch's own sparse * dense does.
        torch = _torch()
        vals = torch.empty_like(oa.vals)
        with _Backend(a, device) as run:
            _ewise.multiply_values(run.coo(oa), run.array(b), run.array(vals), options,
                                   run.stream)
        return torch.sparse_coo_tensor(a._indices(), vals, oa.shape, is_coalesced=True,
                                       check_invariants=False)
    with _Backend(a, device) as run:
        arrays = _ewise.multiply_dense(run.coo(oa), run.array(b), options, run.stream,
                                       run.stream_owner)
    return _result(a, oa, arrays, device)


def _union(op, a, b, out, drop_zeros, fill_a, fill_b, validate_indices):
    options = _options(drop_zeros, fill_a=fill_a, fill_b=fill_b,
                       validate_indices=validate_indices)
    oa = _operand(a, "a")
    if _is_sparse(b):
        if out is not None:
            raise ValueError("ewise: out= is for a dense b (sparse op sparse returns a new "
                             "matrix)")
        ob = _operand(b, "b")
        device = _check_devices(a=oa.vals, b=ob.vals)
        with _Backend(a, device) as run:
            arrays = _ewise.combine(op, run.coo(oa), run.coo(ob), options, run.stream,
                                    run.stream_owner)
        return _result(a, oa, arrays, device)
    b = _array(b)
    operands = {"a": oa.vals, "b": b} if out is None else {"a": oa.vals, "b": b, "out": out}
    device = _check_devices(**operands)
    if out is None:
        out = _empty(b, tuple(oa.shape), device)
    _check_writable(out, "out")
    with _Backend(a, device) as run:
        _ewise.combine_dense(op, run.coo(oa), run.array(b), run.array(out), options,
                             run.stream)
    return out


def add(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0, validate_indices=True):
    """a + b: COO for a sparse b (the union), else the dense densify(a) + b (into out)."""
    return _union("add", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def sub(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0, validate_indices=True):
    """a - b (see add): -b where a stores nothing."""
    return _union("sub", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def minimum(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0,
            validate_indices=True):
    """Element-wise minimum (see add), NaN propagating."""
    return _union("min", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def maximum(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0,
            validate_indices=True):
    """Element-wise maximum (see add), NaN propagating."""
    return _union("max", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def accumulate(op, dense, a, *, validate_indices=True):
    """dense = op(dense, a) at the coordinates a stores (duplicates summed first), in place;
    the rest of dense is not touched. op: "add", "sub", "minimum" ("min"), "maximum" ("max").
    Runs on the current stream of dense's framework for CUDA operands. Returns dense."""
    op = _op(op)
    oa = _operand(a, "a")
    device = _check_devices(dense=dense, a=oa.vals)
    _check_writable(dense, "dense")
    with _Backend(dense, device) as run:
        _ewise.accumulate(op, run.array(dense), run.coo(oa),
                          _options(validate_indices=validate_indices), run.stream)
    return dense
