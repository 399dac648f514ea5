"""The reference backend: runs any graph with the ops' NumPy semantics.

It is the oracle every other backend is tested against and the backend of last resort for
nodes no other backend claims.  It registers through ``mskernel_register_backends`` like any
plugin's backend, with the lowest priority.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..hooks.markers import hookimpl
from ..ir.dtypes import as_storage
from ..ir.graph import Graph
from ..ir.types import TensorType
from .backend import Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable
from .interpreter import run_graph
from .state import RefCell

NAME = "reference"
PRIORITY = -1000


class ReferenceExecutable(Executable):
    def __init__(self, backend: "ReferenceBackend", graph: Graph) -> None:
        super().__init__(graph)
        self.backend = backend

    def run(self, args: Sequence[Any]) -> list[Any]:
        host_cells: list[tuple[RefCell, RefCell]] = []
        host_args: list[Any] = []
        for arg in args:
            if isinstance(arg, DeviceArray):
                host_args.append(arg.data)
            elif isinstance(arg, RefCell):
                cell = RefCell(arg.type, arg.value.data)
                host_cells.append((arg, cell))
                host_args.append(cell)
            else:
                host_args.append(arg)
        results = run_graph(self.graph, host_args, self.backend.registry)
        for outer, inner in host_cells:
            outer.value = DeviceArray(self.backend, outer.type, inner.value)
        return [
            DeviceArray(self.backend, v.type, r) if isinstance(v.type, TensorType) else r
            for v, r in zip(self.graph.outputs, results)
        ]


class ReferenceBackend(Backend):
    name = NAME

    def __init__(self, registry: Any = None) -> None:
        if registry is None:
            from ..ops import registry as default_registry

            registry = default_registry()
        self.registry = registry

    def availability(self) -> Availability:
        return Availability(available=True, reason=f"NumPy {np.__version__} on the host")

    def capabilities(self) -> Capabilities:
        return Capabilities.uniform(self.registry.names())

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        return DeviceArray(self, type, as_storage(host, type.dtype))

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return array.data

    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        return ReferenceExecutable(self, graph)


@hookimpl
def mskernel_register_backends(backends: Any) -> None:
    backends.register(NAME, ReferenceBackend, priority=PRIORITY)
