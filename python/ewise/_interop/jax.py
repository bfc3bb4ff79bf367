"""JAX arrays: immutable, so a result is ewise's own array (host memory or ewise's device pool),
made a JAX array through DLPack once written; JAX shares no stream, so its calls run on the
legacy default stream and wait for it before JAX gets the result."""
import jax.numpy

from .. import _ewise
from .interface import DTYPE_NAMES, Adapter


class Jax(Adapter):
    def check_writable(self, x, what):
        raise ValueError(f"ewise: {what} is a JAX array, and JAX arrays are immutable: leave "
                         "out=None for a new one")

    def empty(self, like, shape, device):
        name = DTYPE_NAMES.get(str(like.dtype))
        if name is None:
            raise TypeError(f"ewise: unsupported dtype {like.dtype}: ewise supports "
                            f"{', '.join(DTYPE_NAMES)}")
        return _ewise.empty(name, list(shape), *device)

    def result(self, x):
        """Imported without a copy where JAX accepts the memory as it is."""
        return jax.numpy.from_dlpack(x)


_JAX = Jax()
ADAPTERS = {"jax": _JAX, "jaxlib": _JAX}  # jaxlib: the package of its arrays' type
