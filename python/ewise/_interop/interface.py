"""The interface each framework's module implements (its ADAPTERS), and the behaviour of a
framework that has nothing of its own to add: DLPack in, no stream to share, no sparse format."""
from collections import namedtuple

from .. import _ewise

KDL_CPU = 1  # DLPack kDLCPU; every other device type ewise takes is a CUDA one

# ewise's dtypes: NumPy's name (PyTorch's without "torch."; JAX's and ml_dtypes' bfloat16),
# ewise's name, DLPack's (code, bits). The tables below are made from this one.
_DTYPES = (("bool", "bool", 6, 8), ("int8", "i8", 0, 8), ("uint8", "u8", 1, 8),
           ("int16", "i16", 0, 16), ("uint16", "u16", 1, 16), ("int32", "i32", 0, 32),
           ("uint32", "u32", 1, 32), ("int64", "i64", 0, 64), ("uint64", "u64", 1, 64),
           ("float16", "f16", 2, 16), ("bfloat16", "bf16", 4, 16), ("float32", "f32", 2, 32),
           ("float64", "f64", 2, 64))
DTYPE_NAMES = {numpy_name: name for numpy_name, name, _, _ in _DTYPES}  # NumPy's -> ewise's
NUMPY_NAMES = {name: numpy_name for numpy_name, name, _, _ in _DTYPES}  # ewise's -> NumPy's
DLPACK_DTYPES = {name: (code, bits) for _, name, code, bits in _DTYPES}


_names_by_dtype = {}  # dtype_name's answers by dtype object (str() of NumPy's takes 8 us)


def dtype_name(dtype):
    """ewise's name of a framework's dtype (NumPy's, PyTorch's, CuPy's, JAX's: its name is
    NumPy's after any "torch."); TypeError naming it when ewise does not support it."""
    name = _names_by_dtype.get(dtype)
    if name is None:
        numpy_name = str(dtype).rpartition(".")[2]
        name = DTYPE_NAMES.get(numpy_name)
        if name is None:
            raise TypeError(f"ewise: unsupported dtype {numpy_name}: ewise supports "
                            f"{', '.join(DTYPE_NAMES)}")
        _names_by_dtype[dtype] = name
    return name


def numpy_dtype(name):
    """The NumPy dtype of an ewise dtype name (bf16: ml_dtypes', imported for it)."""
    import numpy
    if name == "bf16":
        import ml_dtypes
        return numpy.dtype(ml_dtypes.bfloat16)
    return numpy.dtype(NUMPY_NAMES[name])

# A sparse operand in COO form: the adapter of the framework it came from, its row, column and
# value arrays (contiguous 1-D arrays of that framework; rows and cols of one dtype), its shape,
# and whether ewise may take it as canonical.
Operand = namedtuple("Operand", "adapter rows cols vals shape canonical")
# A sparse operand in compressed form (CSR or CSC), read as it is: its offsets, indices and
# values (contiguous 1-D arrays of its framework; offsets and indices of one dtype), its shape,
# its format ("csr" or "csc"), and whether its producer promises sorted, duplicate-free slices.
Compressed = namedtuple("Compressed", "adapter offsets indices vals shape format canonical")


class Adapter:
    """One framework's arrays as ewise reads and makes them: dense operands (operand,
    dtype_name, check_writable, empty, stream, export, host_view, result), the dtypes of a dense
    call (promotion, types) and sparse matrices (needs_grad, is_sparse, shares_pattern). The
    defaults here are a framework with none of its own. An adapter whose
    is_sparse can be true also has coo(x, what), x as an Operand, and coo_result(like, op,
    arrays, device), a canonical COO of like's kind over the (rows, cols, vals) ewise returned
    for op (like's Operand); compressed(x, what) gives CSR and CSC matrices as a Compressed (None
    for other formats), and compressed_result(like, op, arrays, device) a matrix of like's kind
    and op's format over the (offsets, indices, vals) ewise returned; one whose shares_pattern
    can be true has values_like(op) and with_values(x, vals, op)."""

    # The promotion rule of the framework's dense calls (ewise/promotion.hpp): "numpy" (NumPy 2,
    # NEP 50) or "torch" (torch.result_type).
    promotion = "numpy"

    def operand(self, x):
        """An input operand as ewise imports it."""
        return x

    def dtype_name(self, x):
        """ewise's name of an array's dtype; TypeError when ewise does not support it."""
        return dtype_name(x.dtype)

    def types(self, op, a, b):
        """(result dtype name, promotion rule) of op (its C++ name) on operands of types a and b
        ((ewise dtype name, weight): "tensor", "zero_dim" or "weak"; _interop.types), the first
        array being of this framework: the C++ library's op_types under the framework's rule."""
        return _ewise.op_types(op, self.promotion, *a, *b)[1], self.promotion

    def check_writable(self, x, what):
        """Raises ValueError when x cannot be written as `out` (what: its name in messages)."""

    def empty(self, like, shape, device, dtype=None):
        """An uninitialized array of like's framework and device (DLPack (type, id)), of dtype
        `dtype` (an ewise name), like's when None."""
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

    def host_view(self, x):
        """x as a host call imports it: x itself (its DLPack export)."""
        return x

    def result(self, x):
        """A dense result ewise allocated (empty) as the framework hands it to the caller."""
        return x

    def needs_grad(self, *operands):
        """True when a call on these operands is to be recorded for autograd."""
        return False

    def is_sparse(self, x):
        """True for a sparse matrix of this framework that ewise takes."""
        return False

    def compressed(self, x, what):
        """x (a sparse matrix of this framework) as a Compressed when it is CSR or CSC and read
        as it is; None otherwise (it is then read as COO)."""
        return None

    def compressed_pair(self, a, b, call, options):
        """The fast route of a call on two sparse matrices of this framework: where both are
        what it takes (one kind, one compressed format, one index dtype, values on the current
        device), call(A, B, options(a's values), stream, stream owner) on them read as
        compressed() reads them, and (a's Compressed, b's values, the arrays the call returned,
        the device); None for any other pair (the general path then runs). None here."""
        return None

    def row_sparse(self, x):
        """x as (rows, values, nrows, canonical) when it is this framework's row-sparse form
        (rows: a 1-D array of row indices; values: (nnz, *row_shape)), read without a copy;
        None otherwise."""
        return None

    def import_array(self, x):
        """An array ewise returned (a NumPy array on the host, a DLPack-exporting one on the
        device) as this framework's array, without a copy."""
        return x

    def row_sparse_result(self, like, rows, vals, nrows):
        """A canonical row-sparse result of like's kind over rows and vals (nnz, *row_shape),
        this framework's arrays; None where like is no row-sparse form of the framework (the
        caller then makes an ewise.sparse.RowSparse)."""
        return None

    def shares_pattern(self, x, op):
        """True when x ⊙ dense may keep x's own indices (op: x's Operand): only the values are
        computed, into values_like(op), and with_values makes the result."""
        return False
