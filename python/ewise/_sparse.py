"""The sparse calls, under the sparse API (ewise.sparse) and the PyTorch operators
(ewise.torch.sparse_multiply): operands read by their framework's adapter, CSR and CSC as they
are (when every sparse operand of the call is one; else as COO), others as COO, run on the
host or on the stream of the first operand's framework (_interop.Call), results of that
framework's kind (two compressed operands of one framework first try its fast route,
Adapter.compressed_pair: the same reads and result in fewer steps). Operands of different
dtypes promote by the sparse operand's framework's rules (PyTorch's for torch tensors, NumPy
2's otherwise: the C++ SparseOptions::promotion); a Python bool, int or float is a weak scalar,
as the framework takes it. Dask arrays: _dask, a lazy Dask array whose blocks are calls of
these."""
import functools
import math

from . import _dask, _ewise
from ._interop import Call, adapter, check_devices, check_writable, operand, types
from ._interop.interface import Compressed, Operand
from ._ops import op as _op

# Python's scalar types: weak in promotion (NumPy scalars, which subclass some of them, are not:
# they are passed as 0-d arrays).
_PYTHON_SCALARS = (bool, int, float)


def _sparse_operand(x, what, compressed=True):
    """x as an _interop Compressed (CSR and CSC, read as they are, unless not `compressed`) or
    Operand (COO); TypeError for anything but a sparse matrix ewise takes."""
    found = adapter(x)
    if not found.is_sparse(x):
        raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a sparse matrix ewise "
                        "takes (scipy.sparse, cupyx.scipy.sparse, or a torch.sparse_coo, "
                        "sparse_csr or sparse_csc tensor)")
    if compressed:
        c = found.compressed(x, what)
        if c is not None:
            return c
    return found.coo(x, what)


def _sparse_pair(a, oa, b):
    """a and b as sparse operands read alike (oa: a as _sparse_operand read it): both
    compressed where both are CSR or CSC (the result then in a's format, read and made as it
    is), else both COO."""
    ob = _sparse_operand(b, "b")
    if isinstance(oa, Compressed) and isinstance(ob, Compressed):
        if oa.offsets.dtype != ob.offsets.dtype:  # int32 with int64: both int64, as SciPy does
            oa, ob = _wide(oa), _wide(ob)
        return oa, ob
    return (oa if isinstance(oa, Operand) else _sparse_operand(a, "a", False),
            ob if isinstance(ob, Operand) else _sparse_operand(b, "b", False))


def _wide(op):
    """A Compressed with int64 offsets and indices (a copy of int32 ones)."""
    def wide(x):
        return x.long() if hasattr(x, "long") else x.astype("int64", copy=False)
    return op._replace(offsets=wide(op.offsets), indices=wide(op.indices))


def _coo(run, op):
    """A sparse operand (Operand or Compressed) as the call imports it."""
    if isinstance(op, Compressed):
        return _ewise.Compressed(run.array(op.offsets), run.array(op.indices),
                                 run.array(op.vals), op.shape[0], op.shape[1], op.format,
                                 op.canonical)
    return _ewise.Coo(run.array(op.rows), run.array(op.cols), run.array(op.vals), op.shape[0],
                      op.shape[1], op.canonical)


def _form(op, name):
    """The extension's entry point `name` for operands read as op is: compressed_<name> for a
    Compressed."""
    return getattr(_ewise, "compressed_" + name if isinstance(op, Compressed) else name)


def _result(like, op, arrays, device, name, other):
    """The sparse result of call `name` (its C++ name) on like (op: its operand) and `other`
    (the other operand's values, a dense operand or a Python scalar), of like's kind: compressed
    in op's format, or COO (in like's format: coo_result). An empty device result comes without
    values (None): they are made here, of the call's result dtype (the framework's promotion of
    op's values and `other`, as the C++ call's result; not necessarily op's dtype)."""
    if arrays[-1] is None:
        dtype = types(name, op.vals, op.vals, other)[0]
        arrays = (*arrays[:-1], op.adapter.empty(op.vals, (0,), device, dtype))
    if isinstance(op, Compressed):
        return op.adapter.compressed_result(like, op, arrays, device)
    return op.adapter.coo_result(like, op, arrays, device)


