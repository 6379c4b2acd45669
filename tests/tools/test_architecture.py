"""The package's layers, as the tree shows them, and the directions imports may take; and
the complexity bound every function of the project keeps.

Read from the source with ``ast``, function-level imports included: a lazy import is a
dependency too, and may not hide a cycle or go up a layer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGE = ROOT / "aclnn_py"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS = ("_c", "ops", "runtime", "emulator", "engine", "public", "tools")
TOP_LEVEL = {
    "errors": "_c",           # the typed errors the one status check raises
    "_version": "_c",
    "_caches": "_c",          # the cache registry, which every layer registers with
    "_functions": "public",
    "_call": "public",          # aclnn_py.call: documented here, run by engine/call.py
    "doctor": "tools",
    "testing": "tools",
    "pytest_plugin": "tools",
    "conformance": "tools",
    "__main__": "tools",
}
# The package root re-exports the public layer and names the tools as attributes; only
# tools may import it back.
FACADE = "aclnn_py"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("aclnn_py", *parts))] = path
    return found


MODULES = _modules()


def layer(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "facade"
    if parts[0] in LAYERS:
        return parts[0]
    return TOP_LEVEL[parts[0]]


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> set[str]:
    """The aclnn_py modules ``module`` imports, at any depth of its code."""
    tree = ast.parse(MODULES[module].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            names = [f"{source}.{alias.name}" for alias in node.names]
            if not all(name in MODULES for name in names):
                names.append(source)  # names defined in the module ``source``
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith("aclnn_py") and name != module:
                found.add(name)
    # `from .x import y` names the package x too; importing a package's own
    # __init__ from inside it is no dependency.
    return {name for name in found if not module.startswith(name + ".") or name == FACADE}


GRAPH = {module: imports(module) for module in MODULES}


def test_the_tree_shows_the_layers():
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert {"_c", "ops", "runtime", "engine"} <= subpackages
    for name in ("_c", "ops", "runtime", "engine"):
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc, f"aclnn_py/{name}/__init__.py states its job in a docstring"


def test_at_most_twelve_modules_at_the_top_level():
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 12, sorted(top)
    assert {p[:-3] for p in top} - {"__init__"} <= set(TOP_LEVEL)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module):
    here = layer(module)
    for target in sorted(GRAPH[module]):
        there = layer(target)
        if target == FACADE:
            assert here == "tools", f"{module} imports the package root"
            continue
        if here == "facade":
            continue
        assert LAYERS.index(there) <= LAYERS.index(here), (
            f"{module} ({here}) imports {target} ({there}), a layer above it")


def test_no_import_cycles_even_through_function_level_imports():
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in GRAPH[module]:
            if target == FACADE:
                continue  # every module's package root runs first anyway
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if not state.get(target):
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if not state.get(module):
            visit(module)


def _uses_cffi(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names
                      if a.name.split(".")[0] in ("cffi", "_cffi_backend")]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in ("cffi", "_cffi_backend"):
                found.append(node.module or "")
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name == "ffi" or (node.module or "").endswith("_ffi")]
        elif isinstance(node, ast.Name) and node.id == "ffi":
            found.append("ffi")
        elif isinstance(node, ast.Attribute) and node.attr == "ffi":
            found.append(".ffi")
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith("aclnn_py._c")))
def test_only_the_c_layer_touches_cffi(module):
    assert not _uses_cffi(MODULES[module]), f"{module} touches cffi"


def test_the_wheel_ships_every_subpackage():
    listed = (PACKAGE.parent / "pyproject.toml").read_text()
    for init in PACKAGE.rglob("__init__.py"):
        name = ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        assert f'"{name}"' in listed, f"pyproject.toml's packages leave out {name}"


def test_no_function_is_exempt_from_the_complexity_bound():
    # ruff's C901 (pyproject.toml's max-complexity) holds everywhere: a function past it is
    # split into named steps, not excused by a noqa comment or a per-file ignore.
    noqa = re.compile(r"#\s*noqa:[^\n]*\bC901\b")
    exempt = [str(path.relative_to(ROOT)) for folder in
              ("aclnn_py", "benchmarks", "tools", "tests", "examples", "emulator")
              for path in sorted((ROOT / folder).rglob("*.py"))
              if noqa.search(path.read_text(encoding="utf-8"))]
    assert exempt == []
    ignored = re.findall(r'^"[^"]+"\s*=\s*\[[^]]*"C90', (ROOT / "pyproject.toml").read_text(),
                         re.M)
    assert ignored == []
