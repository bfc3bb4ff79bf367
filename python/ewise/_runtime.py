"""The CUDA runtime of a CUDA build, loaded before its extensions.

The extensions link libcudart.so.<major>. Their run path finds the nvidia-cuda-runtime wheel's
copy (`pip install "ewise[cuda]"`) where pip put it beside the package
(site-packages/nvidia/cu<major>/lib), then the toolkit that built them. Here the wheel's copy is
looked for under every sys.path entry and loaded first where found (as CuPy does), so that a wheel
installed in another site (a user site, a virtual environment's parent) serves too: the dynamic
loader then takes the library already loaded for the extensions' need of its name. A build
without CUDA (_build.CUDA_RUNTIME empty) loads nothing.
"""
import ctypes
import os
import sys

from . import _build


def _wheel_runtime():
    """The path of the wheel's runtime under the first sys.path entry that holds it, else None."""
    if not _build.CUDA_RUNTIME:
        return None
    for entry in sys.path:
        path = os.path.join(entry or os.getcwd(), _build.CUDA_RUNTIME_WHEEL_DIR,
                            _build.CUDA_RUNTIME)
        if os.path.isfile(path):
            return path
    return None


def _load():
    path = _wheel_runtime()
    if path is None:
        return None
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError(f"ewise: cannot load the CUDA runtime {path}: {e}") from e


#: The wheel's runtime where it was loaded (its ctypes handle), else None: the run path's.
LOADED = _load()


def missing(error):
    """An ImportError that says how to get the CUDA runtime, where `error` (the extension's import
    failure) is the loader's not finding it; else None."""
    if not _build.CUDA_RUNTIME or _build.CUDA_RUNTIME not in str(error):
        return None
    return ImportError(
        f"ewise: this CUDA build of ewise needs the CUDA runtime {_build.CUDA_RUNTIME}, found "
        f"neither in the nvidia-cuda-runtime wheel (pip install \"ewise[cuda]\") nor in the "
        f"toolkit it was built with ({error})")
