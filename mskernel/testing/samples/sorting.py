"""Samples for the sorting and scanning ops: ties and NaNs (sorts must be stable and order NaN
as NumPy), every direction and flag, every accepted dtype family, and size-0 and size-1 axes."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import SampleFn, random_array
from .shape import one_input

_ORDERED_DTYPES = ("float32", "bfloat16", "int64", "bool", "uint8", "float16", "int8",
                   "float64")
_NUMERIC_DTYPES = ("float32", "bfloat16", "int32", "complex64", "uint8", "float16", "int64",
                   "float64", "complex128")


def _with_ties(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Values with many ties; floats also get NaNs (and rounding leaves -0.0 beside 0.0)."""
    x = random_array(rng, shape, dt, -2, 2)
    if x.dtype.kind == "f":
        x = np.round(x)
        x[rng.random(shape) < 0.15] = np.nan
    return x


def _small(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Values of magnitude up to 1.2, so products stay finite in every dtype."""
    return random_array(rng, shape, dt, -1.2, 1.2)


def _sorts(op: str) -> SampleFn:
    return one_input(op, [
        ((4, 6), {}), ((4, 6), {"axis": 0, "descending": True}), ((3, 5), {"descending": True}),
        ((2, 0, 3), {"axis": 1}), ((5, 1), {"axis": -1, "descending": True}), ((1,), {}),
        ((2, 3, 4), {"axis": -2}),
    ], _ORDERED_DTYPES, _with_ties)


def _scans(op: str, make: Callable[..., np.ndarray] = random_array) -> SampleFn:
    return one_input(op, [
        ((3, 5), {"axis": 1}), ((3, 5), {"axis": 0, "reverse": True}),
        ((2, 4), {"axis": -1, "exclusive": True}),
        ((2, 4), {"axis": 1, "reverse": True, "exclusive": True}),
        ((0, 3), {"axis": 0, "exclusive": True}), ((4,), {"axis": 0}),
        ((2, 3, 1), {"axis": -1, "reverse": True}),
    ], _NUMERIC_DTYPES, make)


SAMPLES: dict[str, SampleFn] = {
    "sort": _sorts("sort"),
    "argsort": _sorts("argsort"),
    "topk": one_input("topk", [
        ((4, 6), {"k": 3}), ((4, 6), {"k": 2, "largest": False}),
        ((4, 6), {"k": 4, "sorted": False}), ((3, 5), {"k": 3, "axis": 0, "largest": False,
                                                       "sorted": False}),
        ((2, 3), {"k": 0}), ((2, 3), {"k": 3}), ((3, 0), {"k": 0, "axis": 0}),
        ((1,), {"k": 1, "largest": False}),
    ], _ORDERED_DTYPES, _with_ties),
    "cumsum": _scans("cumsum"),
    "cumprod": _scans("cumprod", _small),
    "cummax": one_input("cummax", [
        ((3, 6), {"axis": 1}), ((4, 2), {"axis": 0}), ((0, 3), {"axis": -1}), ((5,), {"axis": -1}),
    ], _ORDERED_DTYPES, _with_ties),
    "cummin": one_input("cummin", [
        ((3, 6), {"axis": -1}), ((4, 2), {"axis": -2}), ((2, 0), {"axis": 1}), ((1,), {"axis": 0}),
    ], _ORDERED_DTYPES, _with_ties),
}
