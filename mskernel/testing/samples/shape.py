"""Samples for the shape ops: every op on every dtype family (bfloat16 included), negative
axes, scalars, and size-0 and size-1 dimensions."""

from __future__ import annotations

from itertools import cycle
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .. import OpSample, SampleFn, random_array

#: Dtypes a data-movement op is sampled on: one or more of each family.
DATA_DTYPES = ("float32", "bfloat16", "int64", "bool", "complex64", "uint8", "float16", "int32")

Case = tuple[tuple[int, ...], Mapping[str, Any]]


def dtype_runs(cases: Sequence[Any],
               dtypes: Sequence[str] = DATA_DTYPES) -> list[tuple[Any, str]]:
    """Pair the first case with every dtype of ``dtypes`` and the other cases (edge shapes)
    with the dtypes in turn: every dtype family is covered without multiplying the cases."""
    return [(cases[0], dt) for dt in dtypes] + list(zip(cases[1:], cycle(dtypes)))


def one_input(op: str, cases: Sequence[Case], dtypes: Sequence[str] = DATA_DTYPES,
              make: Callable[..., np.ndarray] = random_array) -> SampleFn:
    """Samples of a one-input op over ``(shape, attrs)`` cases (see :func:`dtype_runs`);
    ``make(rng, shape, dt)`` draws an input."""

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for (shape, attrs), dt in dtype_runs(cases, dtypes):
            yield OpSample(op, (make(rng, shape, dt),), attrs, dtypes=(dt,))

    return fn


