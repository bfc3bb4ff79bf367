"""NumPy arrays, and the arrays of every other DLPack producer ewise has no module for
(OTHER): host results are NumPy arrays; on the GPU such a producer needs out=."""
import numpy

from .interface import KDL_CPU, Adapter, dtype_name, numpy_dtype
from .views import interface_view


def numpy_result(x):
    """A host result ewise allocated, as NumPy's ufuncs hand theirs over: a 0-d one as a NumPy
    scalar of its dtype (np.add(np.float32(1), 2) is a float32 scalar, not a 0-d array)."""
    return x if x.ndim else x[()]


class NumPy(Adapter):
    """own: NumPy's arrays, else another producer's (the dtype is read through DLPack)."""

    def __init__(self, own):
        self._own = own

    def operand(self, x):
        """NumPy scalars (numpy.float32(2)) as 0-d arrays: typed operands, not weak."""
        return numpy.asarray(x) if isinstance(x, numpy.generic) else x

    def dtype_name(self, x):
        return dtype_name(x.dtype if self._own else numpy.from_dlpack(x).dtype)

    def check_writable(self, x, what):
        """A read-only array as out is a ValueError here, not a failed DLPack import."""
        if isinstance(x, numpy.ndarray) and not x.flags.writeable:
            raise ValueError(f"ewise: {what} is a read-only array")

    def empty(self, like, shape, device, dtype=None):
        if device[0] != KDL_CPU:
            return super().empty(like, shape, device, dtype)
        if dtype is not None:
            return numpy.empty(shape, dtype=numpy_dtype(dtype))
        return numpy.empty(shape, dtype=like.dtype if self._own
                           else numpy.from_dlpack(like).dtype)

    def result(self, x):
        return numpy_result(x)

    def coo_result(self, like, op, arrays, device):
        """A SciPy coo_array over ewise's host arrays, without a copy, marked canonical: the
        COO form of a row-sparse operand of NumPy arrays (ewise.sparse.to_coo). SciPy's sparse
        matrices hold no 16-bit floats: TypeError for those."""
        import scipy.sparse
        rows, cols, vals = arrays
        try:
            result = scipy.sparse.coo_array((vals, (rows, cols)), shape=op.shape, copy=False)
        except ValueError as e:
            raise TypeError(f"ewise: to_coo: {e}") from None
        result.has_canonical_format = True
        return result

    def host_view(self, x):
        """bfloat16 arrays (ml_dtypes', of kind "V"; dtype.name costs microseconds), which NumPy
        cannot export through DLPack, as a view of their __array_interface__ (other "V" dtypes
        arrive as DLPack's opaque code, which ewise refuses as an unsupported dtype)."""
        if self._own and x.dtype.kind == "V":
            return interface_view(x, x.__array_interface__, (KDL_CPU, 0))
        return x


ADAPTERS = {"numpy": NumPy(own=True)}
OTHER = NumPy(own=False)
