"""The route of a plain dense call (ewise.binary) by framework: the one way such a call runs.

`torch`: the function a plain call hands its operands to first. It runs the whole call for
plain CUDA torch tensors with no gradient to record, on one device, and returns the result; for
anything else it returns None, and the general path (DLPack, which gives every error its
message) runs. Until torch is imported no operand can be a tensor and it is `undecided`; then
the first call (or names()) takes the route the torch adapter chose at its import (torch.py).
A documented private attribute: bench/torch_route.py sets it to time each route."""
import sys

from .. import _ewise

# The frameworks whose plain calls take the general path: DLPack in, the framework's array out
# (the adapters' export and result); NumPy's plain arrays first try their buffer route
# (_ewise.numpy_binary, called by _dense.call).
_GENERAL = {"numpy": "buffer", "cupy": "dlpack", "jax": "dlpack"}


def _decide():
    """Takes the torch adapter's route (importing the adapter chooses it)."""
    global torch
    from .torch import route
    torch = route
    return route


def undecided(op, a, b, out, kernel):
    """torch's route until torch is imported: None; once it is, the adapter's route, taken."""
    if "torch" not in sys.modules:
        return None
    return _decide()(op, a, b, out, kernel)


torch = undecided


def names():
    """The route by framework: "buffer" for NumPy's arrays (_ewise.numpy_binary, which leaves
    what it does not take to the general path), "dlpack" for the general path; torch's "libtorch"
    (_ewise_torch.binary) or "python-api" (_ewise.torch_binary), None while torch is not
    imported."""
    if torch is undecided and "torch" in sys.modules:
        _decide()
    return {**_GENERAL, "torch": None if torch is undecided
            else "python-api" if torch is _ewise.torch_binary else "libtorch"}
