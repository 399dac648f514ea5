"""The backend under test and what the kit needs to know about it."""

from __future__ import annotations

from dataclasses import dataclass

from mskernel import __version__ as core_version
from mskernel.hooks import plugin_host
from mskernel.hooks.host import CORE
from mskernel.runtime import Backend, Capabilities


class KitUsageError(Exception):
    """The kit cannot start: the backend is unknown or cannot run here."""


@dataclass(frozen=True)
class Subject:
    """A backend to certify: its instance, the distribution providing it, and its claims."""

    name: str
    backend: Backend
    distribution: str
    version: str
    capabilities: Capabilities

    @property
    def core_ops(self) -> list[str]:
        """Every op the core itself defines."""
        return [op.name for op in plugin_host().ops if op.owner == CORE]


def resolve(name: str) -> Subject:
    """The backend registered under ``name``; raises :class:`KitUsageError` naming the
    registered backends when there is none, or the reason when it cannot run here."""
    host = plugin_host()
    host.load_external()
    entry = host.backends.entries.get(name)
    if entry is None:
        known = ", ".join(host.backends.order()) or "none"
        raise KitUsageError(f"no backend named '{name}' is registered; registered: {known} "
                            f"(is its plugin installed? see `mskernel plugins list`)")
    availability = entry.availability()
    backend = entry.get()
    if backend is None or not availability.available:
        raise KitUsageError(f"backend '{name}' ({entry.owner}) cannot run here: "
                            f"{availability.reason or entry.error or 'not available'}")
    try:
        capabilities = backend.capabilities()
    except Exception as exc:
        raise KitUsageError(f"backend '{name}' ({entry.owner}): capabilities() raised "
                            f"{type(exc).__name__}: {exc}") from exc
    return Subject(name, backend, entry.owner, _version_of(entry.owner), capabilities)


def _version_of(distribution: str) -> str:
    if distribution == CORE:
        return core_version
    records = [r for r in plugin_host().records.values() if r.distribution == distribution]
    return records[0].version if records else "?"
