"""Graph-rewriting machinery shared by passes.

Graphs are immutable, so a pass builds a new graph.  :func:`rewrite_nodes` does the
bookkeeping once for every pass that works node by node, in execution order:

- it renames each node's inputs to the values that replaced them so far, rebuilding only the
  nodes whose inputs (or regions) actually changed — an untouched node, and an untouched
  graph, is returned as the same object, so ``changed`` is exact;
- it rewrites regions first (:func:`map_regions`), each with a fresh visitor, because regions
  are closed: a value of one region can never stand in for a value of another scope;
- it hands each node to the pass's visitor with the :class:`Scope` around it, and the visitor
  keeps the node (returns ``None``) or returns a :class:`Replacement`: new nodes to insert in
  its place and the values that replace its outputs.  A replacement must keep every output's
  type; :func:`substitute` and the visitor's replacements are checked and a type change
  raises :class:`~mskernel.errors.VerifyError` naming the node;
- with ``prune`` given, a node that a replacement left unread (a multi-node pattern took
  its result into a fused node) is removed at once when ``prune(node)`` allows it, and so
  are the nodes only it read: the reads the visitor counts next are exact.  Nodes that
  nothing read before the rewrite are left to dead-code elimination.

A node rebuilt because its inputs were renamed keeps its output values, so nothing after it
needs renaming.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Optional

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


class Scope(Mapping[Value, Node]):
    """The graph (or region) around the node a visitor sees, as the rewrite has left it so far.

    As a mapping it gives the node producing each value defined so far in the new scope
    (``scope.get(value)``; a scope input has none), so a pattern looks through its operands.
    :meth:`uses` counts the reads of a value in the whole scope — by the nodes rewritten so
    far and by those still to come, with the renaming so far applied — so a multi-node
    pattern can check that an intermediate it absorbs is read by nothing else.
    """

    def __init__(self, graph: Graph) -> None:
        self._producers: dict[Value, Node] = {}
        self._reads: Counter[Value] = Counter(v for n in graph.nodes for v in n.inputs)
        self._reads.update(graph.outputs)
        self._outputs = set(graph.outputs)

    @classmethod
    def of(cls, graph: Graph) -> "Scope":
        """The scope of a whole graph, every node defined (to match patterns outside a
        rewrite)."""
        scope = cls(graph)
        for node in graph.nodes:
            scope._define(node)
        return scope

    def __getitem__(self, value: Value) -> Node:
        return self._producers[value]

    def __iter__(self) -> Iterator[Value]:
        return iter(self._producers)

    def __len__(self) -> int:
        return len(self._producers)

    def uses(self, value: Value) -> int:
        """How many times ``value`` is read in this scope; being a scope output counts as one
        read (a node reading it twice counts two)."""
        return self._reads[value]

    def single_use(self, value: Value) -> bool:
        """Whether exactly one node reads ``value``, once, and it is no scope output: a
        pattern that absorbs its producer leaves nothing else needing it."""
        return self._reads[value] == 1 and value not in self._outputs

    def _define(self, node: Node) -> None:
        self._producers.update((v, node) for v in node.outputs)

    def _rename(self, old: Value, new: Value) -> None:
        if old is not new:
            self._reads[new] += self._reads.pop(old, 0)
            if old in self._outputs:
                self._outputs.add(new)

    def _forget(self, node: Node) -> None:
        """``node`` is removed: its reads end and its values have no producer any more."""
        self._reads.subtract(node.inputs)
        for v in node.outputs:
            self._producers.pop(v, None)

    def _replace(self, node: Node, replacement: Replacement) -> None:
        self._reads.subtract(node.inputs)
        for inserted in replacement.nodes:
            self._reads.update(inserted.inputs)
        for old, new in zip(node.outputs, replacement.values):
            self._rename(old, new)


#: ``visit(node, scope)``: ``node`` has its inputs renamed and its regions rewritten;
#: ``scope`` maps every value defined so far in the new graph to the node defining it and
#: counts the reads of every value (:class:`Scope`).
Visit = Callable[[Node, Scope], Optional[Replacement]]


def map_regions(graph: Graph, rewrite: Callable[[Graph], Graph], *,
                enter: Optional[Callable[[Node], bool]] = None) -> Graph:
    """Apply ``rewrite`` to every scope of ``graph``: the regions of its nodes (``If``
    branches, ``While`` condition and body, recursively, innermost first), then ``graph``
    itself, which ``rewrite`` receives with its nodes' regions already rewritten.  Nodes
    for which ``enter(node)`` is false keep their regions as they are (a fused kernel's
    region is its program, not control flow).  ``rewrite`` returns its argument when it
    changes nothing; so does ``map_regions``."""
    nodes: list[Node] = []
    changed = False
    for node in graph.nodes:
        if node.regions and (enter is None or enter(node)):
            regions = tuple(map_regions(r, rewrite, enter=enter) for r in node.regions)
            if any(new is not old for new, old in zip(regions, node.regions)):
                node = Node(node.op, node.inputs, node.outputs, node.attrs, regions, node.loc)
                changed = True
        nodes.append(node)
    if changed:
        graph = Graph(graph.inputs, tuple(nodes), graph.outputs, graph.name)
    return rewrite(graph)


def rewrite_nodes(graph: Graph, make_visit: Optional[Callable[[], Visit]] = None,
                  substitutions: Mapping[Value, Value] | None = None, *,
                  prune: Optional[Callable[[Node], bool]] = None,
                  enter: Optional[Callable[[Node], bool]] = None) -> Graph:
    """Rewrite ``graph`` node by node; return it unchanged (the same object) when nothing
    changed.  ``make_visit()`` is called once for every scope (every region, then the graph:
    see :func:`map_regions`, which ``enter`` is handed to), so a visitor that remembers nodes
    (CSE's table) starts empty in each.  ``substitutions`` replaces uses of values before any
    visiting (see :func:`substitute`).  ``prune(node)`` says whether a node that replacements
    left unread may be removed (see the module's documentation)."""
    env: dict[Value, Value] = {}
    for old, new in (substitutions or {}).items():
        check_same_type(old, new, "substitution")
        env[old] = new

    def rewrite_scope(scope: Graph) -> Graph:
        visit = make_visit() if make_visit is not None else None
        return _ScopeRewriter(scope, visit, env, prune).rewrite()

    return map_regions(graph, rewrite_scope, enter=enter)


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


class _ScopeRewriter:
    """Rewrites the nodes of one scope (its regions are already rewritten)."""

    def __init__(self, graph: Graph, visit: Optional[Visit], env: dict[Value, Value],
                 prune: Optional[Callable[[Node], bool]]) -> None:
        self.graph = graph
        self.visit = visit
        self.env = env
        self.prune = prune or (lambda node: False)
        self.scope = Scope(graph)
        for old, new in env.items():
            self.scope._rename(old, new)
        #: nodes nothing read before the rewrite: left to dead-code elimination
        self.unread_before = {n for n in graph.nodes
                              if n.outputs and not any(self.scope.uses(v) for v in n.outputs)}
        self.dropped: set[Node] = set()

    def rewrite(self) -> Graph:
        graph, scope = self.graph, self.scope
        defined: set[Value] = set(graph.inputs)
        nodes: list[Node] = []
        changed = False
        for node in graph.nodes:
            current = self._renamed(node)
            replacement = self.visit(current, scope) if self.visit is not None else None
            if replacement is None:
                emitted: tuple[Node, ...] = (current,)
                changed = changed or current is not node
                if node in self.unread_before:
                    self.unread_before.add(current)
            else:
                self._record(node, replacement, defined)
                scope._replace(current, replacement)
                emitted = replacement.nodes
                changed = True
            for new in emitted:
                nodes.append(new)
                defined.update(new.outputs)
                scope._define(new)
            if replacement is not None:
                self._drop_unread(current.inputs)
        outputs = tuple(self.env.get(v, v) for v in graph.outputs)
        if not changed and outputs == graph.outputs:
            return graph
        kept = tuple(n for n in nodes if n not in self.dropped)
        return Graph(graph.inputs, kept, outputs, graph.name)

    def _drop_unread(self, values: tuple[Value, ...]) -> None:
        """Remove the producers of ``values`` that a replacement left unread (and, in turn,
        theirs), as ``prune`` allows, so that the reads a pattern counts next are exact."""
        scope = self.scope
        for value in values:
            node = scope.get(value)
            if (node is None or node in self.dropped or node in self.unread_before
                    or any(scope.uses(v) for v in node.outputs) or not self.prune(node)):
                continue
            self.dropped.add(node)
            scope._forget(node)
            self._drop_unread(node.inputs)

    def _renamed(self, node: Node) -> Node:
        inputs = tuple(self.env.get(v, v) for v in node.inputs)
        if inputs == node.inputs:
            return node
        return Node(node.op, inputs, node.outputs, node.attrs, node.regions, node.loc)

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
