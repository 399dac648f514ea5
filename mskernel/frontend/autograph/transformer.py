"""The AST transformation: ``if``/``while``/``for`` statements of a lowered function body become
calls of :mod:`.runtime` helpers, with the blocks moved into nested functions.

For ``if c: A else: B`` assigning ``x`` and ``y`` the converter emits::

    try: x                                      # names not bound yet become Undefined
    except NameError: x = ag__.Undefined('x')
    ...
    def ag__if_body_1():
        nonlocal x, y
        A
    def ag__else_body_1():
        nonlocal x, y
        B
    def ag__get_state_1(): return (x, y)
    def ag__set_state_1(ag__values):
        nonlocal x, y
        (x, y) = ag__values
    ag__.if_stmt(c, ag__if_body_1, ag__else_body_1, ag__get_state_1, ag__set_state_1,
                 ('x', 'y'), <names live after the if>, (file, line), <inside try?>)

Loops are converted alike (the test becomes a function, a ``for`` body takes the item).
``raise`` and ``assert`` call ``ag__.raise_`` / ``ag__.assert_``, which stage them as runtime
checks where the code runs only when a traced condition holds or the asserted value is
traced.  Expressions are converted too: ``and``/``or``/``not``, ``x in c`` and ``a if c else
b`` call runtime helpers (a traced operand cannot be a Python truth value), and every call
goes through ``ag__.call`` so that user functions called from converted code are converted in
turn.  Generated nodes carry the location of the statement they replace.
"""

from __future__ import annotations

import ast
import itertools
import sys
import typing
from typing import Optional, Sequence

from . import analysis as A
from .errors import Loc, unsupported
from .lowering import Lowering
from .syntax import (
    RESERVED_PREFIX, RUNTIME, all_of, assign, call, const, function, load, located, nonlocal_,
    runtime, strings, tuple_of,
)

#: Builtins that must see their caller's frame, so calls of them are left as they are.
FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir"})

_UNSUPPORTED_SYNTAX = {
    ast.Yield: ("`yield`", "a generator cannot become a graph; return the values instead"),
    ast.YieldFrom: ("`yield from`", "a generator cannot become a graph; return the values instead"),
    ast.Await: ("`await`", "jit a synchronous function"),
    ast.AsyncFor: ("`async for`", "jit a synchronous function"),
    ast.AsyncWith: ("`async with`", "jit a synchronous function"),
    ast.AsyncFunctionDef: ("`async def`", "jit a synchronous function"),
    ast.Match: ("a `match` statement", "use if/elif/else"),
}


