"""The interface each framework's module implements (its ADAPTERS), and the behaviour of a
framework that has nothing of its own to add: DLPack in, no stream to share, no sparse format."""
from collections import namedtuple

KDL_CPU = 1  # DLPack kDLCPU; every other device type ewise takes is a CUDA one

# NumPy's dtype names as ewise names them (JAX's bfloat16 is ml_dtypes', named so too).
DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
               "int32": "i32", "int64": "i64"}

# A sparse operand in COO form: the adapter of the framework it came from, its row, column and
# value arrays (contiguous 1-D arrays of that framework; rows and cols of one dtype), its shape,
# and whether ewise may take it as canonical.
Operand = namedtuple("Operand", "adapter rows cols vals shape canonical")


class Adapter:
    """One framework's arrays as ewise reads and makes them: dense operands (operand,
    check_writable, empty, stream, export, result) and sparse matrices (needs_grad, is_sparse,
    shares_pattern). The defaults here are a framework with none of its own. An adapter whose
    is_sparse can be true also has coo(x, what), x as an Operand, and coo_result(like, op,
    arrays, device), a canonical COO of like's kind over the (rows, cols, vals) ewise returned
    for op (like's Operand); one whose shares_pattern can be true has values_like(op) and
    with_values(x, vals, op)."""

    def operand(self, x):
        """An input operand as ewise imports it."""
        return x

    def check_writable(self, x, what):
        """Raises ValueError when x cannot be written as `out` (what: its name in messages)."""

    def empty(self, like, shape, device):
        """An uninitialized array of like's framework, dtype and device (DLPack (type, id))."""
        raise TypeError(f"ewise: cannot allocate a result like a {type(like).__name__} on the "
                        "GPU (PyTorch, CuPy and JAX are known): pass out=")

    def stream(self, device_id):
        """(device context, stream object, stream handle) of the framework's current stream on
        a CUDA device, or None when it has none to share (the call then runs on the legacy
        default stream and waits for it)."""
        return None

    def export(self, x, call):
        """x as a DLPack-exporting object for a GPU call (call: the Call it runs in, whose
        stream its producer orders its pending work before). DLPack's stream numbers: 1 is the
        legacy default stream (handle 0), 0 is not allowed."""
        return x.__dlpack__(stream=call.stream if call.stream != 0 else 1)

    def result(self, x):
        """A dense result ewise allocated (empty) as the framework hands it to the caller."""
        return x

    def needs_grad(self, *operands):
        """True when a call on these operands is to be recorded for autograd."""
        return False

    def is_sparse(self, x):
        """True for a sparse matrix of this framework that ewise takes."""
        return False

    def shares_pattern(self, x, op):
        """True when x ⊙ dense may keep x's own indices (op: x's Operand): only the values are
        computed, into values_like(op), and with_values makes the result."""
        return False
