"""Elementwise fusion: the ``cpu.fuse_elementwise`` pass and its private op
``cpu.fused_elementwise``.

The pass groups maximal chains and DAGs of elementwise ops into one node whose single region
is the group's sub-graph (closed, as the regions of ``If``/``While``).  Its kernel computes
the group in one pass over the output (generated C++ or a tile interpreter; see
:mod:`.fusion_codegen`), so the intermediates never reach memory.

The pass is one pattern, keyed by the ops the kernel fuses (``_native.fusable_ops()``: the
core elementwise ops, ``cast`` and ``where`` included).  At each such node, in execution
order, a group grows from it (the root, whose output the fused node defines) towards its
operands.  A producer joins when:

- it is a node the kernel fuses — its op is fusable, with tensor operands, one output and no
  complex dtype — or a fused node made earlier, whose region the group takes in;
- its output has the root's shape, so nothing is computed twice (an operand of a smaller
  shape is broadcast by the kernel instead);
- every read of its output is by the group and the output is not a graph output: an
  intermediate someone else reads stays materialised, as the output of its own group;
- the program still fits the kernel's registers (:data:`MAX_REGISTERS`, inputs + ops).

Since every member but the root is read only inside the group, the group is convex and the
fused node takes the root's place; the pass removes the members it leaves unread.
Elementwise ops are pure, so no effect is reordered.  Regions of other nodes (``If``/``While``
bodies) are fused too; a fused node's own region (its op has the ``"fused"`` trait) is not.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

from mskernel_sdk import (
    FUSED_TRAIT, Graph, InferError, Node, OpDef, PassContext, PassResult, PatternPass, Patterns,
    Scope, TensorType, Type, Value,
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
    traits=frozenset({FUSED_TRAIT}),
    doc="elementwise ops computed in one pass (made by the cpu fusion pass): the region, a "
        "DAG of elementwise ops of the operands, gives the one output")


class ElementwiseFusion:
    """The ``cpu.fuse_elementwise`` pass.  ``fusable()`` names the ops the kernel can run
    (queried when the pass first runs, so registering the pass loads no native code)."""

    name = "cpu.fuse_elementwise"

    def __init__(self, fusable: Callable[[], Iterable[str]]) -> None:
        self._fusable = fusable
        self._pass: Optional[PatternPass] = None

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        if self._pass is None:
            ops = frozenset(self._fusable())
            self._pass = PatternPass(self.name, Patterns([(ops, _Grouping(ops).fuse)]))
        return self._pass.run(graph, context)


class _Grouping:
    """Grows the group of a root node and fuses it."""

    def __init__(self, ops: frozenset[str]) -> None:
        self.ops = ops

    def candidate(self, node: Node) -> bool:
        if node.op not in self.ops or node.regions or len(node.outputs) != 1:
            return False
        values = (*node.inputs, node.output)
        return all(isinstance(v.type, TensorType) and not v.type.dtype.is_complex
                   for v in values)

    def fuse(self, root: Node, scope: Scope, context: PassContext) -> Optional[Node]:
        if not self.candidate(root):
            return None
        shape = root.output.type.shape
        members = [root]
        pending = [root]
        while pending:
            member = pending.pop()
            for v in member.inputs:
                p = scope.get(v)
                if (p is None or p in members or not (p.op == FUSED_OP or self.candidate(p))
                        or p.output.type.shape != shape
                        or scope.uses(v) != sum(m.inputs.count(v) for m in members)):
                    continue
                grown = _expanded(members + [p])
                if len(grown) + 1 + len(_externals(grown)) > MAX_REGISTERS:
                    continue
                members.append(p)
                pending.append(p)
        if len(members) == 1:
            return None
        return _fused_node(_in_order(_expanded(members)))


def _expanded(members: Iterable[Node]) -> list[Node]:
    """``members`` with each fused node replaced by the nodes of its region, reading the
    fused node's operands and defining its output."""
    out: list[Node] = []
    for m in members:
        if m.op != FUSED_OP:
            out.append(m)
            continue
        (region,) = m.regions
        env: dict[Value, Value] = dict(zip(region.inputs, m.inputs))
        env[region.outputs[0]] = m.output
        for inner in region.nodes:
            outputs = tuple(env.setdefault(v, Value(v.type, v.name)) for v in inner.outputs)
            out.append(Node(inner.op, tuple(env.get(v, v) for v in inner.inputs), outputs,
                            inner.attrs, (), inner.loc))
    return out


def _in_order(members: list[Node]) -> list[Node]:
    """``members`` in an order where each comes after the members it reads."""
    defined_by = {m.output: m for m in members}
    ordered: list[Node] = []
    placed: set[Node] = set()

    def place(node: Node) -> None:
        if node in placed:
            return
        placed.add(node)
        for v in node.inputs:
            if v in defined_by:
                place(defined_by[v])
        ordered.append(node)

    for m in members:
        place(m)
    return ordered


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


def _fused_node(members: list[Node]) -> Node:
    """One ``cpu.fused_elementwise`` node computing ``members`` (the root last); it defines
    the root's output value."""
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
    return Node(FUSED_OP, tuple(externals), root.outputs, {}, (region,), root.loc)
