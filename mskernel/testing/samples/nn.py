"""Samples for ``softmax``, ``log_softmax`` and the normalisations, on every float dtype:
several axes, size-1 and size-0 dimensions, rows holding ``-inf``, ``batch_norm`` in both
modes, ``layer_norm`` from an axis other than the last, ``group_norm`` with one group, one
channel per group and groups in between.  ``float32`` runs every case; the other float dtypes
run two (see :func:`.reduction.dtype_cases`)."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .. import OpSample, SampleFn, random_array
from .reduction import FLOATS, dtype_cases

_SOFTMAX_CASES = (((3, 5), -1), ((2, 3, 4), 1), ((4,), 0), ((1, 1), 0), ((2, 0, 3), -1))

# (shape of x, training)
_BATCH_NORM_CASES = (((2, 3, 2, 2), True), ((4, 3), False), ((4, 3), True),
                     ((2, 3, 2, 2), False), ((1, 2, 3), True), ((0, 2, 3), False))

# (shape of x, axis)
_LAYER_NORM_CASES = (((2, 3, 4), -1), ((2, 3, 4), 1), ((3, 5), 0), ((2, 1, 3), 1), ((0, 4), -1))

# (shape of x, num_groups)
_GROUP_NORM_CASES = (((2, 6, 3), 3), ((2, 4, 2, 2), 2), ((1, 4, 3), 4), ((3, 2, 5), 1),
                     ((0, 4, 2), 2))


def _softmax(op: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axis) in dtype_cases(FLOATS, _SOFTMAX_CASES):
            yield OpSample(op, (random_array(rng, shape, dt, -4, 4),), {"axis": axis},
                           dtypes=(dt,))
        with_inf = np.array([[-np.inf, 1.0, 2.0], [0.5, -np.inf, -np.inf]], np.float32)
        yield OpSample(op, (with_inf,), {"axis": -1}, label="minus-inf")
    return fn


def _batch_norm(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, training) in dtype_cases(FLOATS, _BATCH_NORM_CASES):
        channels = (shape[1],)
        args = (random_array(rng, shape, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt, 0.5, 2.0))
        yield OpSample("batch_norm", args, {"training": training}, dtypes=(dt,) * 5)


def _layer_norm(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, axis) in dtype_cases(FLOATS, _LAYER_NORM_CASES):
        normalized = shape[axis % len(shape):]
        args = (random_array(rng, shape, dt), random_array(rng, normalized, dt),
                random_array(rng, normalized, dt))
        yield OpSample("layer_norm", args, {"axis": axis}, dtypes=(dt,) * 3)
    x = np.full((2, 3), 7.0, np.float32)
    yield OpSample("layer_norm", (x, np.ones(3, np.float32), np.zeros(3, np.float32)),
                   {"eps": 1e-3}, label="constant-rows")


def _group_norm(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, groups) in dtype_cases(FLOATS, _GROUP_NORM_CASES):
        channels = (shape[1],)
        args = (random_array(rng, shape, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt))
        yield OpSample("group_norm", args, {"num_groups": groups}, dtypes=(dt,) * 3)


SAMPLES: dict[str, SampleFn] = {
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "group_norm": _group_norm,
}
