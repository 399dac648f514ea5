"""Small constructors for the AST nodes the converter generates.  Every generated node gets
the source location of the user's statement it stands for (:func:`located`), so tracebacks
and op locations point at the user's lines."""

from __future__ import annotations

import ast
from typing import Any, Sequence

#: The name under which converted code sees :mod:`.runtime`; user code may not use the prefix.
RUNTIME = "ag__"
RESERVED_PREFIX = "ag__"


def located(node: Any, like: ast.AST) -> Any:
    """``node`` and its children without a location, placed at the start of ``like`` (on one
    line: a call spanning lines is reported at its last line, which would be misleading)."""
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            child.lineno = child.end_lineno = like.lineno  # type: ignore[attr-defined]
            child.col_offset = child.end_col_offset = like.col_offset  # type: ignore[attr-defined]
    return node


def load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def store(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store())


def runtime(attr: str) -> ast.Attribute:
    """``ag__.<attr>``: a helper of the runtime module."""
    return ast.Attribute(value=load(RUNTIME), attr=attr, ctx=ast.Load())


def call(func: ast.expr, *args: ast.expr, keywords: Sequence[ast.keyword] = ()) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[store(name)], value=value)


def const(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def strings(names: Sequence[str]) -> ast.Tuple:
    return ast.Tuple(elts=[const(n) for n in names], ctx=ast.Load())


def negate(expr: ast.expr) -> ast.UnaryOp:
    return ast.UnaryOp(op=ast.Not(), operand=expr)


def all_of(exprs: Sequence[ast.expr]) -> ast.expr:
    """``e1 and e2 and …`` (a single expression stays as it is)."""
    return exprs[0] if len(exprs) == 1 else ast.BoolOp(op=ast.And(), values=list(exprs))


def function(name: str, params: Sequence[str], body: Sequence[ast.stmt]) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=list(body) or [ast.Pass()],
                           decorator_list=[], returns=None, type_comment=None)


def nonlocal_(names: Sequence[str]) -> list[ast.stmt]:
    """``nonlocal a, b`` (nothing for no names: an empty declaration is a syntax error)."""
    return [ast.Nonlocal(names=list(names))] if names else []


def tuple_of(names: Sequence[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx) for n in names], ctx=ctx)
