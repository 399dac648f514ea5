"""The registry of backend factories and the user-visible backend order."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..errors import BackendError
from ..hooks.containment import Contained
from .backend import Availability, Backend

BACKENDS_ENV = "MSKERNEL_BACKENDS"


@dataclass
class BackendEntry:
    name: str
    factory: Callable[[], Backend]
    priority: int
    owner: str
    instance: Optional[Backend] = None
    error: Optional[str] = None

    def get(self) -> Optional[Backend]:
        """Instantiate once; a factory that raises (even ``SystemExit``) is recorded, not
        propagated: a broken plugin must not break the core."""
        if self.instance is None and self.error is None:
            with Contained() as creating:
                backend = self.factory()
            if creating.error is not None:
                self.error = f"factory raised {creating.reason}"
                return None
            backend.name = self.name
            backend.owner = self.owner
            self.instance = backend
        return self.instance

    def availability(self) -> Availability:
        backend = self.get()
        if backend is None:
            return Availability(available=False, reason=self.error or "")
        with Contained() as probing:
            return backend.availability()
        return Availability(available=False,
                            reason=f"availability() raised {probing.reason}")


@dataclass
class BackendRegistry:
    """Backend factories by open-string name.  ``mskernel_register_backends`` receives a view
    of this registry scoped to the calling plugin."""

    entries: dict[str, BackendEntry] = field(default_factory=dict)

    def register(self, name: str, factory: Callable[[], Backend], *, priority: int = 0,
                 owner: str = "unknown") -> None:
        existing = self.entries.get(name)
        if existing is not None:
            raise BackendError(
                f"backend '{name}' is already registered by {existing.owner}; "
                f"{owner} cannot register it again (choose another name)"
            )
        self.entries[name] = BackendEntry(name, factory, priority, owner)

    def names(self) -> list[str]:
        return list(self.entries)

    def snapshot(self) -> Any:
        """The registered backends as they are now, for :meth:`restore`."""
        return dict(self.entries)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        self.entries.clear()
        self.entries.update(state)

    def order(self) -> list[str]:
        """Backend names by preference: ``MSKERNEL_BACKENDS`` first (in its order), then the
        rest by descending priority.  Names in the variable that no plugin registered are an
        error naming the registered ones."""
        by_priority = sorted(self.entries, key=lambda n: (-self.entries[n].priority, n))
        requested = [n.strip() for n in os.environ.get(BACKENDS_ENV, "").split(",") if n.strip()]
        unknown = [n for n in requested if n not in self.entries]
        if unknown:
            raise BackendError(
                f"{BACKENDS_ENV} names unknown backend(s) {', '.join(unknown)}; "
                f"registered: {', '.join(by_priority)}"
            )
        return requested + [n for n in by_priority if n not in requested]

    def get(self, name: str) -> Backend:
        """The backend instance; raises :class:`BackendError` if unknown or unavailable."""
        entry = self.entries.get(name)
        if entry is None:
            raise BackendError(
                f"unknown backend '{name}'; registered: {', '.join(self.order()) or 'none'}"
            )
        availability = entry.availability()
        if not availability.available:
            raise BackendError(
                f"backend '{name}' ({entry.owner}) is not available: {availability.reason}"
            )
        backend = entry.get()
        assert backend is not None
        return backend

    def available(self) -> list[Backend]:
        """Available backends in preference order."""
        out = []
        for name in self.order():
            entry = self.entries[name]
            if entry.availability().available:
                backend = entry.get()
                assert backend is not None
                out.append(backend)
        return out
