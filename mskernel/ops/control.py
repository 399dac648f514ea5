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

from typing import Any, Callable, Optional, Sequence

from ..errors import InferError, MskernelError
from ..ir.dtypes import bool_
from ..ir.graph import Graph
from ..ir.types import TensorType, Type
from .registry import Attr, OpDef

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
