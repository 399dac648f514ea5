"""Elementwise ops: unary math, binary arithmetic, comparison, logical and bitwise ops,
``where``, ``clip`` and ``cast``.  All broadcast by NumPy's rules (see :mod:`.rules`).

The composites among them (see :mod:`.primitives`) decompose into the others, each mirroring
its reference's formula and precision: ``sigmoid`` is the same stable two-branch formula,
``gelu`` the same products in the same order, ``softplus`` NumPy's ``logaddexp(0, x)``.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator, Optional

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, as_storage, bool_, complex64, float32, float64
from ..ir.graph import Value
from ..ir.types import TensorType
from .compose import in_working_precision, scalar, tensor_type
from .registry import Attr, DecomposeFn, Emitter, OpDef
from .rules import (
    ANY, BOOL, FLOAT, INEXACT, INT_OR_BOOL, INTEGER, KIND_WORDS, NUMERIC, REAL,
    broadcast_shapes, require_kind, same_dtype, tensor,
)
from .samples import OpSample, SampleFn, random_array

#: op name → (arity, accepted kinds) of the ops made by :func:`unary` and :func:`binary`,
#: for tests and conformance kits that generate inputs.
ACCEPTS: dict[str, tuple[int, str]] = {}


def unary(name: str, fn: Callable, kinds: str, doc: str, *, out: str = "same",
          traits: tuple[str, ...] = (), decomposition: Optional[DecomposeFn] = None) -> OpDef:
    """An elementwise op of one tensor.  ``out`` is ``"same"`` (the input's dtype),
    ``"bool"``, or ``"real"`` (complex inputs give their real counterpart)."""
    ACCEPTS[name] = (1, kinds)

    def infer(x: TensorType) -> TensorType:
        x = tensor(x)
        require_kind(x, kinds, KIND_WORDS[kinds])
        if out == "bool":
            return TensorType(bool_, x.shape)
        if out == "real" and x.dtype.is_complex:
            return TensorType(_real_of(x.dtype), x.shape)
        return x

    return OpDef(name, ("x",), infer, fn, traits=frozenset({"elementwise", *traits}), doc=doc,
                 decomposition=decomposition)


def binary(name: str, fn: Callable, kinds: str, doc: str, *, out: str = "same",
           traits: tuple[str, ...] = (), decomposition: Optional[DecomposeFn] = None) -> OpDef:
    """An elementwise op of two tensors of one dtype, broadcast together."""
    ACCEPTS[name] = (2, kinds)

    def infer(x: TensorType, y: TensorType) -> TensorType:
        x, y = tensor(x, "x"), tensor(y, "y")
        dt = same_dtype([x, y])
        require_kind(x, kinds, KIND_WORDS[kinds])
        shape = broadcast_shapes(x.shape, y.shape)
        return TensorType(bool_ if out == "bool" else dt, shape)

    return OpDef(name, ("x", "y"), infer, fn, traits=frozenset({"elementwise", *traits}),
                 doc=doc, decomposition=decomposition)


def _real_of(dt: DType) -> DType:
    return float32 if dt is complex64 else float64


def _in_float64(fn: Callable) -> Callable:
    """Evaluate a scalar math function elementwise in float64 (reference accuracy)."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def apply(x: np.ndarray) -> np.ndarray:
        return vec(x.astype(np.float64)).astype(x.dtype) if x.size else x

    return apply


_erf = _in_float64(math.erf)
_erfc = _in_float64(math.erfc)
_lgamma = _in_float64(math.lgamma)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # Stable for large |x|: exp of a non-positive number only.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, x)


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x**3)))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_infer(x: TensorType, approximate: str) -> TensorType:
    x = tensor(x)
    require_kind(x, FLOAT, KIND_WORDS[FLOAT])
    if approximate not in ("none", "tanh"):
        raise InferError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return x


def _where_infer(cond: TensorType, x: TensorType, y: TensorType) -> TensorType:
    cond, x, y = tensor(cond, "cond"), tensor(x, "x"), tensor(y, "y")
    require_kind(cond, BOOL, "a bool condition")
    dt = same_dtype([x, y])
    return TensorType(dt, broadcast_shapes(cond.shape, x.shape, y.shape))


def _clip_infer(x: TensorType, min: float | None, max: float | None) -> TensorType:
    x = tensor(x)
    require_kind(x, REAL, KIND_WORDS[REAL])
    if min is not None and max is not None and min > max:
        raise InferError(f"min ({min}) is greater than max ({max})")
    return x


