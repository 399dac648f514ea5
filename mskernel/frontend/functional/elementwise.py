"""Elementwise ops: unary math, rounding and classification, binary arithmetic, comparisons
and bitwise ops (promoted operands, NumPy broadcasting), logical ops, :func:`where` and
:func:`clip`."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from ...ir.dtypes import bool_, uint8
from ..dispatch import cached_binary
from ..promote import all_weak, promote, result_dtype
from ..tensor import Tensor
from ._core import _float_operands, _inexact, _is_scalar, _named, _op, asarray, astype
from .indexing import nonzero

# -- unary ------------------------------------------------------------------------------------


def _unary(op: str, prepare: Callable[[Any], Tensor], doc: str) -> Callable[[Any], Tensor]:
    def fn(x: Any) -> Tensor:
        return _op(op, prepare(x))

    return _named(fn, op, f"Elementwise {doc}.")


def _float_unary(op: str, doc: str) -> Callable[[Any], Tensor]:
    """A float-only op; integer and bool inputs compute in float32."""
    return _unary(op, _inexact, doc)


def _plain_unary(op: str, doc: str) -> Callable[[Any], Tensor]:
    return _unary(op, asarray, doc)


negative = _plain_unary("neg", "-x")
neg = negative
abs = _plain_unary("abs", "|x| (real for complex x)")
absolute = abs
sign = _plain_unary("sign", "sign: -1, 0 or 1")
square = _plain_unary("square", "x * x")
relu = _plain_unary("relu", "max(x, 0)")
conj = _plain_unary("conj", "complex conjugate")
real = _plain_unary("real", "real part")
imag = _plain_unary("imag", "imaginary part (0 for real x)")
bitwise_not = _plain_unary("bitwise_not", "~x (logical not for bool)")
invert = bitwise_not
reciprocal = _float_unary("reciprocal", "1 / x")
sqrt = _float_unary("sqrt", "square root")
rsqrt = _float_unary("rsqrt", "1 / sqrt(x)")
exp = _float_unary("exp", "e**x")
expm1 = _float_unary("expm1", "e**x - 1, accurate near 0")
log = _float_unary("log", "natural logarithm")
log1p = _float_unary("log1p", "log(1 + x), accurate near 0")
log2 = _float_unary("log2", "base-2 logarithm")
log10 = _float_unary("log10", "base-10 logarithm")
sin = _float_unary("sin", "sine")
cos = _float_unary("cos", "cosine")
tan = _float_unary("tan", "tangent")
asin = _float_unary("asin", "inverse sine")
acos = _float_unary("acos", "inverse cosine")
atan = _float_unary("atan", "inverse tangent")
sinh = _float_unary("sinh", "hyperbolic sine")
cosh = _float_unary("cosh", "hyperbolic cosine")
tanh = _float_unary("tanh", "hyperbolic tangent")
asinh = _float_unary("asinh", "inverse hyperbolic sine")
acosh = _float_unary("acosh", "inverse hyperbolic cosine")
atanh = _float_unary("atanh", "inverse hyperbolic tangent")
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh
erf = _float_unary("erf", "error function")
erfc = _float_unary("erfc", "1 - erf(x)")
lgamma = _float_unary("lgamma", "log |Gamma(x)|")
sigmoid = _float_unary("sigmoid", "1 / (1 + e**-x)")
softplus = _float_unary("softplus", "log(1 + e**x)")
silu = _float_unary("silu", "x * sigmoid(x)")
swish = silu


def gelu(x: Any, approximate: Union[str, bool] = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate="tanh"`` (or ``True``, JAX's spelling) uses
    the tanh formula."""
    if isinstance(approximate, bool):
        approximate = "tanh" if approximate else "none"
    return _op("gelu", _inexact(x), approximate=approximate)


def _rounding(op: str, doc: str) -> Callable[[Any], Tensor]:
    """Rounding ops leave integer and bool tensors unchanged (as PyTorch)."""

    def fn(x: Any) -> Tensor:
        t = asarray(x)
        return t if t.dtype.kind in "biu" else _op(op, t)

    return _named(fn, op, f"Elementwise {doc}; integer and bool tensors are returned unchanged.")


floor = _rounding("floor", "round toward -inf")
ceil = _rounding("ceil", "round toward +inf")
trunc = _rounding("trunc", "round toward 0")
_round_half_even = _rounding("round", "round half to even")


def round(x: Any, decimals: int = 0) -> Tensor:
    """Round half to even to ``decimals`` decimal places (NumPy's ``round``)."""
    t = asarray(x)
    if decimals == 0 or t.dtype.kind in "biu":
        return _round_half_even(t)
    scale = 10.0**decimals
    return divide(_round_half_even(multiply(t, scale)), scale)


def _classify(op: str, integers: bool, doc: str) -> Callable[[Any], Tensor]:
    """``isnan`` and kin: integer and bool inputs are never NaN or infinite."""

    def fn(x: Any) -> Tensor:
        t = asarray(x)
        if t.dtype.is_inexact:
            return _op(op, t)
        return _op("full", shape=t.shape, value=float(integers), dtype=bool_)

    return _named(fn, op, f"Elementwise test: {doc}.")


