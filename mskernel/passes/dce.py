"""Dead code elimination: the generic ``dce`` pass.

A node is live when one of its outputs is used by a live node or is a graph output, or when
it is effectful (its op, or a node of one of its regions, is — see
:func:`~mskernel.passes.rewrite.is_effectful`).  Every other node is removed, including
random ops, which are pure functions of their key.  Effects normally stay live through their
tokens anyway, since the final token is a graph output.  As in other compilers, a run-time
error a removed node would have raised (an integer division by zero, a ``While`` exceeding its
``max_iterations``) goes with it.

Inside the regions of live nodes, dead nodes are removed too.  A region's inputs and outputs
are part of its owner's signature (the ``then`` and ``else`` branches of an ``if`` must
agree), so they are kept even when unused.
"""

from __future__ import annotations


from ..ir.graph import Graph, Node, Value
from .base import OpDefinitions, PassContext, PassResult
from .rewrite import is_effectful


class DeadCodeElimination:
    name = "dce"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        new = eliminate_dead_code(graph, context.registry)
        return PassResult(new, new is not graph)


def eliminate_dead_code(graph: Graph, registry: OpDefinitions) -> Graph:
    """``graph`` without its dead nodes; the same object when it has none."""
    live: set[Value] = set(graph.outputs)
    kept: list[Node] = []
    changed = False
    for node in reversed(graph.nodes):
        if not live.intersection(node.outputs) and not is_effectful(node, registry):
            changed = True
            continue
        regions = tuple(eliminate_dead_code(r, registry) for r in node.regions)
        if any(new is not old for new, old in zip(regions, node.regions)):
            node = Node(node.op, node.inputs, node.outputs, node.attrs, regions, node.loc)
            changed = True
        kept.append(node)
        live.update(node.inputs)
    if not changed:
        return graph
    return Graph(graph.inputs, tuple(reversed(kept)), graph.outputs, graph.name)