def _clip(x: np.ndarray, min: float | None, max: float | None) -> np.ndarray:
    if min is not None:
        x = np.maximum(x, np.asarray(min).astype(x.dtype) if x.dtype.kind in "iu" else min)
    if max is not None:
        x = np.minimum(x, np.asarray(max).astype(x.dtype) if x.dtype.kind in "iu" else max)
    return x


def _cast_infer(x: TensorType, dtype) -> TensorType:
    return tensor(x).with_dtype(dtype)


def _cast(x: np.ndarray, dtype) -> np.ndarray:
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real  # as NumPy's astype, without its ComplexWarning
    return x.astype(dtype.storage)


def _floor_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        _check_int_divisor(y, "floor_divide")
    return np.floor_divide(x, y)


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        _check_int_divisor(y, "remainder")
    return np.remainder(x, y)


def _check_int_divisor(y: np.ndarray, op: str) -> None:
    if np.any(y == 0):
        raise ZeroDivisionError(f"{op}: integer division by zero")


def _divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.true_divide(x, y).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.zeros((), x.dtype))


def _silu(x: np.ndarray) -> np.ndarray:
    return x * _sigmoid(x)


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    return np.sign(x)


# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _like(b: Emitter, x: Value, value: float) -> Value:
    """A scalar of ``x``'s dtype."""
    return scalar(b, value, tensor_type(x).dtype)


def _decompose_sub(b: Emitter, x: Value, y: Value) -> Value:
    return b.op("add", x, b.op("neg", y))  # IEEE defines x - y as x + (-y); integers wrap alike


def _decompose_square(b: Emitter, x: Value) -> Value:
    return b.op("mul", x, x)


def _decompose_rsqrt(b: Emitter, x: Value) -> Value:
    return b.op("div", _like(b, x, 1), b.op("sqrt", x))


def _decompose_sign(b: Emitter, x: Value) -> Value:
    if tensor_type(x).dtype.is_complex:  # x / |x|, 0 at 0, as the reference
        mag = b.op("abs", x)
        zero = b.op("equal", mag, _like(b, mag, 0))
        safe = b.op("where", zero, _like(b, mag, 1), mag)
        quotient = b.op("div", x, b.op("cast", safe, dtype=tensor_type(x).dtype))
        return b.op("where", zero, _like(b, x, 0), quotient)
    # x + 0 turns -0.0 into 0.0 and keeps NaN, as np.sign
    rest = b.op("add", x, _like(b, x, 0))
    if tensor_type(x).dtype.kind != "u":
        rest = b.op("where", b.op("less", x, _like(b, x, 0)), _like(b, x, -1), rest)
    return b.op("where", b.op("greater", x, _like(b, x, 0)), _like(b, x, 1), rest)


def _decompose_ceil(b: Emitter, x: Value) -> Value:
    return b.op("neg", b.op("floor", b.op("neg", x)))


def _decompose_trunc(b: Emitter, x: Value) -> Value:
    return b.op("where", b.op("less", x, _like(b, x, 0)), b.op("ceil", x), b.op("floor", x))


def _decompose_sigmoid(b: Emitter, x: Value) -> Value:
    e = b.op("exp", b.op("neg", b.op("abs", x)))
    one = _like(b, x, 1)
    total = b.op("add", one, e)
    nonnegative = b.op("greater_equal", x, _like(b, x, 0))
    return b.op("where", nonnegative, b.op("div", one, total), b.op("div", e, total))


def _decompose_softplus(b: Emitter, x: Value) -> Value:
    tail = b.op("log1p", b.op("exp", b.op("neg", b.op("abs", x))))
    return b.op("add", b.op("relu", x), tail)


def _decompose_relu(b: Emitter, x: Value) -> Value:
    return b.op("maximum", x, _like(b, x, 0))


def _decompose_silu(b: Emitter, x: Value) -> Value:
    return b.op("mul", x, b.op("sigmoid", x))


def _decompose_gelu(b: Emitter, x: Value, approximate: str) -> Value:
    if approximate == "tanh":
        cube = b.op("pow", x, _like(b, x, 3))
        inner = b.op("add", x, b.op("mul", _like(b, x, 0.044715), cube))
        curve = b.op("tanh", b.op("mul", _like(b, x, math.sqrt(2 / math.pi)), inner))
    else:
        curve = b.op("erf", b.op("div", x, _like(b, x, math.sqrt(2))))
    half_x = b.op("mul", _like(b, x, 0.5), x)
    return b.op("mul", half_x, b.op("add", _like(b, x, 1), curve))


def _decompose_isnan(b: Emitter, x: Value) -> Value:
    return b.op("not_equal", x, x)


