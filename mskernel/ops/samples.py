"""Op samples: inputs that exercise an op, and the building blocks of sample functions.

A sample function takes a seeded ``numpy.random.Generator`` and yields :class:`OpSample`
objects: every dtype family the op accepts, broadcasting where it applies, and edge shapes
(size-0 and size-1 dims, scalars).  Every op's sample function is attached to the op under the
rule kind :data:`SAMPLES_RULE` in ``mskernel_register_rules`` — the core's by
:mod:`mskernel.ops.core`, each family's beside its op definitions, a plugin's the same way::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(SAMPLES_RULE, "acme.softsign", softsign_samples)

One table then drives the reference tests, the text round trip, the pass property tests,
autodiff's rule checks and the SDK's conformance kit (:func:`mskernel.testing.samples_for`
reads it).  Keep samples small: the kit runs every sample on every backend claiming the op.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from itertools import cycle
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, TypedDict

import numpy as np

from ..ir.builder import GraphBuilder
from ..ir.dtypes import DType, as_storage, dtype as to_dtype
from ..ir.graph import Graph, Value
from ..ir.types import TOKEN, RefType, TensorType, Type
from ..runtime.state import TOKEN_VALUE, RefCell

#: The rule kind under which an op's sample function is attached.
SAMPLES_RULE = "samples"


@dataclass(frozen=True)
class OpSample:
    """One application of an op: concrete arguments and attributes.

    ``args`` holds arrays in reference storage (bfloat16 as float32, see
    :mod:`mskernel.ir.dtypes`) — or :class:`RefCell` / ``TOKEN_VALUE`` for stateful ops;
    ``dtypes`` gives the IR dtype of each array argument where it differs from the
    array's own (needed for bfloat16 only).  ``regions`` are the sub-graphs of region ops.
    ``rtol``/``atol`` override the dtype's default tolerance for backends' comparisons (for
    ops whose result is sensitive to summation order, say).
    """

    op: str
    args: tuple[Any, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    dtypes: Optional[tuple[Optional[str], ...]] = None
    regions: tuple[Graph, ...] = ()
    rtol: Optional[float] = None
    atol: Optional[float] = None
    label: str = ""

    def arg_types(self) -> list[Type]:
        out: list[Type] = []
        for i, arg in enumerate(self.args):
            if arg is TOKEN_VALUE:
                out.append(TOKEN)
            elif isinstance(arg, RefCell):
                out.append(RefType(arg.type))
            else:
                name = self.dtypes[i] if self.dtypes and self.dtypes[i] else None
                dt = to_dtype(name) if name else to_dtype(np.asarray(arg).dtype)
                out.append(TensorType(dt, np.shape(arg)))
        return out

    def __str__(self) -> str:
        types = ",".join(str(t) for t in self.arg_types())
        return f"{self.op}({types}){'-' + self.label if self.label else ''}"


#: A sample function: a seeded generator in, the op's samples out.  (The generator's type is
#: named as a string: evaluating ``np.random`` would import it whenever the core ops load.)
SampleFn = Callable[["np.random.Generator"], Iterable[OpSample]]


def sample_rng(seed: int, subject: str) -> np.random.Generator:
    """The generator for ``subject`` (an op or graph name) under ``seed``: the same on every
    machine and Python process, so a printed seed reproduces a failure."""
    return np.random.default_rng([seed, zlib.crc32(subject.encode())])


def random_array(rng: np.random.Generator, shape: Sequence[int], dt: str | DType,
                 low: float = -2.0, high: float = 2.0) -> np.ndarray:
    """Random values of ``dt`` in reference storage (ints in [low, high], bools 50/50)."""
    dt = to_dtype(dt)
    shape = tuple(shape)
    if dt.is_bool:
        return rng.random(shape) < 0.5
    if dt.is_integer:
        lo = max(0, int(low)) if dt.kind == "u" else int(low)
        return rng.integers(lo, int(high) + 1, size=shape).astype(dt.storage)
    values = rng.uniform(low, high, size=shape)
    if dt.is_complex:
        values = values + 1j * rng.uniform(low, high, size=shape)
    return as_storage(values, dt)


# -- dtypes and cases -----------------------------------------------------------------------

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTEGERS = ("int32", "int64", "int8", "uint8")
COMPLEX = ("complex64", "complex128")
#: Dtypes a data-movement op is sampled on: one or more of each family.
DATA_DTYPES = ("float32", "bfloat16", "int64", "bool", "complex64", "uint8", "float16", "int32")

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


def dtype_runs(cases: Sequence[Any],
               dtypes: Sequence[str] = DATA_DTYPES) -> list[tuple[Any, str]]:
    """Pair the first case with every dtype of ``dtypes`` and the other cases (edge shapes)
    with the dtypes in turn: every dtype family is covered without multiplying the cases."""
    return [(cases[0], dt) for dt in dtypes] + list(zip(cases[1:], cycle(dtypes)))


Case = tuple[tuple[int, ...], Mapping[str, Any]]


def one_input(op: str, cases: Sequence[Case], dtypes: Sequence[str] = DATA_DTYPES,
              make: Callable[..., np.ndarray] = random_array) -> SampleFn:
    """Samples of a one-input op over ``(shape, attrs)`` cases (see :func:`dtype_runs`);
    ``make(rng, shape, dt)`` draws an input."""

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for (shape, attrs), dt in dtype_runs(cases, dtypes):
            yield OpSample(op, (make(rng, shape, dt),), attrs, dtypes=(dt,))

    return fn


#: Builds a region's outputs from a builder and the region's inputs.
Body = Callable[[GraphBuilder, list[Value]], Sequence[Any]]


def region(name: str, types: Sequence[Type], body: Body) -> Graph:
    """A region taking ``types`` whose outputs ``body(builder, inputs)`` builds."""
    b = GraphBuilder(name)
    inputs = [b.input(t) for t in types]
    return b.build(list(body(b, inputs)))
