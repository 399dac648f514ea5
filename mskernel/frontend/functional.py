"""The functional op API, ``mskernel.ops.<name>``: NumPy/MindSpore-style signatures over the
core ops.  Every function works on concrete and traced tensors alike.

Conventions every function follows:

- A tensor argument may be a :class:`Tensor`, a NumPy array, (nested) lists or a Python or
  NumPy scalar.  Operands that combine elementwise are promoted to one dtype by
  :mod:`.promote` (NumPy's table; Python scalars are *weak*: ``int8_tensor + 1`` stays int8).
- Float-only math (``exp``, ``sin``, ``sigmoid``, ``mean``, ``softmax``, ``conv2d`` …) on
  integer or bool inputs computes in float32, as PyTorch does; true division of integers
  gives float32.  Sums and products of bool and narrow integer tensors accumulate in int64
  (uint64 for unsigned ones), as NumPy does.
- ``axis`` is ``None`` (every axis), an int or a tuple of ints; negatives count from the end.
- Index operands accept Python-style negative indices: concrete ones are checked and
  normalised on the host, traced ones with ``where(i < 0, i + n, i)``.
- Ops defined by plugins are applied with :func:`apply`.

Every public function of this module is listed in ``__all__``, which is how
``mskernel.ops.<name>`` finds it.
"""

from __future__ import annotations

import builtins
import math
import operator
import typing
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..ir.dtypes import DType, bool_, dtype as to_dtype, float32, float64, int64, uint8, uint64
from .dispatch import apply as _apply
from .indexing import index_operand
from .promote import promote, result_dtype
from .tensor import Tensor, TracedValueError

Axis = Union[None, int, Sequence[int]]


# -- plumbing ---------------------------------------------------------------------------------


def _op(op: str, *args: Tensor, **attrs: Any) -> Tensor:
    return typing.cast(Tensor, _apply(op, *args, **attrs))


def _ops(op: str, *args: Tensor, **attrs: Any) -> tuple[Tensor, ...]:
    return typing.cast("tuple[Tensor, ...]", _apply(op, *args, **attrs))


def _ints(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (a shape, reps, axes) as a tuple of Python ints; a 1-d
    concrete tensor or array works too."""
    if isinstance(value, (Tensor, np.ndarray)):
        value = np.asarray(value).tolist()
    if isinstance(value, (list, tuple)):
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),)


def _axes(axis: Axis) -> Optional[tuple[int, ...]]:
    return None if axis is None else _ints(axis)


def _axis(axis: int, rank: int) -> int:
    """``axis`` counted from 0, with NumPy's error for an axis out of range."""
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise np.exceptions.AxisError(axis, rank)
    return axis % rank


def _inexact(x: Any) -> Tensor:
    """``x`` as a tensor; integer and bool tensors as float32 (float-only math)."""
    t = asarray(x)
    return t if t.dtype.is_inexact else astype(t, float32)


def _truth(x: Any) -> Tensor:
    """``x`` as a bool tensor: non-zero is true (logical ops and conditions)."""
    t = asarray(x)
    return t if t.dtype.is_bool else not_equal(t, 0)


def _float_operands(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """``x`` and ``y`` promoted, in float32 when both are integer or bool."""
    a, b = promote(x, y)
    if not a.dtype.is_inexact:
        a, b = astype(a, float32), astype(b, float32)
    return a, b


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, np.number, np.bool_))


# -- conversion and creation ------------------------------------------------------------------


def asarray(x: Any, dtype: Any = None) -> Tensor:
    """``x`` as a tensor (a tensor of the right dtype is returned as is), with
    ``Tensor(x)``'s defaults: Python floats and lists of them give float32.  A list or tuple
    holding tensors is stacked, so ``asarray([t0, t1])`` works under a trace too."""
    if isinstance(x, Tensor):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        stacked = stack([asarray(e) for e in x])
        return stacked if dtype is None else astype(stacked, dtype)
    return Tensor(x, dtype)


def _holds_tensor(items: Sequence[Any]) -> bool:
    return builtins.any(
        isinstance(e, Tensor) or (isinstance(e, (list, tuple)) and _holds_tensor(e)) for e in items
    )


def astype(x: Any, dtype: Any) -> Tensor:
    """``x`` converted to ``dtype`` (NumPy's ``astype``: floats truncate toward zero when cast
    to integers; complex to real drops the imaginary part)."""
    x = asarray(x)
    dt = to_dtype(dtype)
    return x if x.dtype is dt else _op("cast", x, dtype=dt)