def _promotion(vals):
    """The promotion rule of the framework of a sparse operand's values."""
    return "torch" if type(vals).__module__.split(".")[0] == "torch" else "numpy"


def _options(vals, drop_zeros=False, algorithm="automatic", fill_a=0.0, fill_b=0.0,
             validate_indices=True):
    """SparseOptions for a call whose first sparse operand has the values `vals`."""
    o = _ewise.SparseOptions()
    o.drop_zeros = bool(drop_zeros)
    o.algorithm = algorithm
    o.fill_a = float(fill_a)
    o.fill_b = float(fill_b)
    o.validate_indices = bool(validate_indices)
    o.promotion = _promotion(vals)
    return o


def _result_like(vals, dense):
    """An empty array of dense's framework with the dtype vals op dense has there: the
    framework's own promotion, asked of empty arrays (a 0-d dense kept 0-d, which PyTorch ranks
    below tensors with dims)."""
    return vals.reshape(-1)[:0] + (dense.reshape(-1)[:0] if dense.ndim else dense)


def _scalar_result(a, oa, name, scalar, call):
    """call(a's COO, stream, stream_owner), operation `name` of a and a Python scalar, as a COO
    of a's kind."""
    device = check_devices(a=oa.vals)
    with Call(a, device) as run:
        arrays = call(_coo(run, oa), run.stream, run.stream_owner)
    return _result(a, oa, arrays, device, name, scalar)


def multiply(a, b, drop_zeros=False, algorithm="automatic", validate_indices=True,
             autograd=None):
    """a ⊙ b (see ewise.sparse.multiply). autograd(a, b, drop_zeros, validate_indices): what
    runs a call with a torch operand that requires a gradient while grad mode is on
    (ewise.torch.sparse_multiply); None for calls that never have one."""
    fast = adapter(a).compressed_pair(a, b, _ewise.compressed_multiply, lambda vals: _options(
        vals, drop_zeros, algorithm, validate_indices=validate_indices))
    if fast is not None:
        oa, other, arrays, device = fast
        return _result(a, oa, arrays, device, "multiply", other)
    if _dask.any_dask(a, b):
        return _dask.binary(functools.partial(
            multiply, drop_zeros=drop_zeros, algorithm=algorithm,
            validate_indices=validate_indices), a, b, None, "ewise-multiply")
    ra = _row_sparse(a)
    if ra is not None:
        return _multiply_rows(a, ra, b, drop_zeros, validate_indices)
    oa = _sparse_operand(a, "a")
    options = _options(oa.vals, drop_zeros, algorithm, validate_indices=validate_indices)
    if type(b) in _PYTHON_SCALARS:
        return _scalar_result(a, oa, "multiply", b, lambda coo, stream, owner: _form(
            oa, "multiply_scalar")(coo, b, options, stream, owner))
    if adapter(b).is_sparse(b):
        oa, ob = _sparse_pair(a, oa, b)
        device = check_devices(a=oa.vals, b=ob.vals)
        with Call(a, device) as run:
            arrays = _form(oa, "multiply")(_coo(run, oa), _coo(run, ob), options, run.stream,
                                     run.stream_owner)
        return _result(a, oa, arrays, device, "multiply", ob.vals)
    b = operand(b)
    device = check_devices(a=oa.vals, b=b)
    if autograd is not None and oa.adapter.needs_grad(a, b):
        return autograd(a, b, drop_zeros, validate_indices)
    if (not drop_zeros and isinstance(oa, Operand) and oa.adapter.shares_pattern(a, oa)
            and _result_like(oa.vals, b).dtype == oa.vals.dtype):
        # Only the values are computed (multiply_values); the result shares a's indices.
        vals = oa.adapter.values_like(oa)
        with Call(a, device) as run:
            _ewise.multiply_values(_coo(run, oa), run.array(b), run.array(vals), options,
                                   run.stream)
        return oa.adapter.with_values(a, vals, oa)
    with Call(a, device) as run:
        arrays = _form(oa, "multiply_dense")(_coo(run, oa), run.array(b), options, run.stream,
                                       run.stream_owner)
    return _result(a, oa, arrays, device, "multiply", b)


