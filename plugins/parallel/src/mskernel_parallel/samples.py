"""Samples of the collective ops in a group of one (the single-process semantics), in the form
of the op sample table (:class:`mskernel_sdk.OpSample`): every dtype family each op accepts,
scalars and size-0 dims where the op allows them.  They drive this plugin's op-table tests and
any backend's conformance run.  ``send`` and ``recv`` act only in pairs, so their tests pair
them instead."""

from __future__ import annotations

from typing import Iterator

import numpy as np
from mskernel_sdk import TOKEN_VALUE, OpSample, random_array

from . import ops
from .group import REDUCTIONS

_ONE = {"group": "world", "group_size": 1}
_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "complex64",
           "bool")
_SHAPES = ((), (3,), (2, 3), (0, 4), (2, 1, 3))
#: the dtype families of each reduction (as :data:`ops._REDUCIBLE`)
_KINDS = {"sum": "iufc", "prod": "iufc", "mean": "fc", "max": "biuf", "min": "biuf"}


def _kind(dt: str) -> str:
    return np.dtype("float32" if dt == "bfloat16" else dt).kind


def _sample(op: str, x: np.ndarray, dt: str, **attrs: object) -> OpSample:
    return OpSample(op, (x, TOKEN_VALUE), {**_ONE, **attrs}, dtypes=(dt, None))


def _reductions(op: str, min_rank: int) -> Iterator[OpSample]:
    def samples(rng: np.random.Generator) -> Iterator[OpSample]:
        for reduction in REDUCTIONS:
            for dt in _DTYPES:
                if _kind(dt) not in _KINDS[reduction]:
                    continue
                for shape in _SHAPES:
                    if len(shape) >= min_rank:
                        yield _sample(op, random_array(rng, shape, dt), dt, reduction=reduction)
    return samples  # type: ignore[return-value]


def _movement(op: str, min_rank: int, **attrs: object):  # type: ignore[no-untyped-def]
    def samples(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt in _DTYPES:
            for shape in _SHAPES:
                if len(shape) >= min_rank:
                    yield _sample(op, random_array(rng, shape, dt), dt, **attrs)
    return samples


def _all_to_all(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in ("float32", "int64", "bool"):
        x = random_array(rng, (2, 3, 4), dt)
        for split, concat in ((0, 0), (1, 2), (-1, 0)):
            yield _sample(ops.ALL_TO_ALL, x, dt, split_axis=split, concat_axis=concat)


def _barrier(rng: np.random.Generator) -> Iterator[OpSample]:
    yield OpSample(ops.BARRIER, (TOKEN_VALUE,), dict(_ONE))


SAMPLES = {
    ops.ALL_REDUCE: _reductions(ops.ALL_REDUCE, 0),
    ops.REDUCE_SCATTER: _reductions(ops.REDUCE_SCATTER, 1),
    ops.ALL_GATHER: _movement(ops.ALL_GATHER, 1),
    ops.BROADCAST: _movement(ops.BROADCAST, 0, root=0),
    ops.ALL_TO_ALL: _all_to_all,
    ops.BARRIER: _barrier,
}