cast = astype


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (a number, or a scalar tensor)."""
    dt = to_dtype(dtype) if dtype is not None else result_dtype([fill_value])
    if isinstance(fill_value, Tensor):
        return broadcast_to(astype(fill_value, dt), _ints(shape))
    return _op("full", shape=_ints(shape), value=float(fill_value), dtype=dt)


def zeros(shape: Any, dtype: Any = "float32") -> Tensor:
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any = "float32") -> Tensor:
    return full(shape, 1, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """A tensor of ``x``'s shape (and dtype, unless given) filled with ``fill_value``."""
    x = asarray(x)
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype)


def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    return full_like(x, 1, dtype)


def _iota(n: int, dt: DType) -> Tensor:
    return _op("iota", shape=(n,), axis=0, dtype=dt)


def _compute_dtype(dt: DType) -> DType:
    """The dtype a ramp of ``dt`` is computed in: float16 and bfloat16 count in float32."""
    return float32 if dt.is_floating and dt.itemsize < 4 else dt


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """``start, start + step, ...`` below ``stop`` (NumPy's ``arange``; ``arange(n)`` counts
    from 0).  The dtype is int64 for Python ints, float32 if any bound is a Python float."""
    if stop is None:
        start, stop = 0, start
    dt = to_dtype(dtype) if dtype is not None else result_dtype([start, stop, step])
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = builtins.max(math.ceil((float(stop) - float(start)) / float(step)), 0)
    ramp = _iota(n, _compute_dtype(dt))
    if step != 1:
        ramp = multiply(ramp, step)
    if start != 0:
        ramp = add(ramp, start)
    return astype(ramp, dt)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             dtype: Any = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``,
    exactly); float32 unless ``dtype`` says otherwise (integer dtypes round toward -inf)."""
    dt = to_dtype(dtype) if dtype is not None else result_dtype([start, stop, 0.0])
    work = float64 if dt is float64 else float32
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    steps = num - 1 if endpoint else num
    count = num - 1 if endpoint and num > 1 else num
    step = (float(stop) - float(start)) / steps if steps > 0 else 0.0
    ramp = add(multiply(_iota(count, work), step), float(start))
    if count < num:
        ramp = concat([ramp, full((1,), float(stop), work)])
    if dt.is_integer:
        ramp = floor(ramp)
    return astype(ramp, dt)


def eye(n: int, m: Optional[int] = None, k: int = 0, dtype: Any = "float32") -> Tensor:
    """An ``n x m`` matrix with ones on diagonal ``k`` (above the main one for k > 0)."""
    shape = (n, n if m is None else m)
    rows = _op("iota", shape=shape, axis=0, dtype=int64)
    cols = _op("iota", shape=shape, axis=1, dtype=int64)
    return astype(equal(add(rows, k), cols), dtype)


def apply(op_name: str, *tensors: Any, **attrs: Any) -> Union[Tensor, tuple[Tensor, ...]]:
    """Apply any registered op (one a plugin defines, say) to tensors and attributes; returns
    a tensor, or a tuple for a multi-output op.  No promotion is done: the op's rule decides
    what it accepts."""
    return _apply(op_name, *(asarray(t) for t in tensors), **attrs)


# -- elementwise: unary -----------------------------------------------------------------------


def _unary(op: str, prepare: Callable[[Any], Tensor], doc: str) -> Callable[[Any], Tensor]:
    def fn(x: Any) -> Tensor:
        return _op(op, prepare(x))

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise {doc}."
    return fn


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

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise {doc}; integer and bool tensors are returned unchanged."
    return fn


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
        return _op(op, t) if t.dtype.is_inexact else full(t.shape, integers, bool_)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise test: {doc}."
    return fn


isnan = _classify("isnan", False, "x is NaN")
isinf = _classify("isinf", False, "x is +-inf")
isfinite = _classify("isfinite", True, "x is neither NaN nor infinite")


def logical_not(x: Any) -> Tensor:
    """Elementwise not; non-bool inputs are true where non-zero."""
    return _op("logical_not", _truth(x))


# -- elementwise: binary ----------------------------------------------------------------------

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
        a, b = _float_operands(x, y) if floating else promote(x, y)
        if on_bool is not None and a.dtype.is_bool:
            return on_bool(a, b)
        return _op(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise ``{doc}`` with NumPy broadcasting and type promotion."
    return fn


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

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise ``{op}``; non-bool operands are true where non-zero."
    return fn


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
    if not builtins.all(_is_scalar(b) for b in bounds):
        if min is not None:
            t = maximum(t, min)
        return t if max is None else minimum(t, max)
    t = astype(t, result_dtype([t, *bounds]))
    return _op("clip", t, min=None if min is None else float(min),
               max=None if max is None else float(max))


# -- reductions -------------------------------------------------------------------------------


def _reduce(op: str, t: Tensor, axis: Axis, keepdims: bool, **attrs: Any) -> Tensor:
    return _op(op, t, axes=_axes(axis), keepdims=keepdims, **attrs)


def _summands(x: Any, dtype: Any) -> Tensor:
    """What a sum or product accumulates: ``x`` in ``dtype`` when given, else with bool and
    narrow integers widened to 64 bits (NumPy)."""
    if dtype is not None:
        return astype(x, dtype)
    t = asarray(x)
    if t.dtype.is_bool or (t.dtype.kind == "i" and t.dtype.itemsize < 8):
        return astype(t, int64)
    if t.dtype.kind == "u" and t.dtype.itemsize < 8:
        return astype(t, uint64)
    return t


def sum(x: Any, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``axis``; bool and narrow integers accumulate in 64 bits (NumPy)."""
    return _reduce("sum", _summands(x, dtype), axis, keepdims)


