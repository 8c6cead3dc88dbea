"""The library's import graph: no module imports itself back through others, imports
run down the layers (dialects <- transforms <- tools; the hardware model never reaches
up to the runner or the tools; the evaluation harness tapeflow.eval is imported by the
tools only), no module imports another's private names, and the package never reaches
into the benchmarks/ scripts. (And the tests' own: test modules share code through
test/python/helpers/ only.)

Every `import` counts, also those inside a function or under `if TYPE_CHECKING:`: a lazy
import hides a cycle from Python, not from the reader who has to understand both files.
So do the loads Python cannot see: a module calling `importlib.import_module` imports
every library module it names in a string; a file executed by `spec_from_file_location`,
`exec_module` or `exec` is declared in `DYNAMIC_LOADS`, with what it imports.
`from package import name` is an edge to the submodule `package.name` when there is one,
else to the package's `__init__`.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from helpers.paths import ROOT, TESTS


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


DYNAMIC_LOADS = {
    # module -> the modules the code it executes from a file imports
    "tapeflow.baselines.enzyme_mlir": set(),  # Enzyme-MLIR's extension module, by its path
    "tapeflow.hwmodel.jit": set(),  # the numba kernels it generates import numpy only
    "tapeflow.hwmodel.compiled.module": set(),  # the Python it generates runs in a given namespace
}
"""Modules that execute code from a file or a string: what that code imports is an edge."""

_EXECUTES = ("spec_from_file_location", "exec_module", "exec")


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
        if isinstance(node.func, ast.Name):
            return node.func.id
    return None


def _source(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module `from ... import` reads from, in module `name`."""
    base = node.module or ""
    if node.level:
        anchor = name.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
        base = ".".join([*anchor, *([base] if base else [])])
    return base


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules `name` (at `path`) imports, anywhere in its text."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    calls = {_called(node) for node in ast.walk(tree)}
    if "import_module" in calls:  # loads by name: every module it names
        found.update(node.value for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and node.value in modules)  # fmt: skip
    if calls.intersection(_EXECUTES):
        assert name in DYNAMIC_LOADS, f"{name} executes code: declare it in DYNAMIC_LOADS"
        found.update(DYNAMIC_LOADS[name])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _source(node, name, is_package)
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
    tests = TESTS
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


# ---------------------------------------------------------------------------------------
# Direction

TOOLS = "tapeflow.tools"
EVAL = "tapeflow.eval"

RULES = [
    # (importer, may not import, why)
    ("tapeflow.dialects", ("tapeflow.transforms", "tapeflow.hwmodel", "tapeflow.interpreters",
                           "tapeflow.semantics", "tapeflow.frontends", "tapeflow.runner",
                           TOOLS, EVAL),
     "the dialects are the bottom layer"),
    ("tapeflow.transforms", ("tapeflow.hwmodel", "tapeflow.interpreters", "tapeflow.frontends",
                             "tapeflow.runner", "tapeflow.simulate", "tapeflow.machines",
                             "tapeflow.registry", TOOLS, EVAL),
     "passes see the IR and the options they are given, not the machine model or the tools"),
    ("tapeflow.hwmodel", ("tapeflow.runner", "tapeflow.simulate", TOOLS, EVAL),
     "the hardware model is driven by tapeflow.simulate, it does not run programs itself"),
    ("tapeflow", (TOOLS,), "the library never imports a command-line tool"),
    ("tapeflow", (EVAL,), "the evaluation harness is imported by the tools only"),
]  # fmt: skip

def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _upward(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for importer, targets in graph.items():
        for where, forbidden, why in RULES:
            if not _inside(importer, where) or _inside(importer, TOOLS):
                continue
            if _inside(importer, EVAL) and forbidden == (EVAL,):
                continue
            for t in targets:
                if any(_inside(t, f) for f in forbidden) and not _inside(t, importer):
                    found.append(f"{importer} -> {t}  ({why})")
    return sorted(set(found))


def test_imports_run_down_the_layers():
    found = _upward(_graph())
    assert not found, "imports against the layers:\n  " + "\n  ".join(found)


def test_the_direction_rules_catch_an_upward_import():
    graph = {
        "tapeflow.transforms.x": {"tapeflow.hwmodel.config", "tapeflow.dialects.tape"},
        "tapeflow.hwmodel.listener": {"tapeflow.runner"},
        "tapeflow.runner": {"tapeflow.eval.jobs"},
        "tapeflow.eval.jobs": {"tapeflow.eval.run", "tapeflow.runner"},
        "tapeflow.tools.bench": {"tapeflow.eval.jobs"},
    }
    assert [f.split("  (")[0] for f in _upward(graph)] == [
        "tapeflow.hwmodel.listener -> tapeflow.runner",
        "tapeflow.runner -> tapeflow.eval.jobs",
        "tapeflow.transforms.x -> tapeflow.hwmodel.config",
    ]


def test_the_walker_sees_loads_by_name_and_executed_files():
    graph = _graph()
    assert "tapeflow.transforms.pipeline" in graph["tapeflow.registry"]
    assert "tapeflow.machines" in graph["tapeflow.registry"]


# ---------------------------------------------------------------------------------------
# Private names



def _private_imports() -> list[str]:
    """`from x import _y` across modules of the library (a module's own package's
    `__init__` re-exporting is not across). A dependency's private names (xDSL's) are
    not this test's: docs/XDSL-PRIVATE.md lists each and why."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _source(node, name, is_package)
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and base != name and base.startswith("tapeflow"):
                    found.append(f"{name} imports {base}.{alias.name}")
    return sorted(set(found))


def test_no_module_imports_another_modules_private_names():
    found = _private_imports()
    assert not found, "private names imported across modules:\n  " + "\n  ".join(found)
