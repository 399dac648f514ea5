"""Batch-norm folding for inference: the ``cpu.fold_batch_norm`` pass.

``batch_norm(y, scale, bias, mean, var, training=False)`` computes
``(y - mean) * g + bias`` per channel with ``g = scale / sqrt(var + eps)``.  When ``y`` is
linear in a weight whose output channels are the batch norm's channels, the scaling moves
into the weight and the rest becomes one bias add:

- ``y = conv(x, w)`` (channels on axis 1, ``w [C_out, ...]``):
  ``conv(x, w * g[:, None, ...]) + (bias - mean * g)[:, None, ...]``;
- ``y = matmul(a, w)`` with ``w [K, C]`` and ``y [N, C]``:
  ``matmul(a, w * g) + (bias - mean * g)``;
- ``y = matmul(a, w) + b`` with ``b [C]``: as above with ``(b - mean) * g + bias``.

The new weight and bias are computed in the graph from the batch norm's operands, so the
rewrite holds when they are graph inputs; when they are constants the ``fold`` pass that
follows in the ``cpu.O2`` pipeline makes them constants.  The batch norm's other outputs
(``mean`` and ``var``, returned unchanged in inference) become its operands.

Applies only to float32 and float64 (the reference computes half types in float32, which a
rewritten graph would not reproduce), and only when the linear op's result (and the bias
add's) is read by nothing else and is not a graph output.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from mskernel_sdk import (
    Graph, Node, PassContext, PassResult, Replacement, TensorType, Value, make_node, rewrite_nodes,
)

FOLDABLE_DTYPES = ("float32", "float64")


class BatchNormFolding:
    name = "cpu.fold_batch_norm"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        new = fold_batch_norms(graph, context)
        return PassResult(new, new is not graph)


def fold_batch_norms(graph: Graph, context: PassContext) -> Graph:
    """``graph`` with every foldable batch norm folded, in regions too."""
    single_use = _single_use_values(graph)

    def make_visit():
        def visit(node: Node, producers: Mapping[Value, Node]) -> Optional[Replacement]:
            if node.op != "batch_norm" or node.outputs[0] not in foldable:
                return None
            return _fold(node, producers, context)

        return visit

    foldable = {bn.outputs[0] for bn in _walk(graph) if _foldable(bn, single_use)}
    if not foldable:
        return graph
    return rewrite_nodes(graph, make_visit)


def _walk(graph: Graph):
    for node in graph.nodes:
        yield node
        for region in node.regions:
            yield from _walk(region)


def _single_use_values(graph: Graph) -> dict[Value, Node]:
    """Values (of the graph and its regions) read by exactly one node and not returned by
    their scope, with their producers."""
    out: dict[Value, Node] = {}
    producers = graph.producers()
    users = graph.users()
    returned = set(graph.outputs)
    for value, readers in users.items():
        if len(readers) == 1 and value in producers and value not in returned:
            out[value] = producers[value]
    for node in graph.nodes:
        for region in node.regions:
            out.update(_single_use_values(region))
    return out


def _linear_source(bn: Node, single_use: Mapping[Value, Node]) -> Optional[tuple[Node, ...]]:
    """The linear op (and bias add) feeding ``bn``, each read only by the next, or None."""
    x = bn.inputs[0]
    first = single_use.get(x)
    if first is None:
        return None
    if first.op == "conv":
        return (first,)
    if first.op == "matmul" and _matmul_foldable(first, x):
        return (first,)
    if first.op == "add" and x.type.rank == 2:
        for position in (0, 1):
            lhs, bias = first.inputs[position], first.inputs[1 - position]
            linear = single_use.get(lhs)
            if (linear is not None and linear.op == "matmul" and lhs.type == x.type
                    and bias.type.shape == (x.type.shape[1],)
                    and _matmul_foldable(linear, lhs)):
                return (linear, first)
    return None


def _matmul_foldable(node: Node, y: Value) -> bool:
    w = node.inputs[1]
    return y.type.rank == 2 and w.type.rank == 2 and node.inputs[0].type.rank == 2


def _foldable(bn: Node, single_use: Mapping[Value, Node]) -> bool:
    if bn.op != "batch_norm" or bn.attrs["training"]:
        return False
    x = bn.inputs[0]
    if not isinstance(x.type, TensorType) or x.type.dtype.name not in FOLDABLE_DTYPES:
        return False
    return _linear_source(bn, single_use) is not None


def _fold(bn: Node, producers: Mapping[Value, Node], context: PassContext) -> Optional[Replacement]:
    x, scale, bias, mean, var = bn.inputs
    dt = x.type.dtype
    nodes: list[Node] = []

    def emit(op: str, *inputs: Value, **attrs: Any) -> Value:
        node = make_node(context, op, *inputs, **attrs)
        nodes.append(node)
        return node.output

    source = producers[x]
    eps = emit("constant", value=np.asarray(bn.attrs["eps"], dtype=dt.storage), dtype=dt)
    gain = emit("mul", scale, emit("rsqrt", emit("add", var, eps)))
    if source.op == "conv":
        data, w = source.inputs
        per_channel = (w.type.shape[0],) + (1,) * (w.type.rank - 1)
        scaled = emit("mul", w, emit("reshape", gain, shape=per_channel))
        shift = emit("sub", bias, emit("mul", mean, gain))
        y = emit("conv", data, scaled, **dict(source.attrs))
        shift = emit("reshape", shift, shape=(x.type.shape[1],) + (1,) * (x.type.rank - 2))
        out = emit("add", y, shift)
        return Replacement(tuple(nodes), (out, mean, var))
    if source.op == "matmul":
        a, w = source.inputs
        centred = emit("neg", mean)
    else:  # add(matmul(a, w), b)
        product = next(v for v in source.inputs if producers.get(v) is not None
                       and producers[v].op == "matmul" and v.type == x.type)
        b = source.inputs[1] if source.inputs[0] is product else source.inputs[0]
        a, w = producers[product].inputs
        centred = emit("sub", b, mean)
    y = emit("matmul", a, emit("mul", w, gain))
    out = emit("add", y, emit("add", emit("mul", centred, gain), bias))
    return Replacement(tuple(nodes), (out, mean, var))