def prod(x: Any, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Product over ``axis``; bool and narrow integers accumulate in 64 bits (NumPy)."""
    return _reduce("prod", _summands(x, dtype), axis, keepdims)


def mean(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis`` (float32 for integer and bool inputs)."""
    return _reduce("mean", _inexact(x), axis, keepdims)


def _correction(ddof: int, correction: Optional[int]) -> int:
    return ddof if correction is None else correction


def var(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *,
        correction: Optional[int] = None) -> Tensor:
    """Variance over ``axis``, dividing by ``n - ddof`` (``correction`` is PyTorch's name)."""
    return _reduce("var", _inexact(x), axis, keepdims, correction=_correction(ddof, correction))


def std(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *,
        correction: Optional[int] = None) -> Tensor:
    """Standard deviation over ``axis`` (``ddof``/``correction`` as :func:`var`)."""
    return _reduce("std", _inexact(x), axis, keepdims, correction=_correction(ddof, correction))


def max(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Largest element over ``axis`` (NaN propagates; for bool: any)."""
    t = asarray(x)
    return _reduce("any" if t.dtype.is_bool else "max", t, axis, keepdims)


def min(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Smallest element over ``axis`` (NaN propagates; for bool: all)."""
    t = asarray(x)
    return _reduce("all" if t.dtype.is_bool else "min", t, axis, keepdims)


amax, amin = max, min


def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero)."""
    return _reduce("all", _truth(x), axis, keepdims)


def any(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (non-zero)."""
    return _reduce("any", _truth(x), axis, keepdims)


def logsumexp(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, without overflow."""
    return _reduce("logsumexp", _inexact(x), axis, keepdims)


def _arg_extreme(op: str) -> Callable[..., Tensor]:
    def fn(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> Tensor:
        t = asarray(x)
        if t.dtype.is_bool:
            t = astype(t, uint8)
        return _op(op, t, axis=None if axis is None else operator.index(axis), keepdims=keepdims)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"int64 index of the first {'largest' if op == 'argmax' else 'smallest'} "
                  "element along ``axis`` (of the flattened tensor when ``axis`` is None).")
    return fn


argmax = _arg_extreme("argmax")
argmin = _arg_extreme("argmin")


# -- scans and sorting ------------------------------------------------------------------------


def _along(x: Any, axis: Optional[int]) -> tuple[Tensor, int]:
    """``x`` and the axis to work along; ``axis=None`` flattens ``x`` first (NumPy)."""
    t = asarray(x)
    return (ravel(t), 0) if axis is None else (t, operator.index(axis))


def cumsum(x: Any, axis: Optional[int] = None, dtype: Any = None, *, reverse: bool = False,
           exclusive: bool = False) -> Tensor:
    """Running sum along ``axis`` (of the flattened tensor when None); ``reverse`` scans from
    the end, ``exclusive`` leaves each element out of its own sum."""
    t, ax = _along(_summands(x, dtype), axis)
    return _op("cumsum", t, axis=ax, reverse=reverse, exclusive=exclusive)


def cumprod(x: Any, axis: Optional[int] = None, dtype: Any = None, *, reverse: bool = False,
            exclusive: bool = False) -> Tensor:
    """Running product along ``axis``; ``reverse`` and ``exclusive`` as :func:`cumsum`."""
    t, ax = _along(_summands(x, dtype), axis)
    return _op("cumprod", t, axis=ax, reverse=reverse, exclusive=exclusive)


def cummax(x: Any, axis: int) -> Tensor:
    """Running maximum along ``axis`` (NaN propagates)."""
    return _op("cummax", asarray(x), axis=operator.index(axis))


def cummin(x: Any, axis: int) -> Tensor:
    """Running minimum along ``axis`` (NaN propagates)."""
    return _op("cummin", asarray(x), axis=operator.index(axis))


def sort(x: Any, axis: Optional[int] = -1, descending: bool = False) -> Tensor:
    """``x`` sorted stably along ``axis`` (the flattened tensor when None); NaN sorts last."""
    t, ax = _along(x, axis)
    return _op("sort", t, axis=ax, descending=descending)


def argsort(x: Any, axis: Optional[int] = -1, descending: bool = False) -> Tensor:
    """int64 indices that sort ``x`` stably along ``axis``."""
    t, ax = _along(x, axis)
    return _op("argsort", t, axis=ax, descending=descending)


def topk(x: Any, k: int, axis: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the ``k`` largest (smallest unless ``largest``) elements
    along ``axis``; ties go to the lower index."""
    values, indices = _ops("topk", asarray(x), k=operator.index(k), axis=operator.index(axis),
                           largest=largest, sorted=sorted)
    return values, indices


# -- linear algebra ---------------------------------------------------------------------------


def matmul(x: Any, y: Any) -> Tensor:
    """Matrix product with NumPy's rules for 1-d operands and batch broadcasting."""
    return _op("matmul", *promote(x, y))


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, NumPy's subscripts (ellipsis included).  The operands may also be
    given as one list of tensors (PyTorch)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)) and builtins.all(
            isinstance(o, Tensor) for o in operands[0]):
        operands = tuple(operands[0])
    return _op("einsum", *promote(*operands), equation=equation)


