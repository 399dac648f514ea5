"""ONNX → IR: :func:`import_model` turns an ONNX model into an mskernel graph.

- **Ops.**  Each ONNX op is translated by a handler in the tables of
  :mod:`mskernel_onnx.import_ops` (one module per op family) into core ops: directly where
  a core op has the same meaning, as a composite where none has.  An op without a handler
  whose ONNX schema defines it as a function (``Celu``, ``LayerNormalization``,
  ``SoftmaxCrossEntropyLoss`` ...) is expanded from that function, as are the model's own
  functions.  Anything else is an :class:`OnnxImportError` naming the node, op and opset.
- **Opsets.**  Each node is read with the schema its model's opset selects (the op's
  ``since_version``), so a handler sees which definition applies; opsets 1 to the newest
  ``onnx`` knows are read, 13 to 23 are the ones the tests cover in full.
- **Shapes are static.**  Graph inputs take the shapes of the model's value infos or of
  ``input_types``; a dim without a value must be given.  What the model computes from shapes
  and constants is folded at import time (see :mod:`mskernel_onnx.emitter`).  Where a shape
  depends on the *values* of an input (``Reshape`` by an input, ``NonZero``, ``Range`` ...)
  that input must be given in ``static_inputs``; otherwise :class:`NeedsValue` names it.
- **Weights.**  With ``weights="inputs"`` (the default) initializers of a floating dtype
  become named graph inputs after the model's inputs, their arrays returned in
  :attr:`ImportedModel.weights` (what :func:`mskernel_onnx.migration` maps onto a ``Cell``);
  other initializers, and all of them with ``weights="constants"``, are constants.
- **Control flow.**  ``If`` becomes the core ``If`` (or just the taken branch when the
  condition is known), ``Loop`` and ``Scan`` become ``While``; their bodies are closed
  regions whose captured values are passed in explicitly.
- **Files** are read without trusting them (see :mod:`mskernel_onnx.protos`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import (
    Any, Callable, Collection, Iterable, Mapping, NoReturn, Optional, Sequence, Union,
)

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, NodeProto, TypeProto, defs, helper

from mskernel_sdk import (
    CompileOptions, DType, Graph, InferError, MskernelError, TensorType, Value, compile_graph,
    tensor_type,
)

from .emitter import Emitter, Knowledge
from .errors import NeedsValue, OnnxFileError, OnnxImportError
from .protos import (
    PathLike, attribute_value, element_dtype, onnx_element_type, read_model,
    tensor_array, to_storage,
)
from .values import Layout, OnnxValue, OptValue, SeqValue, layout_of, leaves

#: The oldest default-domain opset read.
MIN_OPSET = 1
#: How deeply subgraphs and function bodies may nest (a function calling itself would
#: otherwise expand forever).
MAX_NESTING = 64

#: What a handler returns: one value, or the node's outputs in order (``None`` for an output
#: the handler does not compute, which the model must not use).
HandlerResult = Union[OnnxValue, Sequence[Optional[OnnxValue]]]
Handler = Callable[["NodeContext"], HandlerResult]
InputType = Union[TensorType, Sequence[TensorType], None]

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Port:
    """One input or output of the model: its ONNX name and how it maps onto the graph's
    inputs or outputs (a tensor is one, a sequence as many as it has items)."""

    name: str
    layout: Layout


@dataclass(frozen=True)
class ImportedModel:
    """The result of :func:`import_model`.

    ``graph`` takes the model's inputs in :attr:`inputs` order (each flattened as its
    layout says), then one input per weight in :attr:`weights` order, and returns the model's
    outputs in :attr:`outputs` order.
    """

    graph: Graph
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    weights: Mapping[str, np.ndarray] = field(default_factory=dict)
    opset: int = 0

    def weight_dtypes(self) -> dict[str, DType]:
        n = len(self.weights)
        return {name: v.type.dtype
                for name, v in zip(self.weights, self.graph.inputs[len(self.graph.inputs) - n:])}

    def compile(self, backends: Optional[Sequence[str]] = None,
                options: Optional[CompileOptions] = None) -> Callable[..., list[np.ndarray]]:
        """The graph compiled (``compile_graph``) with its weights bound: call it with the
        model's inputs (flattened as :attr:`inputs` says) to get its outputs."""
        compiled = compile_graph(self.graph, backends=backends, options=options)
        weights = list(self.weights.values())
        return lambda *inputs: compiled(*inputs, *weights)


