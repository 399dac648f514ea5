"""Elementwise ops → ONNX.  Both broadcast as NumPy does, so binary ops map one to one where
ONNX has the op; the rest are composites that keep the reference's accuracy (``expm1`` and
``log1p`` by Kahan's correction, ``remainder`` and ``floor_divide`` with NumPy's sign rules,
``lgamma`` by Lanczos' series)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context
from .reduction import reduce as reduce_axes

Translate = Callable[..., str]


def _dtype(ctx: Context) -> DType:
    """The first input's dtype (never complex: the exporter refuses complex operands of the
    ops that do not read the pair layout, see :mod:`.signal`)."""
    return ctx.in_type(0).dtype


def unary(op_type: str) -> Translate:
    """``x`` → ``op_type(x)``, widened where the op does not take the dtype."""

    def translate(ctx: Context, node: Node, x: str) -> str:
        return ctx.typed(op_type, x, dt=_dtype(ctx))

    return translate


def binary(op_type: str, *, result: str = "same") -> Translate:
    """``x, y`` → ``op_type(x, y)``; ``result="bool"`` for comparisons."""

    def translate(ctx: Context, node: Node, x: str, y: str) -> str:
        dt = _dtype(ctx)
        if result == "bool":
            return ctx.typed(op_type, x, y, dt=dt, result=to_dtype("bool"))
        return ctx.typed(op_type, x, y, dt=dt)

    return translate


def _logical(bool_op: str, bitwise_op: str) -> Translate:
    """``bool_op`` on bool tensors, ``bitwise_op`` on integers (opset 18; before, bit by bit:
    see :func:`_by_bits`)."""

    def translate(ctx: Context, node: Node, *xs: str) -> str:
        dt = ctx.in_type(0).dtype
        if dt.is_bool:
            return ctx.op(bool_op, *xs)
        if ctx.opset < 18:
            return _by_bits(ctx, bitwise_op, dt, *xs)
        return ctx.typed(bitwise_op, *xs, dt=dt)

    return translate


_UNSIGNED = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def _by_bits(ctx: Context, bitwise_op: str, dt: DType, *xs: str) -> str:
    """A bitwise op before ONNX had them: each operand's two's complement bits as a new last
    axis of 0s and 1s (shifts of the unsigned type of its width), combined, and summed back
    with their weights, 32 bits at a time (sums that stay exact however a runtime adds)."""
    width = 8 * dt.itemsize
    u64, i64 = to_dtype("uint64"), to_dtype("int64")
    shifts = ctx.const(np.arange(width, dtype=np.uint64), u64)
    bits = []
    for x in xs:
        unsigned = ctx.convert(ctx.convert(x, dt, _UNSIGNED[dt.itemsize]),
                               _UNSIGNED[dt.itemsize], u64)
        lines = ctx.op("BitShift", ctx.op("Unsqueeze", unsigned, ctx.ints([-1])), shifts,
                       direction="RIGHT")
        bits.append(ctx.cast(ctx.op("Mod", lines, ctx.const(np.asarray(2), u64), fmod=0), i64))
    if bitwise_op == "BitwiseNot":
        combined = ctx.op("Sub", ctx.const(np.asarray(1), i64), bits[0])
    elif bitwise_op == "BitwiseAnd":
        combined = ctx.op("Mul", *bits)
    elif bitwise_op == "BitwiseOr":
        combined = ctx.op("Max", *bits)
    else:
        combined = ctx.op("Mod", ctx.op("Add", *bits), ctx.const(np.asarray(2), i64), fmod=0)
    total = ""
    for low in range(0, width, 32):
        part = ctx.op("Slice", combined, ctx.ints([low]), ctx.ints([low + 32]), ctx.ints([-1]))
        weights = ctx.const(2 ** np.arange(min(32, width - low), dtype=np.int64), i64)
        value = ctx.cast(reduce_axes(ctx, "ReduceSum", ctx.op("Mul", part, weights), [-1],
                                     False, i64), u64)
        if low:
            value = ctx.op("BitShift", value, ctx.const(np.asarray(low), u64), direction="LEFT")
        total = ctx.op("Add", total, value) if total else value
    return ctx.convert(total, u64, dt)


def _composite(build: Callable[..., str], *, widen: bool = True) -> Translate:
    """A composite on floating inputs; float16 and bfloat16 compute in float32 (as the
    reference does) and round once at the end."""

    def translate(ctx: Context, node: Node, *xs: str) -> str:
        dt = _dtype(ctx)
        if widen and dt.name in ("float16", "bfloat16"):
            out = build(ctx, to_dtype("float32"), *(ctx.cast(x, "float32") for x in xs))
            return ctx.cast(out, dt)
        return build(ctx, dt, *xs)

    return translate


def _one(ctx: Context, dt: DType, value: float = 1.0) -> str:
    return ctx.const(np.asarray(value), dt)


def _expm1(ctx: Context, dt: DType, x: str) -> str:
    # Kahan: (u - 1) * x / log(u) with u = e**x is accurate to a few ulps near 0
    u = ctx.typed("Exp", x, dt=dt)
    um1 = ctx.op("Sub", u, _one(ctx, dt))
    log_u = ctx.typed("Log", u, dt=dt)
    corrected = ctx.op("Div", ctx.op("Mul", um1, x), log_u)
    exact = ctx.op("Or", ctx.op("Equal", u, _one(ctx, dt)),
                   ctx.op("Or", ctx.op("Equal", um1, _one(ctx, dt, -1.0)),
                          ctx.op("IsInf", u)))
    small = ctx.op("Equal", u, _one(ctx, dt))
    return ctx.op("Where", small, x, ctx.op("Where", exact, um1, corrected))


def _log1p(ctx: Context, dt: DType, x: str) -> str:
    # Kahan: log(u) * x / (u - 1) with u = 1 + x
    u = ctx.op("Add", x, _one(ctx, dt))
    log_u = ctx.typed("Log", u, dt=dt)
    corrected = ctx.op("Div", ctx.op("Mul", log_u, x), ctx.op("Sub", u, _one(ctx, dt)))
    plain = ctx.op("Or", ctx.op("Equal", u, _one(ctx, dt)), ctx.op("IsInf", u))
    near_one = ctx.op("Equal", u, _one(ctx, dt))
    return ctx.op("Where", near_one, x, ctx.op("Where", plain, log_u, corrected))


def _scaled_log(factor: float) -> Callable[..., str]:
    def build(ctx: Context, dt: DType, x: str) -> str:
        return ctx.op("Mul", ctx.typed("Log", x, dt=dt), _one(ctx, dt, factor))
    return build


def _rsqrt(ctx: Context, dt: DType, x: str) -> str:
    return ctx.op("Div", _one(ctx, dt), ctx.typed("Sqrt", x, dt=dt))


def _erfc(ctx: Context, dt: DType, x: str) -> str:
    return ctx.op("Sub", _one(ctx, dt), ctx.typed("Erf", x, dt=dt))


def _silu(ctx: Context, dt: DType, x: str) -> str:
    return ctx.op("Mul", x, ctx.typed("Sigmoid", x, dt=dt))


def _softplus(ctx: Context, dt: DType, x: str) -> str:
    # log(1 + e**x) = max(x, 0) + log1p(e**-|x|): no overflow, exact for large |x|
    positive = ctx.op("Max", x, _one(ctx, dt, 0.0))
    tail = _log1p(ctx, dt, ctx.typed("Exp", ctx.op("Neg", ctx.op("Abs", x)), dt=dt))
    return ctx.op("Add", positive, tail)


def _atan2(ctx: Context, dt: DType, x: str, y: str) -> str:
    """``arctan2(x, y)``: the angle of the point ``(y, x)``, NumPy's argument order."""
    zero = _one(ctx, dt, 0.0)
    pi = _one(ctx, dt, math.pi)
    half_pi = _one(ctx, dt, math.pi / 2)
    base = ctx.typed("Atan", ctx.op("Div", x, y), dt=dt)
    x_negative = ctx.op("Less", x, zero)
    around = ctx.op("Where", x_negative, ctx.op("Sub", base, pi), ctx.op("Add", base, pi))
    y_negative = ctx.op("Less", y, zero)
    on_axis = ctx.op("Where", ctx.op("Greater", x, zero), half_pi,
                     ctx.op("Where", x_negative, ctx.op("Neg", half_pi), zero))
    y_zero = ctx.op("Equal", y, zero)
    return ctx.op("Where", y_zero, on_axis, ctx.op("Where", y_negative, around, base))


