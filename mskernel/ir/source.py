"""Finding the user's source line: the innermost frame whose module is not part of mskernel
or of an mskernel plugin (``mskernel_*``), so errors point at the user's code; and where a
user's function returns, for errors about what it returned."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from types import FrameType
from typing import Any, Optional

from .graph import SourceLoc


def is_framework(module: str) -> bool:
    """Whether ``module`` (a module's ``__name__``) is mskernel's or a plugin's."""
    return module == "mskernel" or module.startswith(("mskernel.", "mskernel_"))


def user_location(skip: int = 1) -> Optional[SourceLoc]:
    """The innermost user frame, looking from ``skip`` frames up (1: the caller) outwards."""
    frame: Optional[FrameType] = sys._getframe(skip)
    while frame is not None:
        if not is_framework(frame.f_globals.get("__name__", "")):
            return SourceLoc(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def caller_location(skip: int = 1) -> Optional[SourceLoc]:
    """Where the caller was called from (``skip`` = 1; 2 is one frame further out) when that
    is user code, else ``None`` — one frame looked at, cheap enough for every node a graph
    builder makes."""
    frame = sys._getframe(skip + 1)
    if is_framework(frame.f_globals.get("__name__", "")):
        return None
    return SourceLoc(frame.f_code.co_filename, frame.f_lineno)


def return_site(fn: Any) -> str:
    """Where the user's function ``fn`` (or what it wraps, by ``__wrapped__``) returns, for a
    message about its result: ``"at FILE:LINE"`` of its ``return`` statement, ``"at one of
    FILE:L1, L2"`` when it has several, ``"(defined at FILE:LINE)"`` when its source cannot
    be read; ``""`` for mskernel's own functions and objects without Python code."""
    function = inspect.unwrap(fn)
    code = getattr(function, "__code__", None)
    if code is None or is_framework(getattr(function, "__module__", None) or ""):
        return ""
    try:
        lines, first = inspect.getsourcelines(code)
        (definition,) = ast.parse(textwrap.dedent("".join(lines))).body
    except (OSError, TypeError, SyntaxError, ValueError):
        definition = None
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"(defined at {code.co_filename}:{code.co_firstlineno})"
    returns = [first + node.lineno - 1 for node in _own_returns(definition)]
    if len(returns) == 1:
        return f"at {code.co_filename}:{returns[0]}"
    if returns:
        return f"at one of {code.co_filename}:{', '.join(map(str, returns))}"
    return f"(defined at {code.co_filename}:{code.co_firstlineno})"


def _own_returns(definition: ast.AST) -> list[ast.Return]:
    """The ``return`` statements of a function, not of the functions and classes inside it."""
    found: list[ast.Return] = []
    pending = list(ast.iter_child_nodes(definition))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                   ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda node: node.lineno)