class FunctionConverter:
    """Converts function definitions of one source file, in place."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self._ids = itertools.count(1)

    def function(self, fn: ast.FunctionDef) -> None:
        """Lower and convert ``fn`` (and the functions defined inside it)."""
        self._check_syntax(fn)
        lowering = Lowering()
        lowering.function(fn)
        scope = _Scope(self, fn, lowering.for_tests)
        fn.body = scope.block(fn.body, in_try=False)

    def next_id(self) -> int:
        return next(self._ids)

    def loc(self, node: ast.AST) -> Loc:
        return (self.filename, node.lineno)  # type: ignore[attr-defined]

    def _check_syntax(self, fn: ast.FunctionDef) -> None:
        for node in A.local_nodes(fn.body):
            if type(node) in _UNSUPPORTED_SYNTAX:
                construct, hint = _UNSUPPORTED_SYNTAX[type(node)]
                raise unsupported(self.loc(node), construct, hint)
            if isinstance(node, A.LOOPS) and node.orelse:
                kind = "while" if isinstance(node, ast.While) else "for"
                raise unsupported(self.loc(node), f"`{kind} ... else`",
                                  "set a flag before `break` and test it after the loop")
        for node in ast.walk(fn):
            name = _identifier(node)
            if name is not None and name.startswith(RESERVED_PREFIX):
                raise unsupported(self.loc(node), f"the name '{name}'",
                                  f"names starting with {RESERVED_PREFIX} are reserved for "
                                  "converted code")


class _Scope:
    """The conversion of one function body: its liveness and its global/nonlocal names."""

    def __init__(self, converter: FunctionConverter, fn: ast.FunctionDef,
                 for_tests: dict[ast.For, list[ast.expr]]) -> None:
        self.converter = converter
        self.for_tests = for_tests
        self.liveness = A.Liveness(fn.body, {loop: all_of(t) for loop, t in for_tests.items()})
        self.declared = {name for node in A.local_nodes(fn.body)
                         if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
        params = [*fn.args.posonlyargs, *fn.args.args]
        self.expressions = _Expressions(converter, params[0].arg if params else None)

    def block(self, stmts: Sequence[ast.stmt], in_try: bool) -> list[ast.stmt]:
        return [out for stmt in stmts for out in self.stmt(stmt, in_try)]

    def stmt(self, s: ast.stmt, in_try: bool) -> list[ast.stmt]:
        if isinstance(s, ast.If):
            return self._if(s, in_try)
        if isinstance(s, ast.While):
            return self._while(s, in_try)
        if isinstance(s, ast.For):
            return self._for(s, in_try)
        if isinstance(s, ast.FunctionDef):
            if not A.contains(s.body, (ast.Yield, ast.YieldFrom)):  # generators stay Python
                self.converter.function(s)
            s.decorator_list = [self.expr(d) for d in s.decorator_list]
            return [s]
        if isinstance(s, ast.ClassDef):
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body, in_try or bool(s.handlers))
            for handler in s.handlers:
                handler.body = self.block(handler.body, in_try)
            s.orelse = self.block(s.orelse, in_try)
            s.finalbody = self.block(s.finalbody, in_try)
            return [s]
        if isinstance(s, ast.With):
            for item in s.items:
                item.context_expr = self.expr(item.context_expr)
            s.body = self.block(s.body, in_try)
            return [s]
        if isinstance(s, ast.Raise) and s.exc is not None and s.cause is None:
            return [located(ast.Expr(value=call(runtime("raise_"), self.expr(s.exc),
                                                const(self.converter.loc(s)), const(in_try))), s)]
        if isinstance(s, ast.Assert) and not sys.flags.optimize:  # python -O drops asserts
            message = self.expr(s.msg) if s.msg is not None else located(const(None), s)
            return [located(ast.Expr(value=call(runtime("assert_"), self.expr(s.test),
                                                _thunk(message), const(self.converter.loc(s)),
                                                const(in_try))), s)]
        return [typing.cast(ast.stmt, self.expressions.visit(s))]

    def expr(self, node: ast.expr) -> ast.expr:
        return typing.cast(ast.expr, self.expressions.visit(node))

    # -- statements -----------------------------------------------------------------------

    def _if(self, s: ast.If, in_try: bool) -> list[ast.stmt]:
        n = self.converter.next_id()
        names = sorted(A.assigned([*s.body, *s.orelse]))
        self._check_assignable(s, names, [*s.body, *s.orelse], "an `if` block")
        live = [v for v in names if v in self.liveness.live_after(s)]
        test = self.expr(s.test)
        body = function(f"ag__if_body_{n}", [], [*nonlocal_(names), *self.block(s.body, in_try)])
        orelse = function(f"ag__else_body_{n}", [],
                          [*nonlocal_(names), *self.block(s.orelse, in_try)])
        return self._emit(s, names, [body, orelse], n, "if_stmt",
                          [test, load(body.name), load(orelse.name)], live, in_try)

    def _while(self, s: ast.While, in_try: bool) -> list[ast.stmt]:
        n = self.converter.next_id()
        in_test = sorted(A.assigned([s.test]))
        names = sorted(A.assigned(s.body) | set(in_test))
        self._check_assignable(s, names, s.body, "a `while` loop")
        live = [v for v in names if v in self.liveness.live_at_head(s)]
        test = function(f"ag__loop_test_{n}", [],
                        [*nonlocal_(in_test), ast.Return(value=self.expr(s.test))])
        body = function(f"ag__loop_body_{n}", [], [*nonlocal_(names), *self.block(s.body, in_try)])
        return self._emit(s, names, [test, body], n, "while_stmt",
                          [load(test.name), load(body.name)], live, in_try)

    def _for(self, s: ast.For, in_try: bool) -> list[ast.stmt]:
        n = self.converter.next_id()
        extra = self.for_tests.get(s)
        in_test = sorted(A.assigned(extra or []))
        names = sorted(A.assigned([s.target, *s.body]) | set(in_test))
        self._check_assignable(s, names, s.body, "a `for` loop")
        live = [v for v in names if v in self.liveness.live_at_head(s)]
        bind = located(ast.Assign(targets=[s.target], value=load("ag__item")), s)
        body = function(f"ag__for_body_{n}", ["ag__item"],
                        [*nonlocal_(names), bind, *self.block(s.body, in_try)])
        defs: list[ast.stmt] = [body]
        test: ast.expr = const(None)
        if extra:
            test_fn = function(f"ag__for_test_{n}", [],
                               [*nonlocal_(in_test), ast.Return(value=self.expr(all_of(extra)))])
            defs.append(test_fn)
            test = load(test_fn.name)
        return self._emit(s, names, defs, n, "for_stmt",
                          [self.expr(s.iter), load(body.name), test], live, in_try)

    def _emit(self, s: ast.stmt, names: list[str], defs: list[ast.stmt], n: int, helper: str,
              args: list[ast.AST], live: list[str], in_try: bool) -> list[ast.stmt]:
        getter = function(f"ag__get_state_{n}", [], [ast.Return(value=tuple_of(names, ast.Load()))])
        setter = function(f"ag__set_state_{n}", ["ag__values"], [
            *nonlocal_(names),
            *([ast.Assign(targets=[tuple_of(names, ast.Store())], value=load("ag__values"))]
              if names else []),
        ])
        invoke = call(runtime(helper), *args, load(getter.name), load(setter.name),  # type: ignore[arg-type]
                      strings(names), strings(live), const(self.converter.loc(s)), const(in_try))
        stmts = [*_undefined_guards(names), *defs, getter, setter, ast.Expr(value=invoke)]
        return [located(stmt, s) for stmt in stmts]

    def _check_assignable(self, s: ast.stmt, names: Sequence[str], blocks: Sequence[ast.stmt],
                          construct: str) -> None:
        loc = self.converter.loc(s)
        for name in names:
            if name in self.declared:
                raise unsupported(loc, f"assigning global or nonlocal variable '{name}' inside "
                                  f"{construct}", "assign it before or after the block, or "
                                  "return the value")
        for node in A.local_nodes(blocks):
            if isinstance(node, ast.Delete):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if targets:
                    raise unsupported(self.converter.loc(node),
                                      f"`del {targets[0]}` inside {construct}",
                                      "assign the variable a new value instead")


def _identifier(node: ast.AST) -> Optional[str]:
    """The variable or parameter name ``node`` binds or reads, if it is one."""
    if isinstance(node, ast.Name):
        return node.id
    return node.arg if isinstance(node, ast.arg) else None


def _undefined_guards(names: Sequence[str]) -> list[ast.stmt]:
    """``try: x / except NameError: x = ag__.Undefined('x')`` per name: every variable a
    block may assign is bound before the block's functions declare it ``nonlocal``."""
    return [ast.Try(body=[ast.Expr(value=load(name))],
                    handlers=[ast.ExceptHandler(type=load("NameError"), name=None, body=[
                        assign(name, call(runtime("Undefined"), const(name)))])],
                    orelse=[], finalbody=[]) for name in names]


