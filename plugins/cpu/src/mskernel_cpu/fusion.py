"""Elementwise fusion: the ``cpu.fuse_elementwise`` pass and its private op
``cpu.fused_elementwise``.

The pass groups maximal chains and DAGs of elementwise ops into one node whose single region
is the group's sub-graph (closed, as the regions of ``If``/``While``).  Its kernel computes
the group in one pass over the output (generated C++ or a tile interpreter; see
:mod:`.fusion_codegen`), so the intermediates never reach memory.

A group grows from its root (the last node, whose output is the fused node's output) towards
its operands.  A producer joins when:

- its op is one the kernel fuses (``_native.fusable_ops()``: the core elementwise ops, ``cast``
  and ``where`` included), with tensor operands, one output and no complex dtype;
- its output has the root's shape, so nothing is computed twice (an operand of a smaller
  shape is broadcast by the kernel instead);
- every user of its output is in the group and the output is not a graph output: an
  intermediate someone else reads stays materialised, as the output of its own group;
- the program still fits the kernel's registers (:data:`MAX_REGISTERS`, inputs + ops).

Since every member but the root is read only inside the group, the group is convex and the
fused node takes the root's place.  Elementwise ops are pure, so no effect is reordered.
Regions of other nodes (``If``/``While`` bodies) are fused too.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from mskernel_sdk import (
    Graph, InferError, Node, OpDef, PassContext, PassResult, TensorType, Type, Value,
)

FUSED_OP = "cpu.fused_elementwise"

#: Registers of the fused kernel's interpreter: the node's inputs plus one per op.
MAX_REGISTERS = 32


def _fused_infer(*operands: Type, regions: Sequence[Graph]) -> Type:
    (region,) = regions
    if not isinstance(region, Graph):
        raise InferError(f"the region must be a Graph, got {type(region).__name__}")
    if region.input_types != tuple(operands):
        raise InferError(f"the region takes {list(map(str, region.input_types))}, but the "
                         f"operands are {list(map(str, operands))}")
    if len(region.outputs) != 1:
        raise InferError(f"the region must return one value, it returns {len(region.outputs)}")
    return region.output_types[0]


def _fused_reference(*operands: Any, regions: Sequence[Graph], run_region: Callable) -> Any:
    return run_region(regions[0], *operands)[0]


FUSED_OPDEF = OpDef(
    FUSED_OP, ("*operands",), _fused_infer, _fused_reference, num_regions=1,
    doc="elementwise ops computed in one pass (made by the cpu fusion pass): the region, a "
        "DAG of elementwise ops of the operands, gives the one output")


class ElementwiseFusion:
    """The ``cpu.fuse_elementwise`` pass.  ``fusable()`` names the ops the kernel can run
    (queried when the pass runs, so registering the pass loads no native code)."""

    name = "cpu.fuse_elementwise"

    def __init__(self, fusable: Callable[[], Iterable[str]]) -> None:
        self._fusable = fusable

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        new = fuse(graph, frozenset(self._fusable()))
        return PassResult(new, new is not graph)


def fuse(graph: Graph, ops: frozenset[str]) -> Graph:
    """``graph`` with its elementwise groups fused (the same object when none is)."""
    groups = _groups(graph, ops)
    member_of = {m: root for root, members in groups.items() for m in members}
    nodes: list[Node] = []
    changed = bool(groups)
    for node in graph.nodes:
        root = member_of.get(node)
        if root is node:
            nodes.append(_fused_node(groups[root]))
        elif root is None:
            new = _with_fused_regions(node, ops)
            changed = changed or new is not node
            nodes.append(new)
    if not changed:
        return graph
    return Graph(graph.inputs, tuple(nodes), graph.outputs, graph.name)


def _with_fused_regions(node: Node, ops: frozenset[str]) -> Node:
    """``node`` with its regions fused (fused nodes' own regions are left alone)."""
    if node.op == FUSED_OP:
        return node
    regions = tuple(fuse(r, ops) for r in node.regions)
    if all(new is old for new, old in zip(regions, node.regions)):
        return node
    return Node(node.op, node.inputs, node.outputs, node.attrs, regions, node.loc)


def _candidate(node: Node, ops: frozenset[str]) -> bool:
    if node.op not in ops or node.regions or len(node.outputs) != 1:
        return False
    values = (*node.inputs, node.output)
    return all(isinstance(v.type, TensorType) and not v.type.dtype.is_complex for v in values)


def _externals(members: Iterable[Node]) -> list[Value]:
    """The values the members read that none of them defines, in order of first use."""
    members = list(members)
    defined = {m.output for m in members}
    seen: dict[Value, None] = {}
    for m in members:
        for v in m.inputs:
            if v not in defined:
                seen.setdefault(v)
    return list(seen)


def _groups(graph: Graph, ops: frozenset[str]) -> dict[Node, list[Node]]:
    """Root → members in execution order (the root last), for groups of two nodes or more."""
    order = {node: i for i, node in enumerate(graph.nodes)}
    producers = graph.producers()
    users = graph.users()
    outputs = set(graph.outputs)
    assigned: set[Node] = set()
    groups: dict[Node, list[Node]] = {}
    for root in reversed(graph.nodes):
        if root in assigned or not _candidate(root, ops):
            continue
        shape = root.output.type.shape
        group = {root}
        pending = [root]
        while pending:
            member = pending.pop()
            for v in member.inputs:
                p = producers.get(v)
                if (p is None or p in group or p in assigned or not _candidate(p, ops)
                        or v in outputs or p.output.type.shape != shape
                        or not all(u in group for u in users[v])):
                    continue
                if len(group) + 1 + len(_externals(group | {p})) > MAX_REGISTERS:
                    continue
                group.add(p)
                pending.append(p)
        if len(group) > 1:
            groups[root] = sorted(group, key=order.__getitem__)
            assigned.update(group)
    return groups


def _fused_node(members: list[Node]) -> Node:
    """One ``cpu.fused_elementwise`` node computing ``members`` (the root last); it defines
    the root's output value, so no user needs renaming."""
    root = members[-1]
    externals = _externals(members)
    env: dict[Value, Value] = {v: Value(v.type, v.name) for v in externals}
    params = tuple(env.values())
    inner: list[Node] = []
    for m in members:
        out = Value(m.output.type)
        inner.append(Node(m.op, tuple(env[v] for v in m.inputs), (out,), m.attrs, (), m.loc))
        env[m.output] = out
    region = Graph(params, tuple(inner), (env[root.output],), f"fused_{root.output.uid}")
    return Node(FUSED_OP, tuple(externals), (root.output,), {}, (region,), root.loc)
