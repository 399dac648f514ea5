"""What a handler in :mod:`mskernel_onnx.import_ops` works with: the :class:`NodeContext` of
the node it translates (its inputs, attributes and opset; the emitter its core ops go to),
the :class:`Scope` of ONNX names, and :class:`Region` for the subgraphs of control flow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NoReturn, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, NodeProto, defs, helper

from mskernel_sdk import DType, Graph, TensorType, Value, tensor_type

from .emitter import Emitter
from .errors import NeedsValue, OnnxImportError
from .protos import attribute_value, element_dtype, to_storage
from .values import OnnxValue

if TYPE_CHECKING:
    from .importer import _Session

_NO_DEFAULT = object()


# --- scopes ------------------------------------------------------------------------------------


class Scope:
    """ONNX names in one graph; a subgraph's scope sees its enclosing graph's names."""

    def __init__(self, parent: Optional["Scope"] = None) -> None:
        self.parent = parent
        self.names: dict[str, OnnxValue] = {}

    def lookup(self, name: str) -> OnnxValue:
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        raise KeyError(name)

    def bind(self, name: str, value: OnnxValue) -> None:
        self.names[name] = value


class Region:
    """A subgraph being imported as a closed region: an emitter whose parent is the node's
    graph and a scope that sees the enclosing names.  Control-flow handlers create its
    inputs (:meth:`input`, or :meth:`bind` values they compute inside it), import the
    subgraph (:meth:`run`), append what they need, and :meth:`build` it."""

    def __init__(self, session: "_Session", ctx: "NodeContext", name: str) -> None:
        self.session = session
        self.emitter = Emitter(f"{ctx.emitter.name}_{name}", session.knowledge,
                               parent=ctx.emitter)
        self.scope = Scope(ctx.scope)
        self.inputs: list[Value] = []

    def input(self, type: TensorType, name: Optional[str] = None) -> Value:
        value = self.emitter.input(type, name)
        self.inputs.append(value)
        return value

    def bind(self, name: str, value: OnnxValue) -> None:
        self.scope.bind(name, value)

    def run(self, graph: GraphProto) -> list[OnnxValue]:
        """Import ``graph``'s nodes (its inputs must be bound) and return its outputs."""
        self.session.run_nodes(graph, self.emitter, self.scope)
        return [self.session.lookup(self.scope, o.name, "subgraph output") for o in graph.output]

    def close(self, outputs: Sequence[Value]) -> list[Value]:
        """``outputs`` as this region's own values (capturing what they need): call it
        before reading :meth:`captured`."""
        return [self.emitter.local(v) for v in outputs]

    def captured(self) -> list[Value]:
        """The enclosing graph's values the region reads (capture order)."""
        return [outer for outer, _ in self.emitter.captures.values()]

    def build(self, outputs: Sequence[Value], captures: Sequence[Value] = ()) -> Graph:
        """The region: its inputs, then one input per value of ``captures`` (values of the
        enclosing graph, default: those it captured; one it did not is an unused input)."""
        own = self.emitter.captures
        by_outer = {outer: inner for outer, inner in own.values()}
        extra = [by_outer.get(c) or Value(c.type) for c in captures or self.captured()]
        return self.emitter.build(self.close(outputs), [*self.inputs, *extra])


# --- the context a handler sees ----------------------------------------------------------------


