"""PyTorch's tensors, dense and sparse; and `route`, the route of a plain dense call on them
(routes.py), chosen when this module is imported: the first time ewise meets torch, which it
never imports itself.

The route: _ewise_torch.binary (src/torch_native.cpp, built against libtorch), where the
package has it and it imports with the torch of this process; else _ewise.torch_binary
(src/torch_binary.cpp, through PyTorch's Python API, whose attribute reads and allocation cost
a small call more host time: docs/benchmarks.md, Python). libtorch_error: why _ewise_torch did
not import (None when it did)."""
import numpy
import torch

from .. import _ewise
from .interface import DTYPE_NAMES, NUMPY_NAMES, Adapter, Compressed, Operand
from .numpy import NumPy
from .views import strided_view


def _choose():
    try:
        from .. import _ewise_torch
    except ImportError as e:  # not built, or built against another torch
        return _ewise.torch_binary, str(e)
    return _ewise_torch.binary, None


route, libtorch_error = _choose()

# ewise's names of PyTorch's dtypes, and PyTorch's dtypes by ewise's names (torch.uint16,
# uint32 and uint64 came in torch 2.3).
_DTYPES = {getattr(torch, n): e for n, e in DTYPE_NAMES.items() if hasattr(torch, n)}
_TORCH_DTYPES = {e: getattr(torch, n) for e, n in NUMPY_NAMES.items() if hasattr(torch, n)}


def _imported(x):
    """An array a sparse call returned, as a tensor without a copy: a NumPy array's memory
    (host); a device array by its DLPack capsule (written on the call's stream, PyTorch's
    current one, so there is no stream to order: torch.from_dlpack of the array would look
    the stream up and hand it to the exporter, which ignores it); a tensor (the values of an
    empty result, made by empty()) as it is."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, numpy.ndarray):
        return torch.from_numpy(x)
    return torch.from_dlpack(x.__dlpack__())


def torch_dtype(name):
    """PyTorch's dtype of an ewise dtype name."""
    return _TORCH_DTYPES[name]


