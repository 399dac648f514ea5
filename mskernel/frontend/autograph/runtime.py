"""The helpers converted code calls (as ``ag__.<name>``).

Each decides at run time — that is, while ``@jit`` traces — what a statement means: a
condition that is a Python value or a concrete tensor runs the statement as plain Python
(loops over Python ranges unroll); a traced condition, a ``range`` with a traced bound or a
traced tensor to iterate over stages it into ``If``/``While`` nodes (:mod:`.staging`).

The signatures are the converter's contract; ``names`` are the variables a statement may
assign (the getter/setter pair reads and writes them in the enclosing function), ``live``
those still read afterwards (outputs of a staged ``if``, carried values of a staged loop).
"""

from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Optional, Sequence

from .. import functional as F
from ..conditions import predicate
from ..promote import result_dtype
from ..tensor import Tensor, TracedValueError
from .conversion import converted_callee
from .errors import IF_EXP, Loc, at, unsupported
from .lowering import DO_RETURN
from .staging import (
    BranchEnded, BranchResult, Loop, RuntimeCheck, stage_check, stage_if, stage_loop,
    stage_raise,
)
from .values import UNDEFINED_RETURN, StateVars, Undefined

__all__ = ["UNDEFINED_RETURN", "Undefined", "and_", "assert_", "call", "contains", "for_stmt",
           "if_exp", "if_stmt", "not_", "or_", "raise_", "retval", "while_stmt"]

Getter = Callable[[], tuple[Any, ...]]
Setter = Callable[[tuple[Any, ...]], None]


def _traced(x: Any) -> bool:
    return isinstance(x, Tensor) and x.is_traced


def _refuse_in_try(in_try: bool, what: str, loc: Loc) -> None:
    if in_try:
        raise unsupported(loc, f"a tensor-dependent {what} inside `try ... except`",
                          "exceptions raised in a traced branch or loop body would be raised "
                          "while tracing, not when the condition holds; move the `try` inside "
                          "the branch or the condition outside the `try`")


# -- statements -------------------------------------------------------------------------------


def if_stmt(test: Any, body: Callable[[], None], orelse: Callable[[], None], get: Getter,
            set_: Setter, names: tuple[str, ...], live: tuple[str, ...], loc: Loc,
            in_try: bool) -> None:
    if not _traced(test):
        body() if test else orelse()
        return
    _refuse_in_try(in_try, "`if`", loc)
    _staged_if(test, body, orelse, StateVars(get, set_, names), live, loc)


def _staged_if(test: Tensor, body: Callable[[], None], orelse: Callable[[], None],
               state: StateVars, live: Sequence[str], loc: Loc) -> None:
    init = state.values()
    positions = state.positions(live)

    returned = state.names.index(DO_RETURN) if DO_RETURN in state.names else None

    def branch(fn: Callable[[], None]) -> Callable[[], BranchResult]:
        def run() -> BranchResult:
            state.assign(init)
            try:
                fn()
            except BranchEnded:  # a staged raise: the variables of this branch are never read
                now = state.values()
                return [now[i] for i in positions], True
            now = state.values()
            return [now[i] for i in positions], returned is not None and now[returned] is True
        return run

    merged = stage_if(test, (branch(body), branch(orelse)), live, loc)
    final = list(init)
    for i, value in zip(positions, merged):
        final[i] = value
    state.assign(final)


def while_stmt(test: Callable[[], Any], body: Callable[[], None], get: Getter, set_: Setter,
               names: tuple[str, ...], live: tuple[str, ...], loc: Loc, in_try: bool) -> None:
    """A Python loop while the test gives Python values or concrete tensors; from the first
    traced test on, the rest of the loop is one ``While`` node."""
    while True:
        condition = test()
        if _traced(condition):
            _refuse_in_try(in_try, "`while` loop", loc)

            def iteration(internal: list[Tensor]) -> list[Tensor]:
                body()
                return internal

            stage_loop(Loop(lambda internal: test(), iteration, [], StateVars(get, set_, names),
                            live, loc, "`while`"))
            return
        if not condition:
            return
        body()