def _magnitude_is(op: str) -> DecomposeFn:
    """``op(|x|, inf)``: ``equal`` gives isinf, ``less`` isfinite (NaN compares false)."""

    def decomposition(b: Emitter, x: Value) -> Value:
        mag = b.op("abs", x)
        return b.op(op, mag, _like(b, mag, math.inf))

    return decomposition


def _logical(bitwise: str) -> DecomposeFn:
    """A logical op as the bitwise op on bools."""
    return lambda b, *xs: b.op(bitwise, *xs)


def _swapped(op: str) -> DecomposeFn:
    """``op(y, x)``: ``x > y`` is ``y < x``."""
    return lambda b, x, y: b.op(op, y, x)


def _decompose_less_equal(b: Emitter, x: Value, y: Value) -> Value:
    return b.op("logical_or", b.op("less", x, y), b.op("equal", x, y))


def _decompose_not_equal(b: Emitter, x: Value, y: Value) -> Value:
    return b.op("logical_not", b.op("equal", x, y))


def _bound(b: Emitter, x: Value, value: float) -> Value:
    """A bound of ``clip`` converted to ``x``'s dtype as the reference converts it (NumPy's
    cast for integers; rounding, possibly to an infinity, for floats)."""
    dt = tensor_type(x).dtype
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            stored = np.asarray(value).astype(dt.storage)
        else:
            stored = as_storage(np.float64(value), dt)
    return scalar(b, float(stored), dt)


def _decompose_clip(b: Emitter, x: Value, min: float | None, max: float | None) -> Value:
    if min is not None:
        x = b.op("maximum", x, _bound(b, x, min))
    if max is not None:
        x = b.op("minimum", x, _bound(b, x, max))
    return x