# Lanczos' series as Numerical Recipes (3rd ed., gammln) gives it: g = 671/128, 14 terms,
# within about 1e-15 of log Gamma(x) for x > 0.
_LANCZOS_SHIFT = 5.24218750000000000
_LANCZOS_BASE = 0.999999999999997092
_LANCZOS = (57.1562356658629235, -59.5979603554754912, 14.1360979747417471,
            -0.491913816097620199, .339946499848118887e-4, .465236289270485756e-4,
            -.983744753048795646e-4, .158088703224912494e-3, -.210264441724104883e-3,
            .217439618115212643e-3, -.164318106536763890e-3, .844182239838527433e-4,
            -.261908384015814087e-4, .368991826595316234e-5)


def _lgamma(ctx: Context, dt: DType, x: str) -> str:
    """log|Gamma(x)|: Lanczos' series for x >= 0.5 and the reflection formula below
    (computed in float64 whatever the input type, as the reference does)."""
    f64 = to_dtype("float64")
    x64 = ctx.convert(x, dt, f64)
    half = _one(ctx, f64, 0.5)
    reflect = ctx.op("Less", x64, half)
    z = ctx.op("Where", reflect, ctx.op("Sub", _one(ctx, f64), x64), x64)  # z >= 0.5
    series = _one(ctx, f64, _LANCZOS_BASE)
    for k, c in enumerate(_LANCZOS, start=1):
        series = ctx.op("Add", series, ctx.op("Div", _one(ctx, f64, c),
                                              ctx.op("Add", z, _one(ctx, f64, float(k)))))
    t = ctx.op("Add", z, _one(ctx, f64, _LANCZOS_SHIFT))
    head = ctx.op("Sub", ctx.op("Mul", ctx.op("Add", z, half), ctx.op("Log", t)), t)
    scaled = ctx.op("Div", ctx.op("Mul", _one(ctx, f64, math.sqrt(2 * math.pi)), series), z)
    log_gamma = ctx.op("Add", head, ctx.op("Log", scaled))
    # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    sin_pi_x = ctx.op("Abs", ctx.op("Sin", ctx.op("Mul", x64, _one(ctx, f64, math.pi))))
    reflected = ctx.op("Sub", ctx.op("Log", ctx.op("Div", _one(ctx, f64, math.pi), sin_pi_x)),
                       log_gamma)
    out = ctx.op("Where", reflect, reflected, log_gamma)
    return ctx.convert(out, f64, dt)


