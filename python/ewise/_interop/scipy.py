"""scipy.sparse matrices (host), and what cupyx.scipy.sparse shares with them (cupy.py): any
format is read through tocoo(), and a result is a COO of the operand's kind."""
import numpy

from .interface import Adapter, Operand


def coo_operand(adapter, x, xp):
    """x (a SciPy-API sparse matrix) as an Operand: its COO arrays of the array module xp,
    contiguous, rows and cols of one dtype; not taken as canonical (has_canonical_format is not
    relied on)."""
    coo = x.tocoo(copy=False)
    rows, cols, vals = coo.row, coo.col, coo.data
    if rows.dtype != cols.dtype:
        rows, cols = rows.astype(numpy.int64), cols.astype(numpy.int64)
    rows, cols, vals = (xp.ascontiguousarray(v) for v in (rows, cols, vals))
    return Operand(adapter, rows, cols, vals, coo.shape, False)


def coo_kind(module, like):
    """The COO class of like's kind in a SciPy-API sparse module: coo_array for sparse arrays,
    coo_matrix for matrices."""
    sparray = getattr(module, "sparray", None)
    return module.coo_array if sparray is not None and isinstance(like, sparray) \
        else module.coo_matrix


class SciPy(Adapter):
    def is_sparse(self, x):
        import scipy.sparse
        return scipy.sparse.issparse(x)

    def coo(self, x, what):
        return coo_operand(self, x, numpy)

    def coo_result(self, like, op, arrays, device):
        """NumPy arrays over ewise's result, without a copy."""
        import scipy.sparse
        rows, cols, vals = arrays
        result = coo_kind(scipy.sparse, like)((vals, (rows, cols)), shape=op.shape, copy=False)
        result.has_canonical_format = True
        return result


ADAPTERS = {"scipy": SciPy()}
