"""Placing nodes on backends: capability query, host kernels, fallback policy, segments and
transfers.

Each node goes to the first backend in preference order whose capabilities cover it (its op,
dtypes, ranks and, for region ops, every node of its regions).  Before that, composite nodes
the preferred backend does not claim are expanded into primitives it runs where their
decompositions allow (:mod:`.expand`), so they do not fall back.  A node the *preferred*
backend (the first one) cannot run, whose op has a plugin's host kernel covering it, runs on
that kernel beside the preferred backend (see :mod:`mskernel.runtime.host_kernels`).  Any other
node the preferred backend cannot run has fallen back; the policy decides whether that is
allowed silently, with a warning, or refused.  Nodes are then grouped into segments — maximal
runs on one backend (host kernels beside a backend are segments of their own), found by a
topological order that stays on the current backend as long as it can, except that a node of
an op with the trait :data:`SCHEDULE_EARLY` runs as soon as it is ready and the nodes it needs
run ahead of the others — and every tensor that
crosses from one memory to another is a transfer, counted in bytes: between two backends,
and between a backend without host memory and the host kernels beside it.  The plan is data:
:meth:`PartitionPlan.explain` prints it before anything runs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from ..defaults import or_default_ops
from ..errors import BackendError
from ..ir.graph import Graph, Node, Value
from ..ir.lookup import OpLookup
from ..ir.types import TensorType
from ..ops.registry import OpDef
from .backend import Backend, FallbackPolicy
from .expand import Expansion, expand_composites
from .report import explain_plan

if TYPE_CHECKING:
    from .host_kernels import HostKernel

#: the host memory, as the location of a transfer's end
HOST = "host"
#: The trait of an op that starts work running alongside the rest of the graph (a
#: collective's start): its nodes run as soon as they are ready, with the nodes they need
#: first, so that what follows them overlaps that work.
SCHEDULE_EARLY = "schedule_early"


class FallbackWarning(UserWarning):
    """Some nodes run on another backend than the preferred one."""


@dataclass(frozen=True)
class Placement:
    node: Node
    backend: str
    #: why the preferred backend did not take the node (None when it did)
    fallback_reason: Optional[str] = None
    #: the distribution whose host kernel runs the node beside ``backend`` (None: the
    #: backend's own kernel)
    host_kernel: Optional[str] = None


@dataclass(frozen=True)
class Segment:
    """A closed sub-graph run by one backend.  ``graph.inputs``/``graph.outputs`` are values of
    the partitioned graph, so segments exchange values by identity."""

    backend: str
    graph: Graph
    node_indices: tuple[int, ...]
    #: whether host kernels run the segment's nodes, beside ``backend``
    host_kernel: bool = False


@dataclass(frozen=True)
class Transfer:
    value: Value
    source: str
    target: str

    @property
    def nbytes(self) -> int:
        return self.value.type.nbytes if isinstance(self.value.type, TensorType) else 0


@dataclass(frozen=True)
class PartitionPlan:
    graph: Graph
    backends: tuple[str, ...]
    placements: tuple[Placement, ...]
    segments: tuple[Segment, ...]
    transfers: tuple[Transfer, ...]
    policy: FallbackPolicy
    #: composite nodes of the partitioned graph replaced by primitives the preferred backend
    #: runs (``graph`` holds the replacements)
    expansions: tuple[Expansion, ...] = ()

    @property
    def fallbacks(self) -> list[Placement]:
        return [p for p in self.placements if p.fallback_reason is not None]

    @property
    def transfer_bytes(self) -> int:
        return sum(t.nbytes for t in self.transfers)

    def explain(self) -> str:
        return explain_plan(self)


def place(graph: Graph, backends: Sequence[Backend], policy: FallbackPolicy,
          host_kernels: Optional[Mapping[str, "HostKernel"]] = None) -> list[Placement]:
    """Assign every top-level node of ``graph`` to a backend, or to a host kernel beside the
    preferred one, applying ``policy``."""
    if not backends:
        raise BackendError("no backend is available to run the graph")
    capabilities = [(b.name, b.capabilities()) for b in backends]
    preferred = backends[0].name
    host_kernels = host_kernels or {}
    placements = []
    for index, node in enumerate(graph.nodes):
        reasons: list[str] = []
        for name, caps in capabilities:
            reason = caps.reason_unsupported(node)
            if reason is None:
                placements.append(Placement(node, name, reasons[0] if reasons else None))
                break
            reasons.append(f"{name}: {reason}")
            kernel = host_kernels.get(node.op) if name == preferred else None
            if kernel is not None and kernel.reason_unsupported(node) is None:
                placements.append(Placement(node, name, host_kernel=kernel.owner))
                break
        else:
            types = ", ".join(str(v.type) for v in node.inputs) or "no inputs"
            raise BackendError(
                f"graph @{graph.name}, node {index} '{node.op}'{node.where()} ({types}) "
                f"cannot run on any backend: {'; '.join(reasons)}"
            )
    fallen = [p for p in placements if p.fallback_reason is not None]
    if fallen and policy != "allow":
        summary = "; ".join(
            f"'{p.node.op}'{p.node.where()} → {p.backend} ({p.fallback_reason})" for p in fallen[:8]
        ) + (f"; and {len(fallen) - 8} more" if len(fallen) > 8 else "")
        message = (f"backend '{preferred}' cannot run {len(fallen)} node(s) of graph "
                   f"@{graph.name}: {summary}")
        if policy == "deny":
            raise BackendError(f"{message}; fallback policy is 'deny'")
        warnings.warn(f"{message}. Set the fallback policy to 'allow' to silence this, or "
                      f"'deny' to make it an error", FallbackWarning, stacklevel=3)
    return placements


def _key(placement: Placement) -> tuple[str, bool]:
    """What a segment shares: the backend, and whether host kernels run beside it."""
    return placement.backend, placement.host_kernel is not None


def _segments(graph: Graph, placements: Sequence[Placement],
              ops: OpLookup[OpDef]) -> list[tuple[tuple[str, bool], list[int]]]:
    """Group node indices into runs on one backend (or host kernels beside it), reordering
    within the topological order so that a backend keeps running as long as it has ready
    nodes — after any ready :data:`SCHEDULE_EARLY` node, and preferring the nodes those need."""
    producer = {v: i for i, n in enumerate(graph.nodes) for v in n.outputs}
    deps = [{producer[v] for v in n.inputs if v in producer} for n in graph.nodes]
    users: list[list[int]] = [[] for _ in graph.nodes]
    for i, ds in enumerate(deps):
        for d in ds:
            users[d].append(i)
    early = [i for i, n in enumerate(graph.nodes) if ops.get(n.op).has_trait(SCHEDULE_EARLY)]
    urgency = [len(deps)] * len(deps)  # the first early node that needs each node
    for e in early:
        stack = [e]
        while stack:
            i = stack.pop()
            if urgency[i] == len(deps):
                urgency[i] = e
                stack.extend(deps[i])
    pending = [len(ds) for ds in deps]
    ready = sorted((i for i, p in enumerate(pending) if p == 0), key=lambda i: (urgency[i], i))
    runs: list[tuple[tuple[str, bool], list[int]]] = []
    while ready:
        current = runs[-1][0] if runs else _key(placements[ready[0]])
        pick = next((i for i in ready if urgency[i] == i), None)  # an early node needs itself
        if pick is None:
            pick = next((i for i in ready if _key(placements[i]) == current), ready[0])
        current = _key(placements[pick])
        if not runs or runs[-1][0] != current:
            runs.append((current, []))
        runs[-1][1].append(pick)
        ready.remove(pick)
        for u in users[pick]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
        ready.sort(key=lambda i: (urgency[i], i))
    return runs


def partition(graph: Graph, backends: Sequence[Backend], policy: FallbackPolicy = "warn",
              host_kernels: Optional[Mapping[str, "HostKernel"]] = None, *,
              registry: Optional[OpLookup[OpDef]] = None) -> PartitionPlan:
    """Expand the composites the preferred backend does not claim, place the nodes and cut
    the graph into per-backend segments.  ``host_kernels`` are the plugins' host kernels by op
    name (:func:`~mskernel.runtime.host_kernels.host_kernels`); ``registry`` holds the ops'
    decompositions (the process's op registry by default)."""
    expansions: tuple[Expansion, ...] = ()
    ops = or_default_ops(registry)
    if backends:
        expanded = expand_composites(graph, backends[0].capabilities(), ops)
        graph, expansions = expanded.graph, expanded.expansions
    placements = place(graph, backends, policy, host_kernels)
    runs = _segments(graph, placements, ops)
    names = tuple(b.name for b in backends)
    if len({key for key, _ in runs}) <= 1:  # one backend: the graph is the segment
        backend, on_host = runs[0][0] if runs else (names[0], False)
        whole = Segment(backend, graph, tuple(range(len(graph.nodes))), on_host)
        return PartitionPlan(graph, names, tuple(placements), (whole,), (), policy, expansions)
    host_memory = {b.name: b.host_memory for b in backends}

    def memory(key: tuple[str, bool]) -> str:
        backend, on_host = key
        return HOST if on_host and not host_memory[backend] else backend

    defined_in: dict[Value, int] = {}
    for s, (_, indices) in enumerate(runs):
        for i in indices:
            for v in graph.nodes[i].outputs:
                defined_in[v] = s
    used_after: dict[int, set[Value]] = {s: set() for s in range(len(runs))}
    segment_inputs: list[list[Value]] = []
    for s, (_, indices) in enumerate(runs):
        inputs: list[Value] = []
        for i in indices:
            for v in graph.nodes[i].inputs:
                if defined_in.get(v) != s and v not in inputs:
                    inputs.append(v)
                    if v in defined_in:
                        used_after[defined_in[v]].add(v)
        segment_inputs.append(inputs)
    for v in graph.outputs:
        if v in defined_in:
            used_after[defined_in[v]].add(v)
    segments = []
    transfers = []
    for s, (key, indices) in enumerate(runs):
        backend, on_host = key
        nodes = [graph.nodes[i] for i in indices]
        outputs = [v for n in nodes for v in n.outputs if v in used_after[s]]
        name = f"{graph.name}.{s}.{backend}{'.host' if on_host else ''}"
        segment = Graph(tuple(segment_inputs[s]), tuple(nodes), tuple(outputs), name)
        segments.append(Segment(backend, segment, tuple(indices), on_host))
        for v in segment_inputs[s]:
            if v in defined_in:
                source, target = memory(runs[defined_in[v]][0]), memory(key)
                if source != target:
                    transfers.append(Transfer(v, source, target))
    return PartitionPlan(graph, names, tuple(placements), tuple(segments), tuple(transfers),
                         policy, expansions)
