"""Samples for ``ref_load`` and ``ref_store``: cells of every dtype family, including bfloat16
(stored as float32), scalars and size-0 tensors.  Each sample has its own cell, and a store
writes the sample's own value, so running a sample again gives the same cell contents."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ...ir.types import tensor_type
from ...runtime.state import TOKEN_VALUE, RefCell
from .. import OpSample, SampleFn, random_array

_CELLS = (("float32", (2, 3)), ("bfloat16", (4,)), ("int64", ()), ("bool", (3,)),
          ("complex64", (2,)), ("float64", (0, 3)), ("uint8", (1, 1)))


def _cell(rng: np.random.Generator, dt: str, shape: tuple[int, ...]) -> RefCell:
    return RefCell(tensor_type(dt, shape), random_array(rng, shape, dt))


def _ref_load(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in _CELLS:
        yield OpSample("ref_load", (_cell(rng, dt, shape), TOKEN_VALUE))


def _ref_store(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in _CELLS:
        value = random_array(rng, shape, dt)
        yield OpSample("ref_store", (_cell(rng, dt, shape), value, TOKEN_VALUE),
                       dtypes=(None, dt, None))


SAMPLES: dict[str, SampleFn] = {"ref_load": _ref_load, "ref_store": _ref_store}
