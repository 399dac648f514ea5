"""Local rewrites as pattern tables (in the manner of tinygrad's ``PatternMatcher``).

A pattern is a function ``(node, scope, context) -> result | None``:

- ``node`` is the node to rewrite, its inputs already rewritten;
- ``scope`` (a :class:`~mskernel.passes.rewrite.Scope`) maps each value defined so far in the
  new graph to its node, so a pattern looks through its operands
  (``scope.get(node.inputs[0])``; a graph input has none), and counts the reads of each value
  (``scope.single_use(value)``: read once, by one node, and no graph output);
- ``context`` is the :class:`~mskernel.passes.base.PassContext` (``context.registry`` builds
  nodes, see :func:`make_node`).

It returns ``None`` when it does not apply, or the replacement: an existing value (for a
one-output node), a sequence of values (one per output), a new :class:`Node` whose outputs
replace the node's outputs, or a :class:`~mskernel.passes.rewrite.Replacement` (several new
nodes, and the values among theirs and earlier ones that replace the outputs).  A new node is
matched again, so patterns compose: the rewrite of ``transpose(transpose(x))`` is a single
transpose, which the identity rule may then remove.  Replacements must keep every output's
type; a new node defines the values of the node it replaces (their names kept), so no reader
needs rebuilding.  A node a replacement leaves unread (the inner ``transpose``, the
``matmul`` a fused node took over) is removed by the pass unless it is effectful.

Multi-node patterns are written as data with :class:`Pat`: the op (or ops), attribute
values or predicates, a predicate on the node, the patterns of its inputs, and whether an
intermediate may be read by anything else.  A ``Pat`` rule's function receives the pass
context and the names the pattern bound::

    BIAS = Pat("add", (Pat("matmul", name="product", single_use=True), Pat.var("bias")),
               any_order=True)
    Patterns([(BIAS, lambda context, product, bias: make_node(context, "dense",
                                                              *product.inputs, bias))])

Tables list ``(op names, pattern)`` or ``(Pat, function)`` rules and combine with ``+``; for a
node, the rules registered for its op are tried in order and the first result wins; a rule
keyed ``"trait:<name>"`` applies to every op carrying that trait (after the op's own rules)::

    ALGEBRA = Patterns([("neg", double_negation), (("add", "sub"), add_zero)])
    simplify = PatternPass("simplify", ALGEBRA + SHAPES)
"""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from .base import PassContext, PassResult
from .rewrite import Replacement, Scope, Visit, is_effectful, rewrite_nodes

PatternResult = Union[Value, Sequence[Value], Node, Replacement, None]
Pattern = Callable[[Node, Scope, PassContext], PatternResult]
Rule = tuple[Union[str, Iterable[str], "Pat"], Callable[..., PatternResult]]
Bindings = dict[str, Union[Node, Value]]

#: The trait of ops whose regions are the program of one fused kernel rather than control
#: flow: pattern passes leave those regions alone.
FUSED_TRAIT = "fused"


class Pat:
    """A pattern over a node and, through its inputs, the nodes producing them.

    - ``op``: an op name or several (``None`` with no ``inputs``: any value, see :meth:`var`);
    - ``inputs``: one pattern per input of the node (``None``: any inputs); with
      ``any_order`` they may match the inputs in any order (``add(matmul, bias)`` and
      ``add(bias, matmul)``);
    - ``attrs``: attribute name → required value, or a predicate on the value;
    - ``where``: a predicate on the matched node (on the value, for :meth:`var`);
    - ``single_use``: for an input pattern, the value must be read by the matched node alone,
      once, and be no graph output — what a rule that absorbs its producer needs;
    - ``name``: bind the matched node (the value, for :meth:`var`) under this name; a name
      given twice must match the same thing both times.
    """

    def __init__(self, op: Union[str, Iterable[str], None] = None,
                 inputs: Optional[Sequence["Pat"]] = None, *, name: Optional[str] = None,
                 attrs: Optional[Mapping[str, Any]] = None,
                 where: Optional[Callable[[Any], bool]] = None, single_use: bool = False,
                 any_order: bool = False) -> None:
        self.ops: Optional[frozenset[str]] = (
            None if op is None else frozenset((op,) if isinstance(op, str) else op))
        self.inputs = None if inputs is None else tuple(inputs)
        self.name = name
        self.attrs = dict(attrs or {})
        self.where = where
        self.single_use = single_use
        self.any_order = any_order
        if self.ops is None and (self.inputs is not None or self.attrs):
            raise ValueError("a Pat without an op matches any value; it takes no inputs or "
                             "attributes")

    @classmethod
    def var(cls, name: Optional[str] = None, *, where: Optional[Callable[[Value], bool]] = None,
            single_use: bool = False) -> "Pat":
        """Any value, bound under ``name``; ``where`` is a predicate on the value."""
        return cls(None, name=name, where=where, single_use=single_use)

    def match(self, node: Node, scope: Mapping[Value, Node]) -> Optional[Bindings]:
        """The names bound when ``node`` matches (the root of a rule), else ``None``."""
        bindings: Bindings = {}
        return bindings if self._node(node, scope, bindings) else None

    def match_value(self, value: Value, scope: Mapping[Value, Node]) -> Optional[Bindings]:
        """The names bound when ``value`` matches (as an input would), else ``None``."""
        bindings: Bindings = {}
        return bindings if self._value(value, scope, bindings) else None

    def _node(self, node: Node, scope: Mapping[Value, Node], bindings: Bindings) -> bool:
        if self.ops is not None and node.op not in self.ops:
            return False
        for key, expected in self.attrs.items():
            actual = node.attrs.get(key)
            if not (expected(actual) if callable(expected) else actual == expected):
                return False
        if self.where is not None and not self.where(node):
            return False
        if self.inputs is not None and not self._inputs(node, scope, bindings):
            return False
        return self._bind(node, bindings)

    def _inputs(self, node: Node, scope: Mapping[Value, Node], bindings: Bindings) -> bool:
        if len(node.inputs) != len(self.inputs):  # type: ignore[arg-type]
            return False
        orders = permutations(node.inputs) if self.any_order else (node.inputs,)
        for values in orders:
            trial = dict(bindings)
            if all(p._value(v, scope, trial) for p, v in zip(self.inputs, values)):  # type: ignore[arg-type]
                bindings.update(trial)
                return True
        return False

    def _value(self, value: Value, scope: Mapping[Value, Node], bindings: Bindings) -> bool:
        if self.single_use and not (isinstance(scope, Scope) and scope.single_use(value)):
            return False
        if self.ops is None:
            if self.where is not None and not self.where(value):
                return False
            return self._bind(value, bindings)
        producer = scope.get(value)
        return producer is not None and self._node(producer, scope, bindings)

    def _bind(self, item: Union[Node, Value], bindings: Bindings) -> bool:
        if self.name is None:
            return True
        bound = bindings.setdefault(self.name, item)
        return bound is item

    def __repr__(self) -> str:
        what = "any" if self.ops is None else "|".join(sorted(self.ops))
        inputs = "" if self.inputs is None else f"({', '.join(map(repr, self.inputs))})"
        return f"Pat({what}{inputs}{' as ' + self.name if self.name else ''})"