_LETTERS = "abcdefghijklmnopqrstuvwxy"


def dot(x: Any, y: Any) -> Tensor:
    """NumPy's ``dot``: a product with a scalar, else the sum over the last axis of ``x`` and
    the second-to-last of ``y`` (the only axis of a 1-d ``y``)."""
    a, b = promote(x, y)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim == 1 or b.ndim <= 2:
        return matmul(a, b)
    left = _LETTERS[:a.ndim - 1]
    right = _LETTERS[a.ndim - 1:a.ndim + b.ndim - 3]
    last = _LETTERS[a.ndim + b.ndim - 3]
    return einsum(f"{left}z,{right}z{last}->{left}{right}{last}", a, b)


def outer(x: Any, y: Any) -> Tensor:
    """``x[i] * y[j]`` of the flattened operands."""
    a, b = promote(x, y)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


# -- neural-network functions -----------------------------------------------------------------


def softmax(x: Any, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably."""
    return _op("softmax", _inexact(x), axis=operator.index(axis))


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``, computed stably."""
    return _op("log_softmax", _inexact(x), axis=operator.index(axis))


def _parameter(p: Any, default: float, shape: tuple[int, ...], like: Tensor) -> Tensor:
    """A normalisation parameter in ``like``'s dtype (``default`` filled when ``None``)."""
    return full(shape, default, like.dtype) if p is None else astype(p, like.dtype)


def batch_norm(x: Any, mean: Any = None, var: Any = None, weight: Any = None, bias: Any = None,
               *, training: bool = False, eps: float = 1e-5) -> Tensor:
    """Per-channel normalisation of ``x [N, C, ...]``: with the batch's statistics when
    ``training``, else with the given running ``mean`` and ``var`` (required then).  Running
    averages are the caller's to update (tensors are immutable)."""
    t = _inexact(x)
    if t.ndim < 2:
        raise ValueError(f"batch_norm expects x of shape [N, C, ...], got {list(t.shape)}")
    if not training and (mean is None or var is None):
        raise ValueError("batch_norm needs the running mean and var unless training=True")
    c = (t.shape[1],)
    params = [_parameter(weight, 1, c, t), _parameter(bias, 0, c, t),
              _parameter(mean, 0, c, t), _parameter(var, 1, c, t)]
    return _ops("batch_norm", t, *params, eps=eps, training=training)[0]


def layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing axes ``normalized_shape`` (PyTorch's ``layer_norm``)."""
    t = _inexact(x)
    shape = _ints(normalized_shape)
    if len(shape) > t.ndim or t.shape[t.ndim - len(shape):] != shape:
        raise ValueError(
            f"layer_norm: normalized_shape {list(shape)} must be the trailing dims of x's "
            f"shape {list(t.shape)}"
        )
    return _ops("layer_norm", t, _parameter(weight, 1, shape, t), _parameter(bias, 0, shape, t),
                axis=t.ndim - len(shape), eps=eps)[0]


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C / num_groups`` consecutive channels of ``x [N, C, ...]``."""
    t = _inexact(x)
    if t.ndim < 2:
        raise ValueError(f"group_norm expects x of shape [N, C, ...], got {list(t.shape)}")
    c = (t.shape[1],)
    return _ops("group_norm", t, _parameter(weight, 1, c, t), _parameter(bias, 0, c, t),
                num_groups=operator.index(num_groups), eps=eps)[0]


# -- convolution and pooling ------------------------------------------------------------------


def _per_dim(name: str, value: Any, n: int) -> tuple[int, ...]:
    """An int (every spatial dim) or one int per spatial dim."""
    values = _ints(value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"{name} needs 1 or {n} values, got {list(values)}")
    return values


def _padding(padding: Any, n: int, spatial: Sequence[int], kernel: Sequence[int],
             stride: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """``padding`` as the IR's flat ``(lo0, hi0, lo1, hi1, ...)``: an int, one int per dim,
    one ``(lo, hi)`` pair per dim, ``"valid"`` (none) or ``"same"`` (``ceil(size / stride)``
    outputs, the odd element of the padding going after, as TensorFlow and PyTorch)."""
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == "valid":
            return (0,) * (2 * n)
        if mode != "same":
            raise ValueError(f"padding must be 'same', 'valid' or numbers, got {padding!r}")
        flat: list[int] = []
        for size, k, s, d in zip(spatial, kernel, stride, dilation):
            extent = (k - 1) * d + 1
            total = builtins.max((-(-size // s) - 1) * s + extent - size, 0)
            flat += [total // 2, total - total // 2]
        return tuple(flat)
    if isinstance(padding, (list, tuple)) and padding and isinstance(padding[0], (list, tuple)):
        if len(padding) != n or builtins.any(len(p) != 2 for p in padding):
            raise ValueError(f"padding needs {n} (lo, hi) pairs, got {list(padding)}")
        return tuple(operator.index(v) for pair in padding for v in pair)
    return tuple(p for p in _per_dim("padding", padding, n) for _ in range(2))


def _spatial_input(t: Tensor, n: int, what: str) -> Tensor:
    """Check ``t`` is ``[N, C, *spatial]`` with ``n`` spatial dims."""
    if t.ndim != n + 2:
        dims = ["N", "C", *"DHW"[3 - n:]]
        raise ValueError(f"{what} expects x of shape [{', '.join(dims)}] (rank {n + 2}), "
                         f"got shape {list(t.shape)}")
    return t


def _add_bias(y: Tensor, bias: Any) -> Tensor:
    if bias is None:
        return y
    return add(y, reshape(astype(bias, y.dtype), (-1,) + (1,) * (y.ndim - 2)))


def _conv(n: int) -> Callable[..., Tensor]:
    name = f"conv{n}d"

    def fn(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
        t, w = _float_operands(x, weight)
        _spatial_input(t, n, name)
        s, d = _per_dim("stride", stride, n), _per_dim("dilation", dilation, n)
        pads = _padding(padding, n, t.shape[2:], w.shape[2:], s, d)
        y = _op("conv", t, w, stride=s, padding=pads, dilation=d, groups=groups)
        return _add_bias(y, bias)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{n}-d cross-correlation of x [N, C_in, *spatial] with weight "
                  "[C_out, C_in/groups, *kernel], plus bias [C_out] (PyTorch's " + name + "); "
                  "padding is an int, per-dim ints, (lo, hi) pairs, 'same' or 'valid'.")
    return fn


conv1d, conv2d, conv3d = _conv(1), _conv(2), _conv(3)


def _conv_transpose(n: int) -> Callable[..., Tensor]:
    name = f"conv_transpose{n}d"

    def fn(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
        t, w = _float_operands(x, weight)
        _spatial_input(t, n, name)
        pads = tuple(p for p in _per_dim("padding", padding, n) for _ in range(2))
        y = _op("conv_transpose", t, w, stride=_per_dim("stride", stride, n), padding=pads,
                output_padding=_per_dim("output_padding", output_padding, n),
                dilation=_per_dim("dilation", dilation, n), groups=groups)
        return _add_bias(y, bias)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{n}-d transposed convolution of x [N, C_in, *spatial] with weight "
                  f"[C_in, C_out/groups, *kernel], plus bias (PyTorch's {name}).")
    return fn


conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    _conv_transpose(1), _conv_transpose(2), _conv_transpose(3))


def _pool_geometry(t: Tensor, n: int, kernel_size: Any, stride: Any, padding: Any,
                   dilation: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The kernel, stride (the kernel's when None) and padding attributes of a pooling op."""
    k = _per_dim("kernel_size", kernel_size, n)
    s = k if stride is None else _per_dim("stride", stride, n)
    return {"kernel": k, "stride": s, "padding": _padding(padding, n, t.shape[2:], k, s, dilation)}


def _max_pool(n: int) -> Callable[..., Tensor]:
    name = f"max_pool{n}d"

    def fn(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
           ceil_mode: bool = False) -> Tensor:
        t = _spatial_input(asarray(x), n, name)
        d = _per_dim("dilation", dilation, n)
        geometry = _pool_geometry(t, n, kernel_size, stride, padding, d)
        return _op("max_pool", t, dilation=d, ceil_mode=ceil_mode, **geometry)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Max over {n}-d windows of x [N, C, *spatial] (PyTorch's {name}; stride "
                  "defaults to the kernel size; padding as conv, 'same' included).")
    return fn


max_pool1d, max_pool2d, max_pool3d = _max_pool(1), _max_pool(2), _max_pool(3)


def _avg_pool(n: int) -> Callable[..., Tensor]:
    name = f"avg_pool{n}d"

    def fn(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
           ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
        t = _spatial_input(_inexact(x), n, name)
        geometry = _pool_geometry(t, n, kernel_size, stride, padding, (1,) * n)
        return _op("avg_pool", t, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                   **geometry)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Mean over {n}-d windows of x [N, C, *spatial] (PyTorch's {name}; padding "
                  "counts in the divisor when count_include_pad).")
    return fn


avg_pool1d, avg_pool2d, avg_pool3d = _avg_pool(1), _avg_pool(2), _avg_pool(3)


def _adaptive(op: str, n: int, floating: bool) -> Callable[..., Tensor]:
    name = f"{op}{n}d"

    def fn(x: Any, output_size: Any) -> Tensor:
        t = _spatial_input(_inexact(x) if floating else asarray(x), n, name)
        sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * n
        if len(sizes) != n:
            raise ValueError(f"{name}: output_size needs 1 or {n} values, got {list(sizes)}")
        resolved = tuple(t.shape[2 + i] if s is None else operator.index(s)
                         for i, s in enumerate(sizes))
        return _op(op, t, output_size=resolved)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{'Mean' if floating else 'Max'} over output_size windows covering each "
                  f"spatial dim (PyTorch's {name}; None keeps a dim's size).")
    return fn


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive("adaptive_avg_pool", 1, True), _adaptive("adaptive_avg_pool", 2, True),
    _adaptive("adaptive_avg_pool", 3, True))
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive("adaptive_max_pool", 1, False), _adaptive("adaptive_max_pool", 2, False),
    _adaptive("adaptive_max_pool", 3, False))


