"""What the fast path cannot take: `UnsupportedOpError` (at compile time) and
`FastPathLimit` (during a run) send a program to the op-by-op path; the widths of the
fields of a recorded access (`SID_SHIFT`...) are limits of the second kind."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.semantics.memory import ADDR_SHIFT, PC_MASK, PC_SHIFT


class UnsupportedOpError(DiagnosticException):
    """The fast path cannot compile this op; fall back to the op-by-op interpreter."""

    def __init__(self, op: Operation, why: str = "not supported by the fast path"):
        super().__init__(op_error(op, why))
        self.op = op


class FastPathLimit(InterpretationError):
    """A run hit a limit of the fast path's encoding (not an error of the program):
    `simulate_auto` reruns it on the op-by-op path."""


# One recorded access is one int64: bit 0 = store, bits 1-16 = the static id of the memory
# op (`CompiledModule.mem_ops`), bits 17-44 = byte offset inside its buffer, bits 45-62 =
# the buffer's provisional id (`Trace.buffers`). Provisional ids become the hardware
# model's base addresses when a batch is flushed, in order of first access, which is the
# order in which the op-by-op model allocates addresses.
SID_SHIFT = PC_SHIFT  # the sid sits in the model's PC field (tapeflow.semantics.memory)
SID_LIMIT = PC_MASK + 1
OFF_SHIFT = ADDR_SHIFT
OFF_LIMIT = 1 << 28
BUF_SHIFT = 45
BUF_LIMIT = 1 << 18