class Torch(Adapter):
    promotion = "torch"

    def operand(self, x):
        """A tensor with the negative bit (torch._neg_view) as a tensor of its values: DLPack
        exports the memory without the bit, so the values would arrive with the wrong sign."""
        return x.resolve_neg() if x.is_neg() else x

    def check_writable(self, x, what):
        if x.is_neg():
            raise ValueError(f"ewise: {what} is a torch tensor with the negative bit set "
                             "(torch._neg_view): ewise writes memory as it is and cannot write "
                             "through the bit; pass a plain tensor (resolve_neg() copies)")

    def empty(self, like, shape, device, dtype=None):
        return torch.empty(shape, dtype=like.dtype if dtype is None else _TORCH_DTYPES[dtype],
                           device=like.device)

    def stream(self, device_id):
        """PyTorch's current stream on the device as its raw handle, read as the dense fast
        path reads it (torch.cuda.current_stream builds a Stream object, and its device
        context switches through PyTorch's Python layer: both cost more host time than the
        call's other steps); no context (Call makes the device current itself) and no owner
        (PyTorch never destroys a stream of its pool)."""
        return None, None, torch._C._cuda_getCurrentRawStream(device_id)

    def export(self, x, call):
        """A plain tensor of a call on PyTorch's stream as a view of its pointer, shape and
        strides: PyTorch's own export with a stream costs far more host time a tensor (a sparse
        call exports three to five; docs/design.md, "PyTorch's fast path"). Other tensors, and
        dtypes ewise does not take (the export then reports them), through DLPack."""
        if call.adapter is self and type(x) is torch.Tensor and not x.is_neg():
            name = _DTYPES.get(x.dtype)
            if name is not None:
                return strided_view(x, name, x.data_ptr(), list(x.shape), list(x.stride()),
                                    call.device[1])
        return super().export(x, call)

    def needs_grad(self, *tensors):
        """True when a tensor asks for a gradient and grad mode is on."""
        return torch.is_grad_enabled() and any(t.requires_grad for t in tensors
                                               if isinstance(t, torch.Tensor))

    def is_sparse(self, x):
        return x.layout is not torch.strided

    def coo(self, x, what):
        """Layouts sparse_coo, sparse_csr and sparse_csc (converted), 2-D with scalar values;
        a coalesced tensor is taken as canonical."""
        if x.layout in (torch.sparse_csr, torch.sparse_csc):
            x = x.to_sparse_coo()
        if x.layout is not torch.sparse_coo:
            raise TypeError(f"ewise: {what} is a torch tensor of layout {x.layout}: ewise "
                            "takes torch.sparse_coo (and sparse_csr, sparse_csc)")
        if x.sparse_dim() != 2 or x.dense_dim() != 0:
            raise ValueError(f"ewise: {what} has {x.sparse_dim()} sparse and {x.dense_dim()} "
                             "dense dimensions: ewise takes 2-D sparse matrices with scalar "
                             "values (and, in accumulate, tensors with one sparse dimension)")
        indices = x._indices()
        # rows = indices[0], cols = indices[1]: 1-D views of stride 1 when indices is
        # contiguous, as torch makes it (no copy); .contiguous() copies only otherwise.
        rows, cols = indices[0].contiguous(), indices[1].contiguous()
        return Operand(self, rows, cols, self.operand(x._values()).contiguous(), tuple(x.shape),
                       x.is_coalesced())

    def compressed(self, x, what):
        """Layouts sparse_csr and sparse_csc of 2-D tensors with scalar values, read as they are
        (their index tensors are contiguous 1-D ones); canonical (PyTorch's invariant: each
        slice's indices sorted and distinct; checked in the call)."""
        if x.layout not in (torch.sparse_csr, torch.sparse_csc):
            return None
        if x.dim() != 2 or x.dense_dim() != 0:
            raise ValueError(f"ewise: {what} is a {x.dim()}-D {x.layout} tensor with "
                             f"{x.dense_dim()} dense dimensions: ewise takes 2-D sparse "
                             "matrices with scalar values")
        csr = x.layout is torch.sparse_csr
        offsets = x.crow_indices() if csr else x.ccol_indices()
        indices = x.col_indices() if csr else x.row_indices()
        return Compressed(self, offsets.contiguous(), indices.contiguous(),
                          self.operand(x.values()).contiguous(), tuple(x.shape),
                          "csr" if csr else "csc", True)

    def compressed_result(self, like, op, arrays, device):
        """A sparse_csr or sparse_csc tensor over ewise's arrays, without a copy."""
        offsets, indices, vals = (
            torch.empty(0, dtype=dtype, device=f"cuda:{device[1]}") if x is None
            else _imported(x)
            for x, dtype in zip(arrays, (op.offsets.dtype, op.indices.dtype, op.vals.dtype)))
        make = torch.sparse_csr_tensor if op.format == "csr" else torch.sparse_csc_tensor
        return make(offsets, indices, vals, op.shape, check_invariants=False)

    def compressed_pair(self, a, b, call, options):
        """The fast route (interface.Adapter.compressed_pair) of two plain sparse_csr (or
        sparse_csc) tensors on one CUDA device, of one index dtype and of dtypes ewise takes:
        read by compressed() (values with the negative bit resolved, as the general path
        reads them), each array passed as a view of its pointer, the device made current for
        the call alone, without the general path's device checks and per-array steps
        (docs/benchmarks.md, session 57)."""
        if type(a) is not torch.Tensor or type(b) is not torch.Tensor or b.layout is not a.layout:
            return None
        device = a.get_device()
        if device < 0 or b.get_device() != device:
            return None
        oa, ob = self.compressed(a, "a"), self.compressed(b, "b")
        if oa is None or oa.offsets.dtype != ob.offsets.dtype:
            return None
        index, vals_a, vals_b = (_DTYPES.get(x.dtype) for x in (oa.offsets, oa.vals, ob.vals))
        if vals_a is None or vals_b is None or index is None:
            return None

        def view(op, vals):
            return _ewise.Compressed(
                *(strided_view(x, name, x.data_ptr(), [x.shape[0]], [1], device)
                  for x, name in ((op.offsets, index), (op.indices, index), (op.vals, vals))),
                op.shape[0], op.shape[1], op.format, True)
        previous = _ewise.set_device(device)
        try:
            arrays = call(view(oa, vals_a), view(ob, vals_b), options(oa.vals),
                          torch._C._cuda_getCurrentRawStream(device), None)
        finally:
            _ewise.set_device(previous)
        return oa, ob.vals, arrays, (2, device)

    def row_sparse(self, x):
        """A sparse_coo tensor with one sparse dimension (a hybrid tensor such as
        torch.nn.Embedding(sparse=True)'s gradient, or a sparse vector): its row indices
        (indices[0], a 1-D view of the (1, nnz) indices) and its values (nnz, *dense dims), no
        copy; coalesced ones taken as canonical."""
        if x.layout is not torch.sparse_coo or x.sparse_dim() != 1:
            return None
        return x._indices()[0].contiguous(), x._values(), int(x.shape[0]), x.is_coalesced()

    def import_array(self, x):
        return _imported(x)

    def row_sparse_result(self, like, rows, vals, nrows):
        """A coalesced hybrid sparse_coo tensor (one sparse dimension) for a hybrid like;
        its indices the (1, nnz) view of rows, no copy."""
        if getattr(like, "layout", None) is not torch.sparse_coo:
            return None
        return torch.sparse_coo_tensor(rows.unsqueeze(0), vals, (nrows, *vals.shape[1:]),
                                       is_coalesced=True, check_invariants=False)

    def coo_result(self, like, op, arrays, device):
        """A coalesced sparse_coo tensor over ewise's arrays (host: NumPy arrays, device:
        DLPack-exporting arrays, None for an empty one), without a copy but the stacked
        indices (PyTorch keeps them as one tensor); in like's layout where that is sparse_csr
        or sparse_csc (PyTorch's conversion: row offsets from the sorted rows for CSR, no sort;
        a sort by column for CSC)."""
        rows, cols, vals = (
            torch.empty(0, dtype=dtype, device=f"cuda:{device[1]}") if x is None
            else _imported(x)
            for x, dtype in zip(arrays, (op.rows.dtype, op.rows.dtype, op.vals.dtype)))
        result = torch.sparse_coo_tensor(torch.stack((rows, cols)), vals, op.shape,
                                         is_coalesced=True, check_invariants=False)
        if like.layout is torch.sparse_csr:
            return result.to_sparse_csr()
        if like.layout is torch.sparse_csc:
            return result.to_sparse_csc()
        return result

    def shares_pattern(self, x, op):
        """A coalesced sparse_coo tensor keeps its pattern, as PyTorch's own sparse * dense
        does."""
        return op.canonical and x.layout is torch.sparse_coo

    def values_like(self, op):
        return torch.empty_like(op.vals)

    def with_values(self, x, vals, op):
        """x's indices, shared, with new values."""
        return torch.sparse_coo_tensor(x._indices(), vals, op.shape, is_coalesced=True,
                                       check_invariants=False)


class Foreign(NumPy):
    """A package ewise has no module for whose objects include torch tensors (subclasses of
    torch.Tensor: torchvision's tv_tensors, ...): read and made as any DLPack producer's
    (numpy.OTHER), the negative bit of its tensors resolved or refused as torch's own, their
    dtypes promoted by PyTorch's rule (_interop gives this adapter to torch tensors only)."""

    promotion = "torch"

    def __init__(self):
        super().__init__(own=False)

    def dtype_name(self, x):
        return Torch.dtype_name(self, x)

    def operand(self, x):
        return Torch.operand(self, x) if isinstance(x, torch.Tensor) else super().operand(x)

    def check_writable(self, x, what):
        if isinstance(x, torch.Tensor):
            Torch.check_writable(self, x, what)


ADAPTERS = {"torch": Torch()}
FOREIGN = Foreign()
