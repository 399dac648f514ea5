"""Building graphs: :class:`GraphBuilder` creates nodes through an op lookup (the process's
op registry unless one is given), so every node it makes has validated attributes and
inferred output types.

    b = GraphBuilder("f")
    x = b.input(tensor_type("f32", (2, 3)), name="x")
    y = b.op("exp", x)
    s0, s1 = b.op("split", y, axis=1, sizes=(1, 2))
    graph = b.build([s0, s1])

A node made without a ``loc`` by user code (not mskernel's, not a plugin's) is located at the
line that made it, so errors about it point there.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..defaults import or_default_ops
from ..errors import OpError
from .graph import Graph, Node, SourceLoc, Value
from .lookup import OpLookup, OpSchema
from .source import caller_location
from .types import Type


class GraphBuilder:
    """Appends nodes whose ops ``registry`` defines (default: the process's op registry)."""

    def __init__(self, name: str = "main",
                 registry: Optional[OpLookup[OpSchema]] = None) -> None:
        self.name = name
        self.registry: OpLookup[OpSchema] = or_default_ops(registry)
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []

    def input(self, type: Type, name: Optional[str] = None) -> Value:
        value = Value(type, name)
        self.inputs.append(value)
        return value

    def op(
        self,
        op: str,
        *inputs: Value,
        regions: Sequence[Graph] = (),
        loc: Optional[SourceLoc] = None,
        **attrs: Any,
    ) -> Any:
        """Append a node; return its output :class:`Value`, or the tuple of outputs for a
        multi-output op (the op decides, so the static type is ``Any``)."""
        if loc is None:
            loc = caller_location()
        node, multi = self.make_node(op, inputs, attrs, regions=regions, loc=loc)
        self.nodes.append(node)
        return node.outputs if multi else node.outputs[0]

    def make_node(
        self,
        op: str,
        inputs: Sequence[Value],
        attrs: dict[str, Any],
        *,
        regions: Sequence[Graph] = (),
        loc: Optional[SourceLoc] = None,
    ) -> tuple[Node, bool]:
        """Create (but do not append) a node with inferred output types."""
        if loc is None:
            loc = caller_location()
        opdef = self.registry.get(op)
        for i, v in enumerate(inputs):
            if not isinstance(v, Value):
                raise OpError(
                    f"op '{op}'{f' at {loc}' if loc else ''}: input {i} is a "
                    f"{type(v).__name__}, not an IR value"
                )
        bound = opdef.bind_attrs(attrs, loc=loc)
        types, multi = opdef.infer_outputs(
            [v.type for v in inputs], bound, regions=regions, loc=loc
        )
        node = Node(op, tuple(inputs), tuple(Value(t) for t in types), bound, tuple(regions), loc)
        return node, multi

    def append(self, node: Node) -> Node:
        """Append an existing node unchanged (passes copying nodes between graphs)."""
        self.nodes.append(node)
        return node

    def build(self, outputs: Sequence[Value], name: Optional[str] = None) -> Graph:
        return Graph(tuple(self.inputs), tuple(self.nodes), tuple(outputs), name or self.name)
