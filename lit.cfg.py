"""lit configuration: FileCheck tests under test/, one folder per dialect, pass and tool."""

import importlib.util
import os
import shutil

import lit.formats

config.name = "TapeFlow"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".toml", ".c"]

# The C frontend's tests (test/tapeflow-cc) need the libclang bindings (extra `c`).
if importlib.util.find_spec("clang") is not None:
    config.available_features.add("libclang")
# A sweep's results file is Parquet (pyarrow, extra `sweep`), its plots matplotlib's (`bench`).
for module in ("pyarrow", "matplotlib"):
    if importlib.util.find_spec(module) is not None:
        config.available_features.add(module)
# enzyme-autodiff's tests (test/enzyme-autodiff) need Enzyme-MLIR (extra `enzyme`).
if importlib.util.find_spec("enzyme_ad") is not None:
    config.available_features.add("enzyme")
# tapeflow-exec's tests (test/tapeflow-exec) need upstream MLIR's tools on PATH.
if shutil.which("mlir-opt-22") and shutil.which("mlir-runner-22"):
    config.available_features.add("mlir-native")
config.excludes = ["Inputs", "benchmarks", ".venv", "build", "python", "docs"]

# The tools (tapeflow-opt, tapeflow-run, filecheck...) come from the environment that runs
# lit, normally the project's virtualenv.
tool_dir = os.path.dirname(shutil.which("tapeflow-opt") or "")
config.environment["PATH"] = os.pathsep.join(
    [p for p in (tool_dir, os.environ.get("PATH", "")) if p]
)
for var in ("HOME", "PYTHONPATH", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(
    (
        "TAPEFLOW_ROUNDTRIP",
        "tapeflow-opt %s --split-input-file --print-op-generic"
        " | tapeflow-opt --split-input-file | filecheck %s",
    )
)
config.substitutions.append(
    (
        "TAPEFLOW_GENERIC_ROUNDTRIP",
        "tapeflow-opt %s --split-input-file --print-op-generic"
        " | tapeflow-opt --split-input-file --print-op-generic"
        " | filecheck %s --check-prefix=CHECK-GENERIC",
    )
)
