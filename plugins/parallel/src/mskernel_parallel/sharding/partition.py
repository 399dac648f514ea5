"""The partition: one rank's graph from the whole graph and its propagated strategies.

Every value of the whole graph becomes its block on this rank; every op runs on blocks (with
the attributes its rule gives for blocks); where the layout a value is produced with differs
from the one its consumer wants, the redistribution's collectives are inserted
(:mod:`.redistribute`).  The rank's graph takes each input's block, then the state token, and
returns the outputs — whole on every rank unless ``outputs="sharded"`` — then the token.  It
is an ordinary graph of core ops and collective ops: any backend runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from mskernel_sdk import Graph, GraphBuilder, InferError, TensorType, Value

from .. import ops
from ..errors import ShardingError
from .constraint import CONSTRAINT
from .layout import Mesh, TensorLayout
from .propagate import Propagation
from .redistribute import Emitter, Step


@dataclass
class Partition:
    """One rank's graph and what it was made from."""

    graph: Graph
    propagation: Propagation
    rank: int
    output_layouts: list[TensorLayout]
    #: every redistribution step inserted, with the bytes of its operand on this rank
    steps: list[tuple[Step, int]] = field(default_factory=list)

    @property
    def mesh(self) -> Mesh:
        return self.propagation.mesh

    @property
    def input_layouts(self) -> list[TensorLayout]:
        return self.propagation.input_layouts


def _local_type(v: Value, layout: TensorLayout) -> TensorType:
    return v.type.with_shape(layout.local_shape(v.type.shape))


def partition(propagation: Propagation, rank: int, outputs: str = "replicated") -> Partition:
    """Rank ``rank``'s graph; ``outputs``: ``"replicated"`` (every output whole on every
    rank) or ``"sharded"`` (as produced, partial values reduced)."""
    graph, mesh = propagation.graph, propagation.mesh
    if outputs not in ("replicated", "sharded"):
        raise ShardingError(f"outputs must be 'replicated' or 'sharded', got {outputs!r}")
    b = GraphBuilder(f"{graph.name}.rank{rank}")
    env: dict[int, tuple[Value, TensorLayout]] = {}
    for v, layout in zip(graph.inputs, propagation.input_layouts):
        if not isinstance(v.type, TensorType):
            raise ShardingError(f"graph input {v} is not a tensor; shard a function of "
                                "tensors (parameters as inputs)")
        env[v.uid] = (b.input(_local_type(v, layout), v.name), layout)
    emit = Emitter(b, b.input(ops.TOKEN, "token"), mesh, rank)

    moved: dict[tuple[int, TensorLayout], Value] = {}  # each redistribution made once

    def operand(v: Value, want: TensorLayout) -> Value:
        local, have = env[v.uid]
        if have == want:
            return local
        if (v.uid, want) not in moved:
            moved[v.uid, want] = emit(local, have, want)
        return moved[v.uid, want]

    for index, node in enumerate(graph.nodes):
        where = f" at {node.loc}" if node.loc else ""
        if index in propagation.constraints:
            want = propagation.constraints[index]
            env[node.outputs[0].uid] = (operand(node.inputs[0], want), want)
            continue
        strategy = propagation.strategies[index]
        args = [operand(v, strategy.input_layout(i, mesh)) for i, v in enumerate(node.inputs)]
        attrs: dict[str, Any] = dict(node.attrs)
        if strategy.assignment and strategy.sharding.local_attrs is not None:
            attrs = strategy.sharding.local_attrs(attrs, strategy.splits(mesh))
        try:
            results = b.op(node.op, *args, regions=node.regions, loc=node.loc, **attrs)
        except InferError as exc:
            raise ShardingError(
                f"op '{node.op}'{where} on this rank's blocks "
                f"{[str(a.type) for a in args]} (strategy {strategy.assignment}): {exc}") from exc
        results = results if isinstance(results, tuple) else (results,)
        for j, (v, local) in enumerate(zip(node.outputs, results)):
            env[v.uid] = (local, strategy.output_layout(j, mesh))
    out_values, out_layouts = [], []
    for v in graph.outputs:
        _, have = env[v.uid]
        want = (TensorLayout.replicated(mesh, len(v.type.shape)) if outputs == "replicated"
                else have.without_partial())
        out_values.append(operand(v, want))
        out_layouts.append(want)
    local = b.build([*out_values, emit.token])
    return Partition(local, propagation, rank, out_layouts, emit.steps)


def shard_inputs(part: Partition, arrays: Sequence[Any]) -> list[Any]:
    """This rank's blocks of the whole ``arrays`` (one per graph input)."""
    if len(arrays) != len(part.input_layouts):
        raise ShardingError(f"{len(arrays)} arrays for {len(part.input_layouts)} inputs")
    return [layout.shard(a, part.rank) for a, layout in zip(arrays, part.input_layouts)]


def describe(part: Partition) -> str:
    """Every op's strategy and the collectives inserted, as text."""
    lines = [f"mesh {dict(zip(part.mesh.names, part.mesh.shape))}, rank {part.rank}"]
    for index, node in enumerate(part.propagation.graph.nodes):
        if index in part.propagation.constraints:
            continue
        strategy = part.propagation.strategies[index]
        shown = ", ".join(f"{c}:{'+'.join(a)}" for c, a in strategy.assignment.items())
        lines.append(f"  {node.op:<16} {shown or 'replicated'}")
    for step, nbytes in part.steps:
        lines.append(f"  + {step.kind} over {step.axis} ({nbytes} bytes in)")
    return "\n".join(lines)


