"""IR → ONNX: :func:`to_onnx` turns a graph and its weights into an ``onnx.ModelProto``;
:func:`save_onnx` writes one, with external data past a size threshold.

- Opsets 13 to 23 (default 18).  Each core op is translated by the table in
  :mod:`mskernel_onnx.export_ops`: to its ONNX equivalent where the opset has one, to a
  composite of ONNX ops where it has none (``gelu`` before opset 20, ``layer_norm`` before 17,
  ``cumprod``, ``lgamma`` ...), and otherwise to an :class:`ExportError` naming the op, the
  reason and the user's source line.  A plugin exports its own ops by attaching a translator
  to them under the rule kind :data:`ONNX_EXPORT_RULE` (see :class:`Translator`).
- Weights become initializers, and nothing else does: the arrays of ``constant`` nodes and
  the constants translations need (shapes, axes, scalars) are ``Constant`` nodes at the top
  of the main graph, so a reader of the file tells the weights from the rest.  Graph
  inputs, weights and node outputs keep their IR names where the IR has one, and every value
  gets a unique name (ONNX names are global across subgraphs).
- ``If`` becomes ``If`` whose branches read the operands from the enclosing scope; ``While``
  becomes ``Loop`` whose body runs the body region and then the cond region (the first test
  runs before the loop).  A ``max_iterations`` bound becomes the loop's trip count: where
  mskernel raises on a loop that runs past it, the ONNX model stops there.
- Where an ONNX op does not take a dtype (``Sin`` on float16 before opset 22, ``Neg`` on
  uint8 ...) its inputs are widened to the nearest type it takes and the result is rounded
  back, as the reference computes float16 in float32.
- Every node records the user's source line in its ``doc_string``; every IR value's type is
  recorded in ``value_info``, so ONNX's strict shape inference checks each translation.
"""

from __future__ import annotations

import os
import tempfile
from typing import (
    Any, Callable, Iterable, Mapping, NoReturn, Optional, Protocol, Sequence, Union,
)

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mskernel_sdk import (
    DType, Graph, MskernelError, Node, TensorType, Value, dtype as to_dtype, rule_registry,
    write_atomically,
)

from . import __version__

#: The opsets this exporter writes, and the default.
OPSETS = range(13, 24)
DEFAULT_OPSET = 18
#: Models whose initializers hold more bytes than this keep them in an external data file
#: (protobuf cannot serialise a message of 2 GiB or more).
EXTERNAL_DATA_THRESHOLD = 2**31 - 2**24
#: The rule kind under which a plugin attaches an ONNX translator to an op it defines.
ONNX_EXPORT_RULE = "onnx_export"

#: IR dtype name → ONNX element type
ELEMENT_TYPES = {
    "bool": TensorProto.BOOL, "int8": TensorProto.INT8, "int16": TensorProto.INT16,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64, "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64,
    "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
    "complex64": TensorProto.COMPLEX64, "complex128": TensorProto.COMPLEX128,
}
_ONNX_TYPE_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float", "float64": "double",
    "complex64": "complex64", "complex128": "complex128",
}
#: Where an ONNX op does not take a dtype: the types to compute in instead, nearest first.
#: Each holds every value of the original exactly, so rounding back gives what the op would.
_WIDER = {
    "bool": ("uint8", "int32", "int64"),
    "int8": ("int16", "int32", "int64", "float"), "int16": ("int32", "int64", "float64"),
    "int32": ("int64", "float64"), "uint8": ("int16", "int32", "uint32", "int64", "float32"),
    "uint16": ("int32", "uint32", "int64", "float64"), "uint32": ("uint64", "int64", "float64"),
    "float16": ("float32", "float64"), "bfloat16": ("float32", "float64"),
    "float32": ("float64",),
}


class ExportError(MskernelError):
    """A graph cannot be written as ONNX; the message names the op, the reason and the
    user's source line."""


class Translator(Protocol):
    """Writes one IR node as ONNX nodes.

    Called as ``translate(ctx, node, *inputs)`` with the :class:`Context` of the graph being
    written, the IR node and the ONNX names of its inputs; returns the ONNX name of each of
    the node's outputs (a single name for a one-output node).  A returned name may be an
    existing one (an output that equals an input).  Raise through ``ctx.fail(reason)``.
    """

    def __call__(self, ctx: "Context", node: Node, *inputs: str) -> Union[str, Sequence[str]]: ...


# ---------------------------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------------------------