def _gelu(ctx: Context, node: Node, x: str) -> str:
    dt = _dtype(ctx)
    approximate = node.attrs["approximate"]
    if ctx.opset >= 20:
        return ctx.typed("Gelu", x, dt=dt, approximate=approximate)
    return _composite(_gelu_tanh if approximate == "tanh" else _gelu_erf)(ctx, node, x)


def _gelu_erf(ctx: Context, dt: DType, x: str) -> str:
    inner = ctx.typed("Erf", ctx.op("Mul", x, _one(ctx, dt, 1 / math.sqrt(2))), dt=dt)
    return ctx.op("Mul", ctx.op("Mul", x, _one(ctx, dt, 0.5)),
                  ctx.op("Add", inner, _one(ctx, dt)))


def _gelu_tanh(ctx: Context, dt: DType, x: str) -> str:
    cube = ctx.op("Mul", ctx.op("Mul", x, x), x)
    inner = ctx.op("Mul", ctx.op("Add", x, ctx.op("Mul", cube, _one(ctx, dt, 0.044715))),
                   _one(ctx, dt, math.sqrt(2 / math.pi)))
    return ctx.op("Mul", ctx.op("Mul", x, _one(ctx, dt, 0.5)),
                  ctx.op("Add", ctx.typed("Tanh", inner, dt=dt), _one(ctx, dt)))


def _square(ctx: Context, node: Node, x: str) -> str:
    return ctx.typed("Mul", x, x, dt=_dtype(ctx))


def _reciprocal(ctx: Context, node: Node, x: str) -> str:
    return ctx.typed("Reciprocal", x, dt=_dtype(ctx))


def _div(ctx: Context, node: Node, x: str, y: str) -> str:
    return ctx.typed("Div", x, y, dt=_dtype(ctx))


def _remainder(ctx: Context, node: Node, x: str, y: str) -> str:
    dt = _dtype(ctx)
    if not dt.is_floating:
        return ctx.typed("Mod", x, y, dt=dt, fmod=0)  # the sign of the divisor, as Python's %
    return _composite(_float_remainder)(ctx, node, x, y)


