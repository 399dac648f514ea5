"""Random ONNX ops on the core's counter-based generator: ``RandomUniform``,
``RandomNormal`` (and their ``*Like`` forms), ``Bernoulli`` and ``Multinomial``.

Each node draws from a key made from its ``seed`` attribute (0 when absent), so an imported
graph is deterministic; the draws are mskernel's, not those of another runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mskernel_sdk import DType, Value

from ..protos import element_dtype
from .common import dtype, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _key(ctx: "NodeContext") -> Value:
    return ctx.op("random_key", seed=int(ctx.attr("seed", 0.0)))


def _out_dtype(ctx: "NodeContext", like: DType) -> DType:
    return element_dtype(ctx.attr("dtype")) if "dtype" in ctx.attrs else like


def distribution(op: str, like: bool) -> Handler:
    """``RandomUniform``/``RandomNormal``: the shape from the ``shape`` attribute, or from
    the input with ``like``."""
    def handler(ctx: "NodeContext") -> Value:
        if like:
            dims, dt = shape(ctx.input(0)), _out_dtype(ctx, dtype(ctx.input(0)))
        else:
            dims, dt = tuple(ctx.attr("shape")), _out_dtype(ctx, element_dtype(1))
        if op == "random_uniform":
            params = {"minval": ctx.attr("low", 0.0), "maxval": ctx.attr("high", 1.0)}
        else:
            params = {"mean": ctx.attr("mean", 0.0), "std": ctx.attr("scale", 1.0)}
        return ctx.op(op, _key(ctx), shape=dims, dtype=dt, **params)
    return handler


def _bernoulli(ctx: "NodeContext") -> Value:
    p = ctx.input(0)
    draw = ctx.op("random_uniform", _key(ctx), shape=shape(p), dtype=dtype(p))
    return ctx.op("cast", ctx.op("less", draw, p), dtype=_out_dtype(ctx, dtype(p)))


def _multinomial(ctx: "NodeContext") -> Value:
    """``sample_size`` categories per row of ``input`` (unnormalised log-probabilities)."""
    logits = ctx.input(0)
    count = ctx.attr("sample_size", 1)
    keys = ctx.op("random_split", _key(ctx), num=count)
    draws = []
    for k in range(count):
        key = ctx.op("reshape", ctx.op("slice", keys, starts=(k,), stops=(k + 1,), axes=(0,)),
                     shape=(2,))
        draws.append(ctx.op("random_categorical", key, logits))
    out = ctx.op("stack", *draws, axis=-1)
    return ctx.op("cast", out, dtype=_out_dtype(ctx, element_dtype(6)))


OPS: dict[str, Handler] = {
    "RandomUniform": distribution("random_uniform", False),
    "RandomUniformLike": distribution("random_uniform", True),
    "RandomNormal": distribution("random_normal", False),
    "RandomNormalLike": distribution("random_normal", True),
    "Bernoulli": _bernoulli, "Multinomial": _multinomial,
}
