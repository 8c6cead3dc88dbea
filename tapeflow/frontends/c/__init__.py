"""The C frontend: a C subset, parsed by Clang (`libclang`), as upstream MLIR.

`compile_c(text, name)` returns a `ModuleOp` of `func`, `scf`, `memref`, `arith` and
`math` ops; every op carries the C `file:line:col` it comes from (`FileLineColLoc`), so
later diagnostics and the simulator's per-op reports point at C lines. The translation
then gets the clean-up Enzyme's input gets from Clang's `-O2` (canonicalize, cse, scalar
promotion) and the unrolling its loop pragmas ask for (`optimize`; `optimize=False`,
`tapeflow-cc -O0`: the translation as is), so every tool reading a C file runs the same.

What to translate. Functions to differentiate are named by Enzyme's entry point,
`__enzyme_autodiff((void*)f, enzyme_dup, x, dx, enzyme_const, n, ...)` (or any function
whose name contains `__enzyme_autodiff`, as for Enzyme) anywhere in the file, or by
`functions=`, or by split mode's `__enzyme_augmentfwd`/`__enzyme_reverse` (`split`);
Enzyme's checkpointed and fixed-point loops (`__enzyme_checkpoint_for`, ...) are the loops
of step calls they stand for (`checkpoint`); a call of another `__enzyme_*` function is an
error. Each call's activities follow Enzyme's rules (unannotated: a
pointer is dup, a float scalar active, an integer constant); the signature that is
TapeFlow's calling convention (README "The AD calling convention") gives `f` the unit
attribute `tapeflow.autodiff`, any other a specialization `f_<letters>` calling `f`
with its constant float arguments marked `tapeflow.const` (README "C kernels"). Only
those functions and the functions they call are translated, so the driver around the
Enzyme call (`main`, `printf`, ...) may use anything. With no target, every function
defined in the file is translated. Enzyme's attributes `enzyme_inactive` (and
`_noblock`), `enzyme_function_like`, `enzyme_nofree`, `enzyme_no_escaping_allocation`
and `enzyme_notypeanalysis`
are honoured, any other is an error.

Types (the rules, documented in the README section "C kernels"):
- `double`/`float` scalars are `f64`/`f32`; every C integer scalar (`int`, `long`,
  `size_t`, `unsigned`, ...) is `index`: integer arithmetic is 64-bit, equal to C's for
  programs without overflow;
- an array parameter takes its shape from its declaration: `double a[N][M]` is
  `memref<NxMxf64>`, `double a[][M]` `memref<?xMxf64>`; a pointer parameter `double *a`
  is one-dimensional and dynamic, `memref<?xf64>` (index it with computed offsets,
  `a[i*n + j]`). Integer arrays keep their C width in memory (`char` -> `i8`, `short` ->
  `i16`, `int` -> `i32`, `long` and `size_t` -> `i64`) and are converted to `index` when
  loaded (unsigned ones zero-extended);
- a pointer to a struct is one memref of its float fields, one (`i64`) of its integer
  fields and one per pointer field; a struct by value is one scalar per field (SROA);
  a local union of same-size scalars is one value (unions.py), other unions are refused;
- distinct pointer parameters are assumed not to alias, as if declared `restrict`
  (TapeFlow's AD assumes it of distinct memref arguments, as Enzyme with `noalias`);
- local arrays are `memref.alloca`, `malloc`/`calloc(n * sizeof(T))` `memref.alloc`,
  `free` `memref.dealloc`; `static const` tables are copied into a stack array at the
  start of each function that reads them; mutable globals are `memref.global`s (a
  scalar one element) shared by every function through `memref.get_global`;
- `&x` of a scalar passed to a function of the file is a one-element `memref.alloca`
  holding `x` for the call (an out-parameter), read back into `x` after it;
- pointers (README "C kernels"): a pointer into an array is a view (the memref and an
  element offset); a returned pointer is that offset (into a parameter) or the memref
  (a malloc of the callee); a `void *` takes the element type it is converted to; a
  local `T **` whose rows are malloc'ed with one length is a dense 2-D memref, and `*pp`,
  `pp[k]` of a 2-D memref a row of it (`Buffer.row`); a pointer parameter the function
  moves is a view from offset 0; a scalar local whose address a pointer holds lives in a
  one-element stack cell; `T *p = NULL` is bound by its first assignment; a null test of a bound pointer (`if (!p)`) is
  a constant (allocations are assumed to succeed); a function pointer is the number of a
  function of the file whose address is taken, and a call through it a chain of `scf.if`
  over the functions of its type, each a direct call (`fnptrs`).

Control flow is structured: a counted `for` (`counted`: an integer counter stepped by a
constant, up or down, tested against a bound the body does not write) is `scf.for`, any
other loop `scf.while`; scalars written in a loop or a branch become its iter_args / results;
`break`/`continue` become i1 flags (`_Loop`); `switch` is a chain of `scf.if` (cases
falling through one arm); a forward `goto` to a label at the top level of the body is an
early exit of the statements before it (`gotos`); a loop condition may step a scalar
(`while (n--)`). An unroll
pragma over a `for` (`#pragma unroll N`, `#pragma clang loop unroll_count(N)` /
`unroll(full)`, `nounroll`, ...) is the `tapeflow.unroll` attribute of its `scf.for`
(`hints`), which `tapeflow-unroll` applies.
Anything outside the subset is `file.c:line:col: unsupported C: <what>` (a `ToolError`),
as are Clang's own errors.

Where things are. `unit` (`CFrontend`, `compile_c`) drives one translation unit: `clang`
parses it (`headers` supplies Clang's builtin headers), `enzyme` reads Enzyme's calls and
attributes, `types` maps C types to IR types. Each function is a `builder.FunctionBuilder`,
made of parts that each own one kind of C construct: `stmt` (statements, dispatched by
cursor kind through `stmt.STATEMENTS`), `loops`, `expr` (expressions, through
`expr.EXPRESSIONS`), `calls`, `pointers`, `structs` and `memory`; `function` holds
their shared state (`FunctionState`) and `trees` the questions asked of a statement before
it is translated, `counted` which `for` loops are counted, `libc` what the C library's
functions are (math ops, allocators, dropped output calls), `arguments` the `-D`/`-I` of
the tools, `hints` the loop pragmas and `optimize` the clean-up after translation. To
add a C construct, add its cursor kind to `STATEMENTS` or `EXPRESSIONS` and its method to
the part it belongs to.

The parts are mixins of one class rather than collaborating objects: every part reads and
writes the same per-function state (`vals`, `bufs`, the loop flags) and calls the others
freely (an expression may allocate, a statement evaluates expressions), so one `self` keeps
each method as it reads in C terms, where collaborators would pass the state around or hold
references to each other. Each part is a class of its own file and subclasses
`FunctionState`, so what a method may use is the state and the other parts' methods.
"""

from .arguments import add_c_arguments, c_arguments, use_c_arguments
from .enzyme import AUTODIFF_ATTR, CONST_ARG_ATTR, ENZYME_ENTRY, INCLUDE_DIR
from .unit import CFrontend, compile_c

__all__ = [
    "AUTODIFF_ATTR",
    "CONST_ARG_ATTR",
    "ENZYME_ENTRY",
    "INCLUDE_DIR",
    "CFrontend",
    "add_c_arguments",
    "c_arguments",
    "compile_c",
    "use_c_arguments",
]