def _pattern_of(pat: Pat, fn: Callable[..., PatternResult]) -> Pattern:
    def pattern(node: Node, scope: Scope, context: PassContext) -> PatternResult:
        bindings = pat.match(node, scope)
        return None if bindings is None else fn(context, **bindings)

    return pattern


class Patterns:
    """An ordered table of rewrite rules, indexed by op name."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        table: dict[str, list[Pattern]] = {}
        for key, pattern in rules:
            if isinstance(key, Pat):
                if key.ops is None:
                    raise ValueError(f"the root of a rule must name its op(s): {key!r}")
                ops: Iterable[str] = sorted(key.ops)
                pattern = _pattern_of(key, pattern)
            else:
                ops = (key,) if isinstance(key, str) else key
            for op in ops:
                table.setdefault(op, []).append(pattern)
        self._table = {op: tuple(patterns) for op, patterns in table.items()}

    def __add__(self, other: "Patterns") -> "Patterns":
        rules: list[Rule] = [(op, p) for op, ps in self._table.items() for p in ps]
        return Patterns(rules + [(op, p) for op, ps in other._table.items() for p in ps])

    def ops(self) -> set[str]:
        """The op names some rule applies to."""
        return set(self._table)

    def match(self, node: Node, scope: Scope, context: PassContext) -> PatternResult:
        """The first non-``None`` result of the rules for ``node.op``, then of the rules
        keyed ``"trait:<name>"`` for the op's traits, or ``None``."""
        traits = context.registry.get(node.op).traits
        keys = [node.op, *(f"trait:{t}" for t in sorted(traits))]
        for key in keys:
            for pattern in self._table.get(key, ()):
                result = pattern(node, scope, context)
                if result is not None:
                    return result
        return None


class PatternPass:
    """A pass applying a :class:`Patterns` table to every node, in regions too (but not in
    the regions of ops with the :data:`FUSED_TRAIT`).

    Each node is rewritten until no rule matches it (at most ``max_rewrites`` times, a guard
    against rules that undo each other); because producers are rewritten before their users,
    one run reaches a fixpoint for rules that only look at a node and its producers.  Nodes
    the rewrites leave unread are removed unless effectful.
    """

    def __init__(self, name: str, patterns: Patterns, *, max_rewrites: int = 32) -> None:
        self.name = name
        self.patterns = patterns
        self.max_rewrites = max_rewrites

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        registry = context.registry

        def make_visit() -> Visit:
            return lambda node, scope: self._rewrite(node, scope, context)

        def enter(node: Node) -> bool:
            return not registry.get(node.op).has_trait(FUSED_TRAIT)

        new = rewrite_nodes(graph, make_visit, enter=enter,
                            prune=lambda node: not is_effectful(node, registry))
        return PassResult(new, new is not graph)

    def _rewrite(self, node: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
        current = node
        for _ in range(self.max_rewrites):
            result = self.patterns.match(current, scope, context)
            if result is None:
                break
            if isinstance(result, Node):
                current = result if result.loc is not None else replace(result, loc=node.loc)
                continue
            if isinstance(result, Replacement):
                return result
            values = (result,) if isinstance(result, Value) else tuple(result)
            return Replacement((), values)
        if current is node:
            return None
        if [v.type for v in current.outputs] == [v.type for v in node.outputs]:
            current = replace(current, outputs=node.outputs)  # no reader needs renaming
        return Replacement((current,), current.outputs)

    def __repr__(self) -> str:
        return f"<PatternPass {self.name!r}: rules for {len(self.patterns.ops())} ops>"


def make_node(context: PassContext, op: str, *inputs: Value, **attrs: Any) -> Node:
    """A new node of ``op`` with validated attributes and inferred output types, for a
    pattern to return (it is not added to any graph)."""
    node, _ = GraphBuilder(registry=context.registry).make_node(op, inputs, attrs)
    return node
