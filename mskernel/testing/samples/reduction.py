"""Samples for the reduction ops: every op on each dtype family it accepts, over all axes,
one axis, several and negative axes, no axes, with and without ``keepdims``, on scalars and
on size-1 and size-0 dimensions (reducing a size-0 axis only where the op has an identity).

The first dtype of each op runs every case; the other dtypes run two of them, which keeps the
table small while every (op, dtype) pair is still covered.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, TypedDict

import numpy as np

from ...ir.dtypes import dtype as to_dtype
from .. import OpSample, SampleFn, random_array

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTEGERS = ("int32", "int64", "int8", "uint8")
COMPLEX = ("complex64", "complex128")

# (shape, axes, keepdims); the last two reduce a size-0 axis.
_CASES: tuple[tuple[tuple[int, ...], Optional[tuple[int, ...]], bool], ...] = (
    ((2, 3, 4), (0, -1), True),
    ((3, 4), None, False),
    ((3, 4), None, True),
    ((2, 3, 4), (1,), False),
    ((2, 3, 4), (-2,), True),
    ((4, 3), (), False),
    ((), None, False),
    ((1, 5), (0,), False),
    ((0, 3), (1,), True),
    ((0, 3), (0,), False),
    ((2, 0), None, True),
)
_NONEMPTY_CASES = _CASES[:-2]

# (shape, axis, keepdims) for argmax/argmin.
_ARG_CASES: tuple[tuple[tuple[int, ...], Optional[int], bool], ...] = (
    ((3, 4), None, False),
    ((3, 4), None, True),
    ((2, 3, 4), 1, False),
    ((2, 3, 4), -1, True),
    ((), None, False),
    ((1, 5), 0, False),
    ((0, 3), 1, True),
)

# Looser (rtol, atol) for results that depend on summation order, by dtype.
_ACCUMULATION_TOLERANCE = {
    "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5),
    "complex64": (1e-5, 1e-5), "float64": (1e-12, 1e-13), "complex128": (1e-12, 1e-13),
}


class Tolerance(TypedDict, total=False):
    """``rtol``/``atol`` keyword arguments of :class:`OpSample`."""

    rtol: float
    atol: float


def accumulation_tolerance(dt: str) -> Tolerance:
    """``rtol``/``atol`` keyword arguments of :class:`OpSample` for a result that sums many
    terms of dtype ``dt`` (empty for exact dtypes): backends may add in another order or
    accumulate in the dtype itself."""
    if to_dtype(dt).is_inexact:
        rtol, atol = _ACCUMULATION_TOLERANCE[to_dtype(dt).name]
        return {"rtol": rtol, "atol": atol}
    return {}


def dtype_cases(dtypes: tuple[str, ...], cases: tuple[Any, ...]) -> Iterator[tuple[str, Any]]:
    """Every case for the first dtype, then the first two cases for each other dtype."""
    for i, dt in enumerate(dtypes):
        for case in cases if i == 0 else cases[:2]:
            yield dt, case


def _reduction(op: str, dtypes: tuple[str, ...], *, nonempty: bool = False,
               accumulates: bool = True, **attrs: Any) -> SampleFn:
    cases = _NONEMPTY_CASES if nonempty else _CASES

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axes, keepdims) in dtype_cases(dtypes, cases):
            tolerance = accumulation_tolerance(dt) if accumulates else {}
            yield OpSample(op, (random_array(rng, shape, dt),),
                           {"axes": axes, "keepdims": keepdims, **attrs},
                           dtypes=(dt,), **tolerance)
    return fn


def _moment(op: str) -> SampleFn:
    plain = _reduction(op, FLOATS)
    corrected = _reduction(op, ("float32", "float64"), correction=1)

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        yield from plain(rng)
        yield from corrected(rng)
        yield OpSample(op, (random_array(rng, (2, 5), "float64"),),
                       {"axes": (1,), "correction": 5}, label="correction-beyond-count")
    return fn


def _logsumexp(rng: np.random.Generator) -> Iterator[OpSample]:
    yield from _reduction("logsumexp", FLOATS)(rng)
    inf = np.inf
    x = np.array([[-inf, -inf, -inf], [-inf, 1.0, 2.0], [inf, 0.0, -inf], [80.0, 90.0, 100.0]])
    for dt in ("float32", "float64"):
        yield OpSample("logsumexp", (x.astype(dt),), {"axes": (1,)}, label="infinities")


def _arg_reduction(op: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axis, keepdims) in dtype_cases(FLOATS + INTEGERS, _ARG_CASES):
            yield OpSample(op, (random_array(rng, shape, dt),),
                           {"axis": axis, "keepdims": keepdims}, dtypes=(dt,))
    return fn


SAMPLES: dict[str, SampleFn] = {
    "sum": _reduction("sum", FLOATS + INTEGERS + COMPLEX),
    "prod": _reduction("prod", FLOATS + INTEGERS + COMPLEX),
    "mean": _reduction("mean", FLOATS + COMPLEX),
    "var": _moment("var"),
    "std": _moment("std"),
    "logsumexp": _logsumexp,
    "max": _reduction("max", FLOATS + INTEGERS, nonempty=True, accumulates=False),
    "min": _reduction("min", FLOATS + INTEGERS, nonempty=True, accumulates=False),
    "all": _reduction("all", ("bool",), accumulates=False),
    "any": _reduction("any", ("bool",), accumulates=False),
    "argmax": _arg_reduction("argmax"),
    "argmin": _arg_reduction("argmin"),
}
