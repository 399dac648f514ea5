"""Elementwise ops: unary math, binary arithmetic, comparison, logical and bitwise ops,
``where``, ``clip`` and ``cast``.  All broadcast by NumPy's rules (see :mod:`.rules`)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, bool_, complex64, float32, float64
from ..ir.types import TensorType
from .registry import Attr, OpDef
from .rules import (
    ANY, BOOL, FLOAT, INEXACT, INT_OR_BOOL, INTEGER, KIND_WORDS, NUMERIC, REAL,
    broadcast_shapes, require_kind, same_dtype, tensor,
)

#: op name → (arity, accepted kinds) of the ops made by :func:`unary` and :func:`binary`,
#: for tests and conformance kits that generate inputs.
ACCEPTS: dict[str, tuple[int, str]] = {}


def unary(name: str, fn: Callable, kinds: str, doc: str, *, out: str = "same",
          traits: tuple[str, ...] = ()) -> OpDef:
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

    return OpDef(name, ("x",), infer, fn, traits=frozenset({"elementwise", *traits}), doc=doc)


def binary(name: str, fn: Callable, kinds: str, doc: str, *, out: str = "same",
           traits: tuple[str, ...] = ()) -> OpDef:
    """An elementwise op of two tensors of one dtype, broadcast together."""
    ACCEPTS[name] = (2, kinds)

    def infer(x: TensorType, y: TensorType) -> TensorType:
        x, y = tensor(x, "x"), tensor(y, "y")
        dt = same_dtype([x, y])
        require_kind(x, kinds, KIND_WORDS[kinds])
        shape = broadcast_shapes(x.shape, y.shape)
        return TensorType(bool_ if out == "bool" else dt, shape)

    return OpDef(name, ("x", "y"), infer, fn, traits=frozenset({"elementwise", *traits}), doc=doc)


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
        _check_int_divisor(x, y, "floor_divide")
    return np.floor_divide(x, y)


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        _check_int_divisor(x, y, "remainder")
    return np.remainder(x, y)


def _check_int_divisor(x: np.ndarray, y: np.ndarray, op: str) -> None:
    """Raise if a zero of ``y`` divides an element of ``x`` (none does when the broadcast
    result is empty)."""
    if np.broadcast(x, y).size and np.any(y == 0):
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


OPS: list[OpDef] = [
    # unary arithmetic
    unary("neg", np.negative, NUMERIC, "-x"),
    unary("abs", np.abs, NUMERIC, "|x|; complex inputs give a real result", out="real"),
    unary("sign", _sign, NUMERIC, "-1, 0 or 1 (x/|x| for complex)"),
    unary("square", np.square, NUMERIC, "x*x"),
    unary("reciprocal", np.reciprocal, INEXACT, "1/x"),
    unary("sqrt", np.sqrt, INEXACT, "square root (NaN below 0 for real inputs)"),
    unary("rsqrt", _rsqrt, FLOAT, "1/sqrt(x)"),
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
    unary("sigmoid", _sigmoid, FLOAT, "1 / (1 + e**-x)"),
    unary("softplus", _softplus, FLOAT, "log(1 + e**x)"),
    unary("relu", _relu, REAL, "max(x, 0)"),
    unary("silu", _silu, FLOAT, "x * sigmoid(x) (swish)"),
    OpDef("gelu", ("x",), _gelu_infer, _gelu, attrs=(Attr("approximate", "str", "none"),),
          traits=frozenset({"elementwise"}),
          doc="Gaussian error linear unit; approximate='tanh' uses the tanh formula"),
    unary("floor", np.floor, FLOAT, "round toward -inf"),
    unary("ceil", np.ceil, FLOAT, "round toward +inf"),
    unary("round", np.round, FLOAT, "round half to even"),
    unary("trunc", np.trunc, FLOAT, "round toward 0"),
    unary("isnan", np.isnan, INEXACT, "x is NaN", out="bool"),
    unary("isinf", np.isinf, INEXACT, "x is +-inf", out="bool"),
    unary("isfinite", np.isfinite, INEXACT, "x is neither NaN nor infinite", out="bool"),
    unary("logical_not", np.logical_not, BOOL, "not x"),
    unary("bitwise_not", np.invert, INT_OR_BOOL, "~x"),
    unary("real", np.real, NUMERIC, "real part", out="real"),
    unary("imag", np.imag, NUMERIC, "imaginary part (0 for real inputs)", out="real"),
    unary("conj", np.conj, NUMERIC, "complex conjugate"),
    # binary arithmetic
    binary("add", np.add, NUMERIC, "x + y", traits=("commutative",)),
    binary("sub", np.subtract, NUMERIC, "x - y"),
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
    binary("not_equal", np.not_equal, ANY, "x != y", out="bool", traits=("commutative",)),
    binary("less", np.less, REAL, "x < y", out="bool"),
    binary("less_equal", np.less_equal, REAL, "x <= y", out="bool"),
    binary("greater", np.greater, REAL, "x > y", out="bool"),
    binary("greater_equal", np.greater_equal, REAL, "x >= y", out="bool"),
    # logical and bitwise
    binary("logical_and", np.logical_and, BOOL, "x and y", traits=("commutative",)),
    binary("logical_or", np.logical_or, BOOL, "x or y", traits=("commutative",)),
    binary("logical_xor", np.logical_xor, BOOL, "x xor y", traits=("commutative",)),
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
          traits=frozenset({"elementwise"}), doc="clamp x to [min, max]; None leaves a side open"),
    OpDef("cast", ("x",), _cast_infer, _cast, attrs=(Attr("dtype", "dtype"),),
          traits=frozenset({"elementwise"}),
          doc="convert to dtype with NumPy's astype semantics (complex→real drops the imaginary part)"),
]
