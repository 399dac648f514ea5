"""Placing nodes on backends: capability query, fallback policy, segments and transfers.

Each node goes to the first backend in preference order whose capabilities cover it (its op,
dtypes, ranks and, for region ops, every node of its regions).  A node that the *preferred*
backend (the first one) cannot run has fallen back; the policy decides whether that is allowed
silently, with a warning, or refused.  Nodes are then grouped into segments — maximal runs on
one backend, found by a topological order that stays on the current backend as long as it can
— and every tensor that crosses from one segment to another is a transfer, counted in bytes.
The plan is data: :meth:`PartitionPlan.explain` prints it before anything runs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional, Sequence

from ..errors import BackendError
from ..ir.graph import Graph, Node, Value
from ..ir.types import TensorType
from .backend import Backend, FallbackPolicy
from .report import explain_plan


class FallbackWarning(UserWarning):
    """Some nodes run on another backend than the preferred one."""


@dataclass(frozen=True)
class Placement:
    node: Node
    backend: str
    #: why the preferred backend did not take the node (None when it did)
    fallback_reason: Optional[str] = None


@dataclass(frozen=True)
class Segment:
    """A closed sub-graph run by one backend.  ``graph.inputs``/``graph.outputs`` are values of
    the partitioned graph, so segments exchange values by identity."""

    backend: str
    graph: Graph
    node_indices: tuple[int, ...]


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

    @property
    def fallbacks(self) -> list[Placement]:
        return [p for p in self.placements if p.fallback_reason is not None]

    @property
    def transfer_bytes(self) -> int:
        return sum(t.nbytes for t in self.transfers)

    def explain(self) -> str:
        return explain_plan(self)


def place(graph: Graph, backends: Sequence[Backend], policy: FallbackPolicy) -> list[Placement]:
    """Assign every top-level node of ``graph`` to a backend, applying ``policy``."""
    if not backends:
        raise BackendError("no backend is available to run the graph")
    capabilities = [(b.name, b.capabilities()) for b in backends]
    preferred = backends[0].name
    placements = []
    for index, node in enumerate(graph.nodes):
        reasons = []
        for name, caps in capabilities:
            reason = caps.reason_unsupported(node)
            if reason is None:
                placements.append(Placement(node, name, reasons[0] if reasons else None))
                break
            reasons.append(f"{name}: {reason}")
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


def _segments(graph: Graph, placements: Sequence[Placement]) -> list[tuple[str, list[int]]]:
    """Group node indices into runs on one backend, reordering within the topological order
    so that a backend keeps running as long as it has ready nodes."""
    producer = {v: i for i, n in enumerate(graph.nodes) for v in n.outputs}
    deps = [{producer[v] for v in n.inputs if v in producer} for n in graph.nodes]
    users: list[list[int]] = [[] for _ in graph.nodes]
    for i, ds in enumerate(deps):
        for d in ds:
            users[d].append(i)
    pending = [len(ds) for ds in deps]
    ready = [i for i, p in enumerate(pending) if p == 0]
    runs: list[tuple[str, list[int]]] = []
    while ready:
        current = runs[-1][0] if runs else placements[ready[0]].backend
        pick = next((i for i in ready if placements[i].backend == current), None)
        if pick is None:
            pick = ready[0]
            current = placements[pick].backend
        if not runs or runs[-1][0] != current:
            runs.append((current, []))
        runs[-1][1].append(pick)
        ready.remove(pick)
        for u in users[pick]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
        ready.sort()
    return runs


def partition(graph: Graph, backends: Sequence[Backend], policy: FallbackPolicy = "warn") -> PartitionPlan:
    """Place ``graph``'s nodes and cut it into per-backend segments."""
    placements = place(graph, backends, policy)
    runs = _segments(graph, placements)
    names = tuple(b.name for b in backends)
    if len({backend for backend, _ in runs}) <= 1:  # one backend: the graph is the segment
        backend = runs[0][0] if runs else names[0]
        whole = Segment(backend, graph, tuple(range(len(graph.nodes))))
        return PartitionPlan(graph, names, tuple(placements), (whole,), (), policy)
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
    for s, (backend, indices) in enumerate(runs):
        nodes = [graph.nodes[i] for i in indices]
        outputs = [v for n in nodes for v in n.outputs if v in used_after[s]]
        name = graph.name if len(runs) == 1 else f"{graph.name}.{s}.{backend}"
        segments.append(Segment(backend, Graph(segment_inputs[s], nodes, outputs, name), tuple(indices)))
        for v in segment_inputs[s]:
            source = runs[defined_in[v]][0] if v in defined_in else None
            if source is not None and source != backend:
                transfers.append(Transfer(v, source, backend))
    return PartitionPlan(graph, names, tuple(placements), tuple(segments), tuple(transfers), policy)
