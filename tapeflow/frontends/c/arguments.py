"""The `-D`/`-I` options every tool that takes a `.c` file has, and the arguments a tool
applies to every C file it compiles.
"""

from __future__ import annotations


# `-D`/`-I` of the tool that runs (tapeflow-opt/run/exec/sim take a `.c` file): applied to
# every C file it compiles, before the caller's own arguments.
TOOL_CLANG_ARGS: list[str] = []


def add_c_arguments(parser, what: str = "a .c input") -> None:
    """`-D NAME[=V]` and `-I DIR` on a tool's argparse parser (for `what`)."""
    parser.add_argument("-D", dest="c_defines", action="append", default=[], metavar="NAME[=V]",
                        help=f"C preprocessor definition for {what} (repeatable)")
    parser.add_argument("-I", dest="c_includes", action="append", default=[], metavar="DIR",
                        help=f"C include directory for {what} (repeatable)")


def c_arguments(args) -> list[str]:
    """The parsed `-D`/`-I` (`add_c_arguments`) as Clang arguments."""
    return [
        *(f"-D{d}" for d in getattr(args, "c_defines", []) or []),
        *(f"-I{i}" for i in getattr(args, "c_includes", []) or []),
    ]


def use_c_arguments(args) -> list[str]:
    """Makes the parsed `-D`/`-I` apply to every C file compiled from now on."""
    TOOL_CLANG_ARGS[:] = c_arguments(args)
    return list(TOOL_CLANG_ARGS)