def _float_remainder(ctx: Context, dt: DType, x: str, y: str) -> str:
    """NumPy: ``r = fmod(x, y)``, moved into the divisor's sign."""
    r = ctx.op("Mod", x, y, fmod=1)
    zero = _one(ctx, dt, 0.0)
    signs_differ = ctx.op("Xor", ctx.op("Less", r, zero), ctx.op("Less", y, zero))
    moved = ctx.op("And", ctx.op("Not", ctx.op("Equal", r, zero)), signs_differ)
    return ctx.op("Where", moved, ctx.op("Add", r, y), r)


def _floor_divide(ctx: Context, node: Node, x: str, y: str) -> str:
    dt = _dtype(ctx)
    if not dt.is_floating:
        # the remainder has the divisor's sign, so x - r is a multiple of y: exact division
        r = ctx.typed("Mod", x, y, dt=dt, fmod=0)
        return ctx.typed("Div", ctx.typed("Sub", x, r, dt=dt), y, dt=dt)
    return _composite(_float_floor_divide)(ctx, node, x, y)


def _float_floor_divide(ctx: Context, dt: DType, x: str, y: str) -> str:
    """NumPy's ``npy_divmod``: ``div = (x - fmod(x, y)) / y``, one less where the remainder
    changes sign, then floored and rounded toward the nearest integer; division by zero
    gives ``x / y``."""
    zero, one = _one(ctx, dt, 0.0), _one(ctx, dt)
    mod = ctx.op("Mod", x, y, fmod=1)
    div = ctx.op("Div", ctx.op("Sub", x, mod), y)
    signs_differ = ctx.op("Xor", ctx.op("Less", mod, zero), ctx.op("Less", y, zero))
    adjust = ctx.op("And", ctx.op("Not", ctx.op("Equal", mod, zero)), signs_differ)
    div = ctx.op("Where", adjust, ctx.op("Sub", div, one), div)
    floored = ctx.typed("Floor", div, dt=dt)
    rounded = ctx.op("Where", ctx.op("Greater", ctx.op("Sub", div, floored), _one(ctx, dt, 0.5)),
                     ctx.op("Add", floored, one), floored)
    quotient = ctx.op("Div", x, y)
    keep_sign = ctx.op("Mul", ctx.op("Sign", quotient), zero)  # +-0 with the sign of x / y
    out = ctx.op("Where", ctx.op("Equal", div, zero), keep_sign, rounded)
    return ctx.op("Where", ctx.op("Equal", y, zero), quotient, out)


def _pow(ctx: Context, node: Node, x: str, y: str) -> str:
    return ctx.typed("Pow", x, y, dt=_dtype(ctx), params=("T", "T1"))


def _shift(direction: str) -> Translate:
    """Shifts: ONNX's BitShift takes unsigned types, so signed ones shift their two's
    complement bits as the unsigned type of the same width (an arithmetic right shift fills
    with the sign: floor division by 2**y)."""

    def translate(ctx: Context, node: Node, x: str, y: str) -> str:
        dt = ctx.in_type(0).dtype
        if dt.kind == "u":
            return ctx.typed("BitShift", x, y, dt=dt, direction=direction)
        i64 = to_dtype("int64")
        wide = [ctx.convert(v, dt, i64) for v in (x, y)]
        power = ctx.op("Pow", _one(ctx, i64, 2), wide[1])
        if direction == "LEFT":
            out = ctx.op("Mul", wide[0], power)
        else:
            remainder = ctx.op("Mod", wide[0], power, fmod=0)
            out = ctx.op("Div", ctx.op("Sub", wide[0], remainder), power)
        return ctx.convert(out, i64, dt)

    return translate


def _relu(ctx: Context, node: Node, x: str) -> str:
    dt = _dtype(ctx)
    if dt.is_floating and ctx.accepts("Relu", dt):
        return ctx.op("Relu", x)
    return ctx.typed("Max", x, _one(ctx, dt, 0), dt=dt)  # runtimes lack integer Relu kernels


def _neg(ctx: Context, node: Node, x: str) -> str:
    return ctx.typed("Neg", x, dt=_dtype(ctx))


def _is(op_type: str) -> Translate:
    def translate(ctx: Context, node: Node, x: str) -> str:
        return ctx.typed(op_type, x, dt=_dtype(ctx), result=to_dtype("bool"), params=("T1",))
    return translate


