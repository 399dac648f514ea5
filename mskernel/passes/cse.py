"""Common subexpression elimination: the generic ``cse`` pass.

Two nodes are merged — the later one's outputs replaced by the earlier one's — when they
apply the same op to the same inputs with equal attributes (:meth:`Node.attrs_key`, so
constants with equal arrays merge too) and give the same types.  Inputs of ops with the
``"commutative"`` trait match in any order (``add(a, b)`` and ``add(b, a)``).

Never merged: effectful nodes (two writes are two writes) and nodes owning regions.  Random
ops are pure functions of their key, so two draws from the same key are one draw.  Nodes
inside a region are merged with each other only: regions are closed.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Optional

from ..ir.graph import Graph, Node, Value
from .base import OpDefinitions, PassContext, PassResult
from .rewrite import Replacement, Visit, is_effectful, rewrite_nodes


class CommonSubexpressionElimination:
    name = "cse"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        def make_visit() -> Visit:
            seen: dict[Hashable, Node] = {}

            def visit(node: Node, producers: Mapping[Value, Node]) -> Optional[Replacement]:
                key = node_key(node, context.registry)
                if key is None:
                    return None
                first = seen.setdefault(key, node)
                return None if first is node else Replacement((), first.outputs)

            return visit

        new = rewrite_nodes(graph, make_visit)
        return PassResult(new, new is not graph)


def node_key(node: Node, registry: OpDefinitions) -> Optional[Hashable]:
    """What identifies the value a node computes, or ``None`` when it must stay distinct."""
    if node.regions or is_effectful(node, registry):
        return None
    inputs = node.inputs
    if registry.get(node.op).has_trait("commutative"):
        inputs = tuple(sorted(inputs, key=lambda v: v.uid))
    return (node.op, inputs, node.attrs_key(), tuple(v.type for v in node.outputs))
