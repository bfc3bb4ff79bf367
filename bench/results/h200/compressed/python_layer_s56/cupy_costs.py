"""The CuPy-side costs of one sparse call's Python layer, each alone (µs, min of 5 repeats)."""
import sys, timeit
import cupy as cp
import cupyx.scipy.sparse as cs
import ewise
from ewise import _ewise, _sparse
from ewise._interop import Call, adapter, check_devices

a = cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=1); a.sum_duplicates()
b = cs.random(64, 64, density=0.1, format="csr", dtype=cp.float32, random_state=2); b.sum_duplicates()
oa = _sparse._sparse_operand(a, "a"); ob = _sparse._sparse_operand(b, "b")
opts = _sparse._options(oa.vals)
dev = check_devices(a=oa.vals, b=ob.vals)
with Call(a, dev) as run:
    arrays = _ewise.compressed_multiply(_sparse._coo(run, oa), _sparse._coo(run, ob), opts, run.stream, run.stream_owner)
x = a.indices
kind = type(a)
st = cp.cuda.get_current_stream()
def call_views():
    with Call(a, dev) as run:
        return _sparse._coo(run, oa), _sparse._coo(run, ob)
def enter_call():
    with Call(a, dev):
        pass
def device_ctx():
    with cp.cuda.Device(0):
        pass
def unowned():
    m = cp.cuda.UnownedMemory(x.data.ptr, x.nbytes, x, 0)
    return cp.ndarray(x.shape, x.dtype, cp.cuda.MemoryPointer(m, 0))
caps = lambda: (x.__dlpack__(stream=1), a.data.__dlpack__(stream=1), a.indptr.__dlpack__(stream=1))
items = {
    "python multiply (tiny)": lambda: ewise.sparse.multiply(a, b),
    "raw-ish: Call+views+C++ call": lambda: None,
    "from_dlpack(nb array)": lambda: cp.from_dlpack(arrays[1]),
    "nb array __dlpack__()": lambda: arrays[1].__dlpack__(),
    "cupy __dlpack__(stream=1)": lambda: x.__dlpack__(stream=1),
    "cupy ascontiguousarray": lambda: cp.ascontiguousarray(x),
    "Device ctx enter/exit": device_ctx,
    "get_current_stream": cp.cuda.get_current_stream,
    "is_sparse": lambda: adapter(a).is_sparse(a),
    "_sparse_operand": lambda: _sparse._sparse_operand(a, "a"),
    "check_devices": lambda: check_devices(a=oa.vals, b=ob.vals),
    "Call + enter/exit": enter_call,
    "Call + 2 views": call_views,
    "3 capsules": caps,
    "_ewise.Compressed(3 capsules)": lambda: _ewise.Compressed(*caps(), 64, 64, "csr", True),
    "_from_parts": lambda: kind._from_parts(a.data, a.indices, a.indptr, a.shape, has_canonical_format=True),
    "result wrap": lambda: _sparse._result(a, oa, arrays, dev),
    "UnownedMemory ndarray": unowned,
}
del items["raw-ish: Call+views+C++ call"]
for k, f in items.items():
    n = 3000
    print(f"{k:32s} {min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6:8.2f} us", flush=True)