def import_model(model: Union[onnx.ModelProto, bytes, PathLike], *,
                 input_types: Optional[Mapping[str, InputType]] = None,
                 static_inputs: Optional[Mapping[str, Any]] = None,
                 weights: str = "inputs", weight_names: Optional[Collection[str]] = None,
                 name: Optional[str] = None,
                 base_dir: Optional[PathLike] = None) -> ImportedModel:
    """Import an ONNX model (a ``ModelProto``, its bytes, or a path).  External data is read
    from the model's directory, or from ``base_dir`` for a model given in memory.

    ``input_types`` gives the type of an input whose dims the model leaves open (a
    ``TensorType``, a list of them for a sequence, ``None`` for an absent optional);
    ``static_inputs`` fixes inputs to values (arrays, lists of arrays for sequences), which
    the graph then no longer takes; ``weights`` is ``"inputs"`` or ``"constants"`` (see the
    module doc) and ``weight_names`` says which initializers are weights (default: those of
    a floating dtype).  Raises :class:`OnnxFileError` for a file that cannot be trusted,
    :class:`OnnxImportError` for a node that cannot be translated and :class:`NeedsValue`
    when an input must be static.
    """
    if weights not in ("inputs", "constants"):
        raise ValueError(f"weights must be 'inputs' or 'constants', got {weights!r}")
    proto, directory = read_model(model)
    if base_dir is not None:
        directory = os.fspath(base_dir)
    session = _Session(proto, directory, weights == "inputs", weight_names)
    return session.run(dict(input_types or {}), dict(static_inputs or {}), name)


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
        return _node_label(self.node, self.opset)

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


# --- the import --------------------------------------------------------------------------------


