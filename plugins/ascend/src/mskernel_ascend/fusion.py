"""``ascend.fuse``: the fusions the Ascend graph engine applies before it picks kernels.

- ``add(conv(x, w), bias)`` → ``ascend.conv2d(x, w, bias)`` (Conv2D + BiasAdd), the bias
  ``[C]``, ``[C, 1, 1]`` or ``[1, C, 1, 1]`` (``reshape(b)`` of a ``[C]`` value read by the add
  alone is replaced by ``b``);
- ``batch_norm(conv(x, w), ...)`` in inference → ``ascend.conv2d(x, w * s, beta - mean * s)``
  with ``s = gamma / sqrt(var + eps)`` (Conv2D + BatchNorm folded into the weights);
- ``relu(ascend.conv2d(...))`` → the same convolution with ``relu=True`` (+ Relu), and
  ``relu(conv(x, w))`` → ``ascend.conv2d`` with a zero bias and the ReLU;
- ``add(matmul(x, w), bias)`` → ``ascend.matmul_bias(x, w, bias)`` for 2-D operands and a
  ``[N]`` (or ``[1, N]``) bias (MatMulV2 with its bias input).

Only 2-D convolutions with one group, of one float dtype, whose intermediate is read by the
fused op alone; the fused op keeps the replaced node's type.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Union

from mskernel_sdk import (
    Node, PassContext, Pat, PatternPass, Patterns, Replacement, Scope, TensorType, Value,
    make_node,
)

from .ops import CONV2D, MATMUL_BIAS


def is_conv2d(node: Node) -> bool:
    """A 2-D ``conv`` with one group, of one floating dtype."""
    types = [v.type for v in (*node.inputs, *node.outputs)]
    return (node.op == "conv" and node.attrs["groups"] == 1 and len(node.outputs) == 1
            and all(isinstance(t, TensorType) and t.dtype.is_floating for t in types)
            and types[0].rank == 4 and types[0].dtype == types[1].dtype == types[2].dtype)


def _is_matmul2d(node: Node) -> bool:
    types = [v.type for v in (*node.inputs, *node.outputs)]
    return (all(isinstance(t, TensorType) and t.dtype.is_floating and t.rank == 2 for t in types)
            and types[0].dtype == types[1].dtype)


def _channel_vector(context: PassContext, bias: Value, channels: int, dtype: object,
                    shapes: tuple[tuple[int, ...], ...]) -> Optional[tuple[list[Node], Value]]:
    """``bias`` as a ``[channels]`` vector (a reshape node when needed), if its shape is one
    of ``shapes``."""
    t = bias.type
    if not isinstance(t, TensorType) or t.dtype != dtype or t.shape not in shapes:
        return None
    if t.shape == (channels,):
        return [], bias
    node = make_node(context, "reshape", bias, shape=(channels,))
    return [node], node.output


def _conv_attrs(conv: Node) -> dict[str, object]:
    return {k: conv.attrs[k] for k in ("stride", "padding", "dilation")}


def fuse_conv_bias(context: PassContext, add: Node, conv: Node, bias: Value) -> Optional[Replacement]:
    y = conv.output.type
    if add.output.type != y:
        return None
    c = y.shape[1]
    vector = _channel_vector(context, bias, c, y.dtype, ((c,), (c, 1, 1), (1, c, 1, 1)))
    if vector is None:
        return None
    nodes, b = vector
    fused = make_node(context, CONV2D, *conv.inputs, b, **_conv_attrs(conv))
    return Replacement((*nodes, replace(fused, outputs=add.outputs, loc=add.loc)), add.outputs)


def fuse_conv_reshaped_bias(context: PassContext, add: Node, conv: Node, reshape: Node,
                            channels: Value) -> Optional[Replacement]:
    y = conv.output.type
    c = y.shape[1]
    if (channels.type != TensorType(y.dtype, (c,)) or add.output.type != y
            or reshape.output.type.shape not in ((c, 1, 1), (1, c, 1, 1))):
        return None
    fused = make_node(context, CONV2D, *conv.inputs, channels, **_conv_attrs(conv))
    return Replacement((replace(fused, outputs=add.outputs, loc=add.loc),), add.outputs)


def fuse_conv_batch_norm(node: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
    """batch_norm(conv(x, w), gamma, beta, mean, var) in inference, its statistics outputs
    unread: the batch norm folded into the convolution's weights and bias."""
    if node.attrs["training"]:
        return None
    conv = scope.get(node.inputs[0])
    if conv is None or not is_conv2d(conv) or not scope.single_use(conv.output):
        return None
    if any(scope.uses(v) for v in node.outputs[1:]):
        return None
    x, w = conv.inputs
    gamma, beta, mean, var = node.inputs[1:]
    dt = w.type.dtype
    c = w.type.shape[0]
    if any(v.type != TensorType(dt, (c,)) for v in (gamma, beta, mean, var)):
        return None
    b = NodeEmitter(context, node)
    eps = b.op("full", shape=(c,), value=float(node.attrs["eps"]), dtype=dt.name)
    scale = b.op("div", gamma, b.op("sqrt", b.op("add", var, eps)))
    shift = b.op("add", beta, b.op("neg", b.op("mul", mean, scale)))
    folded = b.op("mul", w, b.op("reshape", scale, shape=(c, 1, 1, 1)))
    y = b.op(CONV2D, x, folded, shift, **_conv_attrs(conv))
    return Replacement(tuple(b.nodes), (y, *node.inputs[3:]))