isnan = _classify("isnan", False, "x is NaN")
isinf = _classify("isinf", False, "x is +-inf")
isfinite = _classify("isfinite", True, "x is neither NaN nor infinite")


def _truth(x: Any) -> Tensor:
    """``x`` as a bool tensor: non-zero is true (logical ops and conditions)."""
    t = asarray(x)
    return t if t.dtype.is_bool else not_equal(t, 0)


def logical_not(x: Any) -> Tensor:
    """Elementwise not; non-bool inputs are true where non-zero."""
    return _op("logical_not", _truth(x))


# -- binary -----------------------------------------------------------------------------------

BoolRule = Callable[[Tensor, Tensor], Tensor]


def _bool_as(op: str) -> BoolRule:
    """Compute ``op`` on bool operands with another op (NumPy: bool + bool is logical or)."""
    return lambda a, b: _op(op, a, b)


def _bool_as_uint8(op: str) -> BoolRule:
    """Order bool operands as 0 and 1."""
    return lambda a, b: _op(op, astype(a, uint8), astype(b, uint8))


def _binary(op: str, doc: str, *, floating: bool = False,
            on_bool: Optional[BoolRule] = None) -> Callable[[Any, Any], Tensor]:
    """An elementwise op of two promoted operands.  ``floating``: integer and bool operands
    compute in float32; ``on_bool``: how bool operands compute."""

    def fn(x: Any, y: Any) -> Tensor:
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            fast = cached_binary(op, x, y)
            if fast is not None:
                return fast
        a, b = _float_operands(x, y) if floating else promote(x, y)
        if on_bool is not None and a.dtype.is_bool:
            return on_bool(a, b)
        out = _op(op, a, b)
        return out._as_weak() if all_weak((x, y)) and isinstance(out, Tensor) else out

    return _named(fn, op, f"Elementwise ``{doc}`` with NumPy broadcasting and type promotion.")


add = _binary("add", "x + y", on_bool=_bool_as("logical_or"))
subtract = _binary("sub", "x - y")
sub = subtract
multiply = _binary("mul", "x * y", on_bool=_bool_as("logical_and"))
mul = multiply
true_divide = _binary("div", "x / y (float32 for integer operands)", floating=True)
divide = div = true_divide
floor_divide = _binary("floor_divide", "x // y (integer division by 0 raises)")
remainder = _binary("remainder", "x % y, with the sign of y")
mod = remainder
pow = _binary("pow", "x ** y")
power = pow
maximum = _binary("maximum", "max(x, y), NaN propagating", on_bool=_bool_as("logical_or"))
minimum = _binary("minimum", "min(x, y), NaN propagating", on_bool=_bool_as("logical_and"))
atan2 = _binary("atan2", "arctan(x / y) in the right quadrant", floating=True)
arctan2 = atan2
equal = _binary("equal", "x == y")
not_equal = _binary("not_equal", "x != y")
less = _binary("less", "x < y", on_bool=_bool_as_uint8("less"))
less_equal = _binary("less_equal", "x <= y", on_bool=_bool_as_uint8("less_equal"))
greater = _binary("greater", "x > y", on_bool=_bool_as_uint8("greater"))
greater_equal = _binary("greater_equal", "x >= y", on_bool=_bool_as_uint8("greater_equal"))
bitwise_and = _binary("bitwise_and", "x & y")
bitwise_or = _binary("bitwise_or", "x | y")
bitwise_xor = _binary("bitwise_xor", "x ^ y")
left_shift = _binary("left_shift", "x << y")
right_shift = _binary("right_shift", "x >> y")


def _logical(op: str) -> Callable[[Any, Any], Tensor]:
    def fn(x: Any, y: Any) -> Tensor:
        return _op(op, _truth(x), _truth(y))

    return _named(fn, op, f"Elementwise ``{op}``; non-bool operands are true where non-zero.")


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` (non-zero) holds, else ``y``, all broadcast together.  With
    the condition alone it is :func:`nonzero` (NumPy)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where needs both x and y, or neither")
    return _op("where", _truth(condition), *promote(x, y))


def clip(x: Any, min: Any = None, max: Any = None) -> Tensor:
    """Clamp ``x`` to ``[min, max]`` (NumPy's ``clip``; either bound may be ``None``, a
    number or a tensor broadcasting against ``x``)."""
    if min is None and max is None:
        raise ValueError("clip needs min or max")
    bounds = [b for b in (min, max) if b is not None]
    t = asarray(x)
    if not all(_is_scalar(b) for b in bounds):
        if min is not None:
            t = maximum(t, min)
        return t if max is None else minimum(t, max)
    t = astype(t, result_dtype([t, *bounds]))
    return _op("clip", t, min=None if min is None else float(min),
               max=None if max is None else float(max))