def to_onnx(graph: Graph, weights: Optional[Mapping[str, Any]] = None, *,
            opset: int = DEFAULT_OPSET, weight_dtypes: Optional[Mapping[str, Any]] = None,
            doc: str = "") -> onnx.ModelProto:
    """The ONNX model of ``graph``.  Graph inputs named like a key of ``weights`` (name →
    array in reference storage; ``weight_dtypes`` gives the IR dtype where the array's does
    not, i.e. bfloat16) become initializers; the others are the model's inputs.  Raise
    :class:`ExportError` when an op, a dtype or the opset cannot be written."""
    if opset not in OPSETS:
        raise ExportError(f"ONNX export: opset {opset} is not supported; choose one of "
                          f"{OPSETS.start}..{OPSETS.stop - 1} (default {DEFAULT_OPSET})")
    weights = dict(weights or {})
    exporter = _Exporter(opset, _used_values(graph))
    onnx_graph = exporter.main_graph(graph, weights, dict(weight_dtypes or {}))
    model = helper.make_model(
        onnx_graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="mskernel", producer_version=__version__, doc_string=doc,
        ir_version=helper.find_min_ir_version_for([helper.make_opsetid("", opset)], True))
    return model


def check_onnx(model: Union[onnx.ModelProto, str, os.PathLike]) -> None:
    """ONNX's own checks: the checker with full shape inference, then shape inference in
    strict mode with data propagation (which also checks every recorded type).  A model past
    2 GiB must be given by path."""
    if isinstance(model, onnx.ModelProto):
        onnx.checker.check_model(model, full_check=True)
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                          data_prop=True)
        return
    path = os.fspath(model)
    onnx.checker.check_model(path, full_check=True)
    with tempfile.TemporaryDirectory() as scratch:
        onnx.shape_inference.infer_shapes_path(path, os.path.join(scratch, "inferred.onnx"),
                                               check_type=True, strict_mode=True,
                                               data_prop=True)


def save_onnx(model: onnx.ModelProto, path: Union[str, os.PathLike], *,
              external_data_threshold: int = EXTERNAL_DATA_THRESHOLD) -> None:
    """Write ``model`` to ``path`` atomically.  When its initializers hold more than
    ``external_data_threshold`` bytes they go to ``<path>.data`` beside it (ONNX's external
    data: one file, each tensor at a 64-byte aligned offset), written before the model that
    names it.  ``model`` is left as it was given."""
    path = os.fspath(path)
    tensors = list(model.graph.initializer)
    if sum(len(t.raw_data) for t in tensors) <= external_data_threshold:
        write_atomically(path, [model.SerializeToString()])
        return
    location = os.path.basename(path) + ".data"
    contents = [t.raw_data for t in tensors]
    chunks: list[bytes] = []
    offset = 0
    try:
        for tensor, data in zip(tensors, contents):
            padding = -offset % _ALIGNMENT
            chunks += [bytes(padding), data]
            offset += padding
            _point_to(tensor, location, offset, len(data))
            offset += len(data)
        write_atomically(os.path.join(os.path.dirname(os.path.abspath(path)), location), chunks)
        write_atomically(path, [model.SerializeToString()])
    finally:
        for tensor, data in zip(tensors, contents):
            tensor.raw_data = data
            del tensor.external_data[:]
            tensor.data_location = TensorProto.DEFAULT


_ALIGNMENT = 64


def _point_to(tensor: TensorProto, location: str, offset: int, length: int) -> None:
    """Mark ``tensor`` as stored at ``offset`` in the external data file ``location``."""
    tensor.ClearField("raw_data")
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.data_location = TensorProto.EXTERNAL


def _used_values(graph: Graph) -> set[Value]:
    """Every value some node (in any region) or some graph's outputs read."""
    used: set[Value] = set(graph.outputs)
    for node in graph.walk():
        used.update(node.inputs)
        for region in node.regions:
            used.update(region.outputs)
    return used


# ---------------------------------------------------------------------------------------------
# writing graphs
# ---------------------------------------------------------------------------------------------


def element_type(dt: DType) -> int:
    return ELEMENT_TYPES[dt.name]


def pair_dtype(dt: DType) -> DType:
    """The real dtype a complex dtype is written as (float32 for complex64, float64 for
    complex128); a real dtype itself."""
    return to_dtype({"complex64": "float32", "complex128": "float64"}.get(dt.name, dt.name))