def _isfinite(ctx: Context, node: Node, x: str) -> str:
    bad = ctx.op("Or", _is("IsNaN")(ctx, node, x), _is("IsInf")(ctx, node, x))
    return ctx.op("Not", bad)


def _bitwise_not(ctx: Context, node: Node, x: str) -> str:
    return _logical("Not", "BitwiseNot")(ctx, node, x)


def _where(ctx: Context, node: Node, cond: str, x: str, y: str) -> str:
    dt = ctx.in_type(1).dtype
    return ctx.typed("Where", cond, x, y, dt=dt, widen=(1, 2))


def _clip(ctx: Context, node: Node, x: str) -> str:
    dt = _dtype(ctx)
    bounds = []
    for key in ("min", "max"):
        value = node.attrs[key]
        if value is None:
            bounds.append("")
        elif dt.is_integer:  # as the reference: the bound converted to the integer type
            bounds.append(ctx.const(np.asarray(value).astype(dt.storage), dt))
        else:
            bounds.append(ctx.const(np.asarray(value), dt))
    return ctx.typed("Clip", x, *bounds, dt=dt)


def _cast(ctx: Context, node: Node, x: str) -> str:
    return ctx.cast(x, node.attrs["dtype"])


def _sign(ctx: Context, node: Node, x: str) -> str:
    return ctx.typed("Sign", x, dt=_dtype(ctx))


def _trunc(ctx: Context, dt: DType, x: str) -> str:
    floor, ceil = ctx.typed("Floor", x, dt=dt), ctx.typed("Ceil", x, dt=dt)
    negative = ctx.op("Less", x, ctx.const(np.zeros(()), dt))
    return ctx.op("Where", negative, ceil, floor)


def _not_equal(ctx: Context, node: Node, x: str, y: str) -> str:
    return ctx.op("Not", binary("Equal", result="bool")(ctx, node, x, y))


TRANSLATORS: dict[str, Translate] = {
    "neg": _neg, "sign": _sign, "square": _square,
    "reciprocal": _reciprocal, "sqrt": unary("Sqrt"), "rsqrt": _composite(_rsqrt),
    "exp": unary("Exp"), "expm1": _composite(_expm1), "log": unary("Log"),
    "log1p": _composite(_log1p), "log2": _composite(_scaled_log(1 / math.log(2))),
    "log10": _composite(_scaled_log(1 / math.log(10))),
    "sin": unary("Sin"), "cos": unary("Cos"), "tan": unary("Tan"), "asin": unary("Asin"),
    "acos": unary("Acos"), "atan": unary("Atan"), "sinh": unary("Sinh"), "cosh": unary("Cosh"),
    "tanh": unary("Tanh"), "asinh": unary("Asinh"), "acosh": unary("Acosh"),
    "atanh": unary("Atanh"), "erf": unary("Erf"), "erfc": _composite(_erfc),
    "lgamma": _composite(_lgamma, widen=False), "sigmoid": unary("Sigmoid"),
    "softplus": _composite(_softplus), "relu": _relu, "silu": _composite(_silu),
    "gelu": _gelu, "floor": unary("Floor"), "ceil": unary("Ceil"), "round": unary("Round"),
    "trunc": _composite(_trunc),
    "isnan": _is("IsNaN"), "isinf": _is("IsInf"), "isfinite": _isfinite,
    "logical_not": unary("Not"), "bitwise_not": _bitwise_not,
    "add": binary("Add"), "sub": binary("Sub"), "mul": binary("Mul"), "div": _div,
    "floor_divide": _floor_divide, "remainder": _remainder, "pow": _pow,
    "maximum": binary("Max"), "minimum": binary("Min"), "atan2": _composite(_atan2),
    "equal": binary("Equal", result="bool"), "not_equal": _not_equal,
    "less": binary("Less", result="bool"), "less_equal": binary("LessOrEqual", result="bool"),
    "greater": binary("Greater", result="bool"),
    "greater_equal": binary("GreaterOrEqual", result="bool"),
    "logical_and": binary("And"), "logical_or": binary("Or"), "logical_xor": binary("Xor"),
    "bitwise_and": _logical("And", "BitwiseAnd"), "bitwise_or": _logical("Or", "BitwiseOr"),
    "bitwise_xor": _logical("Xor", "BitwiseXor"),
    "left_shift": _shift("LEFT"), "right_shift": _shift("RIGHT"),
    "where": _where, "clip": _clip, "cast": _cast,
}

