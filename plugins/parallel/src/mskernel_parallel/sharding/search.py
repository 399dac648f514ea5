"""The strategy search: ``AutoParallel(net, *inputs, parallel_mode=..., device_num=...)``.

- ``"semi_auto"`` and ``"sharding_propagation"``: the user's strategies (``mskernel.shard``,
  ``Cell.shard``), propagated to every other op (:mod:`.propagate`);
- ``"recursive_programming"``: a search.  The *key* ops (matmuls, einsums, convolutions) each
  get a strategy — which letter each mesh axis splits, if any — chosen by coordinate descent:
  every key op in turn tries each of its strategies with the others held (those not chosen
  yet take what propagation gives them from the chosen ones), and keeps the one
  whose propagated plan the cost model (:mod:`.cost`) predicts fastest within the memory
  limit; sweeps repeat until none improves.  Every 2-D mesh ``(dp, mp)`` of ``device_num``
  ranks, ``mp`` a power of two, is screened by one sweep, the best two searched on; a stack
  of identical layers is searched on its first two (:func:`search`).

Inputs may be arrays or :class:`TensorType` (a model too large to build: only its types are
traced; ``parameters=k`` says its last ``k`` inputs are the parameters).  The plan is
costed as a training step.  :meth:`AutoParallel.describe` prints the plan: every op's strategy, the collectives
inserted, the predicted time, communication and parameter memory per device.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

from mskernel_sdk import Graph, Tensor, TensorType, tensor_type, trace_function

from ..errors import ShardingError
from .cost import Cost, Device, cost
from .layout import Mesh
from .program import default_mesh, mesh_of
from .propagate import Assignment, Propagation, op_sharding, propagate

MODES = ("semi_auto", "sharding_propagation", "recursive_programming")
KEY_OPS = ("matmul", "einsum", "conv")


def _type(x: Any) -> TensorType:
    if isinstance(x, TensorType):
        return x
    import numpy as np

    array = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
    return tensor_type(array.dtype, array.shape)


def candidates(graph: Graph, index: int, mesh: Mesh) -> list[Assignment]:
    """Every strategy of node ``index``: each mesh axis (of more than one rank) splits one of
    its letters that it divides, or none."""
    node = graph.nodes[index]
    sharding = op_sharding(node)
    shapes: dict[str, list[int]] = {}
    tensors = [v for v in node.inputs if isinstance(v.type, TensorType)]
    for letters, v in zip(sharding.inputs, tensors):
        for c, n in zip(letters, v.type.shape):
            if c is not None:
                shapes.setdefault(c, []).append(n)
    letters = [c for c in shapes if sharding.splittable(c)]
    axes = [a for a, s in zip(mesh.names, mesh.shape) if s > 1]
    out = []
    for choice in itertools.product([None, *letters], repeat=len(axes)):
        assignment: dict[str, tuple[str, ...]] = {}
        for axis, c in zip(axes, choice):
            if c is not None:
                assignment[c] = assignment.get(c, ()) + (axis,)
        if all(n % mesh.axes_size(a) == 0 for c, a in assignment.items() for n in shapes[c]):
            out.append(assignment)
    return out


def evaluate(graph: Graph, mesh: Mesh, fixed: dict[int, Assignment], parameters: int,
             device: Device) -> tuple[float, Propagation, Cost]:
    prop = propagate(graph, mesh, fixed=fixed)
    c = cost(prop, device, parameters)
    return (c.time_s if c.fits(device) else float("inf")), prop, c


def _signature(graph: Graph, index: int) -> tuple[Any, ...]:
    node = graph.nodes[index]
    return (node.op, tuple(tuple(v.type.shape) for v in node.inputs
                           if isinstance(v.type, TensorType)))


def period(graph: Graph, keys: Sequence[int]) -> int:
    """The smallest number of key ops after which their sequence repeats (the ops of one
    layer of a stack of identical layers), or their number."""
    sigs = [_signature(graph, i) for i in keys]
    for p in range(1, len(sigs) // 2 + 1):
        if len(sigs) % p == 0 and all(sigs[i] == sigs[i + p] for i in range(len(sigs) - p)):
            return p
    return len(sigs)


def prefix(graph: Graph, cut: int, parameters: int) -> tuple[Graph, int]:
    """The graph of the nodes before ``cut`` (its inputs those they use, parameters last; its
    outputs the values later nodes or the graph use), and its number of parameters."""
    nodes = graph.nodes[:cut]
    defined = {v.uid for n in nodes for v in n.outputs}
    used = {v.uid for n in nodes for v in n.inputs}
    later = {v.uid for n in graph.nodes[cut:] for v in n.inputs} | {v.uid for v in graph.outputs}
    first_param = len(graph.inputs) - parameters
    data = [v for v in graph.inputs[:first_param] if v.uid in used]
    params = [v for v in graph.inputs[first_param:] if v.uid in used]
    outputs = [v for n in nodes for v in n.outputs if v.uid in later and v.uid in defined
               and isinstance(v.type, TensorType)]
    return Graph(tuple(data + params), tuple(nodes), tuple(outputs), f"{graph.name}.prefix"), \
        len(params)


Found = tuple[float, Propagation, Cost, dict[int, Assignment]]


#: pair moves are tried when adjacent groups have at most this many joint strategies in all
PAIR_BUDGET = 2000


def _descend(graph: Graph, mesh: Mesh, groups: list[list[int]], parameters: int,
             device: Device, sweeps: int, start: Optional[dict[int, Assignment]] = None) -> Found:
    """Coordinate descent over the groups' strategies.  A move sets one group's strategy (or,
    when few enough, two adjacent groups' at once) and is tried three ways: with the other
    groups held, with its neighbouring groups released to follow it by propagation, and with
    every other group released — so a move can carry its neighbours out of a plan that only a
    joint change improves."""
    options = [candidates(graph, g[0], mesh) for g in groups]
    fixed = dict(start or {})  # ops not fixed yet follow their neighbours' strategies
    best = evaluate(graph, mesh, fixed, parameters, device)
    moves: list[tuple[list[int], list[Assignment]]] = [(g, o) for g, o in zip(groups, options)]
    pairs = sum(len(a) * len(b) for a, b in zip(options, options[1:]))
    if pairs <= PAIR_BUDGET:
        for g in range(len(groups) - 1):
            joint = [list(p) for p in itertools.product(options[g], options[g + 1])]
            moves.append((groups[g] + groups[g + 1], joint))  # type: ignore[arg-type]
    for _ in range(sweeps):
        improved = False
        for members, choices in moves:
            near = {i for g, group in enumerate(groups) if set(group) & set(members)
                    for h in (g - 1, g + 1) if 0 <= h < len(groups) for i in groups[h]}
            near -= set(members)
            for option in choices:
                alone = _assign(members, option, groups)
                held = {**fixed, **alone}
                released = {i: a for i, a in held.items() if i not in near}
                variants: list[dict[int, Assignment]] = []
                for variant in (held, released, alone):
                    if variant != fixed and variant not in variants:
                        variants.append(variant)
                for trial_fixed in variants:
                    trial = evaluate(graph, mesh, trial_fixed, parameters, device)
                    if trial[0] < best[0] * (1 - 1e-9):
                        best, improved = trial, True
                        fixed = {i: trial[1].strategies[i].assignment
                                 for i in {*trial_fixed, *fixed}}
        if not improved:
            break
    return (*best, fixed)


def _assign(members: list[int], option: Any, groups: list[list[int]]) -> dict[int, Assignment]:
    """A move's strategies per node: one strategy for a group's members, or one per group for
    a pair."""
    if isinstance(option, dict):
        return {i: option for i in members}
    out: dict[int, Assignment] = {}
    pair = [g for g in groups if set(g) <= set(members)]
    for group, strategy in zip(pair, option):
        out.update({i: strategy for i in group})
    return out


def search(graph: Graph, meshes: Sequence[Mesh], parameters: int, device: Device,
           sweeps: int = 3, finalists: int = 2) -> Found:
    """The searched plan: its predicted time, propagation, cost and the key ops' strategies.

    Each mesh is screened by one sweep; the ``finalists`` best continue to ``sweeps``.  A
    stack of identical layers (the key ops' shapes repeat with some period) is searched on
    its first two layers, the ops at the same place of each layer sharing a strategy, and the
    result is applied to every layer."""
    keys = [i for i, n in enumerate(graph.nodes) if n.op in KEY_OPS]
    p = period(graph, keys)
    stacked = len(keys) // p >= 3
    if stacked:
        small, small_params = prefix(graph, keys[2 * p], parameters)
        groups = [[keys[j], keys[j + p]] for j in range(p)]
    else:
        small, small_params, groups = graph, parameters, [[i] for i in keys]
    screened = sorted(((_descend(small, m, groups, small_params, device, 1), m) for m in meshes),
                      key=lambda found: found[0][0])
    finals = [(_descend(small, m, groups, small_params, device, sweeps, found[3]), m)
              for found, m in screened[:finalists]] if sweeps > 1 else screened
    best, mesh = min(finals, key=lambda found: found[0][0])
    if not stacked:
        return best
    chosen = best[3]
    fixed = {k: chosen[keys[j % p]] for j, k in enumerate(keys) if keys[j % p] in chosen}
    return (*evaluate(graph, mesh, fixed, parameters, device), fixed)


def exhaustive(graph: Graph, mesh: Mesh, parameters: int = 0,
               device: Device = Device()) -> tuple[float, Propagation, Cost]:
    """The cheapest plan over every combination of the key ops' strategies (small graphs)."""
    keys = [i for i, n in enumerate(graph.nodes) if n.op in KEY_OPS]
    best: Optional[tuple[float, Propagation, Cost]] = None
    for combo in itertools.product(*(candidates(graph, i, mesh) for i in keys)):
        trial = evaluate(graph, mesh, dict(zip(keys, combo)), parameters, device)
        if best is None or trial[0] < best[0]:
            best = trial
    assert best is not None
    return best


def meshes(device_num: int) -> list[Mesh]:
    """Every ``(dp, mp)`` mesh of ``device_num`` ranks with ``mp`` a power of two."""
    out, mp = [], 1
    while mp <= device_num:
        if device_num % mp == 0:
            out.append(Mesh((device_num // mp, mp), ("dp", "mp")))
        mp *= 2
    return out


class AutoParallel:
    """A plan for ``net`` (a function or cell) on ``inputs``; see the module doc."""

    def __init__(self, net: Any, *inputs: Any, parallel_mode: str = "sharding_propagation",
                 device_num: Optional[int] = None, mesh: Optional[Mesh] = None,
                 device: Device = Device(), parameters: Optional[int] = None) -> None:
        if parallel_mode not in MODES:
            raise ShardingError(f"parallel_mode must be one of {', '.join(MODES)}, got "
                                f"{parallel_mode!r}")
        name = getattr(net, "__name__", type(net).__name__)
        self.graph, _, captured = trace_function(net, [_type(x) for x in inputs], name,
                                                 capture_concrete=True)
        self.parameters = len(captured) if parameters is None else parameters
        self.mode, self.device = parallel_mode, device
        if parallel_mode == "recursive_programming":
            if device_num is None and mesh is None:
                raise ShardingError("recursive_programming needs device_num (or a mesh)")
            tried = [mesh] if mesh is not None else meshes(int(device_num))  # type: ignore[arg-type]
            _, self.propagation, self.cost, self.strategies = search(
                self.graph, tried, self.parameters, device)
        else:
            chosen = mesh or mesh_of(self.graph) or default_mesh(int(device_num or 1))
            self.propagation = propagate(self.graph, chosen)
            self.cost = cost(self.propagation, device, self.parameters)
            self.strategies = {}

    @property
    def mesh(self) -> Mesh:
        return self.propagation.mesh

    def describe(self) -> str:
        """The plan as text."""
        mesh, c = self.mesh, self.cost
        lines = [f"AutoParallel ({self.mode}) on mesh "
                 f"{dict(zip(mesh.names, mesh.shape))}:"]
        for index, node in enumerate(self.graph.nodes):
            if index in self.propagation.constraints:
                continue
            strategy = self.propagation.strategies[index]
            if node.op in KEY_OPS or strategy.assignment:
                shown = ", ".join(f"{k}:{'+'.join(a)}" for k, a in strategy.assignment.items())
                lines.append(f"  {node.op:<12} {shown or 'replicated'}"
                             + (f"  ({node.loc})" if node.loc else ""))
        for op, step, sent in c.collectives:
            lines.append(f"  + {step.kind} over {step.axis} before {op}: {sent / 1e6:.2f} MB")
        lines.append(f"  predicted per device: {c.time_s * 1e3:.3f} ms (compute "
                     f"{c.compute_s * 1e3:.3f} ms, communication {c.comm_s * 1e3:.3f} ms, "
                     f"{c.comm_bytes / 1e6:.2f} MB), parameters {c.param_bytes / 1e6:.1f} MB")
        return "\n".join(lines)


def plan_cost(graph: Graph, mesh: Mesh, fixed: dict[int, Assignment], parameters: int = 0,
              device: Device = Device()) -> Cost:
    """The predicted cost of the plan ``fixed`` (node index → strategy) propagated."""
    return evaluate(graph, mesh, fixed, parameters, device)[2]


__all__ = ["AutoParallel", "exhaustive", "plan_cost"]
