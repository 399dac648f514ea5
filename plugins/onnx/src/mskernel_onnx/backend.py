"""ONNX's standard backend interface on mskernel, as ``onnxruntime.backend`` provides it::

    import mskernel_onnx.backend as backend
    rep = backend.prepare(model, "CPU")        # a ModelProto, its bytes or a path
    outputs = rep.run([x])                      # or backend.run_model(model, [x])

so ONNX's backend test suite (``onnx.backend.test.BackendTest(mskernel_onnx.backend)``)
runs on it.  ``prepare`` reads the model; ``run`` imports it for the types of its inputs
(:func:`~mskernel_onnx.importer.import_model`, weights as constants), compiles the graph with
``compile_graph`` and caches the result per input signature.  An input whose *value* decides
a shape (a ``Reshape`` target, a ``Range`` bound, ``NonZero``'s data ...) is made static: the
graph is compiled once per value of it.

Devices: ``"CPU"`` runs on the backends named by ``backends=`` (default: mskernel's cpu
backend first; nodes it cannot run fall back to the reference backend).  Other devices are
not supported.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, namedtupledict

from mskernel_sdk import CompileOptions, DType, TensorType, compile_graph, dtype as to_dtype

from .errors import NeedsValue
from .importer import ImportedModel, import_model
from .protos import from_storage, read_model
from .values import OptLayout, SeqLayout, flatten, unflatten

DEFAULT_BACKENDS = ("cpu", "reference")


class MskernelBackendRep(BackendRep):
    """A prepared model: run it with a list (in input order) or a dict of inputs."""

    def __init__(self, model: onnx.ModelProto, base_dir: Optional[str],
                 backends: Sequence[str]) -> None:
        self.model = model
        self.base_dir = base_dir
        self.backends = tuple(backends)
        self.input_names = [i.name for i in model.graph.input
                            if i.name not in {t.name for t in model.graph.initializer}]
        self.output_names = [o.name for o in model.graph.output]
        self.static: set[str] = set()
        self._cache: dict[Any, tuple[ImportedModel, Any]] = {}

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        feeds = self._feeds(inputs)
        imported, compiled = self._compiled(feeds)
        args: list[Any] = []
        for port in imported.inputs:
            args += flatten(port.layout, feeds[port.name])
        results = compiled(*args)
        outputs, at = [], 0
        for port in imported.outputs:
            value, used = unflatten(port.layout, results[at:])
            outputs.append(_to_onnx(port.layout, value))
            at += used
        return namedtupledict("Outputs", self.output_names)(*outputs)

    def _feeds(self, inputs: Any) -> dict[str, Any]:
        if isinstance(inputs, Mapping):
            return dict(inputs)
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = list(inputs)
        if len(inputs) > len(self.input_names):
            raise ValueError(f"the model takes {len(self.input_names)} inputs "
                             f"{self.input_names}, got {len(inputs)}")
        return dict(zip(self.input_names, inputs))

    def _compiled(self, feeds: dict[str, Any]) -> tuple[ImportedModel, Any]:
        while True:
            key = tuple(_signature(feeds.get(n), n in self.static) for n in self.input_names)
            if key in self._cache:
                return self._cache[key]
            types = {n: _type_of(v) for n, v in feeds.items() if n not in self.static}
            static = {n: feeds[n] for n in self.static if n in feeds}
            try:
                imported = import_model(self.model, base_dir=self.base_dir, input_types=types,
                                        static_inputs=static, weights="constants")
            except NeedsValue as exc:
                new = set(exc.inputs) - self.static
                if not new:
                    raise
                self.static |= new
                continue
            compiled = compile_graph(imported.graph, backends=self.backends,
                                     options=CompileOptions(fallback="allow"))
            self._cache[key] = (imported, compiled)
            return imported, compiled


class MskernelBackend(Backend):
    """``onnx.backend.base.Backend`` on mskernel (module-level functions mirror it).
    ``backends`` names the mskernel backends a prepared model runs on, in preference order;
    a subclass may change it."""

    backends: tuple[str, ...] = DEFAULT_BACKENDS

    @classmethod
    def prepare(cls, model: Union[onnx.ModelProto, bytes, str, "os.PathLike[str]"],
                device: str = "CPU", backends: Optional[Sequence[str]] = None,
                **kwargs: Any) -> MskernelBackendRep:
        if not cls.supports_device(device):
            raise ValueError(f"mskernel's ONNX backend runs on CPU, not {device!r}")
        proto, base_dir = read_model(model)
        return MskernelBackendRep(proto, base_dir, backends or cls.backends)

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Optional[Sequence[Any]] = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node on ``inputs`` (a list in the node's input order, or a dict)."""
        names = [n for n in node.input if n]
        values = inputs if isinstance(inputs, Mapping) else dict(zip(names, inputs))
        graph_inputs = [helper.make_value_info(n, _type_proto_of(values[n])) for n in names]
        graph_outputs = [helper.make_value_info(n, onnx.TypeProto()) for n in node.output if n]
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        imports = [helper.make_opsetid("", opset)]
        if domain:
            imports.append(helper.make_opsetid(domain, onnx.defs.get_schema(
                node.op_type, domain=domain).since_version))
        model = helper.make_model(helper.make_graph([node], "node", graph_inputs, graph_outputs),
                                  opset_imports=imports)
        return cls.prepare(model, device, **kwargs).run(values)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"


def _type_of(data: Any) -> Any:
    """The input type (``TensorType``, a list for a sequence, ``None``) of a value."""
    if data is None:
        return None
    if isinstance(data, (list, tuple)):
        return [_type_of(d) for d in data]
    array = np.asarray(data)
    return TensorType(_dtype_of(array), array.shape)


def _dtype_of(array: np.ndarray) -> DType:
    try:
        return to_dtype(array.dtype)
    except TypeError:
        raise TypeError(f"an input of NumPy dtype {array.dtype} has no mskernel dtype") from None


def _signature(data: Any, static: bool) -> Any:
    if data is None:
        return None
    if isinstance(data, (list, tuple)):
        return tuple(_signature(d, static) for d in data)
    array = np.asarray(data)
    key = (array.dtype.str, array.shape)
    return key + (array.tobytes(),) if static else key


def _type_proto_of(data: Any) -> onnx.TypeProto:
    if isinstance(data, (list, tuple)):
        elem = _type_proto_of(data[0]) if data else onnx.TypeProto()
        return helper.make_sequence_type_proto(elem)
    array = np.asarray(data)
    return helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(array.dtype),
                                         array.shape)


def _to_onnx(layout: Any, value: Any) -> Any:
    """An output as ONNX's backend API returns it (ml_dtypes' bfloat16, lists, None)."""
    if isinstance(layout, TensorType):
        return from_storage(np.asarray(value), layout.dtype)
    if isinstance(layout, SeqLayout):
        return [from_storage(np.asarray(v), t.dtype) for v, t in zip(value, layout.items)]
    assert isinstance(layout, OptLayout)
    return None if layout.item is None else _to_onnx(layout.item, value)


prepare = MskernelBackend.prepare
run_model = MskernelBackend.run_model
run_node = MskernelBackend.run_node
supports_device = MskernelBackend.supports_device
is_compatible = MskernelBackend.is_compatible
