"""The trace context: the trace that records the ops applied now, if any.

A bottom module of the frontend.  Tensors, parameters, dispatch and the transforms of plugins
ask :func:`active_trace` whether a function is being traced without importing the tracing
machinery (:mod:`.trace`), whose :class:`~.trace.Trace` enters and leaves the context.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Iterator, Optional

if TYPE_CHECKING:
    from .trace import Trace

_active: ContextVar[Optional["Trace"]] = ContextVar("mskernel_trace", default=None)


def active_trace() -> Optional["Trace"]:
    """The innermost trace being recorded (``None`` in eager mode)."""
    return _active.get()


def enter(trace: "Trace") -> Token[Optional["Trace"]]:
    """Make ``trace`` the active trace; :func:`leave` with the token restores the previous."""
    return _active.set(trace)


def leave(token: Token[Optional["Trace"]]) -> None:
    _active.reset(token)


@contextmanager
def outside_traces() -> Iterator[None]:
    """Run the enclosed ops eagerly even while a function is being traced: what builds a
    network's initial weights inside ``@jit`` (MindSpore builds cells at compile time),
    whose values must be concrete."""
    token = _active.set(None)
    try:
        yield
    finally:
        _active.reset(token)
