"""Transposes folded into matrix products: the ``cpu.fold_matmul_transpose`` pass, a table of
three patterns.

- An operand of a ``matmul`` or ``cpu.matmul_bias_act`` that is ``transpose(x)`` swapping only
  the last two axes (``nn.Dense`` transposes its weight every forward, and the backward of a
  product transposes its operands again) is replaced by ``x`` and the product reads it
  transposed: the node becomes a ``cpu.matmul_bias_act`` with ``transpose_a``/``transpose_b``
  set (a plain matmul gets no bias and activation ``none``), and the BLAS call reads the
  operand with ``CblasTrans`` instead of a kernel materialising the transpose.
- A transpose of the last two axes of a product's result (the backward of ``x @ w.T``
  computes the weight's gradient as ``transpose(transpose(x) @ dy)``) becomes the product of
  the swapped operands, each read the other way: ``(op(A) op(B))^T = op(B)^T op(A)^T``.  Only
  when the product has no bias (its activation, elementwise, commutes with the transpose).
- A ``sum`` over the batch axes of a product ``transpose(a) @ b`` of rank-3-or-more operands
  with the same batch dims (a weight's gradient over a batch of sequences: one product per
  sequence, then their sum) becomes one product over all rows,
  ``reshape(a, [rows, I])^T @ reshape(b, [rows, O])``, reshaped to the sum's shape: one large
  GEMM instead of a batch of small ones, and no batch of partial products to write and sum.
  The ``transpose`` of ``a`` may have other users (it stays for them).

Only when the transpose's result (or the product's) is read by the product (the transpose,
the sum) alone, once, and is not a graph output, both operands have rank 2 or more, and the
dtypes are one floating type the fused kernel runs.  Regions are rewritten too.  The pass runs
after ``cpu.fuse_gemm_epilogue``, so it sees the fused products.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod
from typing import Any, Optional

from mskernel_sdk import (
    Node, PassContext, Pat, PatternPass, Patterns, Replacement, SHAPES, Scope, TensorType, Value,
    make_node,
)

from .gemm_fusion import FUSABLE_DTYPES
from .gemm_ops import MATMUL_OP

PRODUCTS = ("matmul", MATMUL_OP)


def swaps_last_two(node: Node) -> bool:
    """Whether ``node`` is a ``transpose`` swapping only its last two axes."""
    if node.op != "transpose" or not isinstance(node.inputs[0].type, TensorType):
        return False
    rank = node.inputs[0].type.rank
    if rank < 2:
        return False
    perm = node.attrs.get("perm")
    if perm is None:
        return rank == 2
    normalized = [axis % rank for axis in perm]
    return normalized == [*range(rank - 2), rank - 1, rank - 2]


def is_foldable_product(node: Node) -> bool:
    if node.op not in PRODUCTS or node.regions or len(node.outputs) != 1:
        return False
    types = [v.type for v in (*node.inputs, node.output)]
    if not all(isinstance(t, TensorType) and t.dtype.name in FUSABLE_DTYPES for t in types):
        return False
    return all(t.rank >= 2 for t in types[:2])


def _attrs(node: Node) -> dict[str, Any]:
    """The ``cpu.matmul_bias_act`` attributes of a product."""
    return dict(node.attrs) if node.op == MATMUL_OP else {"activation": "none"}


TRANSPOSED = Pat("transpose", (Pat.var("source"),), single_use=True, where=swaps_last_two)


def fold_operand_transposes(product: Node, scope: Scope, context: PassContext) -> Optional[Node]:
    """``matmul(transpose(a), b)`` → ``matmul_bias_act(a, b, transpose_a=True)`` (either or
    both operands)."""
    if not is_foldable_product(product):
        return None
    attrs = _attrs(product)
    operands = list(product.inputs)
    for i, flag in enumerate(("transpose_a", "transpose_b")):
        bound = TRANSPOSED.match_value(operands[i], scope)
        if bound is not None:
            operands[i] = bound["source"]  # type: ignore[assignment]
            attrs[flag] = not attrs.get(flag, False)
    if operands == list(product.inputs):
        return None
    return make_node(context, MATMUL_OP, *operands, **attrs)


def transpose_product(context: PassContext, transpose: Node, product: Node) -> Node:
    """``transpose(op(A) op(B))`` → ``op(B)^T op(A)^T``."""
    attrs = {"activation": product.attrs.get("activation", "none"),
             "transpose_a": not product.attrs.get("transpose_b", False),
             "transpose_b": not product.attrs.get("transpose_a", False)}
    return make_node(context, MATMUL_OP, *product.inputs[::-1], **attrs)


def _transposed_a(product: Node, scope: Scope) -> Optional[tuple[Value, Value]]:
    """``(a, b)`` when ``product`` is ``transpose(a) @ b`` (a transpose node, or a flag) with
    no bias, activation or transposed ``b``."""
    if len(product.inputs) != 2 or product.attrs.get("transpose_b", False):
        return None
    if product.attrs.get("activation", "none") != "none":
        return None
    a, b = product.inputs
    if product.op == MATMUL_OP:
        return (a, b) if product.attrs.get("transpose_a", False) else None
    source = scope.get(a)
    return (source.inputs[0], b) if source is not None and swaps_last_two(source) else None


def sum_batched_product(total: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
    """``sum(transpose(a) @ b, batch axes)`` → one product over all rows."""
    product = scope.get(total.inputs[0])
    if (product is None or not is_foldable_product(product)
            or not scope.single_use(total.inputs[0])):
        return None
    operands = _transposed_a(product, scope)
    if operands is None:
        return None
    a, b = operands
    rank = a.type.rank
    axes = total.attrs.get("axes")
    if (rank < 3 or b.type.rank != rank or a.type.shape[:-2] != b.type.shape[:-2]
            or axes is None or sorted(axis % rank for axis in axes) != list(range(rank - 2))):
        return None
    rows = prod(a.type.shape[:-1])
    flat_a = make_node(context, "reshape", a, shape=(rows, a.type.shape[-1]))
    flat_b = make_node(context, "reshape", b, shape=(rows, b.type.shape[-1]))
    whole = make_node(context, MATMUL_OP, flat_a.output, flat_b.output, activation="none",
                      transpose_a=True)
    nodes = [flat_a, flat_b, whole]
    if whole.output.type.shape != total.output.type.shape:
        nodes.append(make_node(context, "reshape", whole.output, shape=total.output.type.shape))
    nodes[-1] = replace(nodes[-1], outputs=total.outputs, loc=total.loc)
    return Replacement(tuple(nodes), total.outputs)


#: with the core's shape rules, which merge the reshapes around a product the sum rule made,
#: so that a transpose reading it meets it
MATMUL_TRANSPOSES = Patterns([
    (PRODUCTS, fold_operand_transposes),
    (Pat("transpose", (Pat(PRODUCTS, name="product", single_use=True,
                           where=lambda p: is_foldable_product(p) and len(p.inputs) == 2),),
         name="transpose", where=swaps_last_two), transpose_product),
    ("sum", sum_batched_product),
]) + SHAPES

FOLD_MATMUL_TRANSPOSE = PatternPass("cpu.fold_matmul_transpose", MATMUL_TRANSPOSES)
