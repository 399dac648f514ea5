"""Which code is converted code: the code objects :mod:`.conversion` compiled (and those of the
functions defined inside them), so a function or a frame can be told to run converted code."""

from __future__ import annotations

import sys
import types
from typing import Optional

from ...ir.source import is_framework

_codes: set[types.CodeType] = set()


def register(code: types.CodeType) -> None:
    """Record ``code`` and the code objects nested in it as converted."""
    _codes.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            register(const)


def is_converted_code(code: types.CodeType) -> bool:
    return code in _codes


def is_converted(fn: types.FunctionType) -> bool:
    return fn.__code__ in _codes


def use_site() -> str:
    """`` at file:line`` of the innermost user frame when it runs converted code, else ``""``
    (a value used by the framework on the user's behalf has no meaningful line)."""
    frame: Optional[types.FrameType] = sys._getframe(1)
    while frame is not None and is_framework(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    if frame is None or frame.f_code not in _codes:
        return ""
    return f" at {frame.f_code.co_filename}:{frame.f_lineno}"
