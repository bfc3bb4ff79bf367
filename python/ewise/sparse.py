"""ewise.sparse: element-wise operations on SciPy sparse matrices (the CPU backend).

Operands may be any scipy.sparse format (converted to COO; int32 and int64 indices are kept),
unsorted and with duplicate coordinates, which stand for their sum. COO results are canonical
(sorted by row, then column; no duplicates; has_canonical_format set), of the first operand's
kind: scipy.sparse.coo_array for sparse arrays, coo_matrix for matrices.

    multiply(a, b)        a ⊙ b over the coordinates stored in both              -> COO
    multiply(a, dense)    a ⊙ dense in a's pattern (dense broadcasts: (n, m), (m,), (n, 1),
                          scalar)                                                -> COO
    add, sub, minimum, maximum(a, b)     a op b over the coordinates stored in either, a missing
                          operand counting as fill_a / fill_b (0)                -> COO
    add, sub, minimum, maximum(a, dense[, out=])   op(densify(a), dense)         -> dense
    accumulate(op, dense, a)             dense = op(dense, a) at a's coordinates only, in place
                          (a sparse gradient into a weight: accumulate("add", w, g))

Unlike SciPy, ewise keeps stored zeros (a product or sum that is zero stays an entry) unless
drop_zeros=True: with it, multiply and add/sub/minimum/maximum of two matrices give SciPy's
A.multiply(B), A + B, A - B, A.minimum(B), A.maximum(B). Keywords: drop_zeros, algorithm (COO ⊙
COO on the GPU; checked here), fill_a, fill_b, validate_indices (host input is always checked).
"""
import numpy

from . import _array, _check_devices, _check_writable, _empty, _ewise, _op

__all__ = ["multiply", "add", "sub", "minimum", "maximum", "accumulate"]


def _scipy_sparse():
    import scipy.sparse
    return scipy.sparse


def _is_sparse(x):
    return _framework_is_scipy(x) and _scipy_sparse().issparse(x)


def _framework_is_scipy(x):
    return type(x).__module__.startswith("scipy.sparse")


def _coo(x, what):
    """The ewise operand for a SciPy sparse matrix of any format, and its COO form."""
    if not _is_sparse(x):
        raise TypeError(f"ewise: {what} is a {type(x).__name__}, not a scipy.sparse matrix "
                        "(the GPU's cupyx and torch sparse matrices are not supported yet)")
    coo = x.tocoo(copy=False)
    rows, cols = coo.row, coo.col
    if rows.dtype != cols.dtype:
        rows, cols = rows.astype(numpy.int64), cols.astype(numpy.int64)
    rows, cols, vals = (numpy.ascontiguousarray(v) for v in (rows, cols, coo.data))
    return _ewise.Coo(rows, cols, vals, coo.shape[0], coo.shape[1])


def _check_host(**operands):
    """ewise.sparse runs on the CPU backend: dense operands must be host arrays too."""
    device = _check_devices(**operands)
    if device[0] != 1:  # kDLCPU
        raise ValueError(f"ewise: {', '.join(operands)} on cuda:{device[1]}: ewise.sparse runs "
                         "SciPy matrices on the CPU (GPU sparse matrices are not supported yet)")
    return device


def _options(drop_zeros=False, algorithm="automatic", fill_a=0.0, fill_b=0.0,
             validate_indices=True):
    o = _ewise.SparseOptions()
    o.drop_zeros = bool(drop_zeros)
    o.algorithm = algorithm
    o.fill_a = float(fill_a)
    o.fill_b = float(fill_b)
    o.validate_indices = bool(validate_indices)
    return o


def _result(like, shape, arrays):
    """A canonical COO of like's kind over the (rows, cols, vals) ewise returned."""
    sp = _scipy_sparse()
    sparray = getattr(sp, "sparray", None)
    kind = sp.coo_array if sparray is not None and isinstance(like, sparray) else sp.coo_matrix
    rows, cols, vals = arrays
    result = kind((vals, (rows, cols)), shape=shape, copy=False)
    result.has_canonical_format = True
    return result


def multiply(a, b, *, drop_zeros=False, algorithm="automatic", validate_indices=True):
    """a ⊙ b: a sparse b gives the intersection, a dense one a's pattern (both COO)."""
    options = _options(drop_zeros, algorithm, validate_indices=validate_indices)
    if _is_sparse(b):
        arrays = _ewise.multiply(_coo(a, "a"), _coo(b, "b"), options)
    else:
        ca, b = _coo(a, "a"), _array(b)
        _check_host(b=b)
        arrays = _ewise.multiply_dense(ca, b, options)
    return _result(a, a.shape, arrays)


def _union(op, a, b, out, drop_zeros, fill_a, fill_b, validate_indices):
    options = _options(drop_zeros, fill_a=fill_a, fill_b=fill_b,
                       validate_indices=validate_indices)
    ca = _coo(a, "a")
    if _is_sparse(b):
        if out is not None:
            raise ValueError("ewise: out= is for a dense b (sparse op sparse returns a new "
                             "matrix)")
        return _result(a, a.shape, _ewise.combine(op, ca, _coo(b, "b"), options))
    b = _array(b)
    operands = {"b": b} if out is None else {"b": b, "out": out}
    device = _check_host(**operands)
    if out is None:
        out = _empty(b, tuple(a.shape), device)
    _check_writable(out, "out")
    _ewise.combine_dense(op, ca, b, out, options)
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
    Returns dense."""
    op = _op(op)
    ca = _coo(a, "a")
    _check_host(dense=dense)
    _check_writable(dense, "dense")
    _ewise.accumulate(op, dense, ca, _options(validate_indices=validate_indices))
    return dense
