"""Batch-norm folding for inference: the generic ``fold_batch_norm`` pass.

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
rewrite holds when they are graph inputs; when they are constants (a frozen inference
model) the ``fold`` pass that follows in the ``O2`` pipeline makes them constants, and a
backend then sees a plain conv (or matmul) and bias add, which it may fuse.  The batch
norm's other outputs (``mean`` and ``var``, returned unchanged in inference) become its
operands.

Applies only to float32 and float64 (the reference computes half types in float32, which a
rewritten graph would not reproduce), and only when the linear op's result (and the bias
add's) is read by nothing else and is not a graph output.  Hardware independent: any backend
running conv, matmul and the elementwise ops runs the result.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..ir.graph import Node, Value
from ..ir.types import TensorType
from .base import PassContext
from .patterns import Pat, PatternPass, Patterns, make_node
from .rewrite import Replacement

FOLDABLE_DTYPES = ("float32", "float64")


def _shape(value: Value) -> tuple[int, ...]:
    return cast(TensorType, value.type).shape


def _foldable_dtype(bn: Node) -> bool:
    x = bn.inputs[0].type
    return isinstance(x, TensorType) and x.dtype.name in FOLDABLE_DTYPES


def _rank_2_product(node: Node) -> bool:
    return all(isinstance(v.type, TensorType) and v.type.rank == 2
               for v in (*node.inputs, node.output))


def _batch_norm(source: Pat) -> Pat:
    return Pat("batch_norm", (source, Pat.var("scale"), Pat.var("bias"), Pat.var("mean"),
                              Pat.var("var")),
               name="bn", attrs={"training": False}, where=_foldable_dtype)


CONV = Pat("conv", name="conv", single_use=True)
MATMUL = Pat("matmul", name="matmul", single_use=True, where=_rank_2_product)
MATMUL_BIAS = Pat("add", (MATMUL, Pat.var("b")), name="add", single_use=True, any_order=True)


class _Emitter:
    """Builds the nodes of one replacement, in order."""

    def __init__(self, context: PassContext) -> None:
        self.context = context
        self.nodes: list[Node] = []

    def __call__(self, op: str, *inputs: Value, **attrs: Any) -> Value:
        node = make_node(self.context, op, *inputs, **attrs)
        self.nodes.append(node)
        return node.output

    def gain(self, bn: Node) -> Value:
        """``scale / sqrt(var + eps)``."""
        _, scale, _, _, var = bn.inputs
        dt = cast(TensorType, bn.inputs[0].type).dtype
        eps = self("constant", value=np.asarray(bn.attrs["eps"], dtype=dt.storage), dtype=dt)
        return self("mul", scale, self("rsqrt", self("add", var, eps)))


def fold_into_conv(context: PassContext, bn: Node, conv: Node, **_: Value) -> Replacement:
    x, _scale, bias, mean, var = bn.inputs
    emit = _Emitter(context)
    gain = emit.gain(bn)
    data, w = conv.inputs
    per_channel = (_shape(w)[0],) + (1,) * (len(_shape(w)) - 1)
    scaled = emit("mul", w, emit("reshape", gain, shape=per_channel))
    shift = emit("sub", bias, emit("mul", mean, gain))
    y = emit("conv", data, scaled, **dict(conv.attrs))
    shift = emit("reshape", shift, shape=(_shape(x)[1],) + (1,) * (len(_shape(x)) - 2))
    out = emit("add", y, shift)
    return Replacement(tuple(emit.nodes), (out, mean, var))


def _fold_into_matmul(context: PassContext, bn: Node, matmul: Node, centred: Any) -> Replacement:
    """``matmul(a, w * g) + (centred * g + bias)``, ``centred(emit)`` being ``-mean`` or
    ``b - mean``."""
    emit = _Emitter(context)
    _, _, bias, mean, var = bn.inputs
    gain = emit.gain(bn)
    a, w = matmul.inputs
    y = emit("matmul", a, emit("mul", w, gain))
    out = emit("add", y, emit("add", emit("mul", centred(emit), gain), bias))
    return Replacement(tuple(emit.nodes), (out, mean, var))


def fold_into_matmul(context: PassContext, bn: Node, matmul: Node, **_: Value) -> Replacement:
    return _fold_into_matmul(context, bn, matmul, lambda emit: emit("neg", bn.inputs[3]))


def fold_into_matmul_bias(context: PassContext, bn: Node, matmul: Node, b: Value,
                          **_: Any) -> Replacement | None:
    x = bn.inputs[0]
    if matmul.output.type != x.type or _shape(b) != (_shape(x)[1],):
        return None
    return _fold_into_matmul(context, bn, matmul, lambda emit: emit("sub", b, bn.inputs[3]))


FOLD_BATCH_NORM = PatternPass("fold_batch_norm", Patterns([
    (_batch_norm(CONV), fold_into_conv),
    (_batch_norm(MATMUL), fold_into_matmul),
    (_batch_norm(MATMUL_BIAS), fold_into_matmul_bias),
]))