class _Expressions(ast.NodeTransformer):
    """Converts ``and``/``or``/``not``, conditional expressions and calls."""

    def __init__(self, converter: FunctionConverter, first_param: Optional[str]) -> None:
        self.converter = converter
        self.first_param = first_param

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if _has_walrus(node.values[1:]):  # a lambda would give the walrus its own scope
            return node
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        first, *rest = node.values
        return located(call(runtime(helper), first, *(_thunk(v) for v in rest)), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return located(call(runtime("not_"), node.operand), node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            return node
        found = located(call(runtime("contains"), node.left, node.comparators[0]), node)
        return found if isinstance(node.ops[0], ast.In) else located(
            call(runtime("not_"), found), node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if _has_walrus([node.body, node.orelse]):
            return node
        return located(call(runtime("if_exp"), node.test, _thunk(node.body), _thunk(node.orelse),
                            const(self.converter.loc(node))), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if _is_runtime(node.func):
            return node
        if isinstance(node.func, ast.Name) and node.func.id in FRAME_BUILTINS:
            if node.func.id == "super" and not node.args and self.first_param:
                # zero-argument super() needs the class cell of a function compiled in a class
                node.args = [located(load(name), node) for name in ("__class__", self.first_param)]
            return node
        return located(call(runtime("call"), node.func, *node.args, keywords=node.keywords), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # converted as a statement of its own scope


def _thunk(expr: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])
    return located(ast.Lambda(args=args, body=expr), expr)


def _is_runtime(func: ast.expr) -> bool:
    """``ag__.<helper>``: a call the converter generated."""
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id == RUNTIME)


def _has_walrus(nodes: Sequence[ast.AST]) -> bool:
    return any(isinstance(n, ast.NamedExpr) for node in nodes for n in ast.walk(node))
