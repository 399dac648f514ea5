"""The IR verifier: ``verify(graph)`` checks the invariants every pass may rely on and raises
:class:`~mskernel.errors.VerifyError` naming the first broken one.

Checked, for the graph and recursively for every region:

- every value a node or the graph's outputs use is defined before the use, in the same graph
  (a graph input or an earlier node's output) — regions are closed, so a region using a value
  of the graph around it is an error;
- every value is defined exactly once in the whole graph, regions included;
- every op exists, and its attributes are already bound: ``OpDef.bind_attrs`` returns them
  unchanged (no unknown or missing attributes, every value in canonical form);
- the op's rule, re-run on the input types (and regions), gives exactly the node's output
  types;
- an ``effectful`` op takes exactly one ``!token`` and produces exactly one ``!token``;
- tokens are linear: each token is consumed by at most one use — a node's input or a graph
  output — so two effects never both follow the same token.

Messages locate the problem as ``graph @main, node 3 'matmul' at model.py:12: ...``, with the
chain of owning nodes and regions for a node inside a region.
"""

from __future__ import annotations

from typing import Any, Optional

from ..defaults import or_default_ops
from ..errors import OpError, UnknownOpError, VerifyError
from .graph import Graph, Node, Value, attr_key, freeze_attr
from .lookup import OpLookup, OpSchema
from .types import TokenType

def verify(graph: Graph, registry: Optional[OpLookup[OpSchema]] = None) -> None:
    """Raise :class:`VerifyError` if ``graph`` breaks an IR invariant; return ``None``.
    ``registry`` resolves op names (default: the process's op registry)."""
    _Verifier(or_default_ops(registry)).graph(graph, f"graph @{graph.name}", None)


def _value(v: Value) -> str:
    label = f" '{v.name}'" if v.name else ""
    return f"value #{v.uid}{label} ({v.type})"


class _Scope:
    """The values visible in one graph: its inputs and the outputs of nodes seen so far."""

    def __init__(self, graph: Graph, parent: Optional["_Scope"]) -> None:
        self.parent = parent
        self.defined: set[Value] = set()
        self.later = {v: i for i, n in enumerate(graph.nodes) for v in n.outputs}

    def encloses(self, v: Value) -> bool:
        scope = self.parent
        while scope is not None:
            if v in scope.defined:
                return True
            scope = scope.parent
        return False


