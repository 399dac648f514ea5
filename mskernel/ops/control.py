"""Structured control flow: ``If`` and ``While``.

Both own regions, and regions are *closed* graphs: a region reads only its own inputs, so
every value a branch or a loop body needs is an operand of the owning node.  Any value —
tensors, ``!token`` and ``!ref<T>`` included — can be passed in and returned, so effects
inside a region are ordered by the token the node carries (the nodes themselves are not
``effectful``).

``If(pred, *operands)`` with regions ``(then, else)``
    ``pred`` is a ``bool[]`` scalar.  Both regions take exactly the operands' types and
    return the same list of types, which are the node's outputs.  Only the taken branch runs.

``While(*init)`` with regions ``(cond, body)``
    ``cond`` maps the carried values to one ``bool[]``; ``body`` maps them to new carried
    values of the same types.  The outputs are the carried values once ``cond`` is false.
    ``max_iterations`` (default ``None``: unbounded) makes a loop whose body would run more
    often than that an error instead of a hang.

Both ops always return a tuple of outputs (possibly of length zero or one).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..errors import InferError, MskernelError
from ..ir.builder import GraphBuilder
from ..ir.dtypes import bool_
from ..ir.graph import Graph, Value
from ..ir.types import TOKEN, RefType, TensorType, Type, tensor_type
from ..runtime.state import TOKEN_VALUE, RefCell
from . import samples
from .registry import Attr, OpDef
from .samples import Body, OpSample, SampleFn, random_array

_PRED = TensorType(bool_, ())

RunRegion = Callable[..., list[Any]]


def _listed(types: Sequence[Type]) -> str:
    return f"({', '.join(str(t) for t in types)})"


def _check_types(got: Sequence[Type], want: Sequence[Type], what: str, expected: str) -> None:
    """Require ``got == want`` position by position; ``what`` names ``got`` ("then region
    input") and ``expected`` names where ``want`` comes from ("the operand")."""
    if len(got) != len(want):
        raise InferError(f"{what}s are {len(got)} value(s) {_listed(got)}, but {expected}s are "
                         f"{len(want)} {_listed(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise InferError(f"{what} {i} has type {g}, but {expected} {i} has type {w}")


def _check_regions(regions: Sequence[Graph], names: tuple[str, str]) -> None:
    for name, region in zip(names, regions):
        if not isinstance(region, Graph):
            raise InferError(f"the {name} region must be a Graph, got {type(region).__name__}")


def _if_infer(pred: Type, *operands: Type, regions: Sequence[Graph]) -> tuple[Type, ...]:
    if pred != _PRED:
        raise InferError(f"pred must be a bool scalar {_PRED}, got {pred}")
    _check_regions(regions, ("then", "else"))
    then_region, else_region = regions
    _check_types(then_region.input_types, operands, "then region input", "operand")
    _check_types(else_region.input_types, operands, "else region input", "operand")
    _check_types(else_region.output_types, then_region.output_types, "else region output",
                 "then region output")
    return then_region.output_types


def _if(pred: Any, *operands: Any, regions: Sequence[Graph],
        run_region: RunRegion) -> tuple[Any, ...]:
    taken = regions[0] if bool(pred) else regions[1]
    return tuple(run_region(taken, *operands))


def _while_infer(*init: Type, max_iterations: Optional[int],
                 regions: Sequence[Graph]) -> tuple[Type, ...]:
    if max_iterations is not None and max_iterations < 0:
        raise InferError(f"max_iterations must be non-negative, got {max_iterations}")
    _check_regions(regions, ("cond", "body"))
    cond, body = regions
    _check_types(cond.input_types, init, "cond region input", "carried value")
    _check_types(cond.output_types, (_PRED,), "cond region output", "the required result")
    _check_types(body.input_types, init, "body region input", "carried value")
    _check_types(body.output_types, init, "body region output", "carried value")
    return tuple(init)


def _while(*init: Any, max_iterations: Optional[int], regions: Sequence[Graph],
           run_region: RunRegion) -> tuple[Any, ...]:
    cond, body = regions
    carried = tuple(init)
    iterations = 0
    while bool(run_region(cond, *carried)[0]):
        if max_iterations is not None and iterations == max_iterations:
            raise MskernelError(
                f"While: the loop exceeded max_iterations={max_iterations} (its cond region "
                f"@{cond.name} was still true after {iterations} iterations)"
            )
        carried = tuple(run_region(body, *carried))
        iterations += 1
    return carried


OPS: list[OpDef] = [
    OpDef("If", ("pred", "*operands"), _if_infer, _if, num_regions=2,
          doc="run the then region on the operands if pred is true, else the else region"),
    OpDef("While", ("*init",), _while_infer, _while, num_regions=2,
          attrs=(Attr("max_iterations", "int?", None),),
          doc="run the body region on the carried values while the cond region is true"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for ``If`` and ``While``: both branches taken, zero and several loop iterations,
# scalar and size-0 operands, and tokens and refs carried through regions.
#
# The regions are built with :class:`~mskernel.ir.builder.GraphBuilder` from elementwise and
# state ops.  Stores in these regions write values computed from the operands only, so running
# a sample again leaves its ref cells as the first run did.


def _pred(value: bool) -> np.ndarray:
    return np.array(value)


def _if_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in ((2, 3), (), (0, 4)):
        x = random_array(rng, shape, "float32")
        n = random_array(rng, (3,), "int32")
        types = (tensor_type("f32", shape), tensor_type("i32", (3,)))
        then_region = samples.region("then", types,
                                     lambda b, v: (b.op("exp", v[0]), b.op("neg", v[1])))
        else_region = samples.region("else", types, lambda b, v: (b.op("sin", v[0]), v[1]))
        for pred in (True, False):
            yield OpSample("If", (_pred(pred), x, n), regions=(then_region, else_region))
    cell_type = tensor_type("f64", (2,))
    cell_types = (RefType(cell_type), cell_type, TOKEN)
    store = samples.region("then", cell_types,
                           lambda b, v: (b.op("ref_store", v[0], v[1], v[2]),))
    keep = samples.region("else", cell_types, lambda b, v: (v[2],))
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
    cond = samples.region("cond", types, lambda b, v: (b.op("less", v[0], v[2]),))
    body = samples.region("body", types, lambda b, v: (b.op("add", v[0], v[1]), v[1], v[2],
                                                       *step_extra(b, v[3:])))
    return cond, body


def _counters(limit: int) -> tuple[np.ndarray, ...]:
    return tuple(np.array(c, np.int32) for c in (0, 1, limit))


def _store_cos(b: GraphBuilder, carried: list[Value]) -> Sequence[Any]:
    ref, x, token = carried
    y: Value = b.op("cos", x)  # type: ignore[assignment]  # a one-output op
    return ref, y, b.op("ref_store", ref, y, token)


def _while_samples(rng: np.random.Generator) -> Iterator[OpSample]:
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


SAMPLES: dict[str, SampleFn] = {"If": _if_samples, "While": _while_samples}