def _multiply_rows(a, ra, b, drop_zeros, validate_indices):
    """a ⊙ b of a row-sparse a (ra: its (rows, values, nrows, canonical)) and a dense operand
    or a Python scalar b: a's coalesced pattern, each value times b's element at its (row,
    position in the row), of a's kind (row scaling: b of shape (nrows, 1, ...))."""
    rows, vals, nrows, canonical = ra
    row_shape = tuple(vals.shape[1:])
    width = math.prod(int(e) for e in row_shape)
    options = _options(vals, drop_zeros, validate_indices=validate_indices)
    found = adapter(vals)
    if found.needs_grad(a, vals, b):
        raise TypeError("ewise: multiply: autograd through a row-sparse operand is not "
                        "recorded; call it under torch.no_grad() or detach the operands")
    if type(b) in _PYTHON_SCALARS:
        device = check_devices(a=vals, a_rows=rows)
        with Call(vals, device) as run:
            arrays = _ewise.multiply_rows_scalar(
                _rows_operand(run, rows, vals, nrows, canonical, width), b, options, run.stream,
                run.stream_owner)
    else:
        if _row_sparse(b) is not None or adapter(b).is_sparse(b):
            raise TypeError("ewise: multiply: a row-sparse a takes a dense or scalar b; for a "
                            "sparse b convert a to COO first")
        b = operand(b)
        device = check_devices(a=vals, a_rows=rows, b=b)
        table = _rows_factor(b, nrows, row_shape, width)
        with Call(vals, device) as run:
            arrays = _ewise.multiply_rows(
                _rows_operand(run, rows, vals, nrows, canonical, width), run.array(table),
                options, run.stream, run.stream_owner)
    return _rows_result(a, found, arrays, rows, vals, row_shape, nrows, device,
                        lambda: types("multiply", vals, vals, b)[0])


def _rows_factor(b, nrows, row_shape, width):
    """A dense factor b of a row-sparse operand of logical shape (nrows, *row_shape) as ewise's
    2-D broadcast reads it against (nrows, width): b itself for rows of one dimension (NumPy's
    broadcast and ewise's agree there), else b's leading dimension and its row flattened (a
    view where the framework's reshape gives one) or, for a row of ones, kept as a column.
    ValueError for a b that broadcasts within a row's dimensions otherwise."""
    if b.ndim == 0 or len(row_shape) == 1:
        return b
    inner = tuple(int(e) for e in b.shape[1:])
    if b.ndim == 1 + len(row_shape) and inner in (row_shape, (1,) * len(row_shape)):
        return b.reshape(int(b.shape[0]), width if inner == row_shape else 1)
    raise ValueError(f"ewise: multiply: dense of shape {tuple(b.shape)} against a row-sparse "
                     f"operand of {nrows} rows of shape {row_shape}: pass (nrows or 1, *row "
                     f"shape) or (nrows or 1, 1, ..., 1), or broadcast it first")


def _rows_operand(run, rows, vals, nrows, canonical, width):
    """A row-sparse operand as ewise._ewise.Rows: its values read as an (nnz, width) block."""
    return _ewise.Rows(run.array(rows), run.array(vals.reshape(vals.shape[0], width)), nrows,
                       canonical)


