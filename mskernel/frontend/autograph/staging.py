"""Staging control flow whose condition is a traced tensor: the converted branch and loop-body
functions are traced into regions and become ``If`` and ``While`` nodes.

Converted code keeps the variables a statement assigns in the enclosing function and hands
the runtime a getter and a setter for them (:class:`~.values.StateVars`).  A staged ``if``
traces both branches from the same starting values and merges the variables that are live
after it; a staged loop carries the variables live at its head through the ``While`` node.
How each variable's values are unified is :mod:`.layout`'s job.

A loop variable that starts as a Python value and changes in the body is found by tracing the
body once with the Python value and once more as a tensor (as JAX's ``while_loop`` retraces
for weakly typed carries), so Python side effects of a loop body may run twice while tracing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...ir.graph import Graph, Value
from ...ir.types import TensorType
from ..conditions import ControlFlowError, predicate
from ..dispatch import apply
from ..trace import Trace, active_trace
from ..tensor import Tensor
from .errors import ConversionError, Loc, at
from .layout import as_type, initial_layout, join_branches, widen
from .values import StateVars


# -- regions ----------------------------------------------------------------------------------


class Region:
    """A child trace of the active trace with inputs of ``types``; values of enclosing traces
    it uses become extra inputs (captures)."""

    def __init__(self, name: str, types: Sequence[TensorType]) -> None:
        self.trace = Trace(name, active_trace())
        self.inputs = [self.trace.input(t) for t in types]

    def run(self, fn: Callable[..., Any]) -> Any:
        with self.trace:
            return fn(*self.inputs)

    def close(self, outputs: Callable[[], list[Tensor]]) -> tuple[Graph, list[Tensor]]:
        """Finish the region with the tensors ``outputs()`` makes inside it."""
        with self.trace:
            values = [self.trace.value_of(t) for t in outputs()]
        return self.trace.builder.build(values), list(self.trace.captured)


def _fresh(tensors: Sequence[Tensor]) -> list[Value]:
    return [Value(t.type) for t in tensors]


def emit_if(pred: Tensor, then: tuple[Graph, list[Tensor]],
            orelse: tuple[Graph, list[Tensor]]) -> list[Tensor]:
    """An ``If`` node on two closed branch graphs with their captured operands."""
    (then_g, then_caps), (else_g, else_caps) = then, orelse
    then_r = Graph((*then_g.inputs, *_fresh(else_caps)), then_g.nodes, then_g.outputs, "then")
    else_r = Graph((*_fresh(then_caps), *else_g.inputs), else_g.nodes, else_g.outputs, "else")
    return list(apply("If", pred, *then_caps, *else_caps, regions=(then_r, else_r)))  # type: ignore[arg-type]


def emit_while(init: Sequence[Tensor], cond: tuple[Graph, list[Tensor]],
               body: tuple[Graph, list[Tensor]]) -> list[Tensor]:
    """A ``While`` node carrying ``init``; the regions' captures are passed through."""
    (cond_g, cond_caps), (body_g, body_caps) = cond, body
    n = len(init)
    cond_r = Graph((*cond_g.inputs, *_fresh(body_caps)), cond_g.nodes, cond_g.outputs, "cond")
    body_in = (*body_g.inputs[:n], *_fresh(cond_caps), *body_g.inputs[n:])
    body_r = Graph(body_in, body_g.nodes, (*body_g.outputs, *body_in[n:]), "body")
    out = apply("While", *init, *cond_caps, *body_caps, regions=(cond_r, body_r))
    return list(out)[:n]  # type: ignore[arg-type]


# -- if ---------------------------------------------------------------------------------------


#: What a traced branch gives: the values of the merged variables, and whether the branch
#: returned from the function (its other variables are then never read again).
BranchResult = tuple[list[Any], bool]


