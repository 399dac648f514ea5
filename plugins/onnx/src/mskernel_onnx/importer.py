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
from typing import Any, Callable, Collection, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import AttributeProto, GraphProto, NodeProto, TypeProto, defs, helper

from mskernel_sdk import (
    CompileOptions, DType, Graph, InferError, MskernelError, TensorType, Value, compile_graph,
    tensor_type,
)

from .context import NodeContext, Scope, node_label
from .emitter import Emitter, Knowledge
from .errors import OnnxFileError, OnnxImportError
from .protos import (
    PathLike, element_dtype, onnx_element_type, read_model, tensor_array, to_storage,
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
Handler = Callable[[NodeContext], HandlerResult]
InputType = Union[TensorType, Sequence[TensorType], None]

_UNGIVEN = object()


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
                value = self.graph_input(info, input_types.get(info.name, _UNGIVEN), emitter)
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
        result = emitter.build(outputs)
        used = {v for node in result.nodes for v in node.inputs} | set(result.outputs)
        weight_values = [v for v in weight_values if v in used]  # not those read as constants
        result = Graph((*data_inputs, *weight_values), result.nodes, result.outputs, result.name)
        weights = {v.name: self.weights[v.name] for v in weight_values if v.name}
        return ImportedModel(result, tuple(ports), tuple(out_ports), weights,
                             self.opsets.get("", 0))

    def graph_input(self, info: onnx.ValueInfoProto, given: Any, emitter: Emitter) -> OnnxValue:
        what = f"graph input '{info.name}'"
        kind = info.type.WhichOneof("value")
        if given is _UNGIVEN:
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
            raise OnnxFileError(f"{node_label(node, opset)}: {exc}") from exc
        except (MskernelError, InferError, ArithmeticError, IndexError, ValueError) as exc:
            raise OnnxImportError(f"{node_label(node, opset)}: {exc}") from exc

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