def complex_pairs(array: Any) -> np.ndarray:
    """A complex array in the layout exported models use for complex values — ONNX ops take
    no complex tensors, so a complex ``[..., n]`` is a real ``[..., n, 2]`` of (real,
    imaginary) pairs, ``DFT``'s layout — for feeding a runtime; a real array as it is.
    ``array[..., 0] + 1j * array[..., 1]`` reads an output back."""
    array = np.asarray(array)
    if not np.iscomplexobj(array):
        return array
    return np.stack([array.real, array.imag], axis=-1)


def value_info(name: str, type: TensorType) -> onnx.ValueInfoProto:
    if type.dtype.is_complex:
        return helper.make_tensor_value_info(name, element_type(pair_dtype(type.dtype)),
                                             [*type.shape, 2])
    return helper.make_tensor_value_info(name, element_type(type.dtype), list(type.shape))


def tensor_proto(name: str, array: np.ndarray, dt: DType) -> TensorProto:
    """An initializer holding ``array`` (reference storage) as ONNX type ``dt`` (a complex
    one in the pair layout, see :func:`complex_pairs`)."""
    if dt.is_complex:
        return numpy_helper.from_array(complex_pairs(np.asarray(array, dt.storage)), name)
    if dt.name == "bfloat16":
        bits = (np.asarray(array, np.float32).view(np.uint32) >> 16).astype(np.uint16)
        tensor = TensorProto(name=name, data_type=TensorProto.BFLOAT16, dims=list(array.shape),
                             raw_data=bits.tobytes())
        return tensor
    return numpy_helper.from_array(np.asarray(array, dt.storage), name)


