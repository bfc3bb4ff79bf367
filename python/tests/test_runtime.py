"""The CUDA runtime of a CUDA build (ewise/_runtime.py, python/CMakeLists.txt): _build.py names the
runtime the extension links (none without CUDA); installed, the extension's run path looks beside
the package for the nvidia-cuda-runtime wheel's copy first; and a wheel under another sys.path
entry is the copy loaded. The wheel is stood in for by the toolkit's own libcudart in the wheel's
layout (nvidia/cu<major>/lib), in a package installed from this build tree by `cmake --install`."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import ewise
from ewise import _build

PACKAGE = pathlib.Path(ewise.__file__).parent
EXTENSION = next(PACKAGE.glob("_ewise.*so"))


def dynamic_section(path):
    """readelf -d's lines of a shared object."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    return subprocess.run(["readelf", "-d", str(path)], check=True, capture_output=True,
                          text=True).stdout.splitlines()


def needed(path):
    return [line.split("[")[1].rstrip("]") for line in dynamic_section(path) if "(NEEDED)" in line]


def test_build_names_the_runtime_the_extension_links():
    cudart = [n for n in needed(EXTENSION) if n.startswith("libcudart")]
    if _build.CUDA_RUNTIME:
        assert cudart == [_build.CUDA_RUNTIME]
        assert _build.CUDA_RUNTIME_WHEEL_DIR.startswith("nvidia/cu")
    else:
        assert cudart == [] and _build.CUDA_RUNTIME_WHEEL_DIR == ""
        assert ewise._runtime.LOADED is None


def build_tree():
    """The CMake build directory that holds this package, else None (an installed package)."""
    for parent in PACKAGE.parents:
        if (parent / "CMakeCache.txt").is_file():
            return parent
    return None


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(prefix, toolkit's runtime): this build's package installed under prefix/ewise, the
    extensions as `cmake --install` makes them (their installed run path)."""
    if not _build.CUDA_RUNTIME:
        pytest.skip("a build without CUDA links no CUDA runtime")
    tree = build_tree()
    if tree is None or shutil.which("cmake") is None:
        pytest.skip("not a package in a CMake build tree with cmake on PATH")
    prefix = tmp_path_factory.mktemp("site")
    shutil.copytree(PACKAGE, prefix / "ewise", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["cmake", "--install", str(tree), "--component", "python", "--prefix",
                    str(prefix)], check=True, capture_output=True)
    runpath = [line.split("[")[1].rstrip("]") for line in dynamic_section(next(
        (prefix / "ewise").glob("_ewise.*so"))) if "(RUNPATH)" in line or "(RPATH)" in line]
    assert len(runpath) == 1, runpath
    entries = runpath[0].split(":")
    assert entries[0] == "$ORIGIN/../" + _build.CUDA_RUNTIME_WHEEL_DIR, entries
    toolkit = pathlib.Path(entries[1]) / _build.CUDA_RUNTIME
    assert toolkit.is_file(), entries
    return prefix, toolkit


def fake_wheel(site, toolkit):
    """The toolkit's runtime where the nvidia-cuda-runtime wheel puts its copy under site."""
    folder = site / _build.CUDA_RUNTIME_WHEEL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(toolkit, folder / _build.CUDA_RUNTIME)
    return (folder / _build.CUDA_RUNTIME).resolve()


def loaded_runtime(*pythonpath):
    """(the file of the CUDA runtime that `import ewise` maps, the wheel's runtime _runtime
    found or None), in a fresh interpreter with these entries first on its path (PYTHONPATH; no
    LD_LIBRARY_PATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    code = ("import ewise; ewise.gpu_available(); "
            "print(*{l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l}); "
            "print(ewise._runtime._wheel_runtime())")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env=env, cwd="/").stdout.splitlines()
    maps = out[0].split()
    assert len(maps) == 1, out
    return pathlib.Path(maps[0]).resolve(), None if out[1] == "None" else pathlib.Path(out[1])


def test_the_toolkit_runtime_without_a_wheel(installed):
    # the toolkit's, unless a wheel of the runtime is installed where this Python looks (torch's
    # CUDA builds install one): then that one
    prefix, toolkit = installed
    loaded, wheel = loaded_runtime(prefix)
    assert loaded == (wheel.resolve() if wheel is not None else toolkit.resolve())


def test_the_wheel_beside_the_package(installed, tmp_path):
    prefix, toolkit = installed
    site = tmp_path / "site"
    shutil.copytree(prefix / "ewise", site / "ewise")
    wheel = fake_wheel(site, toolkit)
    assert loaded_runtime(site)[0] == wheel


def test_the_wheel_under_another_sys_path_entry(installed, tmp_path):
    prefix, toolkit = installed
    wheel = fake_wheel(tmp_path, toolkit)
    assert loaded_runtime(prefix, tmp_path)[0] == wheel
