"""Local rewrites as pattern tables (in the manner of tinygrad's ``PatternMatcher``).

A pattern is a function ``(node, producers, context) -> result | None``:

- ``node`` is the node to rewrite, its inputs already rewritten;
- ``producers`` maps each value defined so far in the new graph to its node, so a pattern
  looks through its operands (``producers.get(node.inputs[0])``) — a graph input has none;
- ``context`` is the :class:`~mskernel.passes.base.PassContext` (``context.registry`` builds
  nodes, see :func:`make_node`).

It returns ``None`` when it does not apply, or the replacement: an existing value (for a
one-output node), a sequence of values (one per output), or a new :class:`Node` whose outputs
replace the node's outputs.  A new node is matched again, so patterns compose: the rewrite of
``transpose(transpose(x))`` is a single transpose, which the identity rule may then remove.
Replacements must keep every output's type.

Tables list ``(op names, pattern)`` rules and combine with ``+``; for a node, the rules
registered for its op are tried in order and the first result wins; a rule keyed
``"trait:<name>"`` applies to every op carrying that trait (after the op's own rules)::

    ALGEBRA = Patterns([("neg", double_negation), (("add", "sub"), add_zero)])
    simplify = PatternPass("simplify", ALGEBRA + SHAPES)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from .base import PassContext, PassResult
from .rewrite import Replacement, Visit, rewrite_nodes

PatternResult = Union[Value, Sequence[Value], Node, None]
Pattern = Callable[[Node, Mapping[Value, Node], PassContext], PatternResult]
Rule = tuple[Union[str, Iterable[str]], Pattern]


class Patterns:
    """An ordered table of rewrite rules, indexed by op name."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        table: dict[str, list[Pattern]] = {}
        for ops, pattern in rules:
            for op in (ops,) if isinstance(ops, str) else ops:
                table.setdefault(op, []).append(pattern)
        self._table = {op: tuple(patterns) for op, patterns in table.items()}

    def __add__(self, other: "Patterns") -> "Patterns":
        rules = [(op, p) for op, ps in self._table.items() for p in ps]
        return Patterns(rules + [(op, p) for op, ps in other._table.items() for p in ps])

    def ops(self) -> set[str]:
        """The op names some rule applies to."""
        return set(self._table)

    def match(self, node: Node, producers: Mapping[Value, Node],
              context: PassContext) -> PatternResult:
        """The first non-``None`` result of the rules for ``node.op``, then of the rules
        keyed ``"trait:<name>"`` for the op's traits, or ``None``."""
        traits = context.registry.get(node.op).traits
        keys = [node.op, *(f"trait:{t}" for t in sorted(traits))]
        for key in keys:
            for pattern in self._table.get(key, ()):
                result = pattern(node, producers, context)
                if result is not None:
                    return result
        return None


class PatternPass:
    """A pass applying a :class:`Patterns` table to every node, in regions too.

    Each node is rewritten until no rule matches it (at most ``max_rewrites`` times, a guard
    against rules that undo each other); because producers are rewritten before their users,
    one run reaches a fixpoint for rules that only look at a node and its producers.
    """

    def __init__(self, name: str, patterns: Patterns, *, max_rewrites: int = 32) -> None:
        self.name = name
        self.patterns = patterns
        self.max_rewrites = max_rewrites

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        def make_visit() -> Visit:
            return lambda node, producers: self._rewrite(node, producers, context)

        new = rewrite_nodes(graph, make_visit)
        return PassResult(new, new is not graph)

    def _rewrite(self, node: Node, producers: Mapping[Value, Node],
                 context: PassContext) -> Optional[Replacement]:
        current = node
        for _ in range(self.max_rewrites):
            result = self.patterns.match(current, producers, context)
            if result is None:
                break
            if isinstance(result, Node):
                current = result if result.loc is not None else replace(result, loc=node.loc)
                continue
            values = (result,) if isinstance(result, Value) else tuple(result)
            return Replacement((), values)
        if current is node:
            return None
        return Replacement((current,), current.outputs)

    def __repr__(self) -> str:
        return f"<PatternPass {self.name!r}: rules for {len(self.patterns.ops())} ops>"


def make_node(context: PassContext, op: str, *inputs: Value, **attrs: Any) -> Node:
    """A new node of ``op`` with validated attributes and inferred output types, for a
    pattern to return (it is not added to any graph)."""
    node, _ = GraphBuilder(registry=context.registry).make_node(op, inputs, attrs)
    return node