def _constant(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in DATA_DTYPES:
        value = random_array(rng, (2, 3), dt)
        declared = {"dtype": dt} if dt == "bfloat16" else {}
        yield OpSample("constant", (), {"value": value, **declared})
    yield OpSample("constant", (), {"value": np.array(2.5, np.float64)})
    yield OpSample("constant", (), {"value": np.zeros((0, 4), np.int8)})


def _full(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((2, 3), 1.5, "float32"), ((2, 3), -3, "int32"), ((4,), 1, "bool"),
             ((3, 1), 0.1, "bfloat16"), ((2,), 2.0, "complex64"), ((), 7, "uint8"),
             ((0, 4), 1.0, "float16"), ((1, 2), float("inf"), "float64")]
    for shape, value, dt in cases:
        yield OpSample("full", (), {"shape": shape, "value": value, "dtype": dt})


def _iota(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((2, 3), 1, "int32"), ((4,), 0, "float32"), ((2, 0, 3), -1, "int64"),
             ((3, 2), 0, "bfloat16"), ((5, 1), -2, "uint8"), ((2, 2), 1, "complex64"),
             ((1,), 0, "float16")]
    for shape, axis, dt in cases:
        yield OpSample("iota", (), {"shape": shape, "axis": axis, "dtype": dt})


def _joined(op: str, shape_sets: Sequence[tuple[Sequence[tuple[int, ...]], int]]) -> SampleFn:
    """Samples of a variadic op over ``(input shapes, axis)`` cases (see :func:`dtype_runs`)."""

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for (shapes, axis), dt in dtype_runs(shape_sets):
            args = tuple(random_array(rng, s, dt) for s in shapes)
            yield OpSample(op, args, {"axis": axis}, dtypes=(dt,) * len(args))

    return fn


_WHOLE = 2**63 - 1  # a stop past the end of any axis (positive steps)
_BEFORE = -(2**63)  # a stop before the start of any axis (negative steps)

SAMPLES: dict[str, SampleFn] = {
    "constant": _constant,
    "full": _full,
    "iota": _iota,
    "reshape": one_input("reshape", [
        ((2, 3, 4), {"shape": (6, -1)}), ((0, 3), {"shape": (3, 0)}), ((), {"shape": (1, 1)}),
        ((1,), {"shape": ()}), ((2, 3), {"shape": (3, 2)}), ((2, 0), {"shape": (0, 7)}),
    ]),
    "transpose": one_input("transpose", [
        ((2, 3, 4), {"perm": (2, 0, 1)}), ((2, 3), {}), ((), {}), ((0, 1, 3), {"perm": (-1, 0, 1)}),
    ]),
    "broadcast_to": one_input("broadcast_to", [
        ((3, 1), {"shape": (2, 3, 4)}), ((), {"shape": (2, 2)}), ((1,), {"shape": (0,)}),
        ((2, 3), {"shape": (2, 3)}),
    ]),
    "concat": _joined("concat", [
        (((2, 3), (2, 1), (2, 0)), -1), (((1, 3), (2, 3)), 0), (((4,),), 0),
        (((0, 2), (0, 2)), 1), (((2, 1, 2), (2, 3, 2)), 1),
    ]),
    "stack": _joined("stack", [
        (((2, 3), (2, 3), (2, 3)), 0), (((2, 3), (2, 3)), -1), (((), (), ()), 0),
        (((0, 2),), 1),
    ]),
    "split": one_input("split", [
        ((5, 3), {"axis": 0, "sizes": (2, 0, 3)}), ((2, 6), {"axis": -1, "sizes": (6,)}),
        ((0, 2), {"axis": 0, "sizes": (0, 0)}), ((3, 4), {"axis": 1, "sizes": (1, 1, 2)}),
    ]),
    "slice": one_input("slice", [
        ((5, 6), {"starts": (1, -1), "stops": (4, _BEFORE), "steps": (2, -2)}),
        ((4,), {"starts": (-10,), "stops": (10,)}),
        ((3, 4, 5), {"starts": (1,), "stops": (3,), "axes": (-1,)}),
        ((5,), {"starts": (4,), "stops": (1,)}),
        ((0, 3), {"starts": (0, 2), "stops": (_WHOLE, 0), "steps": (1, -1)}),
        ((6, 2), {"starts": (_WHOLE, 0), "stops": (_BEFORE, 1), "steps": (-3, 1)}),
    ]),
    "squeeze": one_input("squeeze", [
        ((1, 3, 1), {}), ((1, 3, 1), {"axes": (0,)}), ((1,), {}), ((0, 1), {"axes": (-1,)}),
        ((2, 3), {}),
    ]),
    "expand_dims": one_input("expand_dims", [
        ((2, 3), {"axes": (0,)}), ((2, 3), {"axes": (-1, 1)}), ((), {"axes": (0,)}),
        ((0,), {"axes": (1,)}),
    ]),
    "tile": one_input("tile", [
        ((2, 3), {"reps": (2, 1)}), ((3,), {"reps": (2, 2)}), ((2, 1, 2), {"reps": (3,)}),
        ((2, 3), {"reps": (0, 2)}), ((), {"reps": (3,)}),
    ]),
    "flip": one_input("flip", [
        ((3, 4), {}), ((2, 3, 4), {"axes": (0, -1)}), ((), {}), ((0, 2), {"axes": (1,)}),
    ]),
    "pad": one_input("pad", [
        ((3, 4), {"pads": (1, 2, 0, 1), "value": 1.0}),
        ((3, 4), {"pads": (2, -1, 1, 3), "mode": "reflect"}),
        ((2, 3), {"pads": (0, 1, 3, 0), "mode": "edge"}),
        ((0, 2), {"pads": (1, 1, 0, 0)}), ((), {"pads": ()}),
        ((4,), {"pads": (-2, -2), "mode": "edge"}),
        ((1, 2), {"pads": (2, 2, 5, 0), "mode": "reflect"}),
    ]),
    "repeat": one_input("repeat", [
        ((2, 3), {"repeats": 2, "axis": 1}), ((2, 3), {"repeats": 3}), ((), {"repeats": 2}),
        ((2, 0), {"repeats": 2, "axis": 0}), ((3,), {"repeats": 0, "axis": -1}),
    ]),
    "tril": one_input("tril", [
        ((4, 4), {}), ((2, 3, 5), {"k": 1}), ((3, 2), {"k": -1}), ((0, 3), {}),
    ]),
    "triu": one_input("triu", [
        ((4, 4), {}), ((2, 3, 5), {"k": -2}), ((3, 2), {"k": 1}), ((1, 0), {}),
    ]),
}
