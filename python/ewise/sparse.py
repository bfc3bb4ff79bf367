"""ewise.sparse: element-wise operations on sparse matrices: SciPy's (the CPU backend),
cupyx.scipy.sparse's and PyTorch's sparse tensors (on the GPU for CUDA ones; PyTorch's CPU
tensors on the CPU backend).

Operands may be any scipy.sparse or cupyx.scipy.sparse format, or PyTorch tensors of layout
sparse_coo, sparse_csr or sparse_csc, 2-D with scalar values; unsorted and with duplicate
coordinates, which stand for their sum. When every sparse operand of a call is CSR or CSC, each
is read as it is (offsets, indices, values) and the result is made in the first operand's
format and kind without a conversion; otherwise operands are read as COO (int32 and int64
indices kept). Sparse results (-> COO below) are canonical (sorted by row, then column, or by
column for CSC; no duplicates) and of the first operand's kind and format: for SciPy and cupyx
a CSR or CSC operand gives a CSR or CSC result, any other format a COO (coo_array for sparse
arrays, coo_matrix for matrices; has_canonical_format set); for PyTorch a sparse_csr or
sparse_csc tensor gives that layout, a sparse_coo one a coalesced sparse_coo tensor (built with
is_coalesced=True, indices stacked into one (2, nnz) tensor).

    multiply(a, b)        a ⊙ b over the coordinates stored in both              -> COO
    multiply(a, dense)    a ⊙ dense in a's pattern (dense broadcasts: (n, m), (m,), (n, 1),
                          scalar)                                                -> COO
    multiply(a, 2.5)      a ⊙ a Python scalar, in a's pattern                    -> COO
    add, subtract, minimum, maximum(a, b)   a op b over the coordinates stored in either, a
                          missing operand counting as fill_a / fill_b (0)        -> COO
    add, subtract, minimum, maximum(a, dense[, out=])   op(densify(a), dense)    -> dense
    add, subtract(a, 0)   a itself (canonical); another scalar is refused (ValueError), as SciPy
                          refuses it (it would store a value at every coordinate)
    accumulate(op, dense, a)             dense = op(dense, a) at a's coordinates only, in place
                          (a sparse gradient into a weight: accumulate("add", w, g))
    accumulate(op, table, rows)          table[r] = op(table[r], Σ stored rows at r) for a
                          row-sparse operand: a torch sparse_coo tensor with one sparse
                          dimension (torch.nn.Embedding(sparse=True)'s gradient, read without a
                          copy) or RowSparse(rows, values, nrows) of any framework's arrays

Dtypes: values are float16, bfloat16, float32, float64, int32 or int64; operands of different
dtypes give the dtype the sparse operand's framework gives (NumPy 2's rules, which SciPy follows,
for SciPy and CuPy operands: float32 with float64 is float64, int32 with float32 is float64;
torch.result_type for PyTorch ones), the narrower operand's values converted in one pass. A
Python bool, int or float is weak, as in NumPy 2 and PyTorch (a float32 matrix times 2.5 stays
float32); a NumPy scalar or 0-d array is not (times np.float64(2) gives float64). A dense result
made for out=None has the result dtype; an out= or accumulate's dense must have it.
sub, min and max are aliases of subtract, minimum and maximum.

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
COO on the GPU; checked on the CPU), fill_a, fill_b, validate_indices (False trusts the
indices and canonical promises on either backend: bad ones are then undefined behaviour). A
coalesced PyTorch operand is passed as canonical (its order is then checked, not sorted again;
⊙ dense keeps its pattern, so only its indices' range is checked there); a CSR or CSC operand
as its producer says (see above).

Autograd: multiply(torch_sparse, torch_dense) with either requiring a gradient (and grad mode
on) is recorded for torch.autograd (ewise.torch.sparse_multiply): gradients to the dense
operand and to the sparse operand's values.
"""
from . import _sparse

__all__ = ["multiply", "add", "subtract", "sub", "minimum", "maximum", "accumulate", "coalesce",
           "to_coo", "to_row_sparse", "RowSparse"]

