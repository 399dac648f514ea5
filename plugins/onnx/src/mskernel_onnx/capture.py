"""A network as a graph and its weights: what :func:`mskernel.export` writes.

:func:`capture` traces a ``Cell`` (its ``construct``), a jitted function or a plain function
at the given inputs, with every cell it can find in inference mode for the trace (their
training flags are restored afterwards).  The traced program reads parameters through
``!ref`` inputs ordered by a state token; capturing turns each parameter it reads into a
plain tensor input named after the parameter (its Cell path, ``"fc1.weight"``) and its value
into a weight, so the graph is a pure function of the call's tensors and the weights.  A
program that assigns a parameter (a training step, batch norm in training mode) cannot be
exported and says so.  The runtime checks of graph-mode code (a ``raise`` under a traced
condition, an ``assert`` on a traced value: bool flags beside the program's result) have no
equivalent in a model file; they are left out with a :class:`DroppedCheckWarning` naming
each statement, and the graph computes the result alone.  The generic passes that keep
the network's ops as written (simplify, fold, CSE, DCE: the pipeline ``onnx.export``) run on
the result.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

import mskernel
from mskernel_sdk import (
    CompileOptions, Graph, MskernelError, Node, TokenType, Value, run_pipeline, tree_flatten,
)

from .plugin import EXPORT_PIPELINE


class DroppedCheckWarning(UserWarning):
    """An exported graph leaves out a runtime check (``raise``/``assert``) of the network."""


@dataclass(frozen=True)
class Captured:
    """``graph``'s inputs are the call's tensors, then one per weight (named like it);
    ``weights`` maps those names to arrays in reference storage and ``weight_dtypes`` gives
    each weight's IR dtype name."""

    graph: Graph
    weights: dict[str, np.ndarray]
    weight_dtypes: dict[str, str]


def capture(net: Any, inputs: Sequence[Any]) -> Captured:
    """Trace ``net`` at ``inputs`` in inference mode and freeze its parameters (see the
    module doc).  ``inputs`` are tensors or arrays, possibly nested in tuples/lists/dicts."""
    leaves = tree_flatten(list(inputs), _is_input)[0]
    if not leaves:
        raise MskernelError("export needs example inputs: export(net, *inputs, file_name=...) "
                            "traces the network at them")
    jitted = net if hasattr(net, "lower") else mskernel.jit(net)
    cells = list(_cells_of(net))
    modes = [(cell, cell.training) for top in cells for _, cell in top.cells_and_names()]
    try:
        for cell in cells:
            cell.set_train(False)
        program = jitted.lower(*inputs).program
    finally:
        for cell, training in modes:
            cell.training = training
    names = _input_names(net, len(inputs), program.num_inputs)
    order = [name for cell in cells for name, _ in cell.parameters_and_names()]
    name = _graph_name(net)
    graph, weights, dtypes = _freeze(program, names, order, name)
    optimized = run_pipeline(EXPORT_PIPELINE[0], graph, CompileOptions(opt_level=2)).graph
    named = Graph(optimized.inputs, optimized.nodes, optimized.outputs, name)
    return Captured(named, weights, dtypes)


def _graph_name(net: Any) -> str:
    """A cell's class name, else the function's name."""
    if hasattr(net, "cells_and_names"):
        return type(net).__name__
    target = getattr(net, "python_function", net)
    return str(getattr(target, "__name__", type(net).__name__))


def _is_input(x: Any) -> bool:
    return isinstance(x, (mskernel.Tensor, np.ndarray, np.generic))


def _cells_of(net: Any) -> Iterator[Any]:
    """The cells whose training flags a trace of ``net`` reads that can be found from it:
    ``net`` itself, the object a jitted or bound method belongs to, and the cells a
    function closes over."""
    seen: set[int] = set()
    pending = [net]
    while pending:
        obj = pending.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if hasattr(obj, "set_train") and hasattr(obj, "cells_and_names"):
            yield obj
            continue
        inner = getattr(obj, "python_function", None)
        if inner is not None:
            pending.append(inner)
        owner = getattr(obj, "__self__", None)
        if owner is not None:
            pending.append(owner)
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                pending.append(cell.cell_contents)
            except ValueError:  # an empty closure cell
                pass


def _input_names(net: Any, given: int, count: int) -> list[str]:
    """The names of the traced function's first parameters when the ``given`` arguments are
    its ``count`` tensor inputs (none nested in a container); ``input_<i>`` otherwise."""
    target = getattr(net, "python_function", None) or getattr(net, "construct", None) or net
    try:
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if given == count and len(params) >= count:
        return [p.name for p in params[:count]]
    return [f"input_{i}" for i in range(count)]


def _freeze(program: Any, names: list[str], order: list[str], net_name: str
            ) -> tuple[Graph, dict[str, np.ndarray], dict[str, str]]:
    """The program as a pure graph: its inputs, then one per parameter it reads (in
    ``order``, the cells' parameter order, where a name is in it); its outputs, the result
    without the runtime checks of ``net_name``."""
    graph: Graph = program.graph
    taken = set(names)
    inputs = [Value(v.type, name) for v, name in zip(graph.inputs, names)]
    env: dict[Value, Value] = dict(zip(graph.inputs, inputs))
    weights: dict[str, np.ndarray] = {}
    dtypes: dict[str, str] = {}
    params = iter(program.params)
    for value in graph.inputs[program.num_inputs:]:
        if isinstance(value.type, TokenType):
            continue
        param = next(params)
        name = _unique(param.name or "param", taken)
        weight = Value(value.type.value, name)
        inputs.append(weight)
        env[value] = weight
        weights[name] = np.asarray(param.numpy())
        dtypes[name] = param.dtype.name
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.op == "ref_load":
            env[node.outputs[0]] = env[node.inputs[0]]
            continue
        if node.op == "ref_store":
            raise MskernelError(
                f"export: the network assigns parameter '{env[node.inputs[0]].name}'"
                f"{node.where()} while running; an exported graph computes its outputs from "
                "its inputs and weights only (put the network in inference mode, and export "
                "the network rather than a training step)")
        nodes.append(Node(node.op, tuple(env.get(v, v) for v in node.inputs), node.outputs,
                          node.attrs, node.regions, node.loc))
    results = len(graph.outputs) - len(program.checks) - program.has_state
    outputs = [env.get(v, v) for v in graph.outputs[:results]]
    for check in program.checks:
        warnings.warn(
            f"export: {net_name} is exported without its runtime check at {check.where} "
            f"({type(check.error).__name__}: {check.error}); a model file has no way to raise "
            "it, so the exported model computes its result without checking",
            DroppedCheckWarning, stacklevel=4)
    used = {v for n in nodes for v in n.inputs} | set(outputs)
    rank = {name: i for i, name in reversed(list(enumerate(order)))}
    kept = sorted((v for v in inputs[len(names):] if v in used),
                  key=lambda v: rank.get(v.name, len(rank)))
    for v in inputs[len(names):]:
        if v not in used:
            del weights[v.name], dtypes[v.name]
    return Graph(tuple(inputs[:len(names)] + kept), tuple(nodes), tuple(outputs),
                 graph.name), weights, dtypes


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    taken.add(candidate)
    return candidate