def _union_rows(op, a, ra, rb, drop_zeros, fill_a, fill_b, validate_indices):
    """a op b of two row-sparse operands (ra, rb: their (rows, values, nrows, canonical)): the
    canonical row-sparse result, of a's kind (a torch hybrid tensor, else a RowSparse of a's
    values' framework)."""
    (rows_a, vals_a, nrows, canonical_a), (rows_b, vals_b, nrows_b, canonical_b) = ra, rb
    row_shape = tuple(vals_a.shape[1:])
    if nrows_b != nrows or tuple(vals_b.shape[1:]) != row_shape:
        raise ValueError(f"ewise: {op}: row-sparse operands of different shapes: a has {nrows} "
                         f"rows of shape {row_shape}, b {nrows_b} rows of shape "
                         f"{tuple(vals_b.shape[1:])}")
    width = math.prod(int(e) for e in row_shape)
    device = check_devices(a=vals_a, b=vals_b, a_rows=rows_a, b_rows=rows_b)
    options = _options(vals_a, drop_zeros, fill_a=fill_a, fill_b=fill_b,
                       validate_indices=validate_indices)
    with Call(vals_a, device) as run:
        arrays = _ewise.combine_rows(
            op, _rows_operand(run, rows_a, vals_a, nrows, canonical_a, width),
            _rows_operand(run, rows_b, vals_b, nrows, canonical_b, width), options, run.stream,
            run.stream_owner)
    found = adapter(vals_a)

    def empty_dtype():
        return found.types(op, (found.dtype_name(vals_a), "tensor"),
                           (adapter(vals_b).dtype_name(vals_b), "tensor"))[0]
    return _rows_result(a, found, arrays, rows_a, vals_a, row_shape, nrows, device, empty_dtype)


def _rows_result(a, found, arrays, rows_a, vals_a, row_shape, nrows, device, empty_dtype):
    """A canonical row-sparse result of a's kind over the (rows, flat values) ewise returned
    (found: the adapter of a's values; empty_dtype() the result dtype's name, asked only for an
    empty device result, whose arrays are None and made here in the framework)."""
    if arrays[0] is None:
        rows = found.empty(vals_a, (0,), device, found.dtype_name(rows_a))
        vals = found.empty(vals_a, (0, *row_shape), device, empty_dtype())
    else:
        rows, vals = (found.import_array(x) for x in arrays)
        vals = vals.reshape(rows.shape[0], *row_shape)
    result = found.row_sparse_result(a, rows, vals, nrows)
    return result if result is not None else RowSparse(rows, vals, nrows, canonical=True)


def coalesce(a, validate_indices):
    """a's canonical form, of its kind and format (see ewise.sparse.coalesce)."""
    row_sparse = _row_sparse(a)
    if row_sparse is not None:
        rows, vals, nrows, canonical = row_sparse
        row_shape = tuple(vals.shape[1:])
        device = check_devices(a=vals, a_rows=rows)
        options = _options(vals, validate_indices=validate_indices)
        with Call(vals, device) as run:
            arrays = _ewise.coalesce_rows(
                _rows_operand(run, rows, vals, nrows, canonical,
                              math.prod(int(e) for e in row_shape)),
                options, run.stream, run.stream_owner)
        found = adapter(vals)
        return _rows_result(a, found, arrays, rows, vals, row_shape, nrows, device,
                            lambda: found.dtype_name(vals))
    oa = _sparse_operand(a, "a")
    device = check_devices(a=oa.vals)
    with Call(a, device) as run:
        arrays = _form(oa, "coalesce")(_coo(run, oa), _options(
            oa.vals, validate_indices=validate_indices), run.stream, run.stream_owner)
    return _result(a, oa, arrays, device, "add", oa.vals)


