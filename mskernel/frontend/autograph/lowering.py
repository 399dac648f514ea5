"""Lowering early ``return``, ``break`` and ``continue`` to flag variables, before control flow
is converted (as AutoGraph does).  The result is plain Python with the same meaning, in which
every ``if``/``while``/``for`` has a single exit, so it can become an ``If``/``While`` node.

- ``return v`` inside a block becomes ``ag__retval = v; ag__do_return = True``; what follows
  in the enclosing blocks runs under ``if not ag__do_return:``, every enclosing loop's test
  gains ``not ag__do_return``, and the function ends with ``return ag__.retval(ag__retval)``.
- ``break`` of loop *n* becomes ``ag__break_n = True`` (``False`` before the loop, and
  ``not ag__break_n`` joins the loop's test); ``continue`` becomes ``ag__continue_n = True``
  (reset to ``False`` at the start of each iteration).  The rest of the body runs under
  ``if not <flags>:``.
- When one branch of an ``if`` always leaves (``return``, ``break`` …) and the other does
  not, the statements after the ``if`` move into the other branch instead of being guarded,
  which keeps the common guard-clause style free of flags.

The test of a ``for`` loop has no place in its syntax; the extra conditions are collected in
:attr:`Lowering.for_tests` for the converter.
"""

from __future__ import annotations

import ast
import itertools
from typing import Callable, Sequence

from . import analysis as A
from .syntax import all_of, assign, call, const, load, located, negate, runtime

DO_RETURN = "ag__do_return"
RETVAL = "ag__retval"
BREAK_PREFIX = "ag__break_"
CONTINUE_PREFIX = "ag__continue_"

Blocks = list[list[ast.stmt]]


class Lowering:
    """Lowers one function body in place (nested functions are lowered on their own)."""

    def __init__(self) -> None:
        self.for_tests: dict[ast.For, list[ast.expr]] = {}
        self._ids = itertools.count(1)

    def function(self, fn: ast.FunctionDef) -> None:
        if _returns_inside_blocks(fn.body):
            fn.body = self._lower_returns(fn)
        fn.body = self._loops_in(fn.body)

    # -- return ---------------------------------------------------------------------------

    def _lower_returns(self, fn: ast.FunctionDef) -> list[ast.stmt]:
        body = list(fn.body)
        if not A.always_exits(body):  # falling off the end returns None explicitly
            body.append(located(ast.Return(value=None), body[-1]))
        first = body[0]
        start = [located(assign(DO_RETURN, const(False)), first),
                 located(assign(RETVAL, runtime("UNDEFINED_RETURN")), first)]
        end = located(ast.Return(value=call(runtime("retval"), load(RETVAL))), body[-1])
        return [*start, *self._return_block(body), end]

    def _return_block(self, stmts: Sequence[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                value = stmt.value if stmt.value is not None else const(None)
                out += [located(assign(RETVAL, value), stmt),
                        located(assign(DO_RETURN, const(True)), stmt)]
                return out
            if not A.contains([stmt], (ast.Return,)):
                out.append(stmt)
                continue
            rest = _absorb_rest(stmt, list(stmts[i + 1:]), A.always_exits)
            for block in _blocks(stmt):
                block[:] = self._return_block(block)
            if isinstance(stmt, A.LOOPS):
                self._add_test(stmt, negate(load(DO_RETURN)))
            out.append(stmt)
            if rest:
                out.append(_guarded(negate(load(DO_RETURN)), self._return_block(rest), stmt))
            return out
        return out

    # -- break and continue ---------------------------------------------------------------

    def _loops_in(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Lower the jumps of every loop in ``stmts`` (innermost first); a loop with a
        ``break`` is preceded by its flag's initialisation."""
        out: list[ast.stmt] = []
        for stmt in stmts:
            for block in _blocks(stmt):
                block[:] = self._loops_in(block)
            if isinstance(stmt, A.LOOPS):
                out.extend(self._lower_jumps(stmt))
            else:
                out.append(stmt)
        return out

    def _lower_jumps(self, loop: ast.While | ast.For) -> list[ast.stmt]:
        has_break = A.contains(loop.body, (ast.Break,), through_loops=False)
        has_continue = A.contains(loop.body, (ast.Continue,), through_loops=False)
        if not (has_break or has_continue):
            return [loop]
        n = next(self._ids)
        brk, cont = f"{BREAK_PREFIX}{n}", f"{CONTINUE_PREFIX}{n}"
        body = self._jump_block(loop.body, brk, cont)
        before: list[ast.stmt] = []
        if has_continue:
            body.insert(0, located(assign(cont, const(False)), loop.body[0]))
        if has_break:
            before.append(located(assign(brk, const(False)), loop))
            self._add_test(loop, negate(load(brk)))
        loop.body = body
        return [*before, loop]

    def _jump_block(self, stmts: Sequence[ast.stmt], brk: str, cont: str) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (ast.Break, ast.Continue)):
                flag = brk if isinstance(stmt, ast.Break) else cont
                out.append(located(assign(flag, const(True)), stmt))
                return out
            if not A.contains([stmt], (ast.Break, ast.Continue), through_loops=False):
                out.append(stmt)
                continue
            rest = _absorb_rest(stmt, list(stmts[i + 1:]), A.always_jumps)
            for block in _blocks(stmt, into_loops=False):
                block[:] = self._jump_block(block, brk, cont)
            out.append(stmt)
            if rest:
                flags = [f for f, kind in ((brk, ast.Break), (cont, ast.Continue))
                         if A.contains([stmt], (kind,), through_loops=False)]
                test = all_of([negate(load(f)) for f in flags])
                out.append(_guarded(test, self._jump_block(rest, brk, cont), stmt))
            return out
        return out

    def _add_test(self, loop: ast.While | ast.For, test: ast.expr) -> None:
        """Make ``test`` a condition of ``loop`` continuing, checked before its own."""
        test = located(test, loop)
        if isinstance(loop, ast.While):
            loop.test = located(all_of([test, loop.test]), loop)
        else:
            self.for_tests.setdefault(loop, []).insert(0, test)


def _returns_inside_blocks(body: Sequence[ast.stmt]) -> bool:
    """Whether a ``return`` sits inside a compound statement (top-level ones need nothing)."""
    return any(A.contains(block, (ast.Return,)) for stmt in body for block in _blocks(stmt))


def _blocks(stmt: ast.stmt, into_loops: bool = True) -> Blocks:
    """The statement lists directly inside ``stmt`` in the same scope."""
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, A.LOOPS):
        return [stmt.body] if into_loops else []
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []


def _absorb_rest(stmt: ast.stmt, rest: list[ast.stmt],
                 leaves: Callable[[Sequence[ast.stmt]], bool]) -> list[ast.stmt]:
    """When ``stmt`` is an ``if`` one of whose branches always ``leaves``, move ``rest`` into
    the other branch; return what is still left to run after ``stmt``."""
    if not isinstance(stmt, ast.If) or not rest:
        return rest
    body_leaves, else_leaves = leaves(stmt.body), leaves(stmt.orelse)
    if body_leaves and else_leaves:
        return []
    if body_leaves:
        stmt.orelse = [*stmt.orelse, *rest]
        return []
    if else_leaves:
        stmt.body = [*stmt.body, *rest]
        return []
    return rest


def _guarded(test: ast.expr, body: list[ast.stmt], after: ast.stmt) -> ast.If:
    return located(ast.If(test=test, body=body, orelse=[]), body[0] if body else after)
