"""``matmul`` and ``einsum`` → ONNX ``MatMul`` (NumPy's rules for 1-D operands and batch
broadcasting) and ``Einsum`` (NumPy's subscript language)."""

from __future__ import annotations

import numpy as np

from mskernel_sdk import Node

from ..export import Context


def _matmul(ctx: Context, node: Node, x: str, y: str) -> str:
    dt = ctx.in_type(0).dtype
    return ctx.typed("MatMul", x, y, dt=dt)


def _einsum(ctx: Context, node: Node, *operands: str) -> str:
    """``Einsum``, with operands first expanded to the sizes NumPy broadcasts them to (the
    dimensions under ``...``, and a subscript of size 1 meeting a larger one), which ONNX's
    shape inference does not do."""
    dt = ctx.in_type(0).dtype
    equation = "".join(node.attrs["equation"].split())
    terms = [_labels(term) for term in equation.partition("->")[0].split(",")]
    shapes = [ctx.in_type(i).shape for i in range(len(operands))]
    targets = _broadcast_shapes(terms, shapes)
    expanded = [ctx.op("Expand", x, ctx.ints(target)) if target != shape else x
                for x, shape, target in zip(operands, shapes, targets)]
    return ctx.typed("Einsum", *expanded, dt=dt, equation=equation)


def _labels(term: str) -> list[str]:
    """A term's subscripts in order, ``"..."`` standing for the ellipsis."""
    head, dots, tail = term.partition("...")
    return [*head, *(["..."] if dots else []), *tail]


def _broadcast_shapes(terms: list[list[str]], shapes: list[tuple[int, ...]]
                      ) -> list[tuple[int, ...]]:
    sizes: dict[str, int] = {}
    batches = []
    for labels, shape in zip(terms, shapes):
        named = len(labels) - ("..." in labels)
        dims = iter(shape)
        for label in labels:
            if label == "...":
                batches.append(tuple(next(dims) for _ in range(len(shape) - named)))
            else:
                size = next(dims)
                sizes[label] = max(sizes.get(label, 1), size) if size else 0
    batch = tuple(np.broadcast_shapes(*batches)) if batches else ()
    targets = []
    for labels, shape in zip(terms, shapes):
        target: list[int] = []
        for label in labels:
            target.extend(batch if label == "..." else (sizes[label],))
        targets.append(tuple(target))
    return targets


TRANSLATORS = {"matmul": _matmul, "einsum": _einsum}