def union(op, a, b, out, drop_zeros, fill_a, fill_b, validate_indices):
    """a op b for add, sub, min, max (see ewise.sparse.add)."""
    fast = None if out is not None else adapter(a).compressed_pair(
        a, b, functools.partial(_ewise.compressed_combine, op), lambda vals: _options(
            vals, drop_zeros, fill_a=fill_a, fill_b=fill_b, validate_indices=validate_indices))
    if fast is not None:
        oa, other, arrays, device = fast
        return _result(a, oa, arrays, device, op, other)
    if _dask.any_dask(a, b, out):
        return _dask.binary(functools.partial(
            union, op, out=None, drop_zeros=drop_zeros, fill_a=fill_a, fill_b=fill_b,
            validate_indices=validate_indices), a, b, out, f"ewise-{op}")
    ra = _row_sparse(a)
    rb = _row_sparse(b) if ra is not None and type(b) not in _PYTHON_SCALARS else None
    if rb is not None:
        if out is not None:
            raise ValueError("ewise: out= is for a dense b (row-sparse op row-sparse returns a "
                             "new operand)")
        return _union_rows(op, a, ra, rb, drop_zeros, fill_a, fill_b, validate_indices)
    oa = _sparse_operand(a, "a")
    options = _options(oa.vals, drop_zeros, fill_a=fill_a, fill_b=fill_b,
                       validate_indices=validate_indices)
    if type(b) in _PYTHON_SCALARS:
        if out is not None:
            raise ValueError("ewise: out= is for a dense b (sparse op scalar returns a new "
                             "matrix)")
        return _scalar_result(a, oa, op, b, lambda coo, stream, owner: _form(
            oa, "combine_scalar")(op, coo, b, options, stream, owner))
    if adapter(b).is_sparse(b):
        if out is not None:
            raise ValueError("ewise: out= is for a dense b (sparse op sparse returns a new "
                             "matrix)")
        oa, ob = _sparse_pair(a, oa, b)
        device = check_devices(a=oa.vals, b=ob.vals)
        with Call(a, device) as run:
            arrays = _form(oa, "combine")(op, _coo(run, oa), _coo(run, ob), options, run.stream,
                                    run.stream_owner)
        return _result(a, oa, arrays, device, op, ob.vals)
    b = operand(b)
    operands = {"a": oa.vals, "b": b} if out is None else {"a": oa.vals, "b": b, "out": out}
    device = check_devices(**operands)
    if out is None:
        # Of the result dtype; asked of b's framework when a's values are of it too.
        like = _result_like(oa.vals, b) if adapter(oa.vals) is adapter(b) else b
        out = adapter(b).empty(like, tuple(oa.shape), device)
    check_writable(out, "out")
    with Call(a, device) as run:
        _form(oa, "combine_dense")(op, _coo(run, oa), run.array(b), run.array(out), options,
                             run.stream)
    return out


class RowSparse:
    """A row-sparse operand (see ewise.sparse.RowSparse)."""

    def __init__(self, rows, values, nrows, canonical=False):
        self.rows, self.values, self.nrows, self.canonical = rows, values, int(nrows), canonical

    def __repr__(self):
        return (f"RowSparse({self.values.shape[0]} stored rows of shape "
                f"{tuple(self.values.shape[1:])}, nrows={self.nrows}, "
                f"canonical={self.canonical})")


def to_coo(a, validate_indices):
    """Row-sparse a as a canonical 2-D COO matrix (see ewise.sparse.to_coo)."""
    row_sparse = _row_sparse(a)
    if row_sparse is None:
        raise TypeError(f"ewise: to_coo: a is a {type(a).__name__}, not a row-sparse operand (an "
                        "ewise.sparse.RowSparse, or a torch sparse_coo tensor with one sparse "
                        "dimension)")
    rows, vals, nrows, canonical = row_sparse
    width = math.prod(int(e) for e in vals.shape[1:])
    device = check_devices(a=vals, a_rows=rows)
    options = _options(vals, validate_indices=validate_indices)
    with Call(vals, device) as run:
        arrays = _ewise.rows_to_coo(_rows_operand(run, rows, vals, nrows, canonical, width),
                                    options, run.stream, run.stream_owner)
    found = adapter(vals)
    # The COO matrix of vals' framework (a torch sparse_coo tensor, a cupyx or SciPy COO matrix),
    # made as a COO result like a dense operand's: the shape and dtypes below.
    return found.coo_result(vals, Operand(found, rows, rows, vals, (nrows, width), True), arrays,
                            device)


def to_row_sparse(a, validate_indices):
    """Sparse matrix a grouped by row (see ewise.sparse.to_row_sparse)."""
    oa = _sparse_operand(a, "a", compressed=False)
    nrows, ncols = oa.shape
    device = check_devices(a=oa.vals)
    with Call(a, device) as run:
        arrays = _ewise.coo_to_rows(_coo(run, oa), _options(
            oa.vals, validate_indices=validate_indices), run.stream, run.stream_owner)
    found = adapter(oa.vals)
    return _rows_result(a, found, arrays, oa.rows, oa.vals, (ncols,), nrows, device,
                        lambda: found.dtype_name(oa.vals))


