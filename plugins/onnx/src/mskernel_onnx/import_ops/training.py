"""Optimizer steps of the ``ai.onnx.preview.training`` domain: ``Adagrad``, ``Adam`` and
``Momentum`` (standard and Nesterov), each updating any number of tensors at once.

Inputs are ``R`` (learning rate), ``T`` (step count), then one group of tensors per role
(``X``, ``G``, and the optimizer's state), outputs the new ``X`` and state, group by group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mskernel_sdk import Value

from .common import cast, dtype, scalar

if TYPE_CHECKING:
    from ..context import NodeContext

DOMAIN = "ai.onnx.preview.training"

Handler = Callable[["NodeContext"], object]
Step = Callable[["NodeContext", Value, Value, list[Value]], list[Value]]


def optimizer(step: Step, roles: int) -> Handler:
    """An optimizer over ``roles`` groups of tensors (X, G, states...)."""
    def handler(ctx: "NodeContext") -> list[Value]:
        tensors = ctx.inputs(2)
        n = len(tensors) // roles
        if n * roles != len(tensors):
            ctx.fail(f"expects {roles} groups of equally many tensors after R and T, "
                     f"got {len(tensors)} tensors")
        groups = [step(ctx, ctx.input(0), ctx.input(1), tensors[k::n]) for k in range(n)]
        return [out for role in zip(*groups) for out in role]
    return handler


def _regularized(ctx: "NodeContext", x: Value, g: Value) -> Value:
    return ctx.op("add", ctx.op("mul", scalar(ctx, ctx.attr("norm_coefficient", 0.0), x), x), g)


def _adagrad(ctx: "NodeContext", r: Value, t: Value, group: list[Value]) -> list[Value]:
    x, g, h = group
    steps = cast(ctx, ctx.op("reshape", t, shape=()), dtype(x))
    rate = ctx.op("div", cast(ctx, ctx.op("reshape", r, shape=()), dtype(x)), ctx.op(
        "add", scalar(ctx, 1, x), ctx.op("mul", steps, scalar(ctx, ctx.attr("decay_factor", 0.0),
                                                              x))))
    g = _regularized(ctx, x, g)
    h_new = ctx.op("add", h, ctx.op("square", g))
    root = ctx.op("add", ctx.op("sqrt", h_new), scalar(ctx, ctx.attr("epsilon", 0.0), x))
    return [ctx.op("sub", x, ctx.op("div", ctx.op("mul", rate, g), root)), h_new]


def _adam(ctx: "NodeContext", r: Value, t: Value, group: list[Value]) -> list[Value]:
    x, g, v, h = group
    alpha, beta = ctx.attr("alpha", 0.9), ctx.attr("beta", 0.999)
    g = _regularized(ctx, x, g)
    v_new = ctx.op("add", ctx.op("mul", scalar(ctx, alpha, v), v),
                   ctx.op("mul", scalar(ctx, 1 - alpha, g), g))
    h_new = ctx.op("add", ctx.op("mul", scalar(ctx, beta, h), h),
                   ctx.op("mul", scalar(ctx, 1 - beta, g), ctx.op("square", g)))
    root = ctx.op("add", ctx.op("sqrt", h_new), scalar(ctx, ctx.attr("epsilon", 0.0), x))
    steps = cast(ctx, ctx.op("reshape", t, shape=()), "float64")
    one = scalar(ctx, 1, "float64")
    corrected = ctx.op("div", ctx.op("sqrt", ctx.op("sub", one, ctx.op(
        "pow", scalar(ctx, beta, "float64"), steps))), ctx.op("sub", one, ctx.op(
            "pow", scalar(ctx, alpha, "float64"), steps)))
    rate64 = cast(ctx, ctx.op("reshape", r, shape=()), "float64")
    started = ctx.op("greater", steps, scalar(ctx, 0, "float64"))
    rate = cast(ctx, ctx.op("where", started, ctx.op("mul", rate64, corrected), rate64), dtype(x))
    x_new = ctx.op("sub", x, ctx.op("mul", rate, ctx.op("div", v_new, root)))
    post = scalar(ctx, 1 - ctx.attr("norm_coefficient_post", 0.0), x)
    return [ctx.op("mul", post, x_new), v_new, h_new]


def _momentum(ctx: "NodeContext", r: Value, t: Value, group: list[Value]) -> list[Value]:
    x, g, v = group
    alpha, beta = ctx.attr("alpha"), ctx.attr("beta")
    g = _regularized(ctx, x, g)
    started = ctx.op("greater", ctx.op("reshape", t, shape=()), scalar(ctx, 0, t))
    weight = ctx.op("where", started, scalar(ctx, beta, x), scalar(ctx, 1, x))
    v_new = ctx.op("add", ctx.op("mul", scalar(ctx, alpha, v), v), ctx.op("mul", weight, g))
    rate = cast(ctx, ctx.op("reshape", r, shape=()), dtype(x))
    if ctx.attr("mode", "standard") == "nesterov":
        direction = ctx.op("add", g, ctx.op("mul", scalar(ctx, alpha, v_new), v_new))
    else:
        direction = v_new
    return [ctx.op("sub", x, ctx.op("mul", rate, direction)), v_new]


OPS: dict[str, Handler] = {
    "Adagrad": optimizer(_adagrad, 3), "Adam": optimizer(_adam, 4),
    "Momentum": optimizer(_momentum, 3),
}
