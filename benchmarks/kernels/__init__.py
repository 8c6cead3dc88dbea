"""The bundled benchmark kernels: their files live here, their registry in the package.

`tapeflow.bundled_kernels` defines the eleven kernels (sizes, arguments, inputs, NumPy
references) and reads their MLIR files from this folder (`small/`, `default/`, made by
`generate.py`); this module re-exports it, so scripts and tests keep writing
`from benchmarks.kernels import KERNELS, make_inputs, reference`.
"""

from tapeflow.bundled_kernels import (  # noqa: F401
    KERNELS,
    ArgSpec,
    Kernel,
    kernel_dir,
    make_inputs,
    primal_bytes,
    reference,
    reference_grad,
)

KERNEL_DIR = kernel_dir()
