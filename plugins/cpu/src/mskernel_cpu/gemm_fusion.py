"""GEMM epilogue fusion: the ``cpu.fuse_gemm_epilogue`` pass, a table of three patterns.

A ``conv`` or ``matmul`` followed by a bias add and/or one activation becomes one
``cpu.conv_bias_act`` / ``cpu.matmul_bias_act`` node (:mod:`.gemm_ops`), whose kernel adds the
bias and applies the activation to each output tile while it is in cache:

- ``add(product, bias)`` → the fused product with the bias.  The bias runs along the
  product's channels: shape ``[C]`` or ``[1, C, 1, ...]`` aligned on the channel axis for a
  ``conv`` (as ``nn.Conv2d`` and batch-norm folding add ``bias.reshape(C, 1, 1)``), ``[N]`` or
  ``[1, ..., N]`` along the last dim for a ``matmul`` (as ``nn.Dense`` adds its bias); a bias
  that is ``reshape(b)`` of a ``[C]`` value read by the add alone is replaced by ``b``, any
  other is reshaped to ``[C]`` (a view);
- ``act(product)``, ``act`` one of ``relu``, ``sigmoid``, ``tanh``, ``gelu`` (either formula)
  or ``silu`` → the fused product with that activation;
- ``act(fused product with a bias and no activation)`` → the activation joins it, so that
  ``act(add(product, bias))`` ends as one node.

Only when the product (and the add) is read by the next op alone and is not a graph output,
the dtypes are one floating type, and the add and activation keep the product's type.
Regions are fused too.  The pass runs before ``cpu.fuse_elementwise``, so the bias add is not
taken into an elementwise group first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from mskernel_sdk import (
    Node, PassContext, Pat, PatternPass, Patterns, Replacement, TensorType, Value, make_node,
)

from .gemm_ops import ACTIVATIONS, CONV_OP, MATMUL_OP, activation_of

FUSABLE_DTYPES = ("float16", "bfloat16", "float32", "float64")

#: the fused op of each product
FUSED = {"conv": CONV_OP, "matmul": MATMUL_OP}

ACTIVATION_OPS = tuple(sorted({core for core, _ in ACTIVATIONS.values() if core}))


def is_product(node: Node) -> bool:
    """A ``conv`` or ``matmul`` of one fusable floating type (``matmul`` operands of rank 2
    or more)."""
    if node.op not in FUSED or node.regions or len(node.outputs) != 1:
        return False
    types = [v.type for v in (*node.inputs, node.output)]
    if not all(isinstance(t, TensorType) and t.dtype.name in FUSABLE_DTYPES for t in types):
        return False
    return node.op == "conv" or all(t.rank >= 2 for t in types[:2])


def _awaits_activation(node: Node) -> bool:
    """A product, or a fused product with its bias and no activation yet."""
    if node.op in FUSED:
        return is_product(node)
    return len(node.inputs) == 3 and node.attrs["activation"] == "none"


def _channels(y: Value, op: str) -> int:
    return y.type.shape[1] if op in ("conv", CONV_OP) else y.type.shape[-1]


def _is_channel_bias(add: Node, product: Node, bias: Value) -> bool:
    """Whether ``add`` adds ``bias`` along ``product``'s channels, keeping its type."""
    y = product.output
    if add.output.type != y.type or add.inputs.count(y) != 1:
        return False
    if not isinstance(bias.type, TensorType) or bias.type.dtype != y.type.dtype:
        return False
    rank = y.type.rank
    if bias.type.rank > rank:
        return False
    channel_axis = 1 if product.op == "conv" else rank - 1
    per_channel = tuple(d if i == channel_axis else 1 for i, d in enumerate(y.type.shape))
    return (1,) * (rank - bias.type.rank) + bias.type.shape == per_channel


def _fused(context: PassContext, product: Node, operands: tuple[Value, ...],
           activation: str) -> Node:
    attrs: dict[str, Any] = {**product.attrs, "activation": activation}
    return make_node(context, FUSED.get(product.op, product.op), *operands, **attrs)


def fuse_reshaped_bias(context: PassContext, add: Node, product: Node, reshape: Node,
                       channels: Value) -> Optional[Node]:
    if (channels.type.shape != (_channels(product.output, product.op),)
            or not _is_channel_bias(add, product, reshape.output)):
        return None
    return _fused(context, product, (*product.inputs, channels), "none")


def fuse_bias(context: PassContext, add: Node, product: Node,
              bias: Value) -> Optional[Replacement]:
    if not _is_channel_bias(add, product, bias):
        return None
    nodes = []
    channels = (_channels(product.output, product.op),)
    if bias.type.shape != channels:
        nodes.append(make_node(context, "reshape", bias, shape=channels))
        bias = nodes[-1].output
    fused = _fused(context, product, (*product.inputs, bias), "none")
    nodes.append(replace(fused, outputs=add.outputs, loc=add.loc))
    return Replacement(tuple(nodes), add.outputs)


def fuse_activation(context: PassContext, act: Node, product: Node) -> Optional[Node]:
    if len(act.outputs) != 1 or act.output.type != product.output.type:
        return None
    activation = activation_of(act.op, act.attrs)
    return None if activation is None else _fused(context, product, product.inputs, activation)


PRODUCT = Pat(tuple(FUSED), name="product", single_use=True, where=is_product)

GEMM_EPILOGUE = Patterns([
    (Pat("add", (PRODUCT, Pat("reshape", (Pat.var("channels"),), name="reshape",
                              single_use=True)), name="add", any_order=True),
     fuse_reshaped_bias),
    (Pat("add", (PRODUCT, Pat.var("bias")), name="add", any_order=True), fuse_bias),
    (Pat(ACTIVATION_OPS, (Pat((*FUSED, CONV_OP, MATMUL_OP), name="product", single_use=True,
                              where=_awaits_activation),),
         name="act"),
     fuse_activation),
])

FUSE_GEMM_EPILOGUE = PatternPass("cpu.fuse_gemm_epilogue", GEMM_EPILOGUE)
