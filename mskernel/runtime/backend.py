"""The interfaces a backend plugin implements: :class:`Backend`, :class:`Executable`,
:class:`DeviceArray`, and the data types describing availability and capabilities.

A backend in five parts:

1. ``availability()`` — can it run here, and if not, why (driver missing, no device, …).
2. ``capabilities()`` — which ops (and dtypes, ranks) it runs, as data, so the partitioner can
   place nodes and ``mskernel explain`` can show the placement before anything runs.
3. ``to_device`` / ``to_host`` — transfers.  Arrays stay on their device between executables;
   the runtime transfers only at partition boundaries or when the user asks for host data.
4. ``compile(graph, options) -> Executable`` — lower a graph (every node of which the backend
   claimed) once; run its own passes (fusion, layout, memory planning) here.
5. ``Executable.run(args) -> outputs`` — run on device arrays; may return before the work is
   done (asynchronous backends), as long as ``to_host`` and ``DeviceArray.block_until_ready``
   wait for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..ir.dtypes import DType
from ..ir.graph import Graph, Node
from ..ir.types import TensorType

FallbackPolicy = Literal["allow", "warn", "deny"]


class Availability(BaseModel):
    """Whether a backend can run on this machine; ``reason`` says why not (or what it found)."""

    model_config = ConfigDict(frozen=True)
    available: bool
    reason: str = ""


class CompileOptions(BaseModel):
    """Options for compiling a graph.

    ``opt_level`` selects the generic pass pipeline (``O0`` … ``O3``); ``debug`` runs the
    verifier between passes; ``fallback`` decides what happens to nodes the preferred backend
    cannot run: ``allow`` places them on the next capable backend, ``warn`` does so and warns
    once per compilation listing them, ``deny`` raises instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    opt_level: int = Field(2, ge=0, le=3)
    debug: bool = False
    fallback: FallbackPolicy = "warn"


@dataclass(frozen=True)
class OpSupport:
    """What a backend supports of one op: the dtypes (``None``: all) of every tensor input
    and output, and the largest rank (``None``: any)."""

    dtypes: Optional[frozenset[DType]] = None
    max_rank: Optional[int] = None

    def reason_unsupported(self, node: Node) -> Optional[str]:
        tensors = [v.type for v in (*node.inputs, *node.outputs) if isinstance(v.type, TensorType)]
        if self.dtypes is not None:
            bad = sorted({t.dtype.name for t in tensors if t.dtype not in self.dtypes})
            if bad:
                return f"dtype {', '.join(bad)} not supported"
        if self.max_rank is not None:
            too_big = [t for t in tensors if t.rank > self.max_rank]
            if too_big:
                return f"rank {too_big[0].rank} exceeds {self.max_rank}"
        return None


class Capabilities:
    """The ops a backend runs, as data: op name → :class:`OpSupport`."""

    def __init__(self, ops: Mapping[str, OpSupport]) -> None:
        self.ops = dict(ops)

    @classmethod
    def uniform(cls, op_names: Iterable[str], support: OpSupport = OpSupport()) -> "Capabilities":
        return cls({name: support for name in op_names})

    def reason_unsupported(self, node: Node) -> Optional[str]:
        """``None`` when the backend runs ``node`` (with every node of its regions)."""
        support = self.ops.get(node.op)
        if support is None:
            return f"no kernel for '{node.op}'"
        reason = support.reason_unsupported(node)
        if reason:
            return f"'{node.op}': {reason}"
        for region in node.regions:
            for inner in region.walk():
                reason = self.reason_unsupported(inner)
                if reason:
                    return f"region of '{node.op}': {reason}"
        return None

    def supports(self, node: Node) -> bool:
        return self.reason_unsupported(node) is None

    def __contains__(self, op: object) -> bool:
        return op in self.ops


class DeviceArray:
    """A tensor on a backend's device.  ``data`` is the backend's own handle (a NumPy array
    for host backends, a device pointer wrapper for accelerators)."""

    __slots__ = ("backend", "type", "data")

    def __init__(self, backend: "Backend", type: TensorType, data: Any) -> None:
        self.backend = backend
        self.type = type
        self.data = data

    def block_until_ready(self) -> "DeviceArray":
        self.backend.synchronize(self)
        return self

    def to_host(self) -> np.ndarray:
        return self.backend.to_host(self)

    def __repr__(self) -> str:
        return f"DeviceArray({self.type} on {self.backend.name})"


class Executable(ABC):
    """A compiled graph on one backend."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    @abstractmethod
    def run(self, args: Sequence[Any]) -> list[Any]:
        """Run on ``args`` — :class:`DeviceArray` s of this backend for tensors,
        :class:`~mskernel.runtime.state.RefCell` s (holding this backend's device arrays) for
        refs, ``TOKEN_VALUE`` for tokens — and return the outputs in the same forms."""


class Backend(ABC):
    """Base class of backends.  Subclasses set ``name`` and implement the abstract methods."""

    name: str = ""
    #: the distribution that provides the backend (set by the registry)
    owner: str = ""
    #: whether ``DeviceArray.data`` lives in host memory, so that ``to_host``/``to_device``
    #: are host copies, not device transfers: feature plugins' host kernels then run beside
    #: this backend with no transfer counted (see :mod:`mskernel.runtime.host_kernels`)
    host_memory: bool = False

    @abstractmethod
    def availability(self) -> Availability:
        """Probe cheaply; never raise for missing hardware, report it."""

    @abstractmethod
    def capabilities(self) -> Capabilities:
        """The ops this backend runs; everything else is placed elsewhere or refused."""

    @abstractmethod
    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        """Copy a host array in reference storage (see :mod:`mskernel.ir.dtypes`) to the
        device as ``type``."""

    @abstractmethod
    def to_host(self, array: DeviceArray) -> np.ndarray:
        """Copy to a host array in reference storage, waiting for pending work."""

    def share(self, host: np.ndarray, type: TensorType) -> Optional[DeviceArray]:
        """A device array using ``host``'s memory as it is, so that writes to ``host`` show
        in it (``Tensor.from_numpy``), or ``None`` when this backend cannot hold ``host``
        without a copy — the default.  Backends whose device arrays are host NumPy arrays
        override it for the arrays already in their storage layout."""
        return None

    @abstractmethod
    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        """Lower ``graph``; every node in it is one this backend claimed."""

    def synchronize(self, array: DeviceArray) -> None:
        """Wait until ``array`` is computed.  Synchronous backends need not override."""

    def describe(self) -> str:
        """One line for ``mskernel plugins info`` (devices found, library versions, …)."""
        return self.availability().reason

    def __repr__(self) -> str:
        return f"<Backend {self.name}>"

