"""Which backend eager ops and new tensors use: ``set_device`` for the process default,
``with device(...)`` for a scope.  Names are open strings resolved by the backend registry;
without a choice, the first available backend in preference order is used (``cpu`` when
mskernel-cpu is installed, else the reference backend).

MindSpore's device targets work too: ``"CPU"`` is the first available host backend (``cpu``,
else ``reference``); any other name that is not a registered backend is looked up in lower
case (``"GPU"`` is the backend ``gpu``, if a plugin registers one)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional

from ..hooks.host import host
from ..runtime.backend import Backend

_scoped: ContextVar[Optional[Backend]] = ContextVar("mskernel_device", default=None)
_default: Optional[Backend] = None


#: MindSpore's device targets that name a choice of backends, the first available wins.
_TARGETS = {"CPU": ("cpu", "reference")}


def _resolve(name: str) -> Backend:
    host().load_external()
    backends = host().backends
    if name in backends.entries:
        return backends.get(name)
    choices = [b for b in _TARGETS.get(name, ()) if b in backends.entries]
    available = [b for b in choices if backends.entries[b].availability().available]
    if available or choices:
        return backends.get((available or choices)[0])
    return backends.get(name.lower() if name.lower() in backends.entries else name)


def set_device(name: str, device_id: Optional[int] = None) -> None:
    """Make ``name`` the default backend of this process (raises if unknown or unavailable).
    ``device_id`` (MindSpore's) may only be 0: each backend is one device."""
    global _default
    if device_id not in (None, 0):
        raise ValueError(f"set_device: device_id {device_id} — an mskernel backend is one "
                         "device, so only device_id 0 exists")
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
