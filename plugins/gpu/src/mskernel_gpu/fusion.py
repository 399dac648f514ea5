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

from typing import Optional, Sequence

from mskernel_sdk import (
    Graph, Node, PassContext, PatternPass, Patterns, Scope, TensorType, Value, normalize_axes,
)

from .codegen import FLOATS, FUSABLE, REDUCTIONS, fusable
from .fused_op import FUSED_OP, MAX_VALUES

#: the most ops a reduction computes again rather than read their result from memory
RECOMPUTE = 8


def _plain_fused(node: Optional[Node]) -> bool:
    return node is not None and node.op == FUSED_OP and node.attrs.get("reduce") == "none"


class _RegionBuilder:
    """Builds the closed region of a group by walking from the root to the operands: a value
    made by a member is computed in the region (a ``gpu.fused`` member's own region inlined),
    any other value becomes an operand of the fused node."""

    def __init__(self, members: Sequence[Node], scope: Scope) -> None:
        self.members, self.scope = set(members), scope
        self.values: dict[Value, Value] = {}
        self.operands: list[Value] = []
        self.nodes: list[Node] = []

    def value(self, outer: Value) -> Value:
        if outer not in self.values:
            producer = self.scope.get(outer)
            if producer in self.members:
                self.emit(producer)
            else:
                self.operands.append(outer)
                self.values[outer] = Value(outer.type, outer.name)
        return self.values[outer]

    def emit(self, node: Node) -> None:
        if node.op == FUSED_OP:  # inline: its region's inputs are its operands' values
            (region,) = node.regions
            inner = dict(zip(region.inputs, (self.value(v) for v in node.inputs)))
            for n in region.nodes:
                inner[n.outputs[0]] = self.add(n, [inner[v] for v in n.inputs])
            self.values[node.outputs[0]] = inner[region.outputs[0]]
        else:
            self.values[node.outputs[0]] = self.add(node, [self.value(v) for v in node.inputs])

    def add(self, node: Node, inputs: list[Value]) -> Value:
        out = Value(node.outputs[0].type)
        self.nodes.append(Node(node.op, tuple(inputs), (out,), node.attrs, (), node.loc))
        return out

    def build(self, root: Node, name: str) -> tuple[Graph, list[Value]]:
        self.emit(root)
        params = tuple(self.values[v] for v in self.operands)
        return Graph(params, tuple(self.nodes), (self.values[root.outputs[0]],), name), \
            self.operands


def _region(root: Node, members: Sequence[Node], scope: Scope) -> tuple[Graph, list[Value]]:
    """The region computing ``root`` from ``members`` and the operands it takes."""
    return _RegionBuilder(members, scope).build(root, f"fused_{root.outputs[0].uid}")


def _group(root: Node, scope: Scope) -> list[Node]:
    """The nodes fused with ``root``, itself included (see the module's docstring)."""
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
            region, operands = _region(root, [*members, p], scope)
            if len(region.nodes) + len(operands) > MAX_VALUES:
                continue
            members.append(p)
            pending.append(p)
    return members


def fuse_elementwise(root: Node, scope: Scope, context: PassContext) -> Optional[Node]:
    if not fusable(root):
        return None
    members = _group(root, scope)
    if len(members) == 1:
        return None
    region, operands = _region(root, members, scope)
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
    region, operands = _region(producer, [producer], scope)
    if scope.uses(x) != 1 and len(region.nodes) > RECOMPUTE:
        return None
    return Node(FUSED_OP, tuple(operands), node.outputs,
                {"reduce": node.op, "inner": inner,
                 "keepdims": bool(node.attrs.get("keepdims", False))},
                (region,), node.loc)


FUSE = PatternPass("gpu.fuse", Patterns([
    (frozenset(FUSABLE), fuse_elementwise),
    (frozenset(REDUCTIONS), fuse_reduction),
]))
