"""The fusion pass ``gpu.fuse``: elementwise ops, with the broadcasts they read and the
reduction that consumes them, become one ``gpu.fused`` node (:mod:`.fused_op`) whose kernel
is generated CUDA C — the role MindSpore's graph-kernel fusion (AKG) plays.

One pattern over the ops the generator computes and the reductions it folds, visited in
execution order:

- at an elementwise node the generator computes (:func:`.codegen.fusable`), a group grows
  from it towards its operands.  A producer joins when it is itself fusable (or an earlier
  ``gpu.fused`` node without a reduction, whose region the group takes in), its output has
  the root's shape (an operand of a smaller shape is broadcast by the kernel instead of being
  materialised), and every reader of its output is in the group (an intermediate read
  elsewhere stays in memory, as the output of its own group).  A group of one node is left
  to its library kernel;
- at a ``sum``/``max``/``min`` of float values over trailing axes whose operand is made by
  such a group (or a single fusable node), the reduction joins: the kernel reduces each row as
  it computes it, so the elementwise result never reaches memory when nothing else reads it
  (a norm's squares and their sum).  When something else does read it (softmax's
  ``exp(x - max)``, summed and divided), a group of at most :data:`RECOMPUTE` ops is computed
  again inside the reduction rather than read back: a few flops per element are cheaper than
  a round trip through memory.

Every member of an elementwise group but the root is read only inside the group, so the group
is convex and the fused node takes the root's place.  Elementwise ops are pure: no effect is
reordered, and recomputing one changes no result.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from mskernel_sdk import (
    Graph, Node, PassContext, PatternPass, Patterns, Scope, TensorType, Value, normalize_axes,
)

from .codegen import FLOATS, FUSABLE, REDUCTIONS, fusable
from .fused_op import FUSED_OP, MAX_VALUES

#: the most ops a reduction computes again rather than read their result from memory
RECOMPUTE = 8


def _plain_fused(node: Optional[Node]) -> bool:
    return node is not None and node.op == FUSED_OP and node.attrs.get("reduce") == "none"


def _expanded(members: Iterable[Node]) -> list[Node]:
    """``members`` with each ``gpu.fused`` node replaced by its region's nodes, reading the
    node's operands and defining its output."""
    out: list[Node] = []
    for m in members:
        if m.op != FUSED_OP:
            out.append(m)
            continue
        (region,) = m.regions
        env: dict[Value, Value] = dict(zip(region.inputs, m.inputs))
        env[region.outputs[0]] = m.outputs[0]
        for inner in region.nodes:
            outputs = tuple(env.setdefault(v, Value(v.type, v.name)) for v in inner.outputs)
            out.append(Node(inner.op, tuple(env.get(v, v) for v in inner.inputs), outputs,
                            inner.attrs, (), inner.loc))
    return out


def _ordered(members: list[Node]) -> list[Node]:
    """``members`` so that each comes after those whose outputs it reads."""
    made_by = {m.outputs[0]: m for m in members}
    ordered: list[Node] = []
    placed: set[Node] = set()

    def place(node: Node) -> None:
        if node not in placed:
            placed.add(node)
            for v in node.inputs:
                if v in made_by:
                    place(made_by[v])
            ordered.append(node)

    for m in members:
        place(m)
    return ordered


def _operands(members: Sequence[Node]) -> list[Value]:
    made = {m.outputs[0] for m in members}
    return list(dict.fromkeys(v for m in members for v in m.inputs if v not in made))


def _region(members: list[Node], name: str) -> tuple[Graph, list[Value]]:
    """The closed region computing ``members`` (the root last) and the operands it takes."""
    operands = _operands(members)
    env: dict[Value, Value] = {v: Value(v.type, v.name) for v in operands}
    nodes = []
    for m in members:
        out = Value(m.outputs[0].type)
        nodes.append(Node(m.op, tuple(env[v] for v in m.inputs), (out,), m.attrs, (), m.loc))
        env[m.outputs[0]] = out
    return Graph(tuple(env[v] for v in operands), tuple(nodes),
                 (env[members[-1].outputs[0]],), name), operands


def _group(root: Node, scope: Scope) -> list[Node]:
    """The nodes fused with ``root`` (itself included, in an order that computes them)."""
    shape = root.outputs[0].type.shape  # type: ignore[union-attr]
    members, pending = [root], [root]
    while pending:
        member = pending.pop()
        for v in member.inputs:
            p = scope.get(v)
            if (p is None or p in members or not (fusable(p) or _plain_fused(p))
                    or p.outputs[0].type.shape != shape  # type: ignore[union-attr]
                    or scope.uses(v) != sum(m.inputs.count(v) for m in members)):
                continue
            grown = _expanded([*members, p])
            if len(grown) + len(_operands(grown)) > MAX_VALUES:
                continue
            members.append(p)
            pending.append(p)
    return _ordered(_expanded(members))


def fuse_elementwise(root: Node, scope: Scope, context: PassContext) -> Optional[Node]:
    if not fusable(root):
        return None
    members = _group(root, scope)
    if len(members) == 1:
        return None
    region, operands = _region(members, f"fused_{root.outputs[0].uid}")
    return Node(FUSED_OP, tuple(operands), root.outputs, {"reduce": "none", "inner": 0,
                                                          "keepdims": False},
                (region,), root.loc)


def fuse_reduction(node: Node, scope: Scope, context: PassContext) -> Optional[Node]:
    (x,) = node.inputs
    producer = scope.get(x)
    t = x.type
    if (producer is None or not (fusable(producer) or _plain_fused(producer))
            or not isinstance(t, TensorType)
            or t.dtype.name not in FLOATS or t.rank == 0 or 0 in t.shape):
        return None
    axes = normalize_axes(node.attrs.get("axes"), t.rank)
    inner = len(axes)
    if tuple(sorted(axes)) != tuple(range(t.rank - inner, t.rank)):
        return None
    members = _ordered(_expanded([producer]))
    if scope.uses(x) != 1 and len(members) > RECOMPUTE:
        return None
    region, operands = _region(members, f"fused_{node.outputs[0].uid}")
    return Node(FUSED_OP, tuple(operands), node.outputs,
                {"reduce": node.op, "inner": inner,
                 "keepdims": bool(node.attrs.get("keepdims", False))},
                (region,), node.loc)


FUSE = PatternPass("gpu.fuse", Patterns([
    (frozenset(FUSABLE), fuse_elementwise),
    (frozenset(REDUCTIONS), fuse_reduction),
]))