class _Names:
    """Unique ONNX names: a wanted name is kept the first time, later ones get a suffix."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def fresh(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.taken:
            name, n = f"{wanted}_{n}", n + 1
        self.taken.add(name)
        return name


def _valid_name(name: Optional[str]) -> bool:
    return name is not None and name != "" and name.isprintable() \
        and not any(c.isspace() for c in name)


class _Exporter:
    """State shared by the main graph and its subgraphs: names, initializers, constants,
    the opset."""

    def __init__(self, opset: int, used: set[Value]) -> None:
        self.opset = opset
        self.used = used
        self.names = _Names()
        self.initializers: list[TensorProto] = []
        self.constants: list[onnx.NodeProto] = []
        self._constants: dict[tuple, str] = {}
        self._registry_rules = rule_registry()
        from .export_ops import TRANSLATORS
        from .export_ops.signal import COMPLEX_OPS

        self._translators: dict[str, Translator] = TRANSLATORS
        self.complex_ops = COMPLEX_OPS

    def main_graph(self, graph: Graph, weights: dict[str, Any],
                   weight_dtypes: dict[str, Any]) -> onnx.GraphProto:
        scope = Scope(self)
        inputs: list[onnx.ValueInfoProto] = []
        for i, value in enumerate(graph.inputs):
            if not isinstance(value.type, TensorType):
                raise ExportError(
                    f"ONNX export: graph input {i} has type {value.type}; ONNX graphs take "
                    "tensors only (export a network through mskernel.export, which turns its "
                    "parameters into weights)")
            if value.name is not None and value.name in weights:
                dt = to_dtype(weight_dtypes.get(value.name, value.type.dtype))
                name = self.names.fresh(value.name)
                self.initializers.append(tensor_proto(name, np.asarray(weights[value.name]), dt))
            else:
                wanted = value.name if _valid_name(value.name) else f"input_{len(inputs)}"
                name = self.names.fresh(wanted)
                inputs.append(value_info(name, value.type))
            scope.bind(value, name)
        for i, value in enumerate(graph.outputs):
            if value not in scope.env and not _valid_name(value.name):
                scope.preferred[value] = f"output_{i}"
        outputs = scope.run(graph.nodes, graph.outputs)
        return helper.make_graph(self.constants + scope.nodes, graph.name, inputs, outputs,
                                 initializer=self.initializers,
                                 value_info=scope.intermediate_infos(outputs))

    def constant(self, array: np.ndarray, dt: DType, hint: str = "const") -> str:
        """The name of a ``Constant`` of the main graph holding ``array`` as ``dt`` (shared by
        equal arrays, and visible in every subgraph)."""
        array = np.asarray(array)
        key = (dt.name, array.dtype.str, array.shape, array.tobytes())
        name = self._constants.get(key)
        if name is None:
            name = self.names.fresh(hint)
            self.constants.append(helper.make_node("Constant", [], [name], name=name,
                                                   value=tensor_proto(name, array, dt)))
            self._constants[key] = name
        return name

    def translator(self, node: Node) -> Optional[Translator]:
        found = self._translators.get(node.op)
        if found is None:
            found = self._registry_rules.get(ONNX_EXPORT_RULE, node.op)
        return found


class Scope:
    """One ONNX graph being written (the main graph or a subgraph): its nodes, the ONNX name
    of each IR value visible in it, and the types recorded for strict shape inference."""

    def __init__(self, exporter: _Exporter, parent: Optional["Scope"] = None) -> None:
        self.exporter = exporter
        self.parent = parent
        self.nodes: list[onnx.NodeProto] = []
        self.env: dict[Value, str] = {}
        self.value_infos: list[onnx.ValueInfoProto] = []
        self.preferred: dict[Value, str] = {}
        #: names produced by this scope's nodes, and those of them given to IR values
        self.produced: set[str] = set()
        self.named: set[str] = set()

    def bind(self, value: Value, name: str) -> None:
        self.env[value] = name

    def lookup(self, value: Value) -> str:
        scope: Optional[Scope] = self
        while scope is not None:
            if value in scope.env:
                return scope.env[value]
            scope = scope.parent
        raise ExportError(f"ONNX export: value {value} is used before it is defined")

    def bind_all(self, values: Sequence[Value], names: Sequence[str]) -> None:
        for value, name in zip(values, names):
            self.bind(value, name)

    def run(self, nodes: Sequence[Node], outputs: Sequence[Value]) -> list[onnx.ValueInfoProto]:
        """Translate ``nodes`` into this scope; return the graph outputs for ``outputs``."""
        for node in nodes:
            self.translate(node)
        return self.outputs(outputs)

    def outputs(self, values: Sequence[Value]) -> list[onnx.ValueInfoProto]:
        """Graph outputs for ``values``: each a name produced in this scope, through an
        ``Identity`` where it is not (an input, an initializer, an outer name, a repeat)."""
        results, seen = [], set()
        for value in values:
            name = self.lookup(value)
            if name not in self.produced or name in seen:
                name = self.emit("Identity", [name], hint=self.preferred.get(value, name))[0]
            seen.add(name)
            results.append(value_info(name, value.type))
        return results

    def intermediate_infos(self, outputs: Sequence[onnx.ValueInfoProto]
                           ) -> list[onnx.ValueInfoProto]:
        """The recorded types of values that are not among ``outputs``."""
        out_names = {o.name for o in outputs}
        return [info for info in self.value_infos if info.name not in out_names]

    def inline(self, region: Graph, inputs: Sequence[str]) -> list[str]:
        """Translate ``region``'s nodes into this scope with its inputs bound to ``inputs``;
        return the names of its outputs."""
        for value, name in zip(region.inputs, inputs):
            self.bind(value, name)
        for node in region.nodes:
            self.translate(node)
        return [self.lookup(v) for v in region.outputs]

    def translate(self, node: Node) -> None:
        translator = self.exporter.translator(node)
        ctx = Context(self, node)
        if translator is None:
            ctx.fail(_no_translation(node.op))
        complex_ops = self.exporter.complex_ops
        if node.op not in complex_ops and any(
                isinstance(v.type, TensorType) and v.type.dtype.is_complex
                for v in (*node.inputs, *node.outputs)):
            ctx.fail("ONNX has no complex arithmetic: complex values are written as real "
                     "[..., 2] tensors (DFT's layout), which only "
                     f"{', '.join(sorted(complex_ops))} read")
        if node.outputs and all(isinstance(v.type, TensorType) and v.type.size == 0
                                for v in node.outputs):
            # a tensor of no elements is all type: a constant, whatever computed it
            for value in node.outputs:
                self.bind(value, ctx.const(np.zeros(value.type.shape), value.type.dtype))
            return
        first = len(self.nodes)
        results = translator(ctx, node, *(self.lookup(v) for v in node.inputs))
        names = [results] if isinstance(results, str) else list(results)
        if len(names) != len(node.outputs):
            raise ExportError(f"ONNX export: the translation of '{node.op}' gave {len(names)} "
                              f"name(s) for the node's {len(node.outputs)} output(s)")
        new = {n for proto in self.nodes[first:] for n in proto.output}
        for i, (value, name) in enumerate(zip(node.outputs, names)):
            if name in new and name not in self.named:
                name = self._rename(first, name, self._wanted(node, i))
                self.named.add(name)
                if isinstance(value.type, TensorType):
                    self.value_infos.append(value_info(name, value.type))
            self.bind(value, name)

    def _wanted(self, node: Node, i: int) -> str:
        value = node.outputs[i]
        if _valid_name(value.name):
            return str(value.name)
        if value in self.preferred:
            return self.preferred[value]
        base = node.op.replace(".", "_")
        return base if len(node.outputs) == 1 else f"{base}_{i}"

    def _rename(self, first: int, old: str, wanted: str) -> str:
        """Give ``old``, produced by a node appended since ``first``, the name ``wanted``."""
        new = self.exporter.names.fresh(wanted)
        for proto in self.nodes[first:]:
            for field_ in (proto.input, proto.output):
                for j, name in enumerate(field_):
                    if name == old:
                        field_[j] = new
        self.produced.add(new)
        return new

    def emit(self, op_type: str, inputs: Sequence[str], outputs: int = 1, *, hint: str = "",
             loc: str = "", **attrs: Any) -> list[str]:
        """Append one ONNX node with fresh output names (from ``hint``); ``loc`` is the
        user's source line.  Attributes that are ``None`` are left out."""
        hint = hint or op_type
        names = [self.exporter.names.fresh(hint if outputs == 1 else f"{hint}_{i}")
                 for i in range(outputs)]
        node = helper.make_node(op_type, list(inputs), names, doc_string=loc or None,
                                **{k: v for k, v in attrs.items() if v is not None})
        self.nodes.append(node)
        self.produced.update(names)
        return names


