"""CuPy arrays (on CuPy's current stream) and cupyx.scipy.sparse matrices (cupyx is imported
for those only)."""
import functools

import cupy

from .. import _ewise
from . import scipy
from .interface import Adapter, numpy_dtype
from .views import interface_view


@functools.cache
def _cupyx_sparse():
    """cupyx.scipy.sparse, imported once: cupyx.scipy hands out its submodules by a module
    __getattr__ that runs importlib.import_module at every `cupyx.scipy.sparse` (five times a
    sparse call otherwise)."""
    import cupyx.scipy.sparse
    return cupyx.scipy.sparse


class CuPy(Adapter):
    def empty(self, like, shape, device, dtype=None):
        with like.device:
            return cupy.empty(shape, dtype=like.dtype if dtype is None else numpy_dtype(dtype))

    def stream(self, device_id):
        context = cupy.cuda.Device(device_id)
        with context:
            current = cupy.cuda.get_current_stream()
        return context, current, current.ptr

    def export(self, x, call):
        """CuPy exports negative strides wrongly (it divides the byte stride by the item size
        as unsigned numbers: -2 bytes of float16 become 2^63 - 1 elements): such an array is
        passed as a view with the byte strides of its __cuda_array_interface__, ordered after
        CuPy's current stream by an event when the call runs on another stream."""
        if min(x.strides, default=0) >= 0:
            return super().export(x, call)
        current = cupy.cuda.get_current_stream()
        if current.ptr != call.stream:
            cupy.cuda.ExternalStream(call.stream).wait_event(current.record())
        return interface_view(x, x.__cuda_array_interface__, (2, call.device[1]))

    def import_array(self, x):
        return cupy.from_dlpack(x)

    def coo_result(self, like, op, arrays, device):
        """A cupyx COO matrix over ewise's arrays (in like's format where that is CSR or CSC):
        the result of a sparse operand's call, and a row-sparse operand's COO form."""
        with cupy.cuda.Device(device[1]):
            rows, cols, vals = (cupy.empty(0, dtype=dtype) if x is None else cupy.from_dlpack(x)
                                for x, dtype in zip(arrays, (op.rows.dtype, op.rows.dtype,
                                                             op.vals.dtype)))
        # cupyx's (data, (row, col)) constructor reads the indices' bounds on the host (a
        # synchronization); ewise checked them: an empty matrix gets the arrays instead.
        result = scipy.coo_kind(_cupyx_sparse(), like)(op.shape, dtype=vals.dtype)
        result.data, result.row, result.col = vals, rows, cols
        result.has_canonical_format = True
        # CSR and CSC as the operand's: cupyx's compression of a canonical COO (cuSPARSE's
        # coo2csr of the sorted rows for CSR; a sort by column for CSC). A dense like (a
        # row-sparse operand's values: ewise.sparse.to_coo) gets COO.
        fmt = getattr(like, "format", "coo")
        return result.asformat(fmt) if fmt in scipy.KEPT_FORMATS else result


class CuPySparse(CuPy):
    """cupyx.scipy.sparse matrices: SciPy's formats (scipy.coo_operand), on the GPU."""

    def is_sparse(self, x):
        return _cupyx_sparse().issparse(x)

    def coo(self, x, what):
        return scipy.coo_operand(self, x, cupy)

    def compressed(self, x, what):
        """CSR and CSC read as they are; canonical when cupyx already knows it (its public
        has_canonical_format would find it out with a kernel and a synchronization when not)."""
        return scipy.compressed_operand(self, x, cupy, getattr(x, "_has_canonical_format", False))

    def compressed_pair(self, a, b, call, options):
        """The fast route (interface.Adapter.compressed_pair) of two cupyx CSR or CSC matrices
        of one class and index dtype whose values are on the current device: read by
        compressed(), their arrays exported straight to CuPy's current stream, without the
        general path's device switch and per-array steps (H200, CSR ⊙ CSR of 8-12M entries:
        13-34 us a call less; docs/benchmarks.md, session 57)."""
        if type(b) is not type(a):
            return None
        oa, ob = self.compressed(a, "a"), self.compressed(b, "b")
        if oa is None or ob is None or oa.offsets.dtype != ob.offsets.dtype:
            return None
        device = cupy.cuda.runtime.getDevice()
        if oa.vals.device.id != device or ob.vals.device.id != device:
            return None
        stream = cupy.cuda.get_current_stream()
        exported = stream.ptr or 1  # DLPack's number of the legacy default stream (handle 0)

        def view(op):
            return _ewise.Compressed(
                *(x.__dlpack__(stream=exported) for x in (op.offsets, op.indices, op.vals)),
                op.shape[0], op.shape[1], op.format, op.canonical)
        return oa, ob.vals, call(view(oa), view(ob), options(oa.vals), stream.ptr,
                                 stream), (2, device)

    def compressed_result(self, like, op, arrays, device):
        """cupyx's (data, indices, indptr) constructor reads indptr's ends back to the host (a
        synchronization; about 0.3 ms a call under the profiler, H200): as for a COO result, an
        empty matrix of the shape gets ewise's arrays instead."""
        kind = scipy.sparse_kind(_cupyx_sparse(), like, op.format)
        with cupy.cuda.Device(device[1]):
            offsets, indices, vals = (
                cupy.empty(0, dtype=dtype) if x is None else cupy.from_dlpack(x)
                for x, dtype in zip(arrays, (op.offsets.dtype, op.indices.dtype, op.vals.dtype)))
            # CuPy's constructor of checked arrays where it has one (it allocates and reads
            # nothing; the empty matrix allocates and zeroes its three arrays); only for the
            # value dtypes cupyx takes, so that others are refused by the constructor as before.
            from_parts = getattr(kind, "_from_parts", None)
            if from_parts is not None and vals.dtype.char in "?fdFD":
                return from_parts(vals, indices, offsets, tuple(op.shape),
                                  has_canonical_format=True)
            result = kind(op.shape, dtype=vals.dtype)
        result.data, result.indices, result.indptr = vals, indices, offsets
        result.has_canonical_format = True
        return result


ADAPTERS = {"cupy": CuPy(), "cupyx": CuPySparse()}
