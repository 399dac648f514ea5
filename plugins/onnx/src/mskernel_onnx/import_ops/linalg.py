"""Linear algebra beyond ``MatMul``/``Gemm``/``Einsum`` (in :mod:`.nn`): ``Det``.

The determinant is Gaussian elimination with partial pivoting, unrolled over the (static)
matrix size: at each column the row with the largest magnitude is swapped in (``argmax``
and ``take_along_axis``), the pivot joins the product, and the rows below are eliminated.
A zero pivot (a singular matrix) gives 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import check_unroll, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _det(ctx: "NodeContext") -> Value:
    a = ctx.input(0)
    dims = shape(a)
    n = dims[-1]
    if len(dims) < 2 or dims[-2] != n:
        ctx.fail(f"expects square matrices [..., n, n], got {list(dims)}")
    check_unroll(ctx, n, "the elimination")
    batch = dims[:-2]
    rows = np.arange(n)
    det = ctx.op("broadcast_to", scalar(ctx, 1, a), shape=batch)
    for k in range(n):
        col = ctx.op("squeeze", ctx.op("slice", a, starts=(k,), stops=(k + 1,), axes=(-1,)),
                     axes=(-1,))
        candidates = ctx.op("where", ctx.constant(rows >= k), ctx.op("abs", col),
                            scalar(ctx, -1, a))
        p = ctx.op("argmax", candidates, axis=-1, keepdims=True)  # [..., 1]
        row_k = ctx.op("slice", a, starts=(k,), stops=(k + 1,), axes=(-2,))
        at_p = ctx.op("broadcast_to", ctx.op("expand_dims", p, axes=(-1,)), shape=(*batch, 1, n))
        row_p = ctx.op("take_along_axis", a, at_p, axis=-2)
        is_k = ctx.constant((rows == k)[:, None])
        is_p = ctx.op("expand_dims", ctx.op("equal", ctx.constant(rows), p), axes=(-1,))
        a = ctx.op("where", is_k, row_p, ctx.op("where", is_p, row_k, a))
        swapped = ctx.op("not_equal", ctx.op("squeeze", p, axes=(-1,)),
                         scalar(ctx, k, "int64"))
        pivot_row = ctx.op("slice", a, starts=(k,), stops=(k + 1,), axes=(-2,))  # [..., 1, n]
        pivot = ctx.op("reshape", ctx.op("slice", pivot_row, starts=(k,), stops=(k + 1,),
                                         axes=(-1,)), shape=batch)
        det = ctx.op("mul", det, ctx.op("where", swapped, ctx.op("neg", pivot), pivot))
        singular = ctx.op("equal", pivot, scalar(ctx, 0, a))
        safe = ctx.op("where", singular, scalar(ctx, 1, a), pivot)
        column = ctx.op("squeeze", ctx.op("slice", a, starts=(k,), stops=(k + 1,), axes=(-1,)),
                        axes=(-1,))
        factors = ctx.op("div", column, ctx.op("expand_dims", safe, axes=(-1,)))
        factors = ctx.op("where", ctx.constant(rows > k), factors, scalar(ctx, 0, a))
        a = ctx.op("sub", a, ctx.op("mul", ctx.op("expand_dims", factors, axes=(-1,)),
                                    pivot_row))
    return det


OPS: dict[str, Handler] = {"Det": _det}