def for_stmt(iterable: Any, body: Callable[[Any], None], extra_test: Optional[Callable[[], Any]],
             get: Getter, set_: Setter, names: tuple[str, ...], live: tuple[str, ...], loc: Loc,
             in_try: bool) -> None:
    """``for`` over a traced range or the first axis of a traced tensor is staged; over
    anything else it is a Python loop.  ``extra_test`` (from ``break`` and early ``return``)
    is checked before each iteration; once it is traced, each further iteration runs under a
    staged ``if``."""
    state = StateVars(get, set_, names)
    if isinstance(iterable, StagedRange) or _traced(iterable):
        _refuse_in_try(in_try, "`for` loop", loc)
        stage_loop(_range_loop(iterable, body, extra_test, state, live, loc)
                   if isinstance(iterable, StagedRange)
                   else _tensor_loop(iterable, body, extra_test, state, live, loc))
        return
    for item in iterable:
        go_on = True if extra_test is None else extra_test()
        if isinstance(go_on, Tensor) and go_on.is_traced:
            _refuse_in_try(in_try, "`for` loop", loc)
            _staged_if(go_on, functools.partial(body, item), lambda: None, state, live, loc)
        elif not go_on:
            return
        else:
            body(item)


def _combined_test(pred: Tensor, extra_test: Optional[Callable[[], Any]], what: str) -> Tensor:
    if extra_test is None:
        return pred
    return F.logical_and(pred, predicate(extra_test(), what))


def _range_loop(r: "StagedRange", body: Callable[[Any], None],
                extra_test: Optional[Callable[[], Any]], state: StateVars,
                live: Sequence[str], loc: Loc) -> Loop:
    dt = result_dtype([r.start, r.stop, r.step])
    if not (dt.is_integer or dt.is_bool):
        raise TypeError(f"{at(loc)}: range() needs integer bounds, got {dt} (cast with astype)")
    step = r.step

    def test(internal: list[Tensor]) -> Tensor:
        i = internal[0]
        if isinstance(step, Tensor):
            ahead = F.logical_and(F.less(0, step), F.less(i, r.stop))
            behind = F.logical_and(F.less(step, 0), F.less(r.stop, i))
            pred = F.logical_or(ahead, behind)
        else:
            pred = F.less(i, r.stop) if step > 0 else F.less(r.stop, i)
        return _combined_test(pred, extra_test, "`for` loop")  # type: ignore[arg-type]

    def advance(internal: list[Tensor]) -> list[Tensor]:
        body(internal[0]._as_weak())  # eager code sees a Python int here
        return [F.add(internal[0], step)]

    return Loop(test, advance, [F.asarray(r.start, dt)], state, live, loc, "`for`")


def _tensor_loop(xs: Tensor, body: Callable[[Any], None], extra_test: Optional[Callable[[], Any]],
                 state: StateVars, live: Sequence[str], loc: Loc) -> Loop:
    if not xs.shape:
        raise TypeError(f"{at(loc)}: iteration over a 0-d tensor")
    n = xs.shape[0]

    def test(internal: list[Tensor]) -> Tensor:
        return _combined_test(F.less(internal[0], n), extra_test, "`for` loop")

    def advance(internal: list[Tensor]) -> list[Tensor]:
        body(F.take(xs, internal[0], axis=0))
        return [F.add(internal[0], 1)]

    return Loop(test, advance, [F.asarray(0, "int64")], state, live, loc, "`for`")


class StagedRange:
    """``range(...)`` with a traced bound: only a converted ``for`` loop can iterate it."""

    def __init__(self, *args: Any) -> None:
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (*args, 1)
        if len(args) != 3:
            raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
        self.start, self.stop, self.step = args
        if not isinstance(self.step, Tensor) and self.step == 0:
            raise ValueError("range() arg 3 must not be zero")

    def __iter__(self) -> Any:
        raise TracedValueError(
            "a range() with a traced bound can only drive a `for` loop written in the jitted "
            "function (the loop becomes a While node)")


