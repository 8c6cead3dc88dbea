"""Which recomputable values min-tape caches anyway: Enzyme's minimum cut.

Recomputing a value in the reverse sweep needs its operands, down to *sources* that
cannot be recomputed (loop results, iter_args, loads of memory written later) and are
cached. Caching every source reached is not always the smallest tape: `tanh(Wh + Ux)`
would cache both reduction results, where caching the sum alone is half as much. As
Enzyme-MLIR's `minCut`, the values to cache are a minimum vertex cut between the sources
and the values the reverse code asks for (`Gradient.requests`), in the graph of
recomputations (an edge from each operand to the value computed from it); a vertex
costs its bytes times how often its block runs. Of the minimum cuts, the one nearest
the sources is taken (Enzyme's choice), so recomputation stays as cheap as the tape
allows. Values every recomputation gets for free (the function body's values, constants,
induction variables) are not in the graph.

The requests are learnt from a first build of the gradient without cuts
(`build_min_tape`): the rules ask for the same values whatever is cached.
"""

from __future__ import annotations

from collections import defaultdict, deque

from xdsl.dialects import arith, func, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tapeflow.dialects.region import element_size
from tapeflow.transforms.autodiff.driver import Gradient, defining_block

UNKNOWN_TRIPS = 8
"""Weight of a loop whose trip count is not a compile-time constant."""

_INF = float("inf")


def _executions(block: Block | None) -> float:
    """How many times `block` runs per call: the product of the enclosing loops' trip
    counts (`UNKNOWN_TRIPS` when not constant; a branch counted as taken)."""
    from tapeflow.transforms.analysis.constants import trip_count

    total = 1.0
    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp):
        if isinstance(op, scf.ForOp):
            n = trip_count(op, fold=True)
            total *= UNKNOWN_TRIPS if n is None else max(n, 1)
        elif isinstance(op, scf.WhileOp):
            total *= UNKNOWN_TRIPS
        op = op.parent_op()
    return total


def min_tape_cut(g: Gradient) -> set[SSAValue]:
    """The recomputable values to cache: a minimum cut nearest the sources (module doc)."""

    def free(v: SSAValue) -> bool:
        if defining_block(v) is g.entry or isinstance(v.owner, arith.ConstantOp):
            return True
        return isinstance(v, BlockArgument) and isinstance(v.block.parent_op(), scf.ForOp) \
            and v.index == 0  # fmt: skip

    # The graph: every non-free value reached from a request through recomputations.
    operands: dict[SSAValue, list[SSAValue]] = {}
    work = [v for v in g.requests if not free(v)]
    while work:
        v = work.pop()
        if v in operands:
            continue
        inner: list[SSAValue] = []
        if g._recomputable(v):
            owner = v.owner
            assert isinstance(owner, Operation)
            inner = [u for u in owner.operands if not free(u)]
            work.extend(inner)
        operands[v] = inner
    recomputable = {v for v, inner in operands.items() if g._recomputable(v)}
    if not recomputable:
        return set()
    # The graph falls apart into components (one per loop nest, as the function body's
    # values are free): a cut of each alone, so each augmenting path searches only its own.
    cut: set[SSAValue] = set()
    for component in _components(operands):
        if recomputable.intersection(component):
            cut |= _nearest_min_cut(component, operands, recomputable, g.requests)
    return cut


def _components(operands: dict[SSAValue, list[SSAValue]]) -> list[list[SSAValue]]:
    """The connected components of the graph, ignoring edge directions."""
    neighbours: dict[SSAValue, list[SSAValue]] = defaultdict(list)
    for v, inner in operands.items():
        for u in inner:
            neighbours[v].append(u)
            neighbours[u].append(v)
    seen: set[SSAValue] = set()
    components: list[list[SSAValue]] = []
    for start in operands:
        if start in seen:
            continue
        seen.add(start)
        component, work = [start], [start]
        while work:
            for u in neighbours[work.pop()]:
                if u not in seen:
                    seen.add(u)
                    component.append(u)
                    work.append(u)
        components.append(component)
    return components


def _nearest_min_cut(
    component: list[SSAValue],
    operands: dict[SSAValue, list[SSAValue]],
    recomputable: set[SSAValue],
    requests: set[SSAValue],
) -> set[SSAValue]:
    """The minimum vertex cut of one component nearest the sources (Edmonds-Karp). Any
    maximum flow leaves the same vertices reachable from the source, so cutting
    component by component gives the cut of the whole graph."""
    # Vertex split: (v, 0) -> (v, 1) with v's cost; sources feed (v, 0), requests drain (v, 1).
    source, sink = ("source", 0), ("sink", 0)
    cap: dict[object, dict[object, float]] = defaultdict(dict)
    for v in component:
        inner = operands[v]
        cap[(v, 0)][(v, 1)] = element_size(v.type) * _executions(defining_block(v))
        cap[(v, 1)].setdefault((v, 0), 0.0)
        for u in inner:
            cap[(u, 1)][(v, 0)] = _INF
            cap[(v, 0)].setdefault((u, 1), 0.0)
        if v not in recomputable:
            cap[source][(v, 0)] = _INF
            cap[(v, 0)].setdefault(source, 0.0)
        if v in requests:
            cap[(v, 1)][sink] = _INF
            cap[sink].setdefault((v, 1), 0.0)

    def reachable() -> dict[object, object]:
        parent: dict[object, object] = {source: source}
        queue = deque([source])
        while queue:
            x = queue.popleft()
            for y, c in cap[x].items():
                if c > 0 and y not in parent:
                    parent[y] = x
                    queue.append(y)
        return parent

    while True:  # Edmonds-Karp
        parent = reachable()
        if sink not in parent:
            break
        path, y = [], sink
        while y != source:
            path.append((parent[y], y))
            y = parent[y]
        flow = min(cap[x][y] for x, y in path)
        for x, y in path:
            cap[x][y] -= flow
            cap[y][x] += flow
    seen = reachable()
    return {v for v in component if v in recomputable and (v, 0) in seen and (v, 1) not in seen}


def build_min_tape(
    fn: func.FuncOp, rules, policy: str, counted: set[scf.WhileOp]
) -> tuple[func.FuncOp, Gradient]:
    """The gradient of `fn` with `min_tape_cut`'s values cached, and the function it was
    built in (`fn` or a clone). The cut is learnt from a build without cuts; when it is
    empty (the common case) that build is the result, else an untouched clone of `fn`,
    taken first, is built again with the cut."""
    clone = fn.clone()
    values: dict[SSAValue, SSAValue] = {}
    ops: dict[Operation, Operation] = {}
    for mine, theirs in zip(fn.walk(), clone.walk(), strict=True):
        ops[mine] = theirs
        values.update(zip(mine.results, theirs.results, strict=True))
        for r_mine, r_theirs in zip(mine.regions, theirs.regions, strict=True):
            for b_mine, b_theirs in zip(r_mine.blocks, r_theirs.blocks, strict=True):
                values.update(zip(b_mine.args, b_theirs.args, strict=True))
    g = Gradient(fn, rules, policy, counted)
    g.build()
    cuts = min_tape_cut(g)
    if not cuts:
        return fn, g
    whiles = {ops[w] for w in counted}
    g = Gradient(clone, rules, policy, whiles, {values[v] for v in cuts})  # type: ignore[arg-type]
    g.build()
    return clone, g