# -- shape ------------------------------------------------------------------------------------


def reshape(x: Any, shape: Any) -> Tensor:
    """Same elements in row-major order, new shape; one dimension may be -1 (inferred)."""
    t = asarray(x)
    dims = _ints(shape)
    return t if dims == t.shape else _op("reshape", t, shape=dims)


def ravel(x: Any) -> Tensor:
    """``x`` as a 1-d tensor."""
    t = asarray(x)
    return reshape(t, (t.size,))


def flatten(x: Any, start_axis: int = 0, end_axis: int = -1) -> Tensor:
    """Merge axes ``start_axis..end_axis`` (inclusive) into one (all of them by default)."""
    t = asarray(x)
    if t.ndim == 0:
        return reshape(t, (1,))
    lo, hi = _axis(start_axis, t.ndim), _axis(end_axis, t.ndim)
    if lo > hi:
        raise ValueError(f"flatten: start_axis {start_axis} comes after end_axis {end_axis}")
    return reshape(t, t.shape[:lo] + (math.prod(t.shape[lo:hi + 1]),) + t.shape[hi + 1:])


def transpose(x: Any, axes: Any = None) -> Tensor:
    """Permute the axes: output axis i is input axis ``axes[i]`` (reversed when None)."""
    t = asarray(x)
    perm = None if axes is None else _ints(axes)
    if perm is not None and perm == tuple(range(t.ndim)):
        return t
    return _op("transpose", t, perm=perm)


