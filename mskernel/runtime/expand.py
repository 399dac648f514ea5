"""Expanding composite ops into primitives for a backend that does not claim them.

Before nodes are placed, every node the preferred backend cannot run is offered to its op's
:attr:`~mskernel.ops.OpDef.decomposition`.  When the backend runs every node the
decomposition emits — expanding composites among them the same way, recursively — the node is
replaced by them and runs on the preferred backend; otherwise it stays whole and falls back as
one node, to a backend that may run a fused kernel for it.  A backend that claims an op keeps
it: its kernel is presumably better than the composition.  A node owning regions (``If``,
``While``) is rewritten with its regions expanded when that makes the backend run it.

Expansions are recorded, so :meth:`~mskernel.runtime.partition.PartitionPlan.explain` shows
which nodes came from which composite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from ..errors import MskernelError, OpError
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from ..ir.lookup import OpLookup
from ..ops.registry import OpDef
from ..passes.rewrite import Replacement, rewrite_nodes
from .backend import Capabilities


@dataclass(frozen=True)
class Expansion:
    """A composite node (as it stood in the graph) and the nodes that replaced it."""

    node: Node
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Expanded:
    """A graph with the composites a backend does not claim expanded, and the record."""

    graph: Graph
    expansions: tuple[Expansion, ...]


def decompose(node: Node, registry: OpLookup[OpDef]) -> Optional[Graph]:
    """The nodes ``node``'s decomposition emits, as a graph from ``node``'s inputs to the
    values replacing its outputs (each of the output's type); ``None`` for a primitive op.
    Emitted nodes without a source location take ``node``'s."""
    opdef = registry.get(node.op)
    if opdef.decomposition is None:
        return None
    b = GraphBuilder(f"{node.op}.decomposed", registry)
    try:
        result = opdef.decomposition(b, *node.inputs, **node.attrs)
    except MskernelError:
        raise
    except Exception as exc:  # a bug in the op's definition: say whose, and where
        raise OpError(f"the decomposition of op '{node.op}' ({opdef.owner}){node.where()} "
                      f"failed on ({_types(node.inputs)}): {type(exc).__name__}: {exc}") from exc
    outputs = tuple(result) if isinstance(result, tuple) else (result,)
    types = [v.type for v in outputs]
    if types != [v.type for v in node.outputs]:
        listed = ", ".join(str(t) for t in types)
        raise OpError(f"the decomposition of op '{node.op}' ({opdef.owner}){node.where()} "
                      f"returns ({listed}) for outputs ({_types(node.outputs)})")
    if any(n.op == node.op for n in b.nodes):
        raise OpError(f"the decomposition of op '{node.op}' ({opdef.owner}) emits '{node.op}'")
    nodes = tuple(n if n.loc is not None else replace(n, loc=node.loc) for n in b.nodes)
    return Graph(tuple(dict.fromkeys(node.inputs)), nodes, outputs, b.name)


def expand_composites(graph: Graph, capabilities: Capabilities,
                      registry: OpLookup[OpDef]) -> Expanded:
    """``graph`` with each node that ``capabilities`` does not cover replaced by its
    decomposition where the decomposition is covered (see the module doc)."""
    if all(capabilities.supports(node) for node in graph.nodes):  # the common case
        return Expanded(graph, ())
    expanded, records = _Expander(capabilities, registry).graph(graph)
    return Expanded(expanded, tuple(records))


class _Expander:
    def __init__(self, capabilities: Capabilities, registry: OpLookup[OpDef]) -> None:
        self.capabilities = capabilities
        self.registry = registry

    def graph(self, graph: Graph) -> tuple[Graph, list[Expansion]]:
        """``graph`` with its own nodes expanded (a region's nodes only with their owner)."""
        own = {v for node in graph.nodes for v in node.outputs}
        records: list[Expansion] = []

        def visit(node: Node, producers: Any) -> Optional[Replacement]:
            if not node.outputs or node.outputs[0] not in own or self.capabilities.supports(node):
                return None
            found = self.covered(node)
            if found is None:
                return None
            nodes, values, expansions = found
            records.extend(expansions)
            return Replacement(nodes, values)

        return rewrite_nodes(graph, lambda: visit), records

    def covered(self, node: Node) -> Optional[tuple[tuple[Node, ...], tuple[Value, ...],
                                                    list[Expansion]]]:
        """Nodes the backend runs that compute ``node``, the values replacing its outputs and
        the expansions made; ``None`` when there are none."""
        if node.regions:
            inner = [self.graph(region) for region in node.regions]
            owner = replace(node, regions=tuple(region for region, _ in inner))
            if not self.capabilities.supports(owner):
                return None
            return (owner,), owner.outputs, [e for _, records in inner for e in records]
        decomposed = decompose(node, self.registry)
        if decomposed is None:
            return None
        expanded, _ = self.graph(decomposed)
        if not all(self.capabilities.supports(n) for n in expanded.nodes):
            return None
        return expanded.nodes, expanded.outputs, [Expansion(node, expanded.nodes)]


def _types(values: Sequence[Value]) -> str:
    return ", ".join(str(v.type) for v in values)
