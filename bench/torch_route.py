"""The benchmark's switch between the routes of a plain dense call on torch tensors, to time
both in one run: ewise.routes()["torch"] names the one ewise chose; use() makes another the
one taken, through the documented private attribute ewise._interop.routes.torch (the function
a plain call hands its operands to)."""
import importlib

import ewise
from ewise._interop import routes


def _function(name):
    if name == "libtorch":
        return importlib.import_module("ewise._ewise_torch").binary
    if name == "python-api":
        return ewise._ewise.torch_binary
    raise ValueError(f"unknown torch route {name!r}: expected 'libtorch' or 'python-api'")


def use(name):
    """Makes route `name` ("libtorch" or "python-api") the one plain calls on torch tensors take;
    ImportError where ewise._ewise_torch does not import. Needs torch imported."""
    ewise.routes()  # ewise's own choice first, so that it does not replace this one later
    routes.torch = _function(name)