def raise_(exc: Any, loc: Loc, in_try: bool) -> None:
    """``raise exc``.  In the branch of a tensor-dependent ``if`` or the body of a
    tensor-dependent loop it is staged, as MindSpore's graph mode stages it: the program
    raises the error (a copy, noting the line) only when that code runs.  Elsewhere — and in
    a ``try`` block, whose handlers must see it — it is raised now."""
    error = exc() if isinstance(exc, type) else exc
    if not isinstance(error, BaseException):
        raise TypeError(f"{at(loc)}: exceptions must derive from BaseException, got "
                        f"{type(error).__name__}")
    if in_try:
        raise error
    stage_raise(error, loc)


def assert_(test: Any, message: Callable[[], Any], loc: Loc, in_try: bool) -> None:
    """``assert test, message()``; a traced ``test`` is checked each time the program runs,
    raising ``AssertionError`` when it is false."""
    if not _traced(test):
        if not test:
            text = message()
            raise AssertionError() if text is None else AssertionError(text)
        return
    failed = F.logical_not(predicate(test, "`assert`"))
    text = message()
    error = AssertionError() if text is None else AssertionError(text)
    if in_try or not stage_check(failed, RuntimeCheck(error, at(loc))):
        bool(test)  # no runtime checks here: the error a traced truth value gives


# -- expressions ------------------------------------------------------------------------------


def contains(item: Any, container: Any) -> Any:
    """``item in container``; with a traced operand, a bool tensor: whether some element of
    a tensor ``container``, or some element of a list or tuple, equals ``item``."""
    if isinstance(container, Tensor) and (container.is_traced or _traced(item)):
        return F.any(F.equal(container, item))
    if _traced(item) and isinstance(container, (list, tuple)):
        found: Any = F.asarray(False)
        for element in container:
            found = F.logical_or(found, predicate(F.equal(item, element), "`in`"))
        return found
    return item in container



def if_exp(test: Any, body: Callable[[], Any], orelse: Callable[[], Any], loc: Loc) -> Any:
    """``body() if test else orelse()``; staged as an ``If`` when ``test`` is traced."""
    if not _traced(test):
        return body() if test else orelse()
    (value,) = stage_if(test, (lambda: ([body()], False), lambda: ([orelse()], False)),
                        (IF_EXP,), loc, "conditional expression")
    return value


def not_(x: Any) -> Any:
    return F.logical_not(predicate(x, "`not`")) if _traced(x) else not x


def and_(first: Any, *rest: Callable[[], Any]) -> Any:
    """``first and rest[0]() and …`` with Python's short circuit while the operands are
    Python values; from the first traced operand on, the logical and of all of them (each
    operand must have one element, as Python's truth test of a tensor requires)."""
    return _logical(F.logical_and, "`and`", False, first, rest)


def or_(first: Any, *rest: Callable[[], Any]) -> Any:
    """``first or rest[0]() or …``, like :func:`and_`."""
    return _logical(F.logical_or, "`or`", True, first, rest)


def _logical(combine: Callable[[Any, Any], Tensor], what: str, stop_when: bool, value: Any,
             rest: Sequence[Callable[[], Any]]) -> Any:
    for k, thunk in enumerate(rest):
        if _traced(value):
            out = predicate(value, what)
            for later in rest[k:]:
                out = combine(out, predicate(later(), what))
            return out
        if bool(value) is stop_when:
            return value
        value = thunk()
    return value


# -- calls and values -------------------------------------------------------------------------


def call(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``, converted first when it is user code (see :func:`.conversion.convert`);
    ``range`` with a traced bound gives a :class:`StagedRange`."""
    if fn is builtins.range and any(_traced(a) for a in args):
        return StagedRange(*args)
    return converted_callee(fn)(*args, **kwargs)


def retval(value: Any) -> Any:
    """The function's result at its single exit: ``None`` when no ``return`` ran."""
    return None if value is UNDEFINED_RETURN else value
