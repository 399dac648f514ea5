"""Running a plugin's code so that nothing it raises ends the program.

A plugin's import, hooks and backend factories may raise anything: an ``Exception``, but
also ``SystemExit`` (the plugin called ``sys.exit()``), ``KeyboardInterrupt`` or another
``BaseException``.  Let through, any of these would end every mskernel program at its first
op, ``mskernel plugins list`` included.  :class:`Contained` catches them all and keeps the
exception for the caller to report — except a real Ctrl-C: a ``KeyboardInterrupt`` raised
because SIGINT arrived while the plugin's code ran still stops the program.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any, Optional


class Contained:
    """``with Contained() as run: plugin_code()`` — afterwards ``run.error`` is what the code
    raised (``None`` when it returned).

    A ``KeyboardInterrupt`` propagates only when it comes from Ctrl-C.  In the main thread the
    SIGINT handler is wrapped for the duration of the block to notice a real signal; in other
    threads no signal raises ``KeyboardInterrupt``, so one raised there is the plugin's own.
    """

    __slots__ = ("error", "_interrupted", "_handler", "_previous")

    def __init__(self) -> None:
        self.error: Optional[BaseException] = None
        self._interrupted = False
        self._handler: Any = None
        self._previous: Any = None

    def __enter__(self) -> "Contained":
        if threading.current_thread() is not threading.main_thread():
            return self
        previous = signal.getsignal(signal.SIGINT)
        if previous is None:  # a handler installed from C: a real Ctrl-C cannot be told apart
            self._interrupted = True
        elif callable(previous):  # else ignored or fatal: then SIGINT raises nothing
            def noticing(signum: int, frame: Optional[FrameType]) -> Any:
                self._interrupted = True
                return previous(signum, frame)

            self._handler, self._previous = noticing, previous
            signal.signal(signal.SIGINT, noticing)
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> bool:
        if self._handler is not None and signal.getsignal(signal.SIGINT) is self._handler:
            signal.signal(signal.SIGINT, self._previous)  # unless the plugin installed its own
        if error is None or (isinstance(error, KeyboardInterrupt) and self._interrupted):
            return False
        self.error = error
        return True

    @property
    def reason(self) -> str:
        """What the code raised, in one line: ``"ValueError: bad rule table"``; for
        ``SystemExit``, the ``sys.exit()`` call it stands for."""
        error = self.error
        if isinstance(error, SystemExit):
            code = "" if error.code is None else repr(error.code)
            return f"SystemExit: the plugin called sys.exit({code})"
        if error is None:
            return ""
        return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