def fuse_relu(context: PassContext, relu: Node, conv: Node) -> Union[Node, Replacement, None]:
    if relu.output.type != conv.output.type:
        return None
    if conv.op == CONV2D:
        return None if conv.attrs["relu"] else make_node(context, CONV2D, *conv.inputs,
                                                         **{**conv.attrs, "relu": True})
    if not is_conv2d(conv):
        return None
    y = conv.output.type
    zeros = make_node(context, "full", shape=(y.shape[1],), value=0.0, dtype=y.dtype.name)
    fused = make_node(context, CONV2D, *conv.inputs, zeros.output, relu=True, **_conv_attrs(conv))
    return Replacement((zeros, replace(fused, outputs=relu.outputs, loc=relu.loc)), relu.outputs)


def fuse_matmul_bias(context: PassContext, add: Node, matmul: Node,
                     bias: Value) -> Optional[Replacement]:
    y = matmul.output.type
    if add.output.type != y:
        return None
    n = y.shape[1]
    vector = _channel_vector(context, bias, n, y.dtype, ((n,), (1, n)))
    if vector is None:
        return None
    nodes, b = vector
    fused = make_node(context, MATMUL_BIAS, *matmul.inputs, b)
    return Replacement((*nodes, replace(fused, outputs=add.outputs, loc=add.loc)), add.outputs)


class NodeEmitter:
    """Nodes for a replacement, each at the source line of the node they replace."""

    def __init__(self, context: PassContext, at: Node) -> None:
        self.context, self.at, self.nodes = context, at, []

    def op(self, name: str, *inputs: Value, **attrs: object) -> Value:
        node = replace(make_node(self.context, name, *inputs, **attrs), loc=self.at.loc)
        self.nodes.append(node)
        return node.output


CONV = Pat("conv", name="conv", single_use=True, where=is_conv2d)
MATMUL = Pat("matmul", name="matmul", single_use=True, where=_is_matmul2d)

FUSIONS = Patterns([
    (Pat("add", (CONV, Pat("reshape", (Pat.var("channels"),), name="reshape", single_use=True)),
         name="add", any_order=True), fuse_conv_reshaped_bias),
    (Pat("add", (CONV, Pat.var("bias")), name="add", any_order=True), fuse_conv_bias),
    ("batch_norm", fuse_conv_batch_norm),
    (Pat("relu", (Pat(("conv", CONV2D), name="conv", single_use=True),), name="relu"),
     fuse_relu),
    (Pat("add", (MATMUL, Pat.var("bias")), name="add", any_order=True), fuse_matmul_bias),
])

FUSE_PASS = PatternPass("ascend.fuse", FUSIONS)