class NodeContext:
    """One ONNX node being translated: its inputs, attributes and opset, and the emitter its
    core ops go to.  Handlers in :mod:`mskernel_onnx.import_ops` receive one."""

    def __init__(self, session: "_Session", emitter: Emitter, scope: Scope, node: NodeProto,
                 attrs: Mapping[str, AttributeProto], schema: Optional[defs.OpSchema],
                 opset: int) -> None:
        self.session = session
        self.emitter = emitter
        self.scope = scope
        self.node = node
        self.attrs = attrs
        self.schema = schema
        self.opset = opset
        self.version = schema.since_version if schema is not None else opset
        self._inputs = [None if not n else scope.lookup(n) for n in node.input]

    # --- naming ----------------------------------------------------------------------------

    @property
    def op_type(self) -> str:
        return self.node.op_type

    def where(self) -> str:
        return node_label(self.node, self.opset)

    def fail(self, reason: str) -> NoReturn:
        raise OnnxImportError(f"{self.where()}: {reason}")

    # --- inputs ----------------------------------------------------------------------------

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    def has(self, i: int) -> bool:
        return i < len(self._inputs) and self._inputs[i] is not None

    def value(self, i: int) -> OnnxValue:
        """Input ``i`` as it is: a tensor, a sequence or an optional."""
        if not self.has(i):
            self.fail(f"input {i} is required")
        return self._inputs[i]  # type: ignore[return-value]

    def input(self, i: int) -> Value:
        """Tensor input ``i`` (required)."""
        v = self.value(i)
        if not isinstance(v, Value):
            self.fail(f"input {i} must be a tensor, got a {type(v).__name__}")
        return v

    def optional(self, i: int) -> Optional[Value]:
        return self.input(i) if self.has(i) else None

    def inputs(self, start: int = 0) -> list[Value]:
        """The tensor inputs from ``start`` on (variadic ops), absent ones left out."""
        return [self.input(i) for i in range(start, self.num_inputs) if self.has(i)]

    def type(self, i: int) -> TensorType:
        t = self.input(i).type
        assert isinstance(t, TensorType)
        return t

    def const(self, i: int, default: Any = _NO_DEFAULT) -> np.ndarray:
        """The value of input ``i``, which must be known at import time."""
        if not self.has(i):
            if default is _NO_DEFAULT:
                self.fail(f"input {i} is required")
            return default
        return self.known(self.input(i), f"input {i} ('{self.node.input[i]}')")

    def known(self, value: Value, what: str) -> np.ndarray:
        found = self.emitter.known(value)
        if found is not None:
            return found
        names = self.emitter.depends_on(value, self.session.input_names)
        if names:
            listed = ", ".join(repr(n) for n in names)
            raise NeedsValue(
                f"{self.where()}: {what} determines a shape, so its value must be known when "
                f"the model is imported; it is computed from the graph input(s) {listed}: "
                f"give them in static_inputs", names)
        self.fail(f"{what} determines a shape, so its value must be known when the model is "
                  "imported, but it is computed at run time")

    def ints(self, i: int, default: Any = _NO_DEFAULT) -> Any:
        """Input ``i`` as a tuple of Python ints (or ``default`` when absent)."""
        if not self.has(i) and default is not _NO_DEFAULT:
            return default
        return tuple(int(v) for v in np.asarray(self.const(i)).reshape(-1))

    def scalar(self, i: int, default: Any = _NO_DEFAULT) -> Any:
        """Input ``i`` as a Python number (or ``default`` when absent)."""
        if not self.has(i) and default is not _NO_DEFAULT:
            return default
        array = np.asarray(self.const(i))
        if array.size != 1:
            self.fail(f"input {i} must hold one value, got shape {list(array.shape)}")
        return array.reshape(()).item()

    # --- attributes ------------------------------------------------------------------------

    def attr(self, name: str, default: Any = _NO_DEFAULT) -> Any:
        """Attribute ``name`` as plain data; absent, ``default`` or else the schema's
        default.  An attribute without either is an error."""
        proto = self.attrs.get(name)
        if proto is None:
            if default is not _NO_DEFAULT:
                return default
            schema_attr = self.schema.attributes.get(name) if self.schema else None
            if schema_attr is None or not schema_attr.default_value.type:
                self.fail(f"attribute '{name}' is required")
            proto = schema_attr.default_value
        return attribute_value(proto, self.session.base_dir, self.where())

    # --- building --------------------------------------------------------------------------

    def op(self, op: str, *inputs: Value, regions: Sequence[Graph] = (), **attrs: Any) -> Any:
        """Emit one core op (folded when its inputs are known)."""
        return self.emitter.op(op, *inputs, regions=regions, **attrs)

    def constant(self, array: Any, dt: Union[DType, str, None] = None) -> Value:
        """A known value: ``array`` in dtype ``dt`` (default: the array's own)."""
        array = np.asarray(array)
        dt = element_dtype(helper.np_dtype_to_tensor_dtype(array.dtype)) if dt is None else dt
        t = tensor_type(dt, array.shape)
        return self.emitter.constant(to_storage(array, t.dtype), t)

    def scalar_like(self, value: Any, like: Value) -> Value:
        """A scalar of ``like``'s dtype."""
        return self.constant(np.asarray(value), like.type.dtype)  # type: ignore[union-attr]

    def region(self, name: str) -> Region:
        """A new region for a subgraph of this node (see :class:`Region`)."""
        return Region(self.session, self, name)

    def inline(self, graph: GraphProto, inputs: Sequence[OnnxValue] = ()) -> list[OnnxValue]:
        """Import ``graph``'s nodes into this graph (its formal inputs bound to ``inputs``)."""
        scope = Scope(self.scope)
        for formal, value in zip(graph.input, inputs):
            scope.bind(formal.name, value)
        self.session.run_nodes(graph, self.emitter, scope)
        return [self.session.lookup(scope, o.name, "graph output") for o in graph.output]

    def expand(self, function: onnx.FunctionProto) -> list[Optional[OnnxValue]]:
        """Expand an ONNX function with this node's inputs and attributes."""
        return self.session.expand(self, function)


def node_label(node: NodeProto, opset: Optional[int]) -> str:
    """``ONNX node 'name' (domain Op, opset N)``: how every message names a node."""
    label = f"'{node.name}' " if node.name else ""
    domain = f"{node.domain} " if node.domain not in ("", "ai.onnx") else ""
    return f"ONNX node {label}({domain}{node.op_type}, opset {opset or 0})"
