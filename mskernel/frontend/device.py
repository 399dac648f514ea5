"""Which backend eager ops and new tensors use: ``set_device`` for the process default,
``with device(...)`` for a scope.  Names are open strings resolved by the backend registry;
without a choice, the first available backend in preference order is used (``cpu`` when
mskernel-cpu is installed, else the reference backend)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional

from ..hooks.host import host
from ..runtime.backend import Backend

_scoped: ContextVar[Optional[Backend]] = ContextVar("mskernel_device", default=None)
_default: Optional[Backend] = None


def _resolve(name: str) -> Backend:
    host().load_external()
    return host().backends.get(name)


def set_device(name: str) -> None:
    """Make ``name`` the default backend of this process (raises if unknown or unavailable)."""
    global _default
    _default = _resolve(name)


@contextmanager
def device(name: str) -> Iterator[Backend]:
    """Run the enclosed eager ops and create new tensors on backend ``name``."""
    token = _scoped.set(_resolve(name))
    try:
        yield _scoped.get()  # type: ignore[misc]
    finally:
        _scoped.reset(token)


def current_device() -> Backend:
    global _default
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    if _default is None:
        host().load_external()
        available = host().backends.available()
        _default = available[0]
    return _default


def forget_default() -> None:
    """Drop the process default (the plugin host was reset; its backends are gone)."""
    swap_default(None)


def swap_default(backend: Optional[Backend]) -> Optional[Backend]:
    """Make ``backend`` (``None``: choose again on next use) the process default and return
    the previous one (:func:`mskernel.hooks.host.fresh_host` restores it with this)."""
    global _default
    previous, _default = _default, backend
    return previous


def get_device() -> str:
    """The name of the backend new tensors go to."""
    return current_device().name