class _Session:
    def __init__(self, model: onnx.ModelProto, base_dir: Optional[str],
                 weights_as_inputs: bool, weight_names: Optional[Collection[str]]) -> None:
        self.model = model
        self.base_dir = base_dir
        self.weights_as_inputs = weights_as_inputs
        self.weight_names = None if weight_names is None else frozenset(weight_names)
        self.knowledge = Knowledge()
        self.opsets = _opsets(model.opset_import, "the model")
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.input_names: dict[Value, str] = {}
        self.weights: dict[str, np.ndarray] = {}
        self.depth = 0
        self._schemas: dict[tuple[str, str, int], Optional[defs.OpSchema]] = {}

    # --- the main graph --------------------------------------------------------------------

    def run(self, input_types: dict[str, InputType], static: dict[str, Any],
            name: Optional[str]) -> ImportedModel:
        graph = self.model.graph
        emitter = Emitter(name or _identifier(graph.name) or "onnx_model", self.knowledge)
        scope = Scope()
        initializers = {t.name: t for t in graph.initializer}
        unknown = set(input_types) | set(static)
        unknown -= {i.name for i in graph.input}
        if unknown:
            raise OnnxImportError(f"the model has no input(s) {sorted(unknown)}; its inputs are "
                                  f"{[i.name for i in graph.input]}")
        ports = []
        for info in graph.input:
            if info.name in static:
                scope.bind(info.name, self.static_input(info, static[info.name], emitter))
            elif info.name in initializers and info.name not in input_types:
                continue  # an input with a default: the initializer below
            else:
                value = self.graph_input(info, input_types.get(info.name, _NO_DEFAULT), emitter)
                scope.bind(info.name, value)
                ports.append(Port(info.name, layout_of(value)))
        weight_values = []
        for tensor in graph.initializer:
            if tensor.name in scope.names:
                continue
            value = self.initializer(tensor, emitter, main=True)
            scope.bind(tensor.name, value)
            if tensor.name in self.weights:
                weight_values.append(value)
        self.run_nodes(graph, emitter, scope, initializers=False)
        outputs, out_ports = [], []
        for info in graph.output:
            value = self.lookup(scope, info.name, "graph output")
            outputs += list(leaves(value))
            out_ports.append(Port(info.name, layout_of(value)))
        data_inputs = [v for v in emitter.builder.inputs if v not in set(weight_values)]
        result = emitter.build(outputs, [*data_inputs, *weight_values])
        return ImportedModel(result, tuple(ports), tuple(out_ports), dict(self.weights),
                             self.opsets.get("", 0))

    def graph_input(self, info: onnx.ValueInfoProto, given: Any, emitter: Emitter) -> OnnxValue:
        what = f"graph input '{info.name}'"
        kind = info.type.WhichOneof("value")
        if given is _NO_DEFAULT:
            given = _declared_type(info.type, what)
        if kind == "sequence_type":
            dt = element_dtype(info.type.sequence_type.elem_type.tensor_type.elem_type)
            items = tuple(self._input(t, f"{info.name}[{i}]", emitter) for i, t in enumerate(given))
            return SeqValue(dt, items)
        if kind == "optional_type":
            inner = info.type.optional_type.elem_type
            sub = onnx.ValueInfoProto(name=info.name, type=inner)
            item = None if given is None else self.graph_input(sub, given, emitter)
            return OptValue(item, _kind_of(inner, what))
        if not isinstance(given, TensorType):
            raise OnnxImportError(f"{what}: expected a TensorType, got {given!r}")
        return self._input(given, info.name, emitter)

    def _input(self, t: TensorType, name: str, emitter: Emitter) -> Value:
        value = emitter.input(t, name)
        self.input_names[value] = name.split("[")[0]
        return value

    def static_input(self, info: onnx.ValueInfoProto, data: Any, emitter: Emitter) -> OnnxValue:
        what = f"graph input '{info.name}'"
        kind = info.type.WhichOneof("value")
        if kind == "sequence_type":
            dt = element_dtype(info.type.sequence_type.elem_type.tensor_type.elem_type)
            return SeqValue(dt, tuple(self._static_tensor(a, dt, emitter) for a in data))
        if kind == "optional_type":
            inner = info.type.optional_type.elem_type
            sub = onnx.ValueInfoProto(name=info.name, type=inner)
            item = None if data is None else self.static_input(sub, data, emitter)
            return OptValue(item, _kind_of(inner, what))
        if kind != "tensor_type":
            raise OnnxImportError(f"{what}: {kind} inputs are not supported")
        return self._static_tensor(data, element_dtype(info.type.tensor_type.elem_type), emitter)

    @staticmethod
    def _static_tensor(data: Any, dt: DType, emitter: Emitter) -> Value:
        array = to_storage(data, dt)
        return emitter.constant(array, tensor_type(dt, array.shape))

    def initializer(self, tensor: onnx.TensorProto, emitter: Emitter, main: bool) -> Value:
        array = tensor_array(tensor, self.base_dir, f"initializer '{tensor.name}'")
        t = tensor_type(element_dtype(tensor.data_type), array.shape)
        is_weight = (t.dtype.is_floating if self.weight_names is None
                     else tensor.name in self.weight_names)
        if main and self.weights_as_inputs and is_weight:
            value = emitter.input(t, tensor.name)
            self.knowledge.weights[value] = array
            self.weights[tensor.name] = array
            return value
        return emitter.constant(array, t)

    # --- nodes -----------------------------------------------------------------------------

    def run_nodes(self, graph: GraphProto, emitter: Emitter, scope: Scope,
                  attr_env: Optional[Mapping[str, AttributeProto]] = None,
                  opsets: Optional[Mapping[str, int]] = None, initializers: bool = True) -> None:
        if self.depth >= MAX_NESTING:
            raise OnnxImportError(f"subgraphs and function bodies nest deeper than "
                                  f"{MAX_NESTING} levels (a function that calls itself?)")
        self.depth += 1
        try:
            if initializers:
                for tensor in graph.initializer:
                    scope.bind(tensor.name, self.initializer(tensor, emitter, main=False))
            for node in graph.node:
                self.run_node(node, emitter, scope, attr_env, opsets or self.opsets)
        finally:
            self.depth -= 1

    def run_node(self, node: NodeProto, emitter: Emitter, scope: Scope,
                 attr_env: Optional[Mapping[str, AttributeProto]],
                 opsets: Mapping[str, int]) -> None:
        from .import_ops import HANDLERS

        domain = "" if node.domain == "ai.onnx" else node.domain
        attrs = _resolve_attrs(node, attr_env)
        function = self.functions.get((node.domain, node.op_type))
        opset = opsets.get(domain)
        schema = None if function is not None or opset is None else self.schema(
            node.op_type, opset, domain)
        try:
            for n in node.input:
                if n:
                    self.lookup(scope, n, f"input of node '{node.name or node.op_type}'")
            ctx = NodeContext(self, emitter, scope, node, attrs, schema, opset or 0)
            if function is not None:
                results = ctx.expand(function)
            elif opset is None:
                raise OnnxImportError(
                    f"ONNX node '{node.name or node.op_type}' ({node.op_type}): the model "
                    f"imports no opset of domain {node.domain!r}")
            elif schema is None:
                ctx.fail(f"no op '{node.op_type}' in domain '{domain or 'ai.onnx'}' at opset "
                         f"{opset} (onnx {onnx.__version__} knows none by that name)")
            elif (domain, node.op_type) in HANDLERS:
                results = HANDLERS[(domain, node.op_type)](ctx)
            else:
                results = ctx.expand(self.schema_function(ctx))
            self.bind_outputs(ctx, results)
        except OnnxImportError:
            raise
        except OnnxFileError as exc:  # an attribute's tensor or element type: name the node
            raise OnnxFileError(f"{_node_label(node, opset)}: {exc}") from exc
        except (MskernelError, InferError, ArithmeticError, IndexError, ValueError) as exc:
            raise OnnxImportError(f"{_node_label(node, opset)}: {exc}") from exc

    def bind_outputs(self, ctx: NodeContext, results: HandlerResult) -> None:
        if isinstance(results, (Value, SeqValue, OptValue)):
            results = [results]
        results = list(results)
        for i, name in enumerate(ctx.node.output):
            if not name:
                continue
            value = results[i] if i < len(results) else None
            if value is None:
                raise OnnxImportError(f"{ctx.where()}: output {i} ('{name}') is not supported "
                                      "by the translation")
            ctx.scope.bind(name, value)

    def lookup(self, scope: Scope, name: str, what: str) -> OnnxValue:
        try:
            return scope.lookup(name)
        except KeyError:
            raise OnnxImportError(f"{what} '{name}' is not defined before it is used (the "
                                  "nodes must be in topological order)") from None

    def schema(self, op_type: str, opset: int, domain: str) -> Optional[defs.OpSchema]:
        key = (op_type, domain, opset)
        if key not in self._schemas:
            try:
                self._schemas[key] = defs.get_schema(op_type, opset, domain)
            except defs.SchemaError:
                self._schemas[key] = None
        return self._schemas[key]

    # --- functions and regions -------------------------------------------------------------

    def schema_function(self, ctx: NodeContext) -> onnx.FunctionProto:
        """The function body ONNX defines the node's op by; an error when it has none."""
        schema = ctx.schema
        assert schema is not None
        versions = [v for v in schema.function_opset_versions if v <= ctx.opset]
        if versions:
            body = schema.get_function_with_opset_version(max(versions))
        else:
            versions = [v for v in schema.context_dependent_function_opset_versions
                        if v <= ctx.opset]
            if not versions:
                ctx.fail("the op has no translation to mskernel ops and ONNX defines no "
                         "function for it")
            node = NodeProto()
            node.CopyFrom(ctx.node)
            del node.attribute[:]
            node.attribute.extend(ctx.attrs.values())
            types = [_type_proto(ctx.value(i)).SerializeToString() if ctx.has(i)
                     else TypeProto().SerializeToString() for i in range(ctx.num_inputs)]
            body = schema.get_context_dependent_function_with_opset_version(
                max(versions), node.SerializeToString(), types)
        function = onnx.FunctionProto()
        function.ParseFromString(body)
        if not function.opset_import:
            function.opset_import.extend([helper.make_opsetid("", ctx.opset)])
        return function

    def expand(self, ctx: NodeContext, function: onnx.FunctionProto) -> list[Optional[OnnxValue]]:
        scope = Scope()
        for i, formal in enumerate(function.input):
            if ctx.has(i):
                scope.bind(formal, ctx.value(i))
        env = dict(ctx.attrs)
        for default in function.attribute_proto:
            env.setdefault(default.name, default)
        if ctx.schema is not None:
            for name, attr in ctx.schema.attributes.items():
                if name not in env and attr.default_value.type:
                    env[name] = attr.default_value
        opsets = {**self.opsets, **_opsets(function.opset_import, f"function {function.name}")}
        body = GraphProto(node=function.node)
        self.run_nodes(body, ctx.emitter, scope, env, opsets)
        return [scope.names.get(o) for o in function.output]


