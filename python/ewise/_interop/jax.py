"""JAX arrays: immutable, so a result is ewise's own array (host memory or ewise's device pool),
made a JAX array through DLPack once written; JAX shares no stream, so its calls run on the
legacy default stream and wait for it before JAX gets the result."""
import jax
import jax.numpy

from .. import _ewise
from .interface import Adapter, dtype_name, numpy_dtype

# A Python scalar of each weak operand dtype, for JAX to type as it types Python scalars.
_SCALARS = {"bool": True, "i64": 1, "f64": 1.0}


class Jax(Adapter):
    def types(self, op, a, b):
        """JAX's result dtype (jax.eval_shape of jax.numpy's function of op's name on 0-d
        operands of those dtypes, Python scalars as such), computed by the C++ rule that gives
        that dtype: PyTorch's where it does (JAX computes int32 + float32 in float32, as
        PyTorch does), else NumPy's, its result cast into JAX's dtype on store."""
        def abstract(t):
            dtype, weight = t
            return _SCALARS[dtype] if weight == "weak" else \
                jax.ShapeDtypeStruct((), numpy_dtype(dtype))
        result = dtype_name(jax.eval_shape(getattr(jax.numpy, op), abstract(a),
                                           abstract(b)).dtype)
        for rule in ("torch", "numpy"):
            try:
                if _ewise.op_types(op, rule, *a, *b)[1] == result:
                    return result, rule
            except TypeError:  # the rule refuses these dtypes
                pass
        return result, "numpy"

    def check_writable(self, x, what):
        raise ValueError(f"ewise: {what} is a JAX array, and JAX arrays are immutable: leave "
                         "out=None for a new one")

    def empty(self, like, shape, device, dtype=None):
        return _ewise.empty(dtype or dtype_name(like.dtype), list(shape), *device)

    def import_array(self, x):
        return jax.numpy.from_dlpack(x)

    def result(self, x):
        """Imported without a copy where JAX accepts the memory as it is."""
        return jax.numpy.from_dlpack(x)


_JAX = Jax()
ADAPTERS = {"jax": _JAX, "jaxlib": _JAX}  # jaxlib: the package of its arrays' type
