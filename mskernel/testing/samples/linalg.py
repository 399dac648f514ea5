"""Samples for ``matmul`` and ``einsum``: matrices, vectors (1-D on either side and both),
broadcast batches, size-1 and size-0 dimensions, and einsum's ellipsis, diagonals, implicit
output, broadcasting of size-1 subscripts and several operands.  ``float32`` runs every case;
the other numeric dtypes run two (see :func:`.reduction.dtype_cases`)."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .. import OpSample, SampleFn, random_array
from .reduction import COMPLEX, FLOATS, dtype_cases

_DTYPES = FLOATS + ("int32", "int64") + COMPLEX

_MATMUL_SHAPES = (
    ((3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((6,), (3, 6, 2)),
    ((2, 3, 4), (4,)),
    ((1, 1), (1, 1)),
    ((0, 4), (4, 3)),
    ((3, 0), (0, 2)),
    ((2, 0, 3), (1, 3, 4)),
)

_EINSUM_CASES = (
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("...ij,...jk->...ik", ((2, 1, 3, 4), (5, 4, 2))),
    ("bij,bjk", ((2, 3, 4), (2, 4, 5))),
    ("i,i", ((5,), (5,))),
    ("i,j->ij", ((3,), (4,))),
    ("ij->ji", ((3, 4),)),
    ("ii->i", ((4, 4),)),
    ("ii", ((4, 4),)),
    ("ij->", ((3, 4),)),
    ("...i->...", ((2, 3, 4),)),
    ("i...j,j...->...", ((2, 3, 4), (4, 3))),
    ("ab,bc,cd->ad", ((2, 3), (3, 4), (4, 2))),
    ("ij,jk->ik", ((3, 1), (4, 5))),
    ("Ab,bA", ((3, 4), (4, 3))),
    ("ij,jk->ik", ((3, 0), (0, 2))),
    ("->", ((),)),
)


def _matmul(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (sx, sy) in dtype_cases(_DTYPES, _MATMUL_SHAPES):
        x, y = random_array(rng, sx, dt), random_array(rng, sy, dt)
        yield OpSample("matmul", (x, y), dtypes=(dt, dt))


def _einsum(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (equation, shapes) in dtype_cases(_DTYPES, _EINSUM_CASES):
        operands = tuple(random_array(rng, shape, dt) for shape in shapes)
        yield OpSample("einsum", operands, {"equation": equation}, dtypes=(dt,) * len(shapes))


SAMPLES: dict[str, SampleFn] = {"matmul": _matmul, "einsum": _einsum}
