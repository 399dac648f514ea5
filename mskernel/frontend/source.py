"""Finding the user's source line: the innermost frame whose module is not part of mskernel
or of an mskernel plugin (``mskernel_*``), so errors point at the user's code."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Optional

from ..ir.graph import SourceLoc


def is_framework(module: str) -> bool:
    """Whether ``module`` is part of mskernel or of an mskernel plugin."""
    return module == "mskernel" or module.startswith(("mskernel.", "mskernel_"))


def user_location(skip: int = 1) -> Optional[SourceLoc]:
    frame: Optional[FrameType] = sys._getframe(skip)
    while frame is not None:
        if not is_framework(frame.f_globals.get("__name__", "")):
            return SourceLoc(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None
