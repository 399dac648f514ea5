"""Finding the user's source line: the innermost frame whose module is not part of mskernel
or of an mskernel plugin (``mskernel_*``), so errors point at the user's code."""

from __future__ import annotations

import sys
from typing import Optional

from .graph import SourceLoc


def is_framework(module: str) -> bool:
    """Whether ``module`` (a module's ``__name__``) is mskernel's or a plugin's."""
    return module == "mskernel" or module.startswith(("mskernel.", "mskernel_"))


def user_location(skip: int = 1) -> Optional[SourceLoc]:
    """The innermost user frame, looking from ``skip`` frames up (1: the caller) outwards."""
    frame = sys._getframe(skip)
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
