"""``ascend.layout`` and ``ascend.cancel``: the Cube's data layouts, and the conversions
between them that adjacent ops make useless.

``ascend.layout`` rewrites every NCHW 2-D convolution (``conv`` with one group, or
``ascend.conv2d``) into the layouts the Cube reads (:mod:`.formats`): its input through
``ascend.transdata`` to ``NC1HWC0``, its weights to ``FRACTAL_Z``, the convolution itself in
``NC1HWC0``, and its result back to ``NCHW``.  A ``conv`` gets a zero bias.

``ascend.cancel`` then removes what the boundaries left between adjacent ops:

- ``transdata(transdata(x, A → B), B → A)`` of one logical shape is ``x`` (the 5HD result of
  a convolution read by the next one stays 5HD);
- ``u(transdata(x, NC1HWC0 → NCHW))`` for an op ``u`` acting on each element and keeping
  zeros (``relu``, ``neg``, ``abs``, ``cast``) becomes ``transdata(u(x), NC1HWC0 → NCHW)``,
  so that a conversion back and forth around it cancels too (the padding channels stay zero);
- ``cast(cast(x, float32), float16)`` of a float16 ``x`` is ``x`` (what the precision
  pass leaves between two float16 ops).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from mskernel_sdk import (
    Node, PassContext, PatternPass, Patterns, Replacement, Scope, TensorType, Value, make_node,
)

from . import formats
from .fusion import NodeEmitter, is_conv2d
from .ops import CONV2D, TRANSDATA

ZERO_PRESERVING = ("relu", "neg", "abs", "cast")


def to_5hd(node: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
    """An NCHW 2-D convolution in NC1HWC0 with FRACTAL_Z weights."""
    if node.op == "conv":
        if not is_conv2d(node):
            return None
        bias: Optional[Value] = None
    elif node.attrs["format"] == formats.NCHW:
        bias = node.inputs[2]
    else:
        return None
    x, w = node.inputs[:2]
    y = node.output.type
    b = NodeEmitter(context, node)
    if bias is None:
        bias = b.op("full", shape=(y.shape[1],), value=0.0, dtype=y.dtype.name)
    x5 = b.op(TRANSDATA, x, src_format=formats.NCHW, dst_format=formats.NC1HWC0,
              shape=x.type.shape)
    wz = b.op(TRANSDATA, w, src_format=formats.NCHW, dst_format=formats.FRACTAL_Z,
              shape=w.type.shape)
    attrs = {k: node.attrs[k] for k in ("stride", "padding", "dilation")}
    y5 = b.op(CONV2D, x5, wz, bias, relu=node.attrs.get("relu", False), format=formats.NC1HWC0,
              weight_shape=w.type.shape, **attrs)
    out = b.op(TRANSDATA, y5, src_format=formats.NC1HWC0, dst_format=formats.NCHW,
               shape=y.shape)
    return Replacement(tuple(b.nodes), (out,))


def cancel_transdata(node: Node, scope: Scope, context: PassContext) -> Optional[Value]:
    inner = scope.get(node.inputs[0])
    if (inner is not None and inner.op == TRANSDATA
            and inner.attrs["src_format"] == node.attrs["dst_format"]
            and inner.attrs["dst_format"] == node.attrs["src_format"]
            and tuple(inner.attrs["shape"]) == tuple(node.attrs["shape"])
            and inner.inputs[0].type == node.output.type):
        return inner.inputs[0]
    return None


def push_through(node: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
    """``u(transdata(x5 → NCHW))`` → ``transdata(u(x5) → NCHW)`` for a zero-keeping ``u``."""
    back = scope.get(node.inputs[0]) if len(node.inputs) == 1 else None
    if (back is None or back.op != TRANSDATA or back.attrs["src_format"] != formats.NC1HWC0
            or not scope.single_use(back.output)):
        return None
    x5 = back.inputs[0]
    inner = make_node(context, node.op, x5, **node.attrs)
    t = inner.output.type
    if not isinstance(t, TensorType) or formats.c0_of(t.dtype.name) != x5.type.shape[-1]:
        return None
    out = make_node(context, TRANSDATA, inner.output, **back.attrs)
    return Replacement((replace(inner, loc=node.loc), replace(out, loc=node.loc)), (out.output,))


def cancel_casts(node: Node, scope: Scope, context: PassContext) -> Optional[Value]:
    inner = scope.get(node.inputs[0])
    if (inner is not None and inner.op == "cast" and node.output.type == inner.inputs[0].type
            and node.output.type.dtype.name == "float16"
            and inner.output.type.dtype.name in ("float32", "float64")):
        return inner.inputs[0]
    return None


LAYOUT_PASS = PatternPass("ascend.layout", Patterns([(("conv", CONV2D), to_5hd)]))
CANCEL_PASS = PatternPass("ascend.cancel", Patterns([
    (TRANSDATA, cancel_transdata),
    ("cast", cancel_casts),
    (ZERO_PRESERVING, push_through),
]))
