"""Enzyme's `__enzyme_allocation_like` registration: a function of the file that hands out
memory as `malloc` does.

    void *__enzyme_allocation_like[4] = {(void *)alloc, (void *)1, (void *)"2,-1",
                                         (void *)dealloc};

says that `alloc`'s argument 1 is the size in bytes of the memory its call returns, and
that `dealloc(a2, p)` frees it, its arguments being the call's argument 2 and (-1) the
returned pointer. Enzyme then treats such calls as allocations: the memory carries a
derivative (its shadow is another allocation) and `alloc`'s body is not differentiated.
Here a call of `alloc` is a `malloc` of its size argument (a new buffer, as
`memref.alloc`), `alloc` itself is not translated, and a call of `dealloc` is a `free`
of its returned-pointer argument.
"""

from __future__ import annotations

from .clang import children, evaluate, strip_casts, unsupported, walk
from .libc import ALLOCATORS

ALLOCATION_LIKE = "__enzyme_allocation_like"


class AllocationLike:
    """The file's `__enzyme_allocation_like` registrations (`register_allocation_like`)."""

    allocation_like: dict[str, int]
    """allocator -> its size argument."""
    freeing_like: dict[str, int]
    """deallocator -> its argument that is the pointer to free."""

    def register_allocation_like(self, c) -> None:
        """`__enzyme_allocation_like = {alloc, size index, "deallocation indices",
        dealloc}` (the module docstring)."""
        inits = [k for k in children(c) if k.kind.name == "INIT_LIST_EXPR"]
        items = [strip_casts(k) for k in children(inits[0])] if inits else []
        form = (f"{c.spelling} other than {{(void *)alloc, (void *)size_index, "
                "(void *)\"deallocation indices\", (void *)dealloc}")
        if len(items) != 4:
            unsupported(c, form)
        fns = [k.referenced if k.kind.name == "DECL_REF_EXPR" else None for k in items[::3]]
        size = evaluate(items[1])
        if any(f is None or f.kind.name != "FUNCTION_DECL" for f in fns) or not isinstance(
            size, int
        ) or items[2].kind.name != "STRING_LITERAL":
            unsupported(c, form)
        alloc, dealloc = fns
        if not 0 <= size < len(list(alloc.get_arguments())):
            unsupported(items[1], f"'{alloc.spelling}' has no argument {size} (its size)")
        indices = items[2].spelling.strip('"').split(",")
        if "-1" not in [i.strip() for i in indices]:
            unsupported(items[2], "deallocation indices without -1 (the freed pointer)")
        self.allocation_like[alloc.spelling] = size
        self.freeing_like[dealloc.spelling] = [i.strip() for i in indices].index("-1")

    def allocates(self, c) -> bool:
        """Whether the cursor `c` is a call that returns new memory (malloc's family, or
        an `__enzyme_allocation_like` function)."""
        return c.kind.name == "CALL_EXPR" and (
            c.spelling in ALLOCATORS or c.spelling in self.allocation_like
        )

    def freed(self, c):
        """The pointer argument a call of `free` or of a registered deallocator frees, or
        None (any other cursor)."""
        if c.kind.name != "CALL_EXPR":
            return None
        at = 0 if c.spelling == "free" else self.freeing_like.get(c.spelling)
        args = list(c.get_arguments())
        return args[at] if at is not None and at < len(args) else None

    def unread_arguments(self, body) -> set[tuple[int, int]]:
        """The arguments of `body`'s calls of registered allocators and deallocators that
        are not translated (all but the size and the freed pointer), as `walk` skip keys:
        the allocator's own state (`buffer`, `&offset`) is not the program's."""
        out: set[tuple[int, int]] = set()
        for c in walk(body):
            if not self.registered_memory(c.spelling) or c.kind.name != "CALL_EXPR":
                continue
            kept = self.allocation_like.get(c.spelling, self.freeing_like.get(c.spelling))
            out |= {(a.extent.start.offset, a.hash)
                    for n, a in enumerate(c.get_arguments()) if n != kept}
        return out

    def registered_memory(self, name: str) -> bool:
        """Whether `name` is a registered allocator or deallocator (not translated)."""
        return name in self.allocation_like or name in self.freeing_like
