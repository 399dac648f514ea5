"""Samples for the random ops: every op on each dtype it accepts, on scalar, size-0, size-1 and
multi-dimensional shapes, with random keys."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .. import OpSample, SampleFn, random_array

_FLOATS = ("float32", "float64", "float16", "bfloat16")
_SHAPES = ((3, 4), (), (0, 5), (1,))


def _key(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2**32, size=2, dtype=np.uint32)


def _random_key(rng: np.random.Generator) -> Iterator[OpSample]:
    for seed in (0, 42, 2**63 + 5, -1, 2**64 - 1):
        yield OpSample("random_key", (), {"seed": seed})


def _random_split(rng: np.random.Generator) -> Iterator[OpSample]:
    yield OpSample("random_split", (_key(rng),))
    for num in (3, 1, 0):
        yield OpSample("random_split", (_key(rng),), {"num": num})


def _random_fold_in(rng: np.random.Generator) -> Iterator[OpSample]:
    for data in (0, 7, 2**32 - 1, -5):
        yield OpSample("random_fold_in", (_key(rng),), {"data": data})


def _random_bits(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in _SHAPES:
        yield OpSample("random_bits", (_key(rng),), {"shape": shape})


def _random_uniform(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in _FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_uniform", (_key(rng),), {"shape": shape, "dtype": dt})
        yield OpSample("random_uniform", (_key(rng),),
                       {"shape": (2, 3), "dtype": dt, "minval": -3.0, "maxval": 0.5})


def _random_normal(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in _FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_normal", (_key(rng),), {"shape": shape, "dtype": dt})
        yield OpSample("random_normal", (_key(rng),),
                       {"shape": (4,), "dtype": dt, "mean": 2.0, "std": 0.5})


def _random_truncated_normal(rng: np.random.Generator) -> Iterator[OpSample]:
    bounds = ((-2.0, 2.0), (1.0, float("inf")), (float("-inf"), -3.0), (-0.5, 4.0))
    for dt in _FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_truncated_normal", (_key(rng),), {"shape": shape, "dtype": dt})
        for lower, upper in bounds:
            yield OpSample("random_truncated_normal", (_key(rng),),
                           {"shape": (5,), "dtype": dt, "lower": lower, "upper": upper,
                            "mean": 1.0, "std": 2.0})


def _random_bernoulli(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in _SHAPES:
        yield OpSample("random_bernoulli", (_key(rng),), {"shape": shape, "p": 0.3})
    for p in (0.0, 1.0):
        yield OpSample("random_bernoulli", (_key(rng),), {"shape": (6,), "p": p})


def _random_randint(rng: np.random.Generator) -> Iterator[OpSample]:
    ranges = {"int8": (-128, 128), "int32": (-5, 5), "int64": (-(2**63), 2**63),
              "uint8": (3, 200), "uint64": (0, 2**64), "int16": (0, 1)}
    for dt, (lo, hi) in ranges.items():
        yield OpSample("random_randint", (_key(rng),),
                       {"shape": (3, 4), "minval": lo, "maxval": hi, "dtype": dt})
    for shape in _SHAPES:
        yield OpSample("random_randint", (_key(rng),), {"shape": shape, "minval": 0, "maxval": 10})


def _random_permutation(rng: np.random.Generator) -> Iterator[OpSample]:
    for n in (6, 1, 0):
        yield OpSample("random_permutation", (_key(rng),), {"n": n})


def _random_categorical(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in zip(_FLOATS, ((4, 3), (2, 2, 5), (3,), (0, 3))):
        yield OpSample("random_categorical", (_key(rng), random_array(rng, shape, dt)),
                       dtypes=(None, dt))
    masked = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32)
    yield OpSample("random_categorical", (_key(rng), masked), label="masked")


SAMPLES: dict[str, SampleFn] = {
    "random_key": _random_key,
    "random_split": _random_split,
    "random_fold_in": _random_fold_in,
    "random_bits": _random_bits,
    "random_uniform": _random_uniform,
    "random_normal": _random_normal,
    "random_truncated_normal": _random_truncated_normal,
    "random_bernoulli": _random_bernoulli,
    "random_randint": _random_randint,
    "random_permutation": _random_permutation,
    "random_categorical": _random_categorical,
}
