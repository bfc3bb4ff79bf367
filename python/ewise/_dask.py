"""Dask arrays as operands: an operation over a dask.array is a lazy dask.array computed
blockwise by Dask's own element-wise machinery (dask.array.core.elemwise: broadcasting, chunks
unified across operands, NumPy or CuPy arrays and Python scalars beside Dask arrays), each block
by the dense or sparse call on its chunks, where the chunks live (NumPy and SciPy chunks on the
CPU backend, CuPy and cupyx chunks on their GPU). Sparse chunks are SciPy or cupyx matrices;
chunk boundaries need not line up (Dask slices the blocks to common ones). dask is imported only
when a Dask array arrives."""
import importlib

from ._interop import adapter, is_scalar


def is_dask(x):
    """True for a Dask collection (by its type's package: dask is not imported to ask)."""
    return type(x).__module__.partition(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def any_dask(*xs):
    """True when one of xs is a Dask collection."""
    return any(is_dask(x) for x in xs)


def _no_out(out):
    """TypeError for an out= beside Dask operands."""
    if out is not None:
        raise TypeError("ewise: out= with Dask arrays: Dask arrays are immutable (the result is "
                        "returned)")


def _empty_like(x):
    """x (a Dask array's meta, an array, or a scalar) with every extent 0: what the call gives
    on it has the result's dtype and array type."""
    if is_dask(x):
        x = x._meta
    if is_scalar(x):
        return x
    if adapter(x).is_sparse(x):
        # An empty COO of x's kind (SciPy or cupyx, matrix or array) and dtype, made from its
        # shape: neither slicing nor conversion of x (cupyx's tocoo runs cuSPARSE, on an empty
        # matrix too; SciPy slices CSR as CSR).
        module = type(x).__module__
        if module.partition(".")[0] in ("scipy", "cupyx"):
            from ._interop.scipy import coo_kind
            kind = coo_kind(importlib.import_module(module.rpartition(".")[0]), x)
            return kind(tuple(0 for _ in x.shape), dtype=x.dtype)
        return x[tuple(slice(0, 0) for _ in x.shape)].tocoo()
    if all(extent == 0 for extent in x.shape):
        return x  # a Dask meta already is
    return x[tuple(slice(0, 0) for _ in x.shape)]


def _lazy(x):
    """x as elemwise takes it: a sparse matrix beside Dask arrays as a one-block Dask array (Dask
    would densify it), anything else as it is."""
    if is_dask(x) or is_scalar(x) or not adapter(x).is_sparse(x):
        return x
    import dask.array as da
    return da.from_array(x, chunks=x.shape, asarray=False)


def binary(call, a, b, out, name):
    """call(a, b) (a dense or sparse call with its op and options bound) as a Dask array, a or b
    a Dask array: each block call(a's block, b's block), its result as call gives it (sparse or
    dense). The dtype comes from call on empty operands, so that a wrong dtype raises here, when
    the graph is built, as a wrong shape does (Dask's broadcasting check). name: the blocks'."""
    _no_out(out)
    import dask.array as da
    dtype = call(_empty_like(a), _empty_like(b)).dtype

    def block(x, y):
        return call(x, y)

    block.__name__ = name
    return da.core.elemwise(block, _lazy(a), _lazy(b), dtype=dtype)


def accumulate(call, dense, a):
    """call(dense, a) (accumulate with its op bound) for a Dask dense: a new Dask array, each
    block a copy of dense's block updated by a's block (Dask arrays are immutable, and a block
    may be shared). The call on empty operands first: wrong dtypes raise at graph build."""
    if not is_dask(dense):
        raise TypeError("ewise: accumulate into a non-Dask array with a Dask operand: make dense "
                        "a Dask array (the updated array is returned)")
    import dask.array as da
    call(_empty_like(dense).copy(), _empty_like(a))

    def block(d, x):
        d = d.copy()
        call(d, x)
        return d

    block.__name__ = "ewise-accumulate"
    return da.core.elemwise(block, dense, _lazy(a), dtype=dense.dtype)


def accumulate_rows(call, dense, rows, values, nrows, canonical, validate_indices, make):
    """accumulate(op, dense, row-sparse) for a Dask dense (a table in blocks) and a row-sparse
    operand (rows, values, nrows, canonical) of arrays (a step's gradient, small beside the
    table): a new Dask array, each block a copy updated by the stored rows that fall in it
    (their values cut to its columns). make(rows, values, nrows, canonical): a RowSparse. The
    rows are checked here, when validate_indices (a block would drop a row outside the table), and
    the dtypes by the call on empty operands."""
    if any_dask(rows, values):
        raise TypeError("ewise: a row-sparse operand of Dask arrays: pass its rows and values as "
                        "arrays (the table may be a Dask array)")
    if dense.ndim < 1 or dense.shape[0] != nrows:
        raise ValueError(f"ewise: accumulate: the table's shape {dense.shape} does not have "
                         f"the row-sparse operand's {nrows} rows")
    if validate_indices:
        outside = (rows < 0) | (rows >= nrows)
        if bool(outside.any()):
            raise ValueError(f"ewise: a row index {int(rows[outside][0])} outside [0, {nrows})")
    empty = dense._meta.reshape((0,) + tuple(dense.shape[1:]))  # (size 0: any such shape)
    call(empty.copy(), make(rows[:0], values[:0], 0, canonical))  # the dtypes

    def block(d, block_info=None):
        (r0, r1), *columns = block_info[0]["array-location"]
        kept = (rows >= r0) & (rows < r1)
        cut = values[kept][(slice(None),) + tuple(slice(lo, hi) for lo, hi in columns)]
        # contiguous, as a row-sparse operand's values must be (torch: contiguous(); NumPy,
        # CuPy: a copy is C-ordered)
        cut = cut.contiguous() if hasattr(cut, "contiguous") else cut.copy()
        d = d.copy()
        call(d, make(rows[kept] - r0, cut, r1 - r0, canonical))
        return d

    return dense.map_blocks(block, dtype=dense.dtype, meta=dense._meta)
