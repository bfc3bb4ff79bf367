"""Dask arrays as dense operands: an operation over a dask.array is a lazy dask.array computed
blockwise by Dask's own element-wise machinery (dask.array.core.elemwise: broadcasting, chunks
unified across operands, NumPy or CuPy arrays and Python scalars beside Dask arrays), each block
by the dense call on its chunks, where the chunks live (NumPy chunks on the CPU backend, CuPy
chunks on their GPU). dask is imported only when a Dask array arrives."""
from ._interop import is_scalar


def is_dask(x):
    """True for a Dask collection (by its type's package: dask is not imported to ask)."""
    return type(x).__module__.partition(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def _empty_like(x):
    """x (a Dask array's meta, an array, or a scalar) with every extent 0: what the call gives
    on it has the result's dtype and array type."""
    if is_dask(x):
        x = x._meta
    return x if is_scalar(x) else x[tuple(slice(0, 0) for _ in x.shape)]


def binary(call, op, a, b, out, kernel):
    """op(a, b) as a Dask array, one of a and b a Dask array (or out). call: the dense call
    (_dense.call's signature). The result's dtype comes from the call on empty operands, so
    that a wrong dtype raises here, when the graph is built, as a wrong shape does (Dask's
    broadcasting check)."""
    if out is not None:
        raise TypeError("ewise: out= with Dask arrays: Dask arrays are immutable (the result is "
                        "returned)")
    import dask.array as da
    dtype = call(op, _empty_like(a), _empty_like(b), None, kernel, None).dtype

    def block(x, y):
        return call(op, x, y, None, kernel, None)

    block.__name__ = f"ewise-{op}"
    return da.core.elemwise(block, a, b, dtype=dtype)
