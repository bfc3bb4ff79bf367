"""The package's layers: every module imports on its own in a fresh interpreter; the modules'
imports (at the top and inside functions alike) form no cycle; the interop layer imports no
API module; `import ewise` imports no framework but NumPy."""
import ast
import importlib.util
import pathlib
import subprocess
import sys

import pytest

import ewise

PACKAGE = pathlib.Path(ewise.__file__).parent
# The modules that import a framework at the top, by the framework (skipped without it).
NEEDS = {"ewise._interop.torch": "torch", "ewise._interop.cupy": "cupy",
         "ewise._interop.jax": "jax", "ewise.torch": "torch"}
EXTENSIONS = {"ewise._ewise", "ewise._ewise_torch"}


def modules():
    """The package's modules by name, with their files."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name, path):
    """The package's modules `name` imports, anywhere in its file; `from . import x` counts as
    x where x is a module, else as the package itself."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = set(modules()) | EXTENSIONS
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ewise"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            if not base.startswith("ewise"):
                continue
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return found - {name}


def test_no_import_cycle():
    graph = {name: imports(name, path) for name, path in modules().items()}
    done, active = set(), []

    def visit(name):
        assert name not in active, "import cycle: " + " -> ".join(active + [name])
        if name in done:
            return
        active.append(name)
        for child in graph.get(name, ()):
            visit(child)
        active.pop()
        done.add(name)

    for name in graph:
        visit(name)


def test_interop_imports_no_api_module():
    for name, path in modules().items():
        if name.startswith("ewise._interop"):
            outside = {m for m in imports(name, path)
                       if not m.startswith("ewise._interop") and m not in EXTENSIONS}
            assert not outside, f"{name} imports {sorted(outside)}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_each_module_imports_alone(name):
    framework = NEEDS.get(name)
    if framework is not None and importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed")
    subprocess.run([sys.executable, "-c", f"import {name}"], check=True)


def test_import_ewise_imports_no_framework():
    code = ("import sys, ewise\n"
            "found = {'torch', 'cupy', 'jax', 'scipy'} & set(sys.modules)\n"
            "assert not found, found\n")
    subprocess.run([sys.executable, "-c", code], check=True)