# A row-sparse operand: RowSparse(rows, values, nrows, canonical=False), rows a 1-D int32 or
# int64 array of nnz row indices, values an (nnz, *row_shape) array of the same framework and
# device, of a matrix of nrows rows of shape row_shape (TensorFlow's IndexedSlices, the update
# of a JAX scatter-add). A row index stored more than once stands for the sum of its rows, in
# storage order; canonical=True promises rows strictly increasing (checked unless
# validate_indices=False).
RowSparse = _sparse.RowSparse


def _differentiable(a, b, drop_zeros, validate_indices):
    """multiply recorded for autograd (ewise.torch, imported on first use: it imports torch)."""
    from .torch import sparse_multiply
    return sparse_multiply(a, b, drop_zeros=drop_zeros, validate_indices=validate_indices)


def multiply(a, b, *, drop_zeros=False, algorithm="automatic", validate_indices=True):
    """a ⊙ b: a sparse b gives the intersection, a dense one a's pattern (both COO of a's
    kind). Recorded for autograd for torch operands that require a gradient (see the module
    comment). A row-sparse a (a torch hybrid tensor, a RowSparse) takes a dense b (row
    scaling: b of shape (nrows, 1)) or a scalar: a's coalesced rows, of a's kind."""
    return _sparse.multiply(a, b, drop_zeros, algorithm, validate_indices, _differentiable)


def add(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0, validate_indices=True):
    """a + b: COO for a sparse b (the union), else the dense densify(a) + b (into out)."""
    return _sparse.union("add", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def subtract(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0,
             validate_indices=True):
    """a - b (see add): -b where a stores nothing."""
    return _sparse.union("subtract", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def minimum(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0,
            validate_indices=True):
    """Element-wise minimum (see add), NaN propagating."""
    return _sparse.union("min", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


def maximum(a, b, out=None, *, drop_zeros=False, fill_a=0.0, fill_b=0.0,
            validate_indices=True):
    """Element-wise maximum (see add), NaN propagating."""
    return _sparse.union("max", a, b, out, drop_zeros, fill_a, fill_b, validate_indices)


# The short names of earlier releases (min and max left out of __all__: a star import would
# shadow Python's builtins).
sub = subtract
min = minimum
max = maximum


def coalesce(a, *, validate_indices=True):
    """a's canonical form, of a's kind and format: a COO matrix sorted with duplicates summed in
    storage order (PyTorch's coalesce, SciPy's sum_duplicates), a CSR or CSC one with each
    slice's indices sorted and summed, a row-sparse operand with rows strictly increasing and
    each row index's rows summed (a coalesced hybrid tensor, or a canonical RowSparse)."""
    return _sparse.coalesce(a, validate_indices)


def to_coo(a, *, validate_indices=True):
    """Row-sparse a (a torch hybrid tensor, a RowSparse) as a 2-D COO matrix of shape (nrows,
    width), width the product of its row shape: its coalesced rows spelled out, an entry at
    every column of each stored row (zeros included), canonical. A torch sparse_coo tensor for
    torch values, a cupyx COO matrix for CuPy ones, a SciPy coo_array for NumPy ones (SciPy
    holds no 16-bit floats: TypeError)."""
    return _sparse.to_coo(a, validate_indices)


def to_row_sparse(a, *, validate_indices=True):
    """Sparse matrix a (SciPy, cupyx or torch; COO, CSR or CSC) grouped by row: a stored row
    for each row index where a has an entry, in increasing order, holding a's values (duplicates
    summed in storage order) at their columns and zeros at the others. A torch hybrid
    sparse_coo tensor (one sparse dimension) for a torch sparse_coo a, else a canonical
    RowSparse of a's values' framework."""
    return _sparse.to_row_sparse(a, validate_indices)


def accumulate(op, dense, a, *, validate_indices=True):
    """dense = op(dense, a) at the coordinates a stores (duplicates summed first), in place;
    the rest of dense is not touched. op: "add", "sub", "minimum" ("min"), "maximum" ("max").
    a row-sparse (RowSparse, or a torch sparse_coo tensor with one sparse dimension): dense of
    shape (nrows, *row_shape), each stored row index's rows summed in storage order, then op
    applied once (torch: table.add_(grad) for "add"). Runs on the current stream of dense's
    framework for CUDA operands. Returns dense."""
    return _sparse.accumulate(op, dense, a, validate_indices)
