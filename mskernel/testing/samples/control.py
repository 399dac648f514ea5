"""Samples for ``If`` and ``While``: both branches taken, zero and several loop iterations,
scalar and size-0 operands, and tokens and refs carried through regions.

The regions are built with :class:`~mskernel.ir.builder.GraphBuilder` from elementwise and
state ops.  Stores in these regions write values computed from the operands only, so running
a sample again leaves its ref cells as the first run did.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence

import numpy as np

from ...ir.builder import GraphBuilder
from ...ir.graph import Graph, Value
from ...ir.types import TOKEN, RefType, Type, tensor_type
from ...runtime.state import TOKEN_VALUE, RefCell
from .. import OpSample, SampleFn, random_array

Body = Callable[[GraphBuilder, list[Value]], Sequence[Value]]


def region(name: str, types: Sequence[Type], body: Body) -> Graph:
    """A region taking ``types`` whose outputs ``body(builder, inputs)`` builds."""
    b = GraphBuilder(name)
    inputs = [b.input(t) for t in types]
    return b.build(list(body(b, inputs)))


def _pred(value: bool) -> np.ndarray:
    return np.array(value)


def _if(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in ((2, 3), (), (0, 4)):
        x = random_array(rng, shape, "float32")
        n = random_array(rng, (3,), "int32")
        types = (tensor_type("f32", shape), tensor_type("i32", (3,)))
        then_region = region("then", types, lambda b, v: (b.op("exp", v[0]), b.op("neg", v[1])))
        else_region = region("else", types, lambda b, v: (b.op("sin", v[0]), v[1]))
        for pred in (True, False):
            yield OpSample("If", (_pred(pred), x, n), regions=(then_region, else_region))
    cell_type = tensor_type("f64", (2,))
    cell_types = (RefType(cell_type), cell_type, TOKEN)
    store = region("then", cell_types, lambda b, v: (b.op("ref_store", v[0], v[1], v[2]),))
    keep = region("else", cell_types, lambda b, v: (v[2],))
    for pred in (True, False):
        cell = RefCell(cell_type, random_array(rng, (2,), "float64"))
        value = random_array(rng, (2,), "float64")
        yield OpSample("If", (_pred(pred), cell, value, TOKEN_VALUE), regions=(store, keep),
                       label="store")


def _counting_loop(extra_types: Sequence[Type], step_extra: Body) -> tuple[Graph, Graph]:
    """Regions of a loop carrying ``(i, step, limit, *extra)``: it runs while ``i < limit``,
    adding ``step`` to ``i`` and replacing ``extra`` with ``step_extra(builder, extra)``."""
    i32 = tensor_type("i32", ())
    types = (i32, i32, i32, *extra_types)
    cond = region("cond", types, lambda b, v: (b.op("less", v[0], v[2]),))
    body = region("body", types, lambda b, v: (b.op("add", v[0], v[1]), v[1], v[2],
                                               *step_extra(b, v[3:])))
    return cond, body


def _counters(limit: int) -> tuple[np.ndarray, ...]:
    return tuple(np.array(c, np.int32) for c in (0, 1, limit))


def _store_cos(b: GraphBuilder, carried: list[Value]) -> Sequence[Value]:
    ref, x, token = carried
    y = b.op("cos", x)
    return ref, y, b.op("ref_store", ref, y, token)


def _while(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape, limit, max_iterations in (((2, 3), 3, None), ((), 0, None), ((0, 2), 2, 5),
                                         ((4,), 4, 4)):
        loop = _counting_loop([tensor_type("f32", shape)], lambda b, e: (b.op("sin", e[0]),))
        yield OpSample("While", (*_counters(limit), random_array(rng, shape, "float32")),
                       regions=loop, attrs={"max_iterations": max_iterations})
    cell_type = tensor_type("f32", (3,))
    loop = _counting_loop([RefType(cell_type), cell_type, TOKEN], _store_cos)
    cell = RefCell(cell_type, random_array(rng, (3,), "float32"))
    yield OpSample("While", (*_counters(3), cell, random_array(rng, (3,), "float32"), TOKEN_VALUE),
                   regions=loop, label="store")


SAMPLES: dict[str, SampleFn] = {"If": _if, "While": _while}