permute_dims = transpose


def swapaxes(x: Any, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes."""
    t = asarray(x)
    perm = list(range(t.ndim))
    a, b = _axis(axis1, t.ndim), _axis(axis2, t.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(t, perm)


def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    """Move axes ``source`` to positions ``destination``, the others keeping their order."""
    t = asarray(x)
    src = [_axis(a, t.ndim) for a in _ints(source)]
    dst = [_axis(a, t.ndim) for a in _ints(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    rest = [a for a in range(t.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        rest.insert(d, s)
    return transpose(t, rest)


def squeeze(x: Any, axis: Axis = None) -> Tensor:
    """Remove size-1 axes (the listed ones, which must have size 1)."""
    return _op("squeeze", asarray(x), axes=_axes(axis))


def expand_dims(x: Any, axis: Union[int, Sequence[int]]) -> Tensor:
    """Insert size-1 axes at ``axis`` (positions in the result)."""
    return _op("expand_dims", asarray(x), axes=_ints(axis))


def unsqueeze(x: Any, axis: int) -> Tensor:
    """Insert one size-1 axis at ``axis`` (PyTorch's name)."""
    return expand_dims(x, operator.index(axis))


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """Repeat size-1 (and missing leading) axes up to ``shape``."""
    t = asarray(x)
    dims = _ints(shape)
    return t if dims == t.shape else _op("broadcast_to", t, shape=dims)


def broadcast_arrays(*xs: Any) -> tuple[Tensor, ...]:
    """The operands broadcast to their common shape (dtypes unchanged)."""
    ts = [asarray(x) for x in xs]
    shape = np.broadcast_shapes(*(t.shape for t in ts))
    return tuple(broadcast_to(t, shape) for t in ts)


def concat(xs: Sequence[Any], axis: Optional[int] = 0) -> Tensor:
    """Join tensors (promoted to one dtype) along an existing axis; ``axis=None`` joins the
    flattened tensors."""
    ts = promote(*xs)
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    return ts[0] if len(ts) == 1 else _op("concat", *ts, axis=operator.index(axis))


concatenate = concat


def stack(xs: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of one shape (promoted to one dtype) along a new axis."""
    return _op("stack", *promote(*xs), axis=operator.index(axis))


def split(x: Any, sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """Cut ``axis`` into pieces: an int gives that many equal sections (NumPy; it must
    divide the axis), a sequence gives the sizes of the pieces (MindSpore, PyTorch).  For
    NumPy's split points use :func:`split_at`."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    n = t.shape[ax]
    if isinstance(sections, (list, tuple, np.ndarray, Tensor)):
        sizes = _ints(sections)
    else:
        count = operator.index(sections)
        if count <= 0 or n % count:
            raise ValueError(f"split: axis {axis} of size {n} cannot be divided into {count} "
                             "equal sections; pass the sizes of the pieces instead")
        sizes = (n // count,) * count
    return _ops("split", t, axis=ax, sizes=sizes)


def split_at(x: Any, indices: Sequence[int], axis: int = 0) -> tuple[Tensor, ...]:
    """NumPy's ``split(x, indices)``: the pieces ``x[:i0], x[i0:i1], ..., x[ik:]`` along
    ``axis`` (Python's slice rules: negative points count from the end)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    points = [0, *_ints(indices), 2**63 - 1]
    return tuple(_op("slice", t, starts=(lo,), stops=(hi,), axes=(ax,))
                 for lo, hi in zip(points, points[1:]))


def tile(x: Any, reps: Any) -> Tensor:
    """Repeat the whole tensor ``reps[i]`` times along axis i (NumPy's ``tile``)."""
    return _op("tile", asarray(x), reps=_ints(reps))


def repeat(x: Any, repeats: Any, axis: Optional[int] = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened tensor when
    None); ``repeats`` may give one count per element (NumPy)."""
    t = asarray(x)
    if isinstance(repeats, (list, tuple, np.ndarray, Tensor)):
        counts = _ints(repeats)
        src, ax = (ravel(t), 0) if axis is None else (t, _axis(axis, t.ndim))
        if len(counts) == 1:
            return _op("repeat", src, repeats=counts[0], axis=ax)
        if len(counts) != src.shape[ax]:
            raise ValueError(f"repeat: {len(counts)} counts for axis {ax} of size "
                             f"{src.shape[ax]}; give one count, or one per element")
        return take(src, np.repeat(np.arange(len(counts)), counts), axis=ax)
    return _op("repeat", t, repeats=operator.index(repeats),
               axis=None if axis is None else operator.index(axis))


def flip(x: Any, axis: Axis = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (every axis when None)."""
    return _op("flip", asarray(x), axes=_axes(axis))


def roll(x: Any, shift: Any, axis: Axis = None) -> Tensor:
    """Shift elements along ``axis`` cyclically (of the flattened tensor when None)."""
    t = asarray(x)
    if axis is None:
        return reshape(roll(ravel(t), shift, 0), t.shape)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) == 1:
        shifts *= len(axes)
    for s, a in zip(shifts, axes):
        n = t.shape[_axis(a, t.ndim)]
        if n and s % n:
            t = take(t, (np.arange(n) - s) % n, axis=a)
    return t


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: float = 0) -> Tensor:
    """NumPy's ``pad``: ``pad_width`` is an int, ``(before, after)``, or one such pair per
    axis; modes ``constant``, ``reflect`` and ``edge``.  Negative widths crop."""
    t = asarray(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t.ndim, 2))
    return _op("pad", t, pads=tuple(int(w) for w in widths.ravel()), mode=mode,
               value=float(constant_values))


def tril(x: Any, k: int = 0) -> Tensor:
    """Zero the elements above diagonal ``k`` of the last two axes."""
    return _op("tril", asarray(x), k=operator.index(k))


def triu(x: Any, k: int = 0) -> Tensor:
    """Zero the elements below diagonal ``k`` of the last two axes."""
    return _op("triu", asarray(x), k=operator.index(k))


# -- indexing ---------------------------------------------------------------------------------


def take(x: Any, indices: Any, axis: Optional[int] = None) -> Tensor:
    """NumPy's ``take``: the slices of ``x`` at ``indices`` along ``axis`` (of the flattened
    tensor when None); negative indices count from the end."""
    t, ax = _along(x, axis)
    ax = _axis(ax, t.ndim)
    return _op("gather", t, index_operand(indices, t.shape[ax], ax), axis=ax)


def gather(x: Any, indices: Any, axis: int = 0) -> Tensor:
    """MindSpore's ``gather``: :func:`take` along ``axis``."""
    return take(x, indices, axis)


def take_along_axis(x: Any, indices: Any, axis: Optional[int]) -> Tensor:
    """NumPy's ``take_along_axis`` (PyTorch's ``gather``): ``out[..., i, ...] =
    x[..., indices[..., i, ...], ...]``; negative indices count from the end."""
    t, ax = _along(x, axis)
    ax = _axis(ax, t.ndim)
    return _op("take_along_axis", t, index_operand(indices, t.shape[ax], ax), axis=ax)


def gather_nd(x: Any, indices: Any) -> Tensor:
    """TensorFlow's ``gather_nd``: ``indices[..., k]`` holds tuples indexing the first ``k``
    axes of ``x``; negative components count from the end."""
    t = asarray(x)
    return _op("gather_nd", t, _index_tuples(t, indices))


def _index_tuples(t: Tensor, indices: Any) -> Tensor:
    idx = asarray(indices)
    k = idx.shape[-1] if idx.ndim else 0
    if not 0 < k <= t.ndim:
        raise IndexError(f"indices of shape {list(idx.shape)} must hold index tuples of length "
                         f"1 to {t.ndim} in their last axis to index x of shape {list(t.shape)}")
    return index_operand(idx, t.shape[:k], 0)


def scatter_nd(x: Any, indices: Any, updates: Any, reduce: str = "none") -> Tensor:
    """A copy of ``x`` with ``updates`` placed at the index tuples ``indices[..., k]`` (the
    inverse of :func:`gather_nd`); ``reduce`` in none/add/mul/max/min combines them with
    the elements they land on (``add`` accumulates duplicates, as ``np.add.at``)."""
    t = asarray(x)
    return _op("scatter_nd", t, _index_tuples(t, indices), astype(updates, t.dtype),
               reduce=reduce)


def scatter(x: Any, axis: int, indices: Any, updates: Any, reduce: str = "none") -> Tensor:
    """PyTorch's ``scatter``/``scatter_reduce`` as a copy: ``updates[p]`` lands on ``x`` at
    ``p`` with ``p[axis]`` replaced by ``indices[p]``."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    return _op("scatter", t, index_operand(indices, t.shape[ax], ax), astype(updates, t.dtype),
               axis=ax, reduce=reduce)


def one_hot(indices: Any, depth: int, axis: int = -1, dtype: Any = "float32",
            on_value: float = 1, off_value: float = 0) -> Tensor:
    """``on_value`` where a new axis of size ``depth`` equals the index, ``off_value``
    elsewhere (indices outside ``[0, depth)`` give all-off rows)."""
    return _op("one_hot", asarray(indices), depth=operator.index(depth), axis=axis,
               dtype=to_dtype(dtype), on_value=float(on_value), off_value=float(off_value))


def embedding(ids: Any, table: Any) -> Tensor:
    """Rows of ``table [V, D]`` at integer ``ids`` of any shape (PyTorch's argument order)."""
    return _op("embedding", asarray(table), asarray(ids))


def nonzero(x: Any) -> tuple[Tensor, ...]:
    """The int64 indices of the non-zero elements, one tensor per axis (NumPy).  The result's
    size depends on the values, so ``x`` must be concrete: under ``@jit`` use ``where``."""
    t = asarray(x)
    if t.is_traced:
        raise TracedValueError(
            f"nonzero of a traced {t.type} tensor: its result's shape depends on the values, "
            "which a traced function does not know; use where(cond, x, y) to select values "
            "with a fixed shape instead"
        )
    host = t.numpy()
    if host.ndim == 0:
        raise ValueError("nonzero of a 0-d tensor; use x.reshape(1) first")
    return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(host))


__all__ = sorted(
    name for name, value in globals().items()
    if not name.startswith("_") and callable(value) and getattr(value, "__module__", "") == __name__
)
