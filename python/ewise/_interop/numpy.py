"""NumPy arrays, and the arrays of every other DLPack producer ewise has no module for
(OTHER): host results are NumPy arrays; on the GPU such a producer needs out=."""
import numpy

from .interface import KDL_CPU, Adapter


class NumPy(Adapter):
    """own: NumPy's arrays (a result takes the operand's dtype), else another producer's (the
    dtype is read through DLPack)."""

    def __init__(self, own):
        self._own = own

    def operand(self, x):
        """NumPy scalars (numpy.float32(2)) as 0-d arrays."""
        return numpy.asarray(x) if isinstance(x, numpy.generic) else x

    def check_writable(self, x, what):
        """A read-only array as out is a ValueError here, not a failed DLPack import."""
        if isinstance(x, numpy.ndarray) and not x.flags.writeable:
            raise ValueError(f"ewise: {what} is a read-only array")

    def empty(self, like, shape, device):
        if device[0] != KDL_CPU:
            return super().empty(like, shape, device)
        return numpy.empty(shape, dtype=like.dtype if self._own
                           else numpy.from_dlpack(like).dtype)


ADAPTERS = {"numpy": NumPy(own=True)}
OTHER = NumPy(own=False)