def _no_translation(op: str) -> str:
    if op.startswith("random_"):
        return ("mskernel's random numbers are counter-based Threefry streams that ONNX's "
                "generators cannot reproduce; export the network in inference mode "
                "(set_train(False)), or pass the random numbers in as inputs")
    if op in ("ref_load", "ref_store"):
        return ("ONNX graphs hold no mutable state; export a network through mskernel.export, "
                "which turns its parameters into weights")
    owner = _owner(op)
    if owner and owner != "mskernel":
        return (f"it is defined by {owner}, which attaches no ONNX translation to it (rule "
                f"'{ONNX_EXPORT_RULE}')")
    return "ONNX has no equivalent of it"


def _owner(op: str) -> str:
    from mskernel_sdk import op_registry

    try:
        return str(op_registry().get(op).owner)
    except MskernelError:
        return ""


# ---------------------------------------------------------------------------------------------
# what a translator sees
# ---------------------------------------------------------------------------------------------


class Context:
    """The translator's view of the graph being written, for one IR node."""

    def __init__(self, scope: Scope, node: Node) -> None:
        self.scope = scope
        self.node = node
        self.opset = scope.exporter.opset
        self._base = self._base_name()
        self._loc = str(node.loc) if node.loc else ""

    def _base_name(self) -> str:
        first = self.node.outputs[0] if self.node.outputs else None
        if first is not None and _valid_name(first.name):
            return str(first.name)
        if first is not None and first in self.scope.preferred:
            return self.scope.preferred[first]
        return self.node.op.replace(".", "_")

    # -- errors ------------------------------------------------------------------------------

    def fail(self, reason: str) -> NoReturn:
        types = ", ".join(str(v.type) for v in self.node.inputs)
        raise ExportError(f"ONNX export (opset {self.opset}): op '{self.node.op}'"
                          f"{self.node.where()} ({types}): {reason}")

    # -- types -------------------------------------------------------------------------------

    def in_type(self, i: int = 0) -> TensorType:
        t = self.node.inputs[i].type
        if not isinstance(t, TensorType):
            self.fail(f"input {i} has type {t}; ONNX has no mutable state or tokens")
        return t

    def out_type(self, i: int = 0) -> TensorType:
        return self.node.outputs[i].type  # type: ignore[return-value]

    def used(self, i: int) -> bool:
        """Whether output ``i`` of the node is read by anything."""
        return self.node.outputs[i] in self.scope.exporter.used

    # -- emitting ----------------------------------------------------------------------------

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs: Any) -> Any:
        """Append an ONNX node; return its output name (a list when ``outputs > 1``)."""
        names = self.scope.emit(op_type, inputs, outputs, hint=f"{self._base}/{op_type}",
                                loc=self._loc, **attrs)
        return names[0] if outputs == 1 else names

    def const(self, value: Any, dt: Union[DType, str]) -> str:
        """A constant holding ``value`` as IR dtype ``dt``."""
        dt = to_dtype(dt)
        array = np.asarray(value)
        storage = np.float32 if dt.name == "bfloat16" else dt.storage
        return self.scope.exporter.constant(array.astype(storage), dt, f"{self._base}/const")

    def ints(self, values: Iterable[int]) -> str:
        """A 1-D int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), np.int64).reshape(-1), "int64")

    def scalar_int(self, value: int) -> str:
        return self.const(np.asarray(value, np.int64), "int64")

    def cast(self, name: str, to: Union[DType, str]) -> str:
        return self.op("Cast", name, to=element_type(to_dtype(to)))

    def convert(self, name: str, src: Union[DType, str], dst: Union[DType, str]) -> str:
        """``name`` (of dtype ``src``) as ``dst``: itself when they are one type."""
        return name if to_dtype(src) is to_dtype(dst) else self.cast(name, dst)

    def region(self, graph: Graph, inputs: Sequence[str]) -> list[str]:
        """Inline a region into the graph being written (see :meth:`Scope.inline`)."""
        return self.scope.inline(graph, inputs)

    def subgraph(self, name: str, build: Callable[["Scope"], tuple[list[onnx.ValueInfoProto],
                                                                   list[onnx.ValueInfoProto]]]
                 ) -> onnx.GraphProto:
        """An ONNX subgraph (an ``If`` branch, a ``Loop`` body): ``build(scope)`` fills a
        scope nested in this one and returns its (inputs, outputs)."""
        scope = Scope(self.scope.exporter, parent=self.scope)
        inputs, outputs = build(scope)
        return helper.make_graph(scope.nodes, self.scope.exporter.names.fresh(name), inputs,
                                 outputs, value_info=scope.intermediate_infos(outputs))

    def fresh(self, wanted: str) -> str:
        return self.scope.exporter.names.fresh(wanted)

    def accepts(self, op_type: str, dt: DType, params: Sequence[str] = ("T",)) -> bool:
        """Whether ONNX ``op_type`` at this opset takes ``dt`` for each type parameter in
        ``params``."""
        onnx_name = _ONNX_TYPE_NAMES[dt.name]
        return all(onnx_name in _allowed_types(op_type, self.opset, p) for p in params)

    def compute_type(self, op_type: Union[str, Sequence[str]], dt: DType,
                     params: Sequence[str] = ("T",)) -> DType:
        """``dt`` if ``op_type`` (each of several) takes it, else the nearest wider type
        they take."""
        op_types = [op_type] if isinstance(op_type, str) else list(op_type)
        for candidate in (dt.name, *_WIDER.get(dt.name, ())):
            if all(self.accepts(op, to_dtype(candidate), params) for op in op_types):
                return to_dtype(candidate)
        self.fail(f"ONNX {', '.join(op_types)} (opset {self.opset}) take no {dt} tensors, nor "
                  "a wider type that holds them")

    def typed(self, op_type: str, *inputs: str, dt: DType, result: Optional[DType] = None,
              outputs: int = 1, params: Sequence[str] = ("T",),
              widen: Optional[Sequence[int]] = None, **attrs: Any) -> Any:
        """``op_type`` on ``inputs`` of dtype ``dt``, computed in a wider type when the op
        does not take ``dt`` (for every type parameter in ``params``): the inputs at positions
        ``widen`` (default: all) are cast, and results are rounded back to ``dt`` unless
        ``result`` gives their (fixed) dtype."""
        compute = self.compute_type(op_type, dt, params)
        if compute is dt:
            return self.op(op_type, *inputs, outputs=outputs, **attrs)
        cast = range(len(inputs)) if widen is None else widen
        args = [self.cast(x, compute) if i in cast and x else x for i, x in enumerate(inputs)]
        out = self.op(op_type, *args, outputs=outputs, **attrs)
        if result is not None:
            return out
        if outputs == 1:
            return self.cast(out, dt)
        return [self.cast(o, dt) for o in out]


_SCHEMA_TYPES: dict[tuple[str, int, str], frozenset[str]] = {}


def _allowed_types(op_type: str, opset: int, param: str) -> frozenset[str]:
    key = (op_type, opset, param)
    if key not in _SCHEMA_TYPES:
        schema = onnx.defs.get_schema(op_type, opset, "")
        allowed: frozenset[str] = frozenset()
        for constraint in schema.type_constraints:
            if constraint.type_param_str == param:
                allowed = frozenset(t[len("tensor("):-1] for t in constraint.allowed_type_strs
                                    if t.startswith("tensor("))
        _SCHEMA_TYPES[key] = allowed
    return _SCHEMA_TYPES[key]
