"""Elementwise ONNX ops: arithmetic, math functions, comparisons, logic, ``Cast``.

ONNX broadcasts multidirectionally like NumPy, as the core's elementwise ops do.  Where ONNX
and the core differ the translation says how: integer ``Div`` truncates toward zero (the core
has floor division), ``Mod`` follows the divisor's sign unless ``fmod=1``, ``Pow`` keeps the
base's dtype whatever the exponent's, ``Clip`` takes its bounds as tensors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from ..protos import element_dtype
from .common import cast, compute_dtype, dtype, scalar

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def unary(op: str) -> Handler:
    return lambda ctx: ctx.op(op, ctx.input(0))


def binary(op: str) -> Handler:
    return lambda ctx: ctx.op(op, ctx.input(0), ctx.input(1))


def variadic(op: str) -> Handler:
    """``Sum``, ``Max``, ``Min``: fold a binary op over any number of inputs."""
    def handler(ctx: "NodeContext") -> Value:
        values = ctx.inputs()
        out = values[0]
        for v in values[1:]:
            out = ctx.op(op, out, v)
        return out
    return handler


def _mean(ctx: "NodeContext") -> Value:
    values = ctx.inputs()
    return ctx.op("div", variadic("add")(ctx), scalar(ctx, len(values), values[0]))


def _div(ctx: "NodeContext") -> Value:
    x, y = ctx.input(0), ctx.input(1)
    if dtype(x).is_inexact:
        return ctx.op("div", x, y)
    return trunc_divide(ctx, x, y)


def trunc_divide(ctx: "NodeContext", x: Value, y: Value) -> Value:
    """Integer division rounding toward zero (C's), from floor division."""
    q = ctx.op("floor_divide", x, y)
    if dtype(x).kind != "i":
        return q
    zero = scalar(ctx, 0, x)
    inexact = ctx.op("not_equal", ctx.op("remainder", x, y), zero)
    signs_differ = ctx.op("not_equal", ctx.op("less", x, zero), ctx.op("less", y, zero))
    bump = ctx.op("logical_and", inexact, signs_differ)
    return ctx.op("where", bump, ctx.op("add", q, scalar(ctx, 1, x)), q)


def _mod(ctx: "NodeContext") -> Value:
    x, y = ctx.input(0), ctx.input(1)
    if not ctx.attr("fmod", 0):
        if dtype(x).is_floating:
            ctx.fail("fmod=0 is defined for integer inputs only")
        return ctx.op("remainder", x, y)
    # C's fmod takes the dividend's sign: the floor remainder, moved by y where signs differ
    r = ctx.op("remainder", x, y)
    zero = scalar(ctx, 0, x)
    if dtype(x).kind == "u":
        return r
    differ = ctx.op("logical_and", ctx.op("not_equal", r, zero),
                    ctx.op("not_equal", ctx.op("less", r, zero), ctx.op("less", x, zero)))
    return ctx.op("where", differ, ctx.op("sub", r, y), r)


def _pow(ctx: "NodeContext") -> Value:
    """The result has the base's dtype: an integer base with a float exponent is computed in
    float64 and truncated back."""
    x, y = ctx.input(0), ctx.input(1)
    if dtype(x).is_integer and dtype(y).is_inexact:
        wide = compute_dtype(dtype(x))
        return cast(ctx, ctx.op("pow", cast(ctx, x, wide), cast(ctx, y, wide)), dtype(x))
    return ctx.op("pow", x, cast(ctx, y, dtype(x)))


def _bit_shift(ctx: "NodeContext") -> Value:
    direction = ctx.attr("direction")
    op = {"LEFT": "left_shift", "RIGHT": "right_shift"}.get(direction)
    if op is None:
        ctx.fail(f"direction must be LEFT or RIGHT, got {direction!r}")
    return ctx.op(op, ctx.input(0), ctx.input(1))


def _clip(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    if ctx.version < 11:
        lo = scalar(ctx, ctx.attr("min", float(np.finfo(np.float32).min)), x)
        hi = scalar(ctx, ctx.attr("max", float(np.finfo(np.float32).max)), x)
        return ctx.op("minimum", ctx.op("maximum", x, lo), hi)
    if ctx.has(1):
        x = ctx.op("maximum", x, ctx.input(1))
    if ctx.has(2):
        x = ctx.op("minimum", x, ctx.input(2))
    return x


def _cast(ctx: "NodeContext") -> Value:
    return cast(ctx, ctx.input(0), element_dtype(ctx.attr("to")))


def _cast_like(ctx: "NodeContext") -> Value:
    return cast(ctx, ctx.input(0), dtype(ctx.input(1)))


def _is_inf(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    inf = ctx.op("isinf", x)
    positive, negative = ctx.attr("detect_positive", 1), ctx.attr("detect_negative", 1)
    if positive and negative:
        return inf
    if not (positive or negative):
        return ctx.op("logical_and", inf, ctx.op("not_equal", x, x))
    side = ctx.op("greater" if positive else "less", x, scalar(ctx, 0, x))
    return ctx.op("logical_and", inf, side)


def _where(ctx: "NodeContext") -> Value:
    return ctx.op("where", ctx.input(0), ctx.input(1), ctx.input(2))


def _identity(ctx: "NodeContext") -> object:
    return ctx.value(0)


OPS: dict[str, Handler] = {
    # arithmetic
    "Add": binary("add"), "Sub": binary("sub"), "Mul": binary("mul"), "Div": _div,
    "Mod": _mod, "Pow": _pow, "Neg": unary("neg"), "Abs": unary("abs"),
    "Reciprocal": unary("reciprocal"), "Sign": unary("sign"),
    "Sum": variadic("add"), "Mean": _mean, "Max": variadic("maximum"),
    "Min": variadic("minimum"), "Clip": _clip,
    # math functions
    "Sqrt": unary("sqrt"), "Exp": unary("exp"), "Log": unary("log"), "Erf": unary("erf"),
    "Sin": unary("sin"), "Cos": unary("cos"), "Tan": unary("tan"), "Asin": unary("asin"),
    "Acos": unary("acos"), "Atan": unary("atan"), "Sinh": unary("sinh"),
    "Cosh": unary("cosh"), "Asinh": unary("asinh"),
    "Acosh": unary("acosh"), "Atanh": unary("atanh"), "Floor": unary("floor"),
    "Ceil": unary("ceil"), "Round": unary("round"), "IsNaN": unary("isnan"), "IsInf": _is_inf,
    # comparison and logic
    "Equal": binary("equal"), "Less": binary("less"), "Greater": binary("greater"),
    "LessOrEqual": binary("less_equal"), "GreaterOrEqual": binary("greater_equal"),
    "Not": unary("logical_not"), "And": binary("logical_and"), "Or": binary("logical_or"),
    "Xor": binary("logical_xor"), "BitwiseNot": unary("bitwise_not"),
    "BitwiseAnd": binary("bitwise_and"), "BitwiseOr": binary("bitwise_or"),
    "BitwiseXor": binary("bitwise_xor"), "BitShift": _bit_shift,
    # selection and conversion
    "Where": _where, "Cast": _cast, "CastLike": _cast_like, "Identity": _identity,
}
