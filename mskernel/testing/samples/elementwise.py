"""Samples for the elementwise ops: every op on each dtype family it accepts, on broadcast
shapes, scalars, and size-0 and size-1 dimensions."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ...ops import elementwise as ew
from .. import OpSample, SampleFn, random_array

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


def _unary(op: str, kinds: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        low, high = _DOMAIN.get(op, (-2.0, 2.0))
        for dt in _dtypes(kinds):
            for shape, _ in _SHAPES:
                yield OpSample(op, (random_array(rng, shape, dt, low, high),), dtypes=(dt,))
    return fn


def _binary(op: str, kinds: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        low, high = _DOMAIN.get(op, (-2.0, 2.0))
        for dt in _dtypes(kinds):
            for sx, sy in _SHAPES:
                x = random_array(rng, sx, dt, low, high)
                y = random_array(rng, sy, dt, low, high)
                yield OpSample(op, (x, y), dtypes=(dt, dt))
    return fn


def _gelu(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in _DTYPES_BY_KIND["f"]:
        for approximate in ("none", "tanh"):
            yield OpSample("gelu", (random_array(rng, (3, 5), dt, -4, 4),),
                           {"approximate": approximate}, dtypes=(dt,))


def _where(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in ("float32", "int64", "bool", "complex64"):
        cond = random_array(rng, (2, 1, 4), "bool")
        yield OpSample("where", (cond, random_array(rng, (3, 1), dt), random_array(rng, (4,), dt)))
    yield OpSample("where", (random_array(rng, (0, 2), "bool"), random_array(rng, (1, 2), "float32"),
                             random_array(rng, (), "float32")))


def _clip(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in ("float32", "float64", "int32", "bfloat16"):
        x = random_array(rng, (4, 5), dt, -5, 5)
        yield OpSample("clip", (x,), {"min": -1.0, "max": 2.0}, dtypes=(dt,))
        yield OpSample("clip", (x,), {"min": None, "max": 0.5}, dtypes=(dt,))
        yield OpSample("clip", (x,), {"min": -0.5}, dtypes=(dt,))


def _cast(rng: np.random.Generator) -> Iterator[OpSample]:
    pairs = [("float32", "int32"), ("int64", "float32"), ("float32", "bfloat16"),
             ("bfloat16", "float64"), ("float64", "float16"), ("bool", "float32"),
             ("float32", "bool"), ("complex64", "float32"), ("int32", "uint8"),
             ("float32", "complex128")]
    for src, dst in pairs:
        yield OpSample("cast", (random_array(rng, (3, 2), src, -3, 3),), {"dtype": dst}, dtypes=(src,))


SAMPLES: dict[str, SampleFn] = {
    name: (_unary if arity == 1 else _binary)(name, kinds)
    for name, (arity, kinds) in ew.ACCEPTS.items()
}
SAMPLES.update({"gelu": _gelu, "where": _where, "clip": _clip, "cast": _cast})