def stage_if(pred: Any, branches: tuple[Callable[[], BranchResult], Callable[[], BranchResult]],
             names: Sequence[str], loc: Loc, what: str = "`if`") -> list[Any]:
    """Trace both branches (each returning the values of ``names``) into an ``If`` on
    ``pred``; return the merged values (tensors where the branches differ)."""
    p = predicate(pred, what)
    traced = [_trace_branch(fn, side, loc, what) for fn, side in zip(branches, ("then", "else"))]
    (_, (then_values, then_returned)), (_, (else_values, else_returned)) = traced
    layouts = [join_branches(name, a, b, loc, what, (then_returned, else_returned))
               for name, a, b in zip(names, then_values, else_values)]

    def outputs(values: list[Any]) -> Callable[[], list[Tensor]]:
        return lambda: [t for layout, v in zip(layouts, values) for t in layout.tensors(v)]

    closed = [region.close(outputs(values)) for region, (values, _) in traced]
    outs = iter(emit_if(p, closed[0], closed[1]))
    return [layout.build(outs) for layout in layouts]


def _trace_branch(fn: Callable[[], BranchResult], side: str, loc: Loc,
                  what: str) -> tuple[Region, BranchResult]:
    region = Region(side, [])
    try:
        return region, region.run(fn)
    except (ControlFlowError, ConversionError):
        raise
    except Exception as exc:
        exc.add_note(f"while tracing the {'if' if side == 'then' else 'else'} branch of the "
                     f"tensor-dependent {what} at {at(loc)} (both branches are traced, "
                     "whatever the condition's value)")
        raise


# -- loops ------------------------------------------------------------------------------------


@dataclass
class Loop:
    """A loop to stage: ``test(internal)`` and ``body(internal) -> internal'`` see the
    runtime's own carried tensors (a range counter) as ``internal``; user variables are
    reached through ``state``."""

    test: Callable[[list[Tensor]], Any]
    body: Callable[[list[Tensor]], list[Tensor]]
    internal: list[Tensor]
    state: StateVars
    carried: Sequence[str]
    loc: Loc
    what: str


def stage_loop(loop: Loop) -> None:
    """Emit the ``While`` node of ``loop`` and leave the carried variables' final values in
    the enclosing function."""
    state = loop.state
    init = state.values()
    positions = state.positions(loop.carried)
    layouts = [initial_layout(state.names[i], init[i]) for i in positions]
    internal_types = [t.type for t in loop.internal]

    def region_state(inputs: Sequence[Tensor]) -> list[Tensor]:
        """Put the region inputs into the user's variables; return the internal ones."""
        values, rest = list(init), iter(inputs[len(internal_types):])
        for i, layout in zip(positions, layouts):
            values[i] = layout.build(rest)
        state.assign(values)
        return list(inputs[:len(internal_types)])

    def run_body(*inputs: Tensor) -> tuple[list[Tensor], list[Any]]:
        internal = loop.body(region_state(inputs))
        now = state.values()
        return internal, [now[i] for i in positions]

    for _ in range(2 + sum(len(layout.leaves) for layout in layouts)):
        types = internal_types + [t for layout in layouts for t in layout.types]
        body = Region("body", types)
        internal_out, carried_out = body.run(run_body)
        widened = [widen(state.names[i], layout, init[i], out, loop.loc, loop.what)
                   for i, layout, out in zip(positions, layouts, carried_out)]
        if all(a.same_as(b) for a, b in zip(layouts, widened)):
            break
        layouts = widened
    else:
        raise ControlFlowError(f"{at(loop.loc)}: the types of the variables of the "
                               f"tensor-dependent {loop.what} loop do not settle")
    cond = Region("cond", types)
    pred = cond.run(lambda *inputs: predicate(loop.test(region_state(inputs)), loop.what))

    def body_outputs() -> list[Tensor]:
        internal = [as_type(t, ty) for t, ty in zip(internal_out, internal_types)]
        return internal + [t for layout, v in zip(layouts, carried_out) for t in layout.tensors(v)]

    body_graph = body.close(body_outputs)
    state.assign(init)
    start = [*loop.internal, *(t for i, layout in zip(positions, layouts)
                               for t in layout.tensors(init[i]))]
    outs = iter(emit_while(start, cond.close(lambda: [pred]), body_graph)[len(internal_types):])
    final = list(init)
    for i, layout in zip(positions, layouts):
        final[i] = layout.build(outs)
    state.assign(final)
