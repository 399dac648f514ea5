"""Finding plugins from distribution metadata, without importing them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import metadata
from typing import Optional

from .versions import requirement_on, satisfies

GROUP = "mskernel.plugins"
DISABLE_ENV = "MSKERNEL_DISABLE_PLUGINS"
CORE_DISTRIBUTION = "mskernel"


@dataclass(frozen=True)
class Candidate:
    """An entry point in ``mskernel.plugins`` and what its distribution's metadata says."""

    name: str
    entry_point: metadata.EntryPoint
    distribution: str
    version: str
    requires_core: Optional[str]  # the specifier on mskernel, None when not declared


def discover() -> list[Candidate]:
    """Every entry point of the group, sorted by name (first one wins on duplicates)."""
    seen: dict[str, Candidate] = {}
    for ep in metadata.entry_points(group=GROUP):
        dist = ep.dist
        dist_name = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        requires = (dist.requires or []) if dist is not None else []
        seen.setdefault(ep.name, Candidate(ep.name, ep, dist_name, version,
                                           requirement_on(requires, CORE_DISTRIBUTION)))
    return [seen[name] for name in sorted(seen)]


def disabled_names() -> set[str]:
    """Plugin or distribution names switched off by ``MSKERNEL_DISABLE_PLUGINS``
    (comma-separated; ``all`` or ``*`` disables every discovered plugin)."""
    raw = os.environ.get(DISABLE_ENV, "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def is_disabled(candidate: Candidate, disabled: set[str]) -> bool:
    return bool(disabled & {"all", "*", "1", candidate.name, candidate.distribution})


def incompatibility(candidate: Candidate, core_version: str) -> Optional[str]:
    """Why the plugin cannot run with this core (``None`` when it can), with the remedy."""
    spec = candidate.requires_core
    if not spec:
        return None
    try:
        ok = satisfies(core_version, spec)
    except ValueError as exc:
        return f"cannot read its requirement 'mskernel {spec}': {exc}"
    if ok:
        return None
    return (
        f"{candidate.distribution} {candidate.version} requires mskernel {spec}, "
        f"but mskernel {core_version} is installed; install a {candidate.distribution} "
        f"release built for mskernel {core_version}, or an mskernel that matches {spec}"
    )
