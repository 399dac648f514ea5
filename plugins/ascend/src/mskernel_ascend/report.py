"""``precision_report``: how far a network computed with Ascend's numerics is from float32,
layer by layer, and where float16 overflowed or underflowed.

The network is traced at the inputs in inference mode (as ``mskernel.export`` traces it).
A *layer* is a run of consecutive ops from one line of the user's code (``x =
self.pool(self.relu(self.conv1(x)))`` is one layer); its result is the last op's.  Each
layer's result is computed twice: by the reference interpreter in float32, and by the
``ascend-emulate`` executable of the graph lowered under the precision mode.  The report
gives per layer the relative error ``||emulated - float32|| / ||float32||`` (2-norms), the
largest absolute error, and how many values rounded to float16 on that line saturated
(overflow) or became zero (underflow).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

import numpy as np
from mskernel_sdk import CompileOptions, Graph, Node, TensorType, run_reference, tree_flatten

from .numerics import recording
from .precision import get_precision_mode


@dataclass(frozen=True)
class LayerPrecision:
    """One layer of the report; ``where`` is the user's ``file:line``."""

    where: str
    ops: tuple[str, ...]
    shape: tuple[int, ...]
    relative_error: float
    max_abs_error: float
    overflow: int
    underflow: int
    rounded: int


@dataclass(frozen=True)
class PrecisionReport:
    network: str
    precision_mode: str
    layers: tuple[LayerPrecision, ...]

    def __str__(self) -> str:
        head = (f"Ascend precision report: {self.network}, precision mode {self.precision_mode} "
                f"(ascend-emulate against float32)")
        rows = [("layer", "ops", "shape", "rel. error", "max abs err", "overflow", "underflow")]
        for layer in self.layers:
            rows.append((layer.where, ", ".join(layer.ops),
                         "[" + ",".join(map(str, layer.shape)) + "]",
                         f"{layer.relative_error:.2e}", f"{layer.max_abs_error:.2e}",
                         _count(layer.overflow, layer.rounded),
                         _count(layer.underflow, layer.rounded)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join([head, *lines])


def _count(events: int, rounded: int) -> str:
    return f"{events} ({100 * events / rounded:.2g}%)" if events and rounded else str(events)


def _where(node: Node) -> str:
    return f"{Path(node.loc.file).name}:{node.loc.line}" if node.loc else "<no source line>"


def layers_of(graph: Graph) -> list[list[Node]]:
    """Runs of consecutive nodes with one source line whose last node has a float result."""
    runs: list[list[Node]] = []
    for node in graph.nodes:
        if runs and runs[-1][-1].loc == node.loc:
            runs[-1].append(node)
        else:
            runs.append([node])
    return [run for run in runs if isinstance(run[-1].outputs[0].type, TensorType)
            and run[-1].outputs[0].type.dtype.is_floating and run[-1].op != "constant"]


def precision_report(net: Any, inputs: Sequence[Any], precision_mode: Optional[str] = None,
                     file: Optional[TextIO] = sys.stdout) -> PrecisionReport:
    """Compare ``net`` at ``inputs`` under Ascend's numerics with float32, per layer (see the
    module doc); print the table to ``file`` (``None``: do not print) and return it."""
    from mskernel_onnx.capture import capture

    from .emulator import EmulateBackend, EmulatedExecutable

    mode = precision_mode or get_precision_mode()
    captured = capture(net, list(inputs))
    graph = captured.graph
    leaves = tree_flatten(list(inputs), lambda x: hasattr(x, "shape"))[0]
    arrays = [np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x) for x in leaves]
    arrays += [captured.weights[v.name] for v in graph.inputs[len(arrays):]]
    layers = layers_of(graph)
    probes = tuple(run[-1].outputs[0] for run in layers)
    probed = Graph(graph.inputs, graph.nodes, probes, graph.name)
    exact = run_reference(probed, arrays)
    executable = EmulatedExecutable(EmulateBackend(), probed, CompileOptions(), mode)
    with recording() as events:
        emulated = executable.run_host(arrays)
    rows = []
    for run, ref, emu in zip(layers, exact, emulated):
        ref64, emu64 = np.asarray(ref, np.float64), np.asarray(emu, np.float64)
        norm = float(np.linalg.norm(ref64))
        error = float(np.linalg.norm(emu64 - ref64))
        where = str(run[-1].loc) if run[-1].loc else "<no source line>"
        rows.append(LayerPrecision(
            _where(run[-1]), tuple(dict.fromkeys(n.op for n in run)), ref64.shape,
            error / norm if norm else error, float(np.max(np.abs(emu64 - ref64), initial=0.0)),
            events.overflow[where], events.underflow[where], events.rounded[where]))
    report = PrecisionReport(graph.name, mode, tuple(rows))
    if file is not None:
        print(report, file=file)
    return report
