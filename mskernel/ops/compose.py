"""Building blocks of decompositions (:attr:`~mskernel.ops.registry.OpDef.decomposition`):
scalars, the precision the reference computes in, and the statistics several composites share.

Each helper takes the :class:`~mskernel.ops.registry.Emitter` ``b`` a decomposition
receives and emits core ops through it.

Precision.  A decomposition computes in the precision its op's reference computes in, so a
backend running the primitives agrees with the op within the dtype's tolerance:

- bfloat16 is stored, and computed by the reference, as float32: :func:`working` casts it to
  float32 and :func:`rounded` rounds the result once;
- float16 is computed in float32 where the reference widens it (reductions, normalisations,
  softmax, and functions NumPy evaluates in float32 internally), and op by op in float16 where
  the reference is NumPy arithmetic on float16 arrays (``working(..., widen_float16=False)``);
- sums are ``sum`` nodes, which accumulate as that primitive does (the reference in float64,
  rounded once), so a mean or variance in float32 carries a few float32 roundings, not a
  float32 running sum's error; variances are two-pass (the mean first, then the squared
  deviations), never ``E[x**2] - E[x]**2``.  The squares are taken in the input's precision:
  a float32 deviation beyond ~1.8e19 overflows, so the variance is infinite, as it is in
  float32 anyway, and so is the standard deviation, which the reference's float64
  intermediates keep finite.

The elementwise composites thus agree with their references to the last bit or within the
dtype's default tolerance, the reductions and normalisations within the tolerance of a result
that sums (float32: 1e-5 relative and absolute), on every sample of each op and on NaN,
infinities and signed zeros (``tests/ops/test_decompositions.py``).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..ir.dtypes import DType, bfloat16, float16, float32
from ..ir.graph import Value
from ..ir.types import TensorType
from .registry import DecomposeFn, Emitter
from .rules import normalize_axes, reduced_shape


def tensor_type(value: Value) -> TensorType:
    """The type of a tensor value (decompositions only see tensors)."""
    assert isinstance(value.type, TensorType), value
    return value.type


def scalar(b: Emitter, value: float, dtype: DType) -> Value:
    """A rank-0 ``full`` of ``dtype``; broadcasting stretches it to any operand."""
    return b.op("full", shape=(), value=value, dtype=dtype)


def cast(b: Emitter, x: Value, dtype: DType) -> Value:
    """``x`` as ``dtype`` (``x`` itself when it has that dtype already)."""
    return x if tensor_type(x).dtype is dtype else b.op("cast", x, dtype=dtype)


def working(b: Emitter, x: Value, *, widen_float16: bool = True) -> Value:
    """``x`` in the precision the reference computes it in: bfloat16 in float32, float16 in
    float32 unless ``widen_float16=False`` (NumPy arithmetic on float16 arrays), others as
    they are."""
    dt = tensor_type(x).dtype
    if dt is bfloat16 or (widen_float16 and dt is float16):
        return cast(b, x, float32)
    return x


def rounded(b: Emitter, y: Value, dtype: DType) -> Value:
    """The result ``y`` of a :func:`working` computation rounded to the op's ``dtype``."""
    return cast(b, y, dtype)


def reduction_axes(x: Value, axes: Optional[Sequence[int]]) -> tuple[int, ...]:
    """A reduction's ``axes`` attribute, normalised (``None``: every axis)."""
    return normalize_axes(axes, tensor_type(x).rank)


def count(x: Value, axes: tuple[int, ...]) -> int:
    """How many elements a reduction of ``x`` over ``axes`` combines."""
    return math.prod(tensor_type(x).shape[a] for a in axes)


def without_axes(b: Emitter, kept: Value, axes: tuple[int, ...], keepdims: bool) -> Value:
    """A reduction's result computed with ``keepdims=True``, as the op returns it."""
    if keepdims:
        return kept
    t = tensor_type(kept)
    return b.op("reshape", kept, shape=reduced_shape(t.shape, axes, False))


def mean_over(b: Emitter, x: Value, axes: tuple[int, ...]) -> Value:
    """The mean of ``x`` over ``axes``, the axes kept as size 1 (NaN when empty, as 0/0)."""
    dt = tensor_type(x).dtype
    total = b.op("sum", x, axes=axes, keepdims=True)
    return b.op("div", total, scalar(b, count(x, axes), dt))


def moments_over(b: Emitter, x: Value, axes: tuple[int, ...],
            correction: int = 0) -> tuple[Value, Value]:
    """Mean and variance of ``x`` over ``axes``, two-pass, the axes kept as size 1; the
    variance divides by ``max(n - correction, 0)``."""
    dt = tensor_type(x).dtype
    centre = mean_over(b, x, axes)
    deviation = b.op("sub", x, centre)
    squares = b.op("sum", b.op("mul", deviation, deviation), axes=axes, keepdims=True)
    divisor = scalar(b, max(count(x, axes) - correction, 0), dt)
    return centre, b.op("div", squares, divisor)


def in_working_precision(fn: DecomposeFn, *, widen_float16: bool = True) -> DecomposeFn:
    """The decomposition ``fn`` of an op whose outputs have its first input's dtype, run on
    its inputs in :func:`working` precision and with its results :func:`rounded` back."""

    def decomposition(b: Emitter, *inputs: Value, **attrs: Any) -> Any:
        dt = tensor_type(inputs[0]).dtype
        out = fn(b, *(working(b, x, widen_float16=widen_float16) for x in inputs), **attrs)
        if isinstance(out, tuple):
            return tuple(rounded(b, y, dt) for y in out)
        return rounded(b, out, dt)

    return decomposition