def _row_sparse(a):
    """a as (rows, values, nrows, canonical) when it is row-sparse: a RowSparse, or its
    framework's own row-sparse form (a torch sparse_coo tensor with one sparse dimension); else
    None."""
    if isinstance(a, RowSparse):
        return a.rows, a.values, a.nrows, bool(a.canonical)
    return adapter(a).row_sparse(a)


def _rows_table(dense, nrows, row_shape):
    """dense, of shape (nrows, *row_shape), as the (nrows, width) table it is (a view: written
    through). ValueError for another shape or for trailing dimensions that are not one block of
    memory (their product is then no single stride)."""
    if tuple(dense.shape) != (nrows, *row_shape):
        raise ValueError(f"ewise: accumulate: dense has shape {tuple(dense.shape)} but the "
                         f"row-sparse operand's {nrows} rows of shape {tuple(row_shape)} need "
                         f"{(nrows, *row_shape)}")
    width = 1
    for extent in row_shape:
        width *= int(extent)
    if len(row_shape) > 1:
        shape, strides = list(dense.shape[1:]), list(dense.stride() if callable(
            getattr(dense, "stride", None)) else dense.strides)[1:]
        kept = [(e, st) for e, st in zip(shape, strides) if e != 1]
        if any(kept[i][1] != kept[i + 1][1] * kept[i + 1][0] for i in range(len(kept) - 1)):
            raise ValueError(f"ewise: accumulate: dense's row dimensions {tuple(row_shape)} are "
                             "not one block of memory (strides "
                             f"{tuple(strides)}): pass a table whose rows are")
    return dense.reshape(nrows, width)


def _accumulate_rows(op, dense, rows, vals, nrows, canonical, validate_indices):
    """dense = op(dense, a) at the rows a stores, a row-sparse operand."""
    for what, x in (("rows", rows), ("values", vals)):
        if not hasattr(x, "ndim") or not hasattr(x, "shape"):
            raise TypeError(f"ewise: accumulate: a row-sparse operand's {what} is a "
                            f"{type(x).__name__}, not an array (NumPy, CuPy, PyTorch, JAX)")
    if rows.ndim != 1 or vals.ndim < 1 or vals.shape[0] != rows.shape[0]:
        raise ValueError(f"ewise: accumulate: a row-sparse operand needs 1-D rows and values "
                         f"of shape (nnz, ...) with nnz = len(rows); got rows of shape "
                         f"{tuple(rows.shape)}, values of shape {tuple(vals.shape)}")
    if vals.ndim == 2 and dense.ndim == 2 and tuple(dense.shape) == (nrows, vals.shape[1]):
        table = dense  # already the (nrows, width) table: no views made
    else:
        table = _rows_table(dense, nrows, tuple(vals.shape[1:]))
        vals = vals.reshape(vals.shape[0], table.shape[1])
    device = check_devices(dense=dense, rows=rows, values=vals)
    check_writable(dense, "dense")
    with Call(dense, device) as run:
        _ewise.accumulate_rows(op, run.array(table), run.array(rows), run.array(vals), nrows,
                               canonical, _options(vals, validate_indices=validate_indices),
                               run.stream)
    return dense


def accumulate(op, dense, a, validate_indices):
    """dense = op(dense, a) at a's coordinates (see ewise.sparse.accumulate)."""
    op = _op(op)
    row_sparse = _row_sparse(a) if not _dask.is_dask(a) else None
    if row_sparse is not None:
        if _dask.is_dask(dense):
            return _dask.accumulate_rows(
                functools.partial(accumulate, op, validate_indices=validate_indices), dense,
                *row_sparse, validate_indices, RowSparse)
        return _accumulate_rows(op, dense, *row_sparse, validate_indices)
    if _dask.any_dask(dense, a):
        return _dask.accumulate(functools.partial(
            accumulate, op, validate_indices=validate_indices), dense, a)
    oa = _sparse_operand(a, "a")
    device = check_devices(dense=dense, a=oa.vals)
    check_writable(dense, "dense")
    with Call(dense, device) as run:
        _form(oa, "accumulate")(op, run.array(dense), _coo(run, oa),
                          _options(oa.vals, validate_indices=validate_indices), run.stream)
    return dense