class _Verifier:
    def __init__(self, registry: OpLookup[OpSchema]) -> None:
        self.registry = registry
        self.definitions: dict[Value, str] = {}  # every value defined so far → where
        self.token_uses: dict[Value, str] = {}  # every consumed token → by what

    def graph(self, graph: Graph, where: str, parent: Optional[_Scope]) -> None:
        scope = _Scope(graph, parent)
        for i, v in enumerate(graph.inputs):
            self.define(v, f"input {i} of {where}", f"{where}: input {i}", scope)
        for index, node in enumerate(graph.nodes):
            self.node(node, f"{where}, node {index} '{node.op}'{node.where()}", scope)
        for i, v in enumerate(graph.outputs):
            self.use(v, f"output {i} of {where}", f"{where}: output {i}", scope)

    def define(self, v: Any, what: str, where: str, scope: _Scope) -> None:
        if not isinstance(v, Value):
            raise VerifyError(f"{where} is a {type(v).__name__}, not an IR value")
        if v in self.definitions:
            raise VerifyError(f"{where}: {_value(v)} is already defined as "
                              f"{self.definitions[v]}; every value is defined exactly once")
        self.definitions[v] = what
        scope.defined.add(v)

    def use(self, v: Any, what: str, where: str, scope: _Scope) -> None:
        if not isinstance(v, Value):
            raise VerifyError(f"{where} is a {type(v).__name__}, not an IR value")
        if v not in scope.defined:
            raise VerifyError(f"{where}: {self.why_undefined(v, scope)}")
        if isinstance(v.type, TokenType):
            if v in self.token_uses:
                raise VerifyError(
                    f"{where}: {_value(v)} is already consumed by {self.token_uses[v]}; a "
                    "token orders one effect, so thread the token through one effect after "
                    "the other")
            self.token_uses[v] = what

    def why_undefined(self, v: Value, scope: _Scope) -> str:
        if v in scope.later:
            return f"{_value(v)} is used before node {scope.later[v]} defines it"
        if scope.encloses(v):
            return (f"{_value(v)} is defined outside this region; regions are closed, so pass "
                    "it to the owning node as an operand")
        if v in self.definitions:
            return f"{_value(v)} is {self.definitions[v]}, which this graph cannot see"
        return f"{_value(v)} is not defined in this graph"

    def node(self, node: Node, where: str, scope: _Scope) -> None:
        for i, v in enumerate(node.outputs):
            if not isinstance(v, Value):
                raise VerifyError(f"{where}: output {i} is a {type(v).__name__}, not an IR value")
        for i, v in enumerate(node.inputs):
            self.use(v, f"{where} (input {i})", f"{where}: input {i}", scope)
        opdef = self.op(node, where)
        attrs = self.attrs(node, opdef, where)
        for k, region in enumerate(node.regions):
            if not isinstance(region, Graph):
                raise VerifyError(f"{where}: region {k} is a {type(region).__name__}, "
                                  "not a Graph")
            self.graph(region, f"{where}, region {k} @{region.name}", scope)
        self.types(node, opdef, attrs, where)
        if opdef.effectful:
            self.effects(node, where)
        for i, v in enumerate(node.outputs):
            self.define(v, f"output {i} of {where}", f"{where}: output {i}", scope)

    def op(self, node: Node, where: str) -> OpSchema:
        try:
            return self.registry.get(node.op)
        except UnknownOpError as exc:
            raise VerifyError(f"{where}: {exc}") from None

    def attrs(self, node: Node, opdef: OpSchema, where: str) -> dict[str, Any]:
        try:
            bound = opdef.bind_attrs(node.attrs, loc=node.loc)
        except OpError as exc:
            raise VerifyError(f"{where}: {_reason(exc, node)}") from None
        for name, value in bound.items():
            if name not in node.attrs:
                raise VerifyError(f"{where}: attribute '{name}' is missing; bound attributes "
                                  f"include every default (here {value!r})")
            if attr_key(freeze_attr(value)) != attr_key(node.attrs[name]):
                raise VerifyError(f"{where}: attribute '{name}' is {node.attrs[name]!r}, not in "
                                  f"the schema's canonical form {value!r}")
        return bound

    def types(self, node: Node, opdef: OpSchema, attrs: dict[str, Any], where: str) -> None:
        input_types = [v.type for v in node.inputs]
        try:
            expected = opdef.infer_types(input_types, attrs, regions=node.regions, loc=node.loc)
        except OpError as exc:
            raise VerifyError(f"{where}: {_reason(exc, node)}") from None
        if len(expected) != len(node.outputs):
            raise VerifyError(
                f"{where}: the node has {len(node.outputs)} output(s) but the op's rule gives "
                f"{len(expected)} ({', '.join(str(t) for t in expected)})")
        for i, (v, t) in enumerate(zip(node.outputs, expected)):
            if v.type != t:
                raise VerifyError(
                    f"{where}: output {i} has type {v.type} but the op's rule gives {t}")

    def effects(self, node: Node, where: str) -> None:
        for side, values in (("input", node.inputs), ("output", node.outputs)):
            tokens = sum(isinstance(v.type, TokenType) for v in values)
            if tokens != 1:
                raise VerifyError(f"{where}: an effectful op takes one !token and returns one, "
                                  f"but this node has {tokens} token {side}(s)")


def _reason(exc: Exception, node: Node) -> str:
    """The registry's message without its ``op 'name' at loc:`` prefix (already in ours)."""
    message = str(exc)
    prefix = f"op '{node.op}'{node.where()}: "
    return message[len(prefix):] if message.startswith(prefix) else message
