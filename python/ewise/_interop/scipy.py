"""scipy.sparse matrices (host), and what cupyx.scipy.sparse shares with them (cupy.py): CSR and
CSC are read as they are (compressed operands of the C++ library), any other format through
tocoo(); a result takes the first operand's format (csr, csc or coo; a canonical COO for the
others) and kind (matrix or array)."""
import numpy

from .interface import Adapter, Compressed, Operand

# The formats a SciPy result is returned in (the operand's own); any other gives a COO.
KEPT_FORMATS = ("csr", "csc", "coo")


def coo_operand(adapter, x, xp, canonical=False):
    """x (a SciPy-API sparse matrix) as an Operand: its COO arrays of the array module xp,
    contiguous, rows and cols of one dtype; taken as canonical when `canonical`. A SciPy CSR or
    CSC matrix's compressed indices are expanded with numpy.repeat (0.3 ms for 1.7M entries,
    against 2.4 for tocoo, whose index checks the call makes anyway); the others go through
    tocoo."""
    if xp is numpy and x.format in ("csr", "csc"):
        nnz, name = int(x.indptr[-1]), x.format.upper()
        counts = numpy.diff(x.indptr)
        if counts.size and counts.min() < 0:
            k = int(numpy.argmax(counts < 0))
            raise ValueError(f"ewise: {name} offsets decrease: indptr[{k}] = {x.indptr[k]} > "
                             f"indptr[{k + 1}] = {x.indptr[k + 1]}")
        if x.indptr[0] != 0 or nnz > min(len(x.indices), len(x.data)):
            raise ValueError(f"ewise: {name} offsets run from {x.indptr[0]} to {nnz}, not from 0 "
                             f"to at most the {min(len(x.indices), len(x.data))} entries stored")
        major = numpy.repeat(numpy.arange(counts.size, dtype=x.indices.dtype), counts)
        minor, vals = x.indices[:nnz], x.data[:nnz]
        rows, cols = (major, minor) if x.format == "csr" else (minor, major)
    else:
        coo = x.tocoo(copy=False)
        rows, cols, vals = coo.row, coo.col, coo.data
    if rows.dtype != cols.dtype:
        rows, cols = rows.astype(numpy.int64), cols.astype(numpy.int64)
    rows, cols, vals = (xp.ascontiguousarray(v) for v in (rows, cols, vals))
    return Operand(adapter, rows, cols, vals, x.shape, canonical)


def compressed_operand(adapter, x, xp, canonical):
    """x (a SciPy-API sparse matrix) as a Compressed when it is CSR or CSC: its indptr, and its
    indices and data up to indptr[-1] (SciPy's arrays may hold more), contiguous arrays of the
    array module xp, indptr and indices of one dtype; None for other formats. `canonical`: what
    the matrix promises (its slices sorted and duplicate-free; checked in the call)."""
    if x.format not in ("csr", "csc"):
        return None
    offsets, indices, vals = x.indptr, x.indices, x.data
    if xp is numpy:  # cupyx keeps exact arrays; reading indptr[-1] there would synchronize
        nnz = int(offsets[-1])
        indices, vals = indices[:nnz], vals[:nnz]
    if offsets.dtype != indices.dtype:
        offsets, indices = offsets.astype(numpy.int64), indices.astype(numpy.int64)
    offsets, indices, vals = (xp.ascontiguousarray(v) for v in (offsets, indices, vals))
    return Compressed(adapter, offsets, indices, vals, x.shape, x.format, bool(canonical))


def compressed_kind(module, like, fmt, arrays, shape):
    """A matrix of like's kind (sparse_kind) and format fmt over (offsets, indices, vals),
    without a copy, marked canonical."""
    offsets, indices, vals = arrays
    result = sparse_kind(module, like, fmt)((vals, indices, offsets), shape=shape, copy=False)
    result.has_canonical_format = True
    return result


def sparse_kind(module, like, fmt):
    """The class of format fmt of like's kind in a SciPy-API sparse module: <fmt>_array for
    sparse arrays, <fmt>_matrix for matrices."""
    sparray = getattr(module, "sparray", None)
    array = sparray is not None and isinstance(like, sparray)
    return getattr(module, fmt + ("_array" if array else "_matrix"))


def coo_kind(module, like):
    """The COO class of like's kind (sparse_kind)."""
    return sparse_kind(module, like, "coo")


class SciPy(Adapter):
    def is_sparse(self, x):
        import scipy.sparse
        return scipy.sparse.issparse(x)

    def coo(self, x, what):
        """Canonical where that follows from the format: a CSR matrix whose has_canonical_format
        is set (sorted indices, no duplicates) reads as row-major sorted, duplicate-free
        coordinates (the promise is checked in the call: host views always are); a COO's flag
        is not relied on. (cupyx's flag is not read: finding it out synchronizes.)"""
        return coo_operand(self, x, numpy, x.format == "csr" and bool(x.has_canonical_format))

    def compressed(self, x, what):
        """CSR and CSC read as they are; canonical when the matrix's has_canonical_format says
        so. SciPy finds that out once, in one pass, when no operation set it: asked only of
        offsets that stay inside the stored indices (its pass reads past them otherwise; the
        call then refuses the offsets)."""
        if x.format not in ("csr", "csc"):
            return None
        known = x.__dict__.get("_has_canonical_format")
        if known is None:
            known = (x.indptr.size > 0 and x.indptr.max() <= min(x.indices.size, x.data.size)
                     and x.has_canonical_format)
        return compressed_operand(self, x, numpy, known)

    def compressed_result(self, like, op, arrays, device):
        import scipy.sparse
        return compressed_kind(scipy.sparse, like, op.format, arrays, op.shape)

    def coo_result(self, like, op, arrays, device):
        """NumPy arrays over ewise's result, without a copy: a CSR's column indices and values
        are the canonical COO's own, its row offsets found by a binary search of the sorted
        rows for each row's start (nrows searches, against SciPy's compression, which copies
        every entry: 15 ms of a 3.2M-entry union's 66 on the 2-core CI machine)."""
        import scipy.sparse
        rows, cols, vals = arrays
        if like.format == "csr":
            nrows = op.shape[0]
            # needles of the rows' dtype where it holds nrows (others make NumPy convert the
            # whole rows array: 13 of the 15 ms of 6M rows on the 2-core CI machine)
            needles = rows.dtype if nrows < numpy.iinfo(rows.dtype).max else numpy.int64
            offsets = numpy.searchsorted(rows, numpy.arange(nrows + 1, dtype=needles))
            # SciPy keeps one index dtype for both arrays, wide enough for nnz
            index = rows.dtype if vals.size <= numpy.iinfo(rows.dtype).max else numpy.int64
            result = sparse_kind(scipy.sparse, like, "csr")(
                (vals, cols.astype(index, copy=False), offsets.astype(index, copy=False)),
                shape=op.shape, copy=False)
            result.has_canonical_format = True
            return result
        result = coo_kind(scipy.sparse, like)((vals, (rows, cols)), shape=op.shape, copy=False)
        result.has_canonical_format = True
        # To CSC: SciPy's compression of a canonical COO, one counting pass (no sort: each
        # column's entries come in row order).
        return result.asformat(like.format) if like.format in KEPT_FORMATS else result


ADAPTERS = {"scipy": SciPy()}
