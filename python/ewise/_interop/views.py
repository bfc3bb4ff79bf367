"""DLPack-exporting views (_ewise.strided_view) of arrays whose own export ewise avoids: a
pointer, a dtype, a shape and element strides, owning the array they view."""
import numpy

from .. import _ewise
from .interface import DLPACK_DTYPES

# DLPack's dtype codes by NumPy's dtype kinds; bfloat16 (ml_dtypes' kind 'V') by its name.
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


def strided_view(x, dtype, data, shape, strides, device_id):
    """A view of CUDA memory on device_id: data pointer, ewise dtype name, shape and element
    strides as they are; it keeps x alive."""
    code, bits = DLPACK_DTYPES[dtype]
    return _ewise.strided_view(data, code, bits, shape, strides, 2, device_id, x)


def interface_view(x, interface, device):
    """A view of x described by its array interface (__array_interface__ or
    __cuda_array_interface__: data pointer, typestr, shape, byte strides or None for C order)
    on `device` (DLPack type, id). The view keeps x alive."""
    dtype = numpy.dtype(interface["typestr"]) if x.dtype.name != "bfloat16" else x.dtype
    code = 4 if dtype.name == "bfloat16" else _DLPACK_CODES.get(dtype.kind, 3)
    shape = [int(n) for n in interface["shape"]]
    strides = interface.get("strides")
    if strides is None:  # C order
        strides, step = [], dtype.itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
    return _ewise.strided_view(interface["data"][0], code, dtype.itemsize * 8, shape,
                               [int(s) // dtype.itemsize for s in strides], device[0],
                               device[1], x)
