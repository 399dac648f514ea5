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

Regions accept runtime checks (a ``raise`` or ``assert`` staged by :func:`stage_check`, see
:mod:`..trace`): a branch that raises ends there (:class:`BranchEnded`) and its flag is set
when it runs; an ``If`` passes its branches' flags out to the enclosing trace, a ``While``
carries its body's flags, or-ed across iterations, and stops once one is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...ir.dtypes import bool_
from ...ir.graph import Graph, Value
from ...ir.types import TensorType
from .. import functional as F
from ..conditions import ControlFlowError, predicate
from ..dispatch import apply
from ..trace import RuntimeCheck, Trace, active_trace
from ..tensor import Tensor
from .errors import ConversionError, Loc, at, unsupported
from .layout import as_type, initial_layout, join_branches, widen
from .values import StateVars


# -- regions ----------------------------------------------------------------------------------


class BranchEnded(BaseException):
    """A staged ``raise`` ended the branch or loop body being traced (the code after it never
    runs; the runtime check set when the branch runs stands for it)."""


def stage_check(flag: Tensor, check: RuntimeCheck) -> bool:
    """Make the active trace raise ``check``'s error when ``flag`` is true at run time;
    ``False`` when the active trace takes no runtime checks (the caller then decides now)."""
    trace = active_trace()
    if trace is None or trace.checks is None:
        return False
    trace.checks.append((flag, check))
    return True


def stage_raise(error: BaseException, loc: Loc) -> None:
    """``raise error``, staged when a region is being traced (it runs only when its condition
    holds), so the error is raised only when the region runs; the branch ends here."""
    trace = active_trace()
    if trace is None or trace.parent is None or not stage_check(
            F.asarray(True), RuntimeCheck(error, at(loc))):
        raise error
    raise BranchEnded


class Region:
    """A child trace of the active trace with inputs of ``types``; values of enclosing traces
    it uses become extra inputs (captures).  It takes runtime checks when its parent does."""

    def __init__(self, name: str, types: Sequence[TensorType]) -> None:
        parent = active_trace()
        self.trace = Trace(name, parent, checks=parent is not None and parent.checks is not None)
        self.inputs = [self.trace.input(t) for t in types]

    @property
    def checks(self) -> list[tuple[Tensor, RuntimeCheck]]:
        return self.trace.checks or []

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

    checks = [check for region, _ in traced for check in region.checks]

    def outputs(values: list[Any], side: Region) -> Callable[[], list[Tensor]]:
        def make() -> list[Tensor]:
            out = [t for layout, v in zip(layouts, values) for t in layout.tensors(v)]
            for region, _ in traced:  # each branch's flags; false in the other branch
                out += [flag if region is side else F.asarray(False) for flag, _ in region.checks]
            return out
        return make

    closed = [region.close(outputs(values, region)) for region, (values, _) in traced]
    outs = emit_if(p, closed[0], closed[1])
    merged = iter(outs[:len(outs) - len(checks)])
    for flag, (_, check) in zip(outs[len(outs) - len(checks):], checks):
        stage_check(flag, check)  # the enclosing trace takes them, as its regions did
    return [layout.build(merged) for layout in layouts]


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
    the enclosing function.  The body's runtime checks are carried as flags after the
    internal values: or-ed across iterations, and the loop stops once one is set."""
    state = loop.state
    init = state.values()
    positions = state.positions(loop.carried)
    layouts = [initial_layout(state.names[i], init[i]) for i in positions]
    internal_types = [t.type for t in loop.internal]
    k = len(internal_types)
    flags = [0]  # how many runtime checks the body stages (settled by retracing, as layouts)

    def region_state(inputs: Sequence[Tensor]) -> list[Tensor]:
        """Put the region inputs into the user's variables; return the internal ones."""
        values, rest = list(init), iter(inputs[k + flags[0]:])
        for i, layout in zip(positions, layouts):
            values[i] = layout.build(rest)
        state.assign(values)
        return list(inputs[:k])

    def run_body(*inputs: Tensor) -> tuple[list[Tensor], list[Any], list[Tensor]]:
        internal = region_state(inputs)
        begin = state.values()
        try:
            internal = loop.body(internal)
        except BranchEnded:  # the iteration raises: its flag stops the loop, nothing is read
            state.assign(begin)
        now = state.values()
        return internal, [now[i] for i in positions], list(inputs[k:k + flags[0]])

    for _ in range(3 + sum(len(layout.leaves) for layout in layouts)):
        types = [*internal_types, *[_FLAG] * flags[0],
                 *(t for layout in layouts for t in layout.types)]
        body = Region("body", types)
        internal_out, carried_out, flags_in = body.run(run_body)
        widened = [widen(state.names[i], layout, init[i], out, loop.loc, loop.what)
                   for i, layout, out in zip(positions, layouts, carried_out)]
        settled = len(body.checks) == flags[0] and all(
            a.same_as(b) for a, b in zip(layouts, widened))
        layouts, flags[0] = widened, len(body.checks)
        if settled:
            break
    else:
        raise ControlFlowError(f"{at(loop.loc)}: the types of the variables of the "
                               f"tensor-dependent {loop.what} loop do not settle")
    cond = Region("cond", types)

    def test(*inputs: Tensor) -> Tensor:
        pred = predicate(loop.test(region_state(inputs)), loop.what)
        for flag in inputs[k:k + flags[0]]:
            pred = F.logical_and(pred, F.logical_not(flag))
        return pred

    pred = cond.run(test)
    if cond.checks:
        raise unsupported(loop.loc, f"an `assert` or `raise` in the condition of a "
                          f"tensor-dependent {loop.what} loop", "check inside the loop body")

    def body_outputs() -> list[Tensor]:
        internal = [as_type(t, ty) for t, ty in zip(internal_out, internal_types)]
        raised = [F.logical_or(before, flag) for before, (flag, _) in zip(flags_in, body.checks)]
        return [*internal, *raised,
                *(t for layout, v in zip(layouts, carried_out) for t in layout.tensors(v))]

    body_graph = body.close(body_outputs)
    state.assign(init)
    start = [*loop.internal, *(F.asarray(False) for _ in range(flags[0])),
             *(t for i, layout in zip(positions, layouts) for t in layout.tensors(init[i]))]
    outs = emit_while(start, cond.close(lambda: [pred]), body_graph)[k:]
    for flag, (_, check) in zip(outs, body.checks):
        stage_check(flag, check)
    rest = iter(outs[flags[0]:])
    final = list(init)
    for i, layout in zip(positions, layouts):
        final[i] = layout.build(rest)
    state.assign(final)


_FLAG = TensorType(bool_, ())
