"""A DLPack producer written with ctypes, to reach what NumPy cannot export: bfloat16, CUDA
device types, bogus pointers."""
import ctypes


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = ctypes.c_char_p(b"dltensor")


class Producer:
    """A 1-D tensor of `n` elements at `data` (an address) on `device_type` (1 CPU, 2 CUDA)
    with DLPack dtype (code, bits): whatever NumPy would not export."""

    def __init__(self, data, n, device_type, code, bits):
        self.shape_ = (ctypes.c_int64 * 1)(n)
        self.strides_ = (ctypes.c_int64 * 1)(1)
        self.managed = _Managed(_Tensor(data, _Device(device_type, 0), 1, _DType(code, bits, 1),
                                        self.shape_, self.strides_, 0), None, None)
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if max_version is not None:
            raise TypeError("this producer exports unversioned capsules only")
        return _capsule_new(ctypes.addressof(self.managed), _CAPSULE_NAME.value, None)
