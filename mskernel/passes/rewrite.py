"""Graph-rewriting machinery shared by passes.

Graphs are immutable, so a pass builds a new graph.  :func:`rewrite_nodes` does the
bookkeeping once for every pass that works node by node, in execution order:

- it renames each node's inputs to the values that replaced them so far, rebuilding only the
  nodes whose inputs (or regions) actually changed — an untouched node, and an untouched
  graph, is returned as the same object, so ``changed`` is exact;
- it rewrites regions first, each with a fresh visitor, because regions are closed: a value
  of one region can never stand in for a value of another scope;
- it hands each node to the pass's visitor, which keeps it (returns ``None``) or returns a
  :class:`Replacement`: new nodes to insert in its place and the values that replace its
  outputs.  A replacement must keep every output's type; :func:`substitute` and the
  visitor's replacements are checked and a type change raises
  :class:`~mskernel.errors.VerifyError` naming the node.

A node rebuilt because its inputs were renamed keeps its output values, so nothing after it
needs renaming.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from ..errors import VerifyError
from ..ir.graph import Graph, Node, Value
from .base import OpDefinitions


@dataclass(frozen=True)
class Replacement:
    """What replaces a node: ``nodes`` are inserted where it stood (in order) and
    ``values[i]`` replaces its output ``i``.  ``values`` may name earlier values of the same
    graph (``x * 1`` → ``x``) or outputs of the new nodes."""

    nodes: tuple[Node, ...]
    values: tuple[Value, ...]


#: ``visit(node, producers)``: ``node`` has its inputs renamed and its regions rewritten;
#: ``producers`` maps every value defined so far in the new graph to the node defining it.
Visit = Callable[[Node, Mapping[Value, Node]], Optional[Replacement]]


def rewrite_nodes(graph: Graph, make_visit: Optional[Callable[[], Visit]] = None,
                  substitutions: Mapping[Value, Value] | None = None) -> Graph:
    """Rewrite ``graph`` node by node; return it unchanged (the same object) when nothing
    changed.  ``make_visit()`` is called once for the graph and once for every region, so a
    visitor that remembers nodes (CSE's table) starts empty in each scope.
    ``substitutions`` replaces uses of values before any visiting (see :func:`substitute`)."""
    env: dict[Value, Value] = {}
    for old, new in (substitutions or {}).items():
        check_same_type(old, new, "substitution")
        env[old] = new
    return _Rewriter(make_visit, env).graph(graph)


def substitute(graph: Graph, mapping: Mapping[Value, Value]) -> Graph:
    """Replace every use of each key of ``mapping`` by its value, in ``graph`` and its
    regions; only the nodes reading a replaced value are rebuilt.  The new values must have
    the old ones' types and be defined before their new uses."""
    return rewrite_nodes(graph, substitutions=mapping)


def check_same_type(old: Value, new: Value, what: str) -> None:
    if old.type != new.type:
        raise VerifyError(
            f"{what} would replace {old!r} by {new!r}, changing its type from {old.type} "
            f"to {new.type}"
        )


def is_effectful(node: Node, registry: OpDefinitions) -> bool:
    """Whether ``node`` has side effects: its op is effectful, or a node of one of its
    regions is.  Passes never delete, merge, evaluate or reorder such nodes."""
    if registry.get(node.op).effectful:
        return True
    return any(is_effectful(inner, registry) for region in node.regions for inner in region.nodes)


def count_nodes(graph: Graph) -> int:
    """Nodes of ``graph`` including those inside regions."""
    return sum(1 for _ in graph.walk())


class _Rewriter:
    def __init__(self, make_visit: Optional[Callable[[], Visit]], env: dict[Value, Value]) -> None:
        self.make_visit = make_visit
        self.env = env

    def graph(self, graph: Graph) -> Graph:
        visit = self.make_visit() if self.make_visit is not None else None
        defined: set[Value] = set(graph.inputs)
        producers: dict[Value, Node] = {}
        nodes: list[Node] = []
        changed = False
        for node in graph.nodes:
            current = self._renamed(node)
            replacement = visit(current, producers) if visit is not None else None
            if replacement is None:
                emitted: tuple[Node, ...] = (current,)
                changed = changed or current is not node
            else:
                self._record(node, replacement, defined)
                emitted = replacement.nodes
                changed = True
            for new in emitted:
                nodes.append(new)
                defined.update(new.outputs)
                producers.update((v, new) for v in new.outputs)
        outputs = tuple(self.env.get(v, v) for v in graph.outputs)
        if not changed and outputs == graph.outputs:
            return graph
        return Graph(graph.inputs, tuple(nodes), outputs, graph.name)

    def _renamed(self, node: Node) -> Node:
        inputs = tuple(self.env.get(v, v) for v in node.inputs)
        regions = tuple(self.graph(r) for r in node.regions)
        if inputs == node.inputs and all(a is b for a, b in zip(regions, node.regions)):
            return node
        return Node(node.op, inputs, node.outputs, node.attrs, regions, node.loc)

    def _record(self, node: Node, replacement: Replacement, defined: set[Value]) -> None:
        if len(replacement.values) != len(node.outputs):
            raise VerifyError(
                f"replacement of node '{node.op}'{node.where()} gives "
                f"{len(replacement.values)} values for {len(node.outputs)} outputs"
            )
        inserted = {v for new in replacement.nodes for v in new.outputs}
        for old, new in zip(node.outputs, replacement.values):
            check_same_type(old, new, f"rewriting node '{node.op}'{node.where()}")
            if new not in defined and new not in inserted:
                raise VerifyError(
                    f"rewriting node '{node.op}'{node.where()} uses {new!r}, which is not "
                    f"defined before it in the same graph (regions are closed)"
                )
            self.env[old] = new
