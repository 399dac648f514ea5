"""Compiling a graph for the installed backends and running it.

``compile_graph(graph)`` runs the generic pass pipeline of the chosen optimisation level,
partitions the result over the available backends (preference order, capabilities, plugins'
host kernels, fallback policy), compiles each segment on its backend (a segment of host
kernels runs them on the backend's arrays), and returns a :class:`CompiledGraph`.
Running it moves tensors between backends only at segment boundaries; outputs stay on the
backend that produced them until the caller asks for host data.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..defaults import backend_registry, rule_registry
from ..errors import BackendError, MskernelError
from ..ir.dtypes import as_storage
from ..ir.graph import Graph, Value
from ..ir.types import TensorType
from ..passes.manager import run_pipeline
from .backend import Backend, CompileOptions, DeviceArray, Executable
from .host_kernels import HostKernel, HostKernelExecutable, host_kernels
from .partition import PartitionPlan, partition
from .state import RefCell


def installed_host_kernels() -> dict[str, HostKernel]:
    """The host kernels the installed plugins register, by op name."""
    return host_kernels(rule_registry())


def resolve_backends(names: Optional[Sequence[str]] = None) -> list[Backend]:
    """Backends in preference order: ``names`` first (each must be available), then every
    other available backend as fallback candidates, by the registry's order."""
    registry = backend_registry()
    chosen = [registry.get(n) for n in names or ()]
    rest = [b for b in registry.available() if b.name not in {c.name for c in chosen}]
    return chosen + rest


def optimize(graph: Graph, options: CompileOptions) -> Graph:
    """Run the generic pipeline ``O<opt_level>`` on ``graph``."""
    return run_pipeline(f"O{options.opt_level}", graph, options).graph


def transfer(array: DeviceArray, target: Backend) -> DeviceArray:
    """Move a device array to ``target`` (through host memory)."""
    if array.backend is target:
        return array
    return target.to_device(array.backend.to_host(array), array.type)


class CompiledGraph:
    """A graph compiled for one or more backends; call :meth:`run` with host or device arrays."""

    def __init__(self, plan: PartitionPlan, backends: dict[str, Backend],
                 executables: list[Executable]) -> None:
        self.plan = plan
        self.graph = plan.graph
        self._backends = backends
        self._executables = executables
        #: the backend and executable of a graph that is one segment (the common case): its
        #: arguments go straight to the executable, with no value table
        whole = len(plan.segments) == 1 and plan.segments[0].graph is plan.graph
        self._sole = (backends[plan.segments[0].backend], executables[0]) if whole else None

    @property
    def executables(self) -> tuple[Executable, ...]:
        """Each segment's executable, in :attr:`plan` order (what a backend compiled: for
        inspecting or profiling it)."""
        return tuple(self._executables)

    def explain(self) -> str:
        return self.plan.explain()

    def run(self, args: Sequence[Any]) -> list[Any]:
        graph = self.graph
        if len(args) != len(graph.inputs):
            raise MskernelError(
                f"graph @{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}"
            )
        if self._sole is not None:
            backend, executable = self._sole
            return executable.run([
                a if a.__class__ is DeviceArray and a.backend is backend  # already there
                else self._on(backend, v, a) for v, a in zip(graph.inputs, args)])
        env: dict[Value, Any] = dict(zip(graph.inputs, args))
        for segment, executable in zip(self.plan.segments, self._executables):
            backend = self._backends[segment.backend]
            seg_args = [self._on(backend, v, env[v]) for v in segment.graph.inputs]
            env.update(zip(segment.graph.outputs, executable.run(seg_args)))
        return [env[v] for v in graph.outputs]

    @staticmethod
    def _on(backend: Backend, value: Value, arg: Any) -> Any:
        """``arg`` as ``backend``'s executables take it (a device array there, a cell holding
        one), transferred or copied to the device when it is not."""
        if isinstance(arg, DeviceArray):
            return transfer(arg, backend)
        if isinstance(arg, RefCell):  # a host array in a cell moves to the device once
            if not isinstance(arg.value, DeviceArray):
                arg.value = backend.to_device(as_storage(arg.value, arg.type.dtype), arg.type)
            elif arg.value.backend is not backend:
                arg.value = transfer(arg.value, backend)
            return arg
        if isinstance(value.type, TensorType):
            host = np.asarray(arg)
            if host.shape != value.type.shape:
                raise MskernelError(
                    f"graph input {value.name or ''} expects {value.type}, got an array of "
                    f"shape {host.shape}"
                )
            return backend.to_device(as_storage(host, value.type.dtype), value.type)
        return arg

    def __call__(self, *args: Any) -> list[np.ndarray]:
        """Run and return host arrays (a convenience for scripts and tests)."""
        return [a.to_host() if isinstance(a, DeviceArray) else a for a in self.run(args)]


def compile_graph(graph: Graph, *, backends: Optional[Sequence[str]] = None,
                  options: Optional[CompileOptions] = None) -> CompiledGraph:
    """Optimise, partition and compile ``graph``.  ``backends`` names the preferred
    backend(s) first; every other available backend may take nodes they cannot run, as the
    fallback policy in ``options`` allows."""
    options = options or CompileOptions()
    optimized = optimize(graph, options)
    chosen = resolve_backends(backends)
    kernels = installed_host_kernels()
    plan = partition(optimized, chosen, options.fallback, kernels)
    by_name = {b.name: b for b in chosen}
    executables: list[Executable] = []
    for segment in plan.segments:
        backend = by_name[segment.backend]
        if segment.host_kernel:
            executables.append(HostKernelExecutable(segment.graph, backend, kernels))
            continue
        try:
            executables.append(backend.compile(segment.graph, options))
        except MskernelError:
            raise
        except Exception as exc:
            raise BackendError(
                f"backend '{backend.name}' ({backend.owner}) failed to compile "
                f"@{segment.graph.name}: {type(exc).__name__}: {exc}"
            ) from exc
    return CompiledGraph(plan, by_name, executables)


def explain(graph: Graph, *, backends: Optional[Sequence[str]] = None,
            options: Optional[CompileOptions] = None) -> str:
    """Where every node of ``graph`` would run and what crosses between backends."""
    options = options or CompileOptions()
    return partition(optimize(graph, options), resolve_backends(backends), "allow",
                     installed_host_kernels()).explain()
