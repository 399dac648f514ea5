"""Activation functions.  The core has ``relu``, ``sigmoid``, ``tanh``, ``softplus``,
``silu`` and ``gelu``; the others are short composites with their ONNX attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mskernel_sdk import Value

from .common import scalar

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _unary(op: str) -> Handler:
    return lambda ctx: ctx.op(op, ctx.input(0))


def _where_negative(ctx: "NodeContext", x: Value, negative: Value) -> Value:
    return ctx.op("where", ctx.op("less", x, scalar(ctx, 0, x)), negative, x)


def _leaky_relu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return _where_negative(ctx, x, ctx.op("mul", x, scalar(ctx, ctx.attr("alpha", 0.01), x)))


def _prelu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return _where_negative(ctx, x, ctx.op("mul", x, ctx.input(1)))


def _elu_part(ctx: "NodeContext", x: Value, alpha: float) -> Value:
    """``alpha * (exp(x) - 1)``."""
    return ctx.op("mul", scalar(ctx, alpha, x), ctx.op("expm1", x))


def _elu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return _where_negative(ctx, x, _elu_part(ctx, x, ctx.attr("alpha", 1.0)))


def _selu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    alpha, gamma = ctx.attr("alpha", 1.67326319217681884765625), ctx.attr(
        "gamma", 1.05070102214813232421875)
    inner = ctx.op("where", ctx.op("greater", x, scalar(ctx, 0, x)), x,
                   _elu_part(ctx, x, alpha))
    return ctx.op("mul", scalar(ctx, gamma, x), inner)


def _celu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    alpha = ctx.attr("alpha", 1.0)
    scaled = ctx.op("div", x, scalar(ctx, alpha, x))
    negative = _elu_part(ctx, scaled, alpha)
    zero = scalar(ctx, 0, x)
    return ctx.op("add", ctx.op("maximum", x, zero), ctx.op("minimum", negative, zero))


def _hard_sigmoid_of(ctx: "NodeContext", x: Value, alpha: float, beta: float) -> Value:
    line = ctx.op("add", ctx.op("mul", x, scalar(ctx, alpha, x)), scalar(ctx, beta, x))
    return ctx.op("minimum", ctx.op("maximum", line, scalar(ctx, 0, x)), scalar(ctx, 1, x))


def _hard_sigmoid(ctx: "NodeContext") -> Value:
    return _hard_sigmoid_of(ctx, ctx.input(0), ctx.attr("alpha", 0.2), ctx.attr("beta", 0.5))


def _hard_swish(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return ctx.op("mul", x, _hard_sigmoid_of(ctx, x, 1 / 6, 0.5))


def _softsign(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return ctx.op("div", x, ctx.op("add", ctx.op("abs", x), scalar(ctx, 1, x)))


def _thresholded_relu(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    keep = ctx.op("greater", x, scalar(ctx, ctx.attr("alpha", 1.0), x))
    return ctx.op("where", keep, x, scalar(ctx, 0, x))


def _shrink(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    lambd, bias = ctx.attr("lambd", 0.5), ctx.attr("bias", 0.0)
    below = ctx.op("less", x, scalar(ctx, -lambd, x))
    above = ctx.op("greater", x, scalar(ctx, lambd, x))
    return ctx.op("where", below, ctx.op("add", x, scalar(ctx, bias, x)),
                  ctx.op("where", above, ctx.op("sub", x, scalar(ctx, bias, x)),
                         scalar(ctx, 0, x)))


def _gelu(ctx: "NodeContext") -> Value:
    return ctx.op("gelu", ctx.input(0), approximate=ctx.attr("approximate", "none"))


def _mish(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return ctx.op("mul", x, ctx.op("tanh", ctx.op("softplus", x)))


def _swish(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    alpha = ctx.attr("alpha", 1.0)
    if alpha == 1.0:
        return ctx.op("silu", x)
    return ctx.op("mul", x, ctx.op("sigmoid", ctx.op("mul", x, scalar(ctx, alpha, x))))


OPS: dict[str, Handler] = {
    "Relu": _unary("relu"), "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"),
    "Softplus": _unary("softplus"), "LeakyRelu": _leaky_relu, "PRelu": _prelu, "Elu": _elu,
    "Selu": _selu, "Celu": _celu, "HardSigmoid": _hard_sigmoid, "HardSwish": _hard_swish,
    "Softsign": _softsign, "ThresholdedRelu": _thresholded_relu, "Shrink": _shrink,
    "Gelu": _gelu, "Mish": _mish, "Swish": _swish,
}
