"""``TfIdfVectorizer`` on integer tokens (mskernel has no strings).

The n-gram pool is static, so counting is comparison: for each n-gram length ``n`` and skip
distance ``d``, every window ``X[i], X[i + d], ..., X[i + (n - 1) d]`` is compared with every
pool n-gram of that length (``equal`` then ``all``) and the matches are summed over ``i``.
Unigrams count once (distance 1), longer n-grams at every distance up to
``max_skip_count + 1``, as ONNX's reference counts them.  The counts go to their output
columns through a 0/1 matrix, then ``mode`` weighs them (TF, IDF, TFIDF).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import check_table, dtype, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _pool(ctx: "NodeContext") -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Per n-gram length: (n, the pool's n-grams [G, n], their output columns [G])."""
    pool = np.asarray(ctx.attr("pool_int64s", ()), np.int64)
    if "pool_strings" in ctx.attrs:
        ctx.fail("string n-grams: mskernel has no string dtype")
    starts = list(ctx.attr("ngram_counts")) + [len(pool)]
    indexes = np.asarray(ctx.attr("ngram_indexes"), np.int64)
    lo, hi = ctx.attr("min_gram_length"), ctx.attr("max_gram_length")
    groups, first_id = [], 0
    for n, (start, end) in enumerate(zip(starts, starts[1:]), 1):
        grams = pool[start:end].reshape(-1, n)
        if lo <= n <= hi and len(grams):
            groups.append((n, grams, indexes[first_id:first_id + len(grams)]))
        first_id += len(grams)
    return groups


def _tfidf(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    rows = ctx.op("reshape", x, shape=(1, -1)) if len(shape(x)) == 1 else x
    batch, length = shape(rows)
    width = int(np.max(ctx.attr("ngram_indexes"))) + 1
    skips = ctx.attr("max_skip_count", 0)
    total = None
    for n, grams, columns in _pool(ctx):
        placement = np.zeros((len(grams), width), np.float32)
        placement[np.arange(len(grams)), columns] = 1
        for distance in range(1, (1 if n == 1 else skips + 1) + 1):
            starts = length - (n - 1) * distance
            if starts <= 0:
                break
            check_table(ctx, (batch, starts, len(grams), n), "the n-gram comparison")
            positions = np.arange(starts)[:, None] + np.arange(n)[None, :] * distance
            windows = ctx.op("gather", rows, ctx.constant(positions), axis=1)  # [B, S, n]
            match = ctx.op("all", ctx.op("equal", ctx.op("expand_dims", windows, axes=(2,)),
                                         ctx.constant(grams.astype(dtype(x).storage), dtype(x))),
                           axes=(3,))  # [B, S, G]
            counts = ctx.op("sum", ctx.op("cast", match, dtype="float32"), axes=(1,))
            found = ctx.op("matmul", counts, ctx.constant(placement))
            total = found if total is None else ctx.op("add", total, found)
    if total is None:
        total = ctx.op("broadcast_to", ctx.constant(np.zeros((), np.float32)),
                       shape=(batch, width))
    mode = ctx.attr("mode")
    weights = ctx.attr("weights", None)
    if mode == "IDF":
        present = ctx.op("cast", ctx.op("greater", total, ctx.constant(np.float32(0))),
                         dtype="float32")
        total = present if weights is None else ctx.op(
            "mul", present, ctx.constant(np.asarray(weights, np.float32)))
    elif mode == "TFIDF" and weights is not None:
        total = ctx.op("mul", total, ctx.constant(np.asarray(weights, np.float32)))
    elif mode not in ("TF", "TFIDF"):
        ctx.fail(f"mode {mode!r} is not one of TF, IDF, TFIDF")
    return ctx.op("reshape", total, shape=(width,)) if len(shape(x)) == 1 else total


OPS: dict[str, Handler] = {"TfIdfVectorizer": _tfidf}
