"""Tensor ops of the ``ai.onnx.ml`` domain that are plain tensor computations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mskernel_sdk import Value

from .common import normalize_indices, scalar, shape

if TYPE_CHECKING:
    from ..importer import NodeContext

DOMAIN = "ai.onnx.ml"

Handler = Callable[["NodeContext"], object]


def _binarizer(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    above = ctx.op("greater", x, scalar(ctx, ctx.attr("threshold", 0.0), x))
    return ctx.op("where", above, scalar(ctx, 1, x), scalar(ctx, 0, x))


def _array_feature_extractor(ctx: "NodeContext") -> Value:
    """The last axis of ``X`` at ``Y``'s (flattened) indices."""
    x, idx = ctx.input(0), ctx.input(1)
    flat = ctx.op("reshape", idx, shape=(-1,))
    return ctx.op("gather", x, normalize_indices(ctx, flat, shape(x)[-1]), axis=len(shape(x)) - 1)


OPS: dict[str, Handler] = {"Binarizer": _binarizer, "ArrayFeatureExtractor": _array_feature_extractor}
