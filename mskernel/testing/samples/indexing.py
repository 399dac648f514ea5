"""Samples for the indexing ops: every dtype family of the indexed tensor, signed and unsigned
index dtypes, scalar and empty index sets, broadcasting gathers, and duplicate scatter indices
under every reduction."""

from __future__ import annotations

from itertools import cycle
from typing import Iterator, Sequence

import numpy as np

from ...ir.dtypes import dtype as to_dtype
from ...ops.indexing import REDUCE_KINDS
from .. import OpSample, SampleFn, random_array
from .shape import DATA_DTYPES, dtype_runs

_INDEX_DTYPES = ("int64", "int32", "uint8", "int8")


def _indices(rng: np.random.Generator, shape: tuple[int, ...], size: int, dt: str) -> np.ndarray:
    """Random in-range indices (with repeats) for a dimension of ``size``."""
    return rng.integers(0, max(size, 1), size=shape).astype(dt)


def _tuples(rng: np.random.Generator, batch: tuple[int, ...], dims: tuple[int, ...],
            dt: str = "int64") -> np.ndarray:
    """Random in-range index tuples ``[*batch, len(dims)]`` into a tensor of shape ``dims``."""
    cols = [_indices(rng, batch + (1,), d, dt) for d in dims]
    return np.concatenate(cols, axis=-1) if cols else np.zeros(batch + (0,), dt)


def _runs(cases: Sequence[tuple]) -> Iterator[tuple[tuple[tuple, str], str]]:
    """``((case, data dtype), index dtype)`` for each case of :func:`dtype_runs`."""
    return zip(dtype_runs(cases), cycle(_INDEX_DTYPES))


def _gather(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((4, 5), (2, 3), 1), ((3,), (), 0), ((4, 2, 3), (0,), -2), ((3, 4), (5,), 0),
             ((2, 1), (3, 2), -1)]
    for ((x_shape, i_shape, axis), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _indices(rng, i_shape, x_shape[axis], idt)
        yield OpSample("gather", (x, idx), {"axis": axis}, dtypes=(dt, None))


def _take_along_axis(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((3, 4), (3, 2), 1), ((1, 4), (3, 6), 1), ((3, 4), (1, 6), -1),
             ((2, 3, 4), (2, 5, 1), -2), ((0, 3), (0, 2), 1), ((5,), (0,), 0)]
    for ((x_shape, i_shape, axis), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _indices(rng, i_shape, x_shape[axis], idt)
        yield OpSample("take_along_axis", (x, idx), {"axis": axis}, dtypes=(dt, None))


def _gather_nd(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((3, 4, 5), (2,), 2), ((3, 4, 5), (4,), 3), ((3, 4), (2,), 0), ((3, 4), (2, 3), 1),
             ((0, 3), (0,), 1), ((2, 3), (), 2)]
    for ((x_shape, batch, k), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _tuples(rng, batch, x_shape[:k], idt)
        yield OpSample("gather_nd", (x, idx), dtypes=(dt, None))


def _reduce_dtypes(reduce: str) -> list[str]:
    return [dt for dt in DATA_DTYPES if to_dtype(dt).kind in REDUCE_KINDS[reduce]]


def _scatter(rng: np.random.Generator) -> Iterator[OpSample]:
    for reduce in REDUCE_KINDS:
        for dt in _reduce_dtypes(reduce):
            x = random_array(rng, (3, 5), dt)
            idx = _indices(rng, (4, 5), 3, "int64")  # 4 rows into 3: duplicates
            updates = random_array(rng, (4, 5), dt)
            yield OpSample("scatter", (x, idx, updates), {"axis": 0, "reduce": reduce},
                           dtypes=(dt, None, dt))
    edge = [((4, 5), (2, 3), -1, "add"), ((4, 5), (0, 5), 0, "none"), ((2,), (6,), 0, "max"),
            ((2, 3), (2, 3), 1, "mul")]
    for x_shape, i_shape, axis, reduce in edge:
        x = random_array(rng, x_shape, "float32")
        idx = _indices(rng, i_shape, x_shape[axis], "int32")
        updates = random_array(rng, i_shape, "float32")
        yield OpSample("scatter", (x, idx, updates), {"axis": axis, "reduce": reduce})


def _scatter_nd(rng: np.random.Generator) -> Iterator[OpSample]:
    for reduce in REDUCE_KINDS:
        for dt in _reduce_dtypes(reduce):
            x = random_array(rng, (4, 3), dt)
            idx = _tuples(rng, (6,), (4,))  # 6 rows into 4: duplicates
            updates = random_array(rng, (6, 3), dt)
            yield OpSample("scatter_nd", (x, idx, updates), {"reduce": reduce},
                           dtypes=(dt, None, dt))
    edge = [((3, 4), (6,), 2, "add"), ((3, 4), (2,), 0, "add"), ((3, 4), (0,), 2, "none"),
            ((2, 3, 2), (2, 2), 1, "min"), ((2, 2), (5,), 2, "none")]
    for x_shape, batch, k, reduce in edge:
        x = random_array(rng, x_shape, "float64")
        idx = _tuples(rng, batch, x_shape[:k], "int32")
        updates = random_array(rng, batch + x_shape[k:], "float64")
        yield OpSample("scatter_nd", (x, idx, updates), {"reduce": reduce})


def _one_hot(rng: np.random.Generator) -> Iterator[OpSample]:
    wide = rng.integers(-2, 6, size=(5,))  # depth 4: some indices out of range, some negative
    yield OpSample("one_hot", (wide,), {"depth": 4})
    yield OpSample("one_hot", (wide.reshape(5, 1),), {"depth": 4, "axis": 0, "dtype": "int32",
                                                      "on_value": 5, "off_value": -1})
    yield OpSample("one_hot", (_indices(rng, (2, 3), 3, "uint8"),),
                   {"depth": 3, "axis": 1, "dtype": "bool"})
    yield OpSample("one_hot", (_indices(rng, (3,), 2, "int32"),),
                   {"depth": 2, "dtype": "bfloat16", "on_value": 0.5, "off_value": 0.25})
    yield OpSample("one_hot", (np.array(2, np.int8),), {"depth": 3, "dtype": "complex64"})
    yield OpSample("one_hot", (np.zeros((0, 2), np.int64),), {"depth": 3, "axis": -2})
    yield OpSample("one_hot", (_indices(rng, (3,), 1, "int64"),), {"depth": 0})


def _embedding(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((6, 3), (2, 4)), ((5, 2), ()), ((4, 3), (0,)), ((1, 0), (3,)), ((3, 2), (2, 1, 2))]
    for ((t_shape, i_shape), dt), idt in _runs(cases):
        table = random_array(rng, t_shape, dt)
        ids = _indices(rng, i_shape, t_shape[0], idt)
        yield OpSample("embedding", (table, ids), dtypes=(dt, None))


SAMPLES: dict[str, SampleFn] = {
    "gather": _gather,
    "take_along_axis": _take_along_axis,
    "gather_nd": _gather_nd,
    "scatter": _scatter,
    "scatter_nd": _scatter_nd,
    "one_hot": _one_hot,
    "embedding": _embedding,
}