# --- helpers -----------------------------------------------------------------------------------


def _node_label(node: NodeProto, opset: Optional[int]) -> str:
    """``ONNX node 'name' (domain Op, opset N)``: how every message names a node."""
    label = f"'{node.name}' " if node.name else ""
    domain = f"{node.domain} " if node.domain not in ("", "ai.onnx") else ""
    return f"ONNX node {label}({domain}{node.op_type}, opset {opset or 0})"


def _opsets(imports: Iterable[onnx.OperatorSetIdProto], what: str) -> dict[str, int]:
    opsets = {("" if o.domain == "ai.onnx" else o.domain): int(o.version) for o in imports}
    default = opsets.get("")
    newest = defs.onnx_opset_version()
    if default is not None and not MIN_OPSET <= default <= newest:
        raise OnnxImportError(f"{what} imports opset {default} of the default domain; opsets "
                              f"{MIN_OPSET} to {newest} can be imported")
    return opsets


def _resolve_attrs(node: NodeProto, env: Optional[Mapping[str, AttributeProto]]
                   ) -> dict[str, AttributeProto]:
    """The node's attributes, those referring to the enclosing function's attributes
    resolved (and left out when the function's caller did not set them)."""
    attrs = {}
    for attr in node.attribute:
        if attr.ref_attr_name:
            found = (env or {}).get(attr.ref_attr_name)
            if found is None:
                continue
            resolved = AttributeProto()
            resolved.CopyFrom(found)
            resolved.name = attr.name
            attr = resolved
        attrs[attr.name] = attr
    return attrs


