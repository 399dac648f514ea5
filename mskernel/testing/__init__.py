"""Test support shared by the core's tests, plugin tests and the SDK's conformance kit.

The op sample table (:mod:`mskernel.testing.samples`) gives, for every core op, inputs that
exercise it — broadcasting, edge shapes (size 0 and 1), every dtype family it accepts — so one
table drives the reference tests, the text round trip, the pass property tests and backend
conformance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..ir.builder import GraphBuilder
from ..ir.dtypes import DType, dtype as to_dtype
from ..ir.graph import Graph
from ..ir.lookup import OpLookup, OpSchema
from ..ir.types import TOKEN, RefType, TensorType, Type
from ..runtime.state import RefCell, TOKEN_VALUE


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


#: Each family module of :mod:`mskernel.testing.samples` maps op names to functions that
#: take a seeded ``numpy.random.Generator`` and yield samples.
SampleFn = Callable[[np.random.Generator], Iterable[OpSample]]


def sample_graph(sample: OpSample, registry: Optional[OpLookup[OpSchema]] = None) -> Graph:
    """A graph applying the sample's op once to fresh inputs; its outputs are the op's."""
    b = GraphBuilder(sample.op.replace(".", "_"), registry)
    inputs = [b.input(t) for t in sample.arg_types()]
    out = b.op(sample.op, *inputs, regions=sample.regions, **dict(sample.attrs))
    return b.build(list(out) if isinstance(out, tuple) else [out])


def tolerance(dt: DType) -> tuple[float, float]:
    """Default (rtol, atol) for comparing results of dtype ``dt`` computed two ways."""
    return {
        "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
        "float64": (1e-12, 1e-14), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14),
    }.get(dt.name, (0.0, 0.0))


def assert_close(actual: Any, expected: Any, dt: DType, *, rtol: Optional[float] = None,
                 atol: Optional[float] = None, what: str = "") -> None:
    """Compare with the dtype's tolerance (exact for bool and integer types); NaNs must match."""
    d_rtol, d_atol = tolerance(dt)
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected),
        rtol=d_rtol if rtol is None else rtol, atol=d_atol if atol is None else atol,
        equal_nan=True, err_msg=what,
    )


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
    from ..ir.dtypes import as_storage

    return as_storage(values, dt)
