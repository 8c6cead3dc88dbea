"""The library's import graph: no module imports itself back through others, and the
package never reaches into the benchmarks/ scripts. (And the tests' own: test modules
share code through test/python/helpers/ only.)

Every `import` counts, also those inside a function or under `if TYPE_CHECKING:`: a lazy
import hides a cycle from Python, not from the reader who has to understand both files.
`from package import name` is an edge to the submodule `package.name` when there is one,
else to the package's `__init__`.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
# Folder -> the package it is installed as (pyproject.toml's package-dir).
PACKAGES = {
    "tapeflow": "tapeflow",
    "dialects": "tapeflow.dialects",
    "transforms": "tapeflow.transforms",
    "hwmodel": "tapeflow.hwmodel",
}


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules `name` (at `path`) imports, anywhere in its text."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Module -> the library modules (and benchmarks/ modules) it imports."""
    modules = _modules()
    return {
        name: {
            t
            for t in _imports(name, path, modules)
            if t != name and (t in modules or t.split(".")[0] == "benchmarks")
        }
        for name, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_in_library_code():
    cycles = _cycles(_graph())
    shown = [" <-> ".join(c) for c in cycles]
    assert not cycles, "modules that import each other:\n  " + "\n  ".join(sorted(shown))


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_library_imports_nothing_from_benchmarks():
    graph = _graph()
    up = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if b.startswith("bench"))
    assert not up, "library modules import benchmarks/:\n  " + "\n  ".join(up)


def test_the_walker_sees_imports_inside_functions():
    """The walker is not blind: a known function-local import is an edge."""
    graph = _graph()
    assert "tapeflow.frontends.c" in graph["tapeflow.runner"]
    assert "tapeflow.transforms.autodiff.scf" in graph["tapeflow.transforms.autodiff.driver"]


def _imported_names(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return names


def test_tests_share_code_through_helpers_only():
    """No test module imports another's (shared pieces live in test/python/helpers/ or
    fuzz/), and no benchmark script imports those test helpers."""
    tests = Path(__file__).resolve().parent
    bad = [f"{p.relative_to(ROOT)} imports {n}"
           for p in sorted(tests.rglob("*.py")) for n in _imported_names(p)
           if n.split(".")[0].startswith("test_")]  # fmt: skip
    bad += [f"{p.relative_to(ROOT)} imports {n}"
            for p in sorted((ROOT / "benchmarks").rglob("*.py")) for n in _imported_names(p)
            if n.split(".")[0] in ("helpers", "fuzz", "conftest")]  # fmt: skip
    assert not bad, "\n  ".join(["imports between test modules:", *bad])


def test_the_harness_sits_above_the_library():
    """tapeflow/eval (the evaluation harness) is imported by the command-line tools and
    by nothing else of the library, and never imports a tool."""
    graph = _graph()
    up = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs
                if b.startswith("tapeflow.eval") and not a.startswith(("tapeflow.eval",
                                                                       "tapeflow.tools")))
    assert not up, "library modules import tapeflow.eval:\n  " + "\n  ".join(up)
    tools = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs
                   if a.startswith("tapeflow.eval") and b.startswith("tapeflow.tools"))
    assert not tools, "tapeflow.eval imports a tool:\n  " + "\n  ".join(tools)


def _harness_files() -> list[Path]:
    return sorted([*(ROOT / "tapeflow" / "eval").rglob("*.py"),
                   *(ROOT / "tapeflow" / "tools").glob("*.py")])  # fmt: skip


def test_the_harness_loads_no_file_as_code():
    """No module of the harness or the tools executes a file (`exec`, an importlib file
    load): an import the walker above could not see. Suites are data it reads."""
    loads = []
    for path in _harness_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            called = node.func if isinstance(node, ast.Call) else None
            name = (called.attr if isinstance(called, ast.Attribute) else
                    called.id if isinstance(called, ast.Name) else "")  # fmt: skip
            if name in ("exec", "exec_module", "spec_from_file_location", "run_path"):
                loads.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert not loads, "files executed as code:\n  " + "\n  ".join(loads)


def test_the_harness_and_tools_import_no_private_names():
    """Between the harness's and the tools' modules only public names cross: what two
    tools share is in tapeflow/tools/common.py, what a tool needs of the harness public."""
    private = []
    for path in _harness_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tapeflow"):
                private += [f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{a.name}"
                            for a in node.names if a.name.startswith("_")]  # fmt: skip
    assert not private, "private names imported:\n  " + "\n  ".join(private)