OPS: list[OpDef] = [
    # unary arithmetic
    unary("neg", np.negative, NUMERIC, "-x"),
    unary("abs", np.abs, NUMERIC, "|x|; complex inputs give a real result", out="real"),
    unary("sign", _sign, NUMERIC, "-1, 0 or 1 (x/|x| for complex)",
          decomposition=_decompose_sign),
    unary("square", np.square, NUMERIC, "x*x", decomposition=_decompose_square),
    unary("reciprocal", np.reciprocal, INEXACT, "1/x"),
    unary("sqrt", np.sqrt, INEXACT, "square root (NaN below 0 for real inputs)"),
    unary("rsqrt", _rsqrt, FLOAT, "1/sqrt(x)",
          decomposition=in_working_precision(_decompose_rsqrt, widen_float16=False)),
    unary("exp", np.exp, INEXACT, "e**x"),
    unary("expm1", np.expm1, FLOAT, "e**x - 1, accurate near 0"),
    unary("log", np.log, INEXACT, "natural logarithm"),
    unary("log1p", np.log1p, FLOAT, "log(1 + x), accurate near 0"),
    unary("log2", np.log2, FLOAT, "base-2 logarithm"),
    unary("log10", np.log10, FLOAT, "base-10 logarithm"),
    unary("sin", np.sin, INEXACT, "sine"),
    unary("cos", np.cos, INEXACT, "cosine"),
    unary("tan", np.tan, INEXACT, "tangent"),
    unary("asin", np.arcsin, FLOAT, "inverse sine"),
    unary("acos", np.arccos, FLOAT, "inverse cosine"),
    unary("atan", np.arctan, FLOAT, "inverse tangent"),
    unary("sinh", np.sinh, INEXACT, "hyperbolic sine"),
    unary("cosh", np.cosh, INEXACT, "hyperbolic cosine"),
    unary("tanh", np.tanh, INEXACT, "hyperbolic tangent"),
    unary("asinh", np.arcsinh, FLOAT, "inverse hyperbolic sine"),
    unary("acosh", np.arccosh, FLOAT, "inverse hyperbolic cosine"),
    unary("atanh", np.arctanh, FLOAT, "inverse hyperbolic tangent"),
    unary("erf", _erf, FLOAT, "the error function"),
    unary("erfc", _erfc, FLOAT, "1 - erf(x), accurate for large x"),
    unary("lgamma", _lgamma, FLOAT, "log |Gamma(x)|"),
    unary("sigmoid", _sigmoid, FLOAT, "1 / (1 + e**-x)",
          decomposition=in_working_precision(_decompose_sigmoid, widen_float16=False)),
    unary("softplus", _softplus, FLOAT, "log(1 + e**x)",
          decomposition=in_working_precision(_decompose_softplus)),
    unary("relu", _relu, REAL, "max(x, 0)", decomposition=_decompose_relu),
    unary("silu", _silu, FLOAT, "x * sigmoid(x) (swish)",
          decomposition=in_working_precision(_decompose_silu, widen_float16=False)),
    OpDef("gelu", ("x",), _gelu_infer, _gelu, attrs=(Attr("approximate", "str", "none"),),
          traits=frozenset({"elementwise"}),
          doc="Gaussian error linear unit; approximate='tanh' uses the tanh formula",
          decomposition=in_working_precision(_decompose_gelu, widen_float16=False)),
    unary("floor", np.floor, FLOAT, "round toward -inf"),
    unary("ceil", np.ceil, FLOAT, "round toward +inf", decomposition=_decompose_ceil),
    unary("round", np.round, FLOAT, "round half to even"),
    unary("trunc", np.trunc, FLOAT, "round toward 0", decomposition=_decompose_trunc),
    unary("isnan", np.isnan, INEXACT, "x is NaN", out="bool", decomposition=_decompose_isnan),
    unary("isinf", np.isinf, INEXACT, "x is +-inf", out="bool",
          decomposition=_magnitude_is("equal")),
    unary("isfinite", np.isfinite, INEXACT, "x is neither NaN nor infinite", out="bool",
          decomposition=_magnitude_is("less")),
    unary("logical_not", np.logical_not, BOOL, "not x", decomposition=_logical("bitwise_not")),
    unary("bitwise_not", np.invert, INT_OR_BOOL, "~x"),
    unary("real", np.real, NUMERIC, "real part", out="real"),
    unary("imag", np.imag, NUMERIC, "imaginary part (0 for real inputs)", out="real"),
    unary("conj", np.conj, NUMERIC, "complex conjugate"),
    # binary arithmetic
    binary("add", np.add, NUMERIC, "x + y", traits=("commutative",)),
    binary("sub", np.subtract, NUMERIC, "x - y", decomposition=_decompose_sub),
    binary("mul", np.multiply, NUMERIC, "x * y", traits=("commutative",)),
    binary("div", _divide, INEXACT, "true division x / y"),
    binary("floor_divide", _floor_divide, REAL, "floor(x / y); integer division by 0 is an error"),
    binary("remainder", _remainder, REAL, "x - floor(x / y) * y (sign of y, as Python's %)"),
    binary("pow", np.power, NUMERIC, "x ** y"),
    binary("maximum", np.maximum, REAL, "elementwise max (NaN propagates)", traits=("commutative",)),
    binary("minimum", np.minimum, REAL, "elementwise min (NaN propagates)", traits=("commutative",)),
    binary("atan2", np.arctan2, FLOAT, "arctan(x / y) in the quadrant of the point (y, x), as NumPy's arctan2"),
    # comparison
    binary("equal", np.equal, ANY, "x == y", out="bool", traits=("commutative",)),
    binary("not_equal", np.not_equal, ANY, "x != y", out="bool", traits=("commutative",),
           decomposition=_decompose_not_equal),
    binary("less", np.less, REAL, "x < y", out="bool"),
    binary("less_equal", np.less_equal, REAL, "x <= y", out="bool",
           decomposition=_decompose_less_equal),
    binary("greater", np.greater, REAL, "x > y", out="bool", decomposition=_swapped("less")),
    binary("greater_equal", np.greater_equal, REAL, "x >= y", out="bool",
           decomposition=_swapped("less_equal")),
    # logical and bitwise
    binary("logical_and", np.logical_and, BOOL, "x and y", traits=("commutative",),
           decomposition=_logical("bitwise_and")),
    binary("logical_or", np.logical_or, BOOL, "x or y", traits=("commutative",),
           decomposition=_logical("bitwise_or")),
    binary("logical_xor", np.logical_xor, BOOL, "x xor y", traits=("commutative",),
           decomposition=_logical("bitwise_xor")),
    binary("bitwise_and", np.bitwise_and, INT_OR_BOOL, "x & y", traits=("commutative",)),
    binary("bitwise_or", np.bitwise_or, INT_OR_BOOL, "x | y", traits=("commutative",)),
    binary("bitwise_xor", np.bitwise_xor, INT_OR_BOOL, "x ^ y", traits=("commutative",)),
    binary("left_shift", np.left_shift, INTEGER, "x << y"),
    binary("right_shift", np.right_shift, INTEGER, "x >> y (arithmetic for signed types)"),
    # selection and conversion
    OpDef("where", ("cond", "x", "y"), _where_infer, np.where, traits=frozenset({"elementwise"}),
          doc="x where cond is true, else y; all three broadcast together"),
    OpDef("clip", ("x",), _clip_infer, _clip,
          attrs=(Attr("min", "float?", None), Attr("max", "float?", None)),
          traits=frozenset({"elementwise"}), doc="clamp x to [min, max]; None leaves a side open",
          decomposition=_decompose_clip),
    OpDef("cast", ("x",), _cast_infer, _cast, attrs=(Attr("dtype", "dtype"),),
          traits=frozenset({"elementwise"}),
          doc="convert to dtype with NumPy's astype semantics (complex→real drops the imaginary part)"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the elementwise ops: every op on each dtype family it accepts, on broadcast
# shapes, scalars, and size-0 and size-1 dimensions.


_DTYPES_BY_KIND = {
    "b": ("bool",), "i": ("int32", "int64", "int8"), "u": ("uint8",),
    "f": ("float32", "float64", "float16", "bfloat16"), "c": ("complex64", "complex128"),
}
_SHAPES = (((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((), (5,)), ((0, 3), (1, 3)), ((1,), ()))

# Input ranges that keep each op inside its domain (so results are finite and comparable).
_DOMAIN = {
    "log": (0.1, 3.0), "log1p": (-0.5, 3.0), "log2": (0.1, 3.0), "log10": (0.1, 3.0),
    "sqrt": (0.0, 4.0), "rsqrt": (0.1, 4.0), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
    "acosh": (1.1, 4.0), "atanh": (-0.9, 0.9), "reciprocal": (0.5, 2.0), "lgamma": (0.1, 5.0),
    "tan": (-1.2, 1.2), "pow": (0.5, 2.0), "div": (0.5, 2.0),
    "floor_divide": (1, 4), "remainder": (1, 4), "left_shift": (0, 3), "right_shift": (0, 3),
}


def _dtypes(kinds: str) -> Iterator[str]:
    for kind in kinds:
        yield from _DTYPES_BY_KIND[kind]


def _unary_samples(op: str, kinds: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        low, high = _DOMAIN.get(op, (-2.0, 2.0))
        for dt in _dtypes(kinds):
            for shape, _ in _SHAPES:
                yield OpSample(op, (random_array(rng, shape, dt, low, high),), dtypes=(dt,))
    return fn


def _binary_samples(op: str, kinds: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        low, high = _DOMAIN.get(op, (-2.0, 2.0))
        for dt in _dtypes(kinds):
            for sx, sy in _SHAPES:
                x = random_array(rng, sx, dt, low, high)
                y = random_array(rng, sy, dt, low, high)
                yield OpSample(op, (x, y), dtypes=(dt, dt))
    return fn


def _gelu_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in _DTYPES_BY_KIND["f"]:
        for approximate in ("none", "tanh"):
            yield OpSample("gelu", (random_array(rng, (3, 5), dt, -4, 4),),
                           {"approximate": approximate}, dtypes=(dt,))


def _where_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in ("float32", "int64", "bool", "complex64"):
        cond = random_array(rng, (2, 1, 4), "bool")
        yield OpSample("where", (cond, random_array(rng, (3, 1), dt), random_array(rng, (4,), dt)))
    yield OpSample("where", (random_array(rng, (0, 2), "bool"), random_array(rng, (1, 2), "float32"),
                             random_array(rng, (), "float32")))


def _clip_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in ("float32", "float64", "int32", "bfloat16"):
        x = random_array(rng, (4, 5), dt, -5, 5)
        yield OpSample("clip", (x,), {"min": -1.0, "max": 2.0}, dtypes=(dt,))
        yield OpSample("clip", (x,), {"min": None, "max": 0.5}, dtypes=(dt,))
        yield OpSample("clip", (x,), {"min": -0.5}, dtypes=(dt,))


def _cast_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    pairs = [("float32", "int32"), ("int64", "float32"), ("float32", "bfloat16"),
             ("bfloat16", "float64"), ("float64", "float16"), ("bool", "float32"),
             ("float32", "bool"), ("complex64", "float32"), ("int32", "uint8"),
             ("float32", "complex128")]
    for src, dst in pairs:
        yield OpSample("cast", (random_array(rng, (3, 2), src, -3, 3),), {"dtype": dst}, dtypes=(src,))


SAMPLES: dict[str, SampleFn] = {
    name: (_unary_samples if arity == 1 else _binary_samples)(name, kinds)
    for name, (arity, kinds) in ACCEPTS.items()
}
SAMPLES.update({"gelu": _gelu_samples, "where": _where_samples, "clip": _clip_samples, "cast": _cast_samples})