def _declared_type(t: TypeProto, what: str) -> Any:
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        dt = element_dtype(t.tensor_type.elem_type)
        if not t.tensor_type.HasField("shape"):
            raise OnnxImportError(f"{what} has no declared shape; give its type in input_types")
        dims = []
        for d in t.tensor_type.shape.dim:
            if not d.HasField("dim_value") or d.dim_value < 0:
                label = d.dim_param or "?"
                raise OnnxImportError(f"{what} has a dimension '{label}' without a value; give "
                                      "its type in input_types")
            dims.append(d.dim_value)
        return tensor_type(dt, dims)
    raise OnnxImportError(f"{what} is a {kind or 'value of no type'}; give its value or "
                          "type (input_types, static_inputs)")


def _kind_of(t: TypeProto, what: str) -> Union[TensorType, SeqValue]:
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        return tensor_type(element_dtype(t.tensor_type.elem_type), ())
    if kind == "sequence_type":
        return SeqValue(element_dtype(t.sequence_type.elem_type.tensor_type.elem_type), ())
    raise OnnxImportError(f"{what}: optionals of {kind} are not supported")


def _type_proto(value: OnnxValue) -> TypeProto:
    if isinstance(value, Value):
        t = value.type
        return helper.make_tensor_type_proto(onnx_element_type(t.dtype), t.shape)
    if isinstance(value, SeqValue):
        elem = helper.make_tensor_type_proto(onnx_element_type(value.dtype), None)
        return helper.make_sequence_type_proto(elem)
    inner = value.item if value.item is not None else value.kind
    return helper.make_optional_type_proto(_type_proto(inner))  # type: ignore[arg-type]


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
