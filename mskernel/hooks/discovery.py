"""Finding plugins from distribution metadata, without importing them.

A plugin is an entry point in the group ``mskernel.plugins`` of an installed distribution.
Everything decided here — which plugins exist, which are switched off, which cannot run with
this core — is read from ``*.dist-info`` metadata; no plugin module is imported.  Requirement
lines, environment markers and versions are read by ``packaging``, the reference
implementation of PEP 440 and PEP 508 that pip uses, so a plugin is judged compatible exactly
when pip would install it beside this core.
"""

from __future__ import annotations

import functools
import operator
import os
from dataclasses import dataclass
from importlib import metadata
from typing import Iterable, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

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
    requires: tuple[str, ...]  # the distribution's Requires-Dist lines


def discover() -> list[Candidate]:
    """Every entry point of the group, sorted by name.  When two distributions declare the
    same entry-point name, the one earlier on ``sys.path`` wins."""
    seen: dict[str, Candidate] = {}
    for ep in metadata.entry_points(group=GROUP):
        if ep.name in seen:
            continue
        dist = ep.dist
        seen[ep.name] = Candidate(
            name=ep.name,
            entry_point=ep,
            distribution=(dist.name if dist is not None else None) or "?",
            version=(dist.version if dist is not None else None) or "?",
            requires=tuple((dist.requires or []) if dist is not None else []),
        )
    return [seen[name] for name in sorted(seen)]


def requirement_on(requirements: Iterable[str], distribution: str) -> Optional[SpecifierSet]:
    """What the ``Requires-Dist`` lines ask of ``distribution`` on this interpreter: the
    specifiers of every line naming it whose environment marker holds with no extra selected
    (a line under ``extra == ...`` belongs to an optional extra), combined; ``None`` when no
    line requires it.  Raises ``ValueError`` (``InvalidRequirement``) for an unreadable line.

    >>> str(requirement_on(["numpy>=1.26", "mskernel>=1,<2", "mskernel>=1.2; extra == 'gpu'"],
    ...                    "mskernel"))
    '<2,>=1'
    """
    wanted = canonicalize_name(distribution)
    specifiers = [req.specifier for req in map(Requirement, requirements)
                  if canonicalize_name(req.name) == wanted
                  and (req.marker is None or req.marker.evaluate({"extra": ""}))]
    return functools.reduce(operator.and_, specifiers) if specifiers else None


def disabled_names() -> set[str]:
    """Plugin or distribution names switched off by ``MSKERNEL_DISABLE_PLUGINS``
    (comma-separated; ``all``, ``*`` or ``1`` disables every discovered plugin)."""
    raw = os.environ.get(DISABLE_ENV, "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def is_disabled(candidate: Candidate, disabled: set[str]) -> bool:
    """Whether ``disabled`` names the plugin or its distribution (``-``/``_`` alike)."""
    wanted = {canonicalize_name(name) for name in disabled}
    mine = {canonicalize_name(candidate.name), canonicalize_name(candidate.distribution)}
    return bool(wanted & ({"all", "*", "1"} | mine))


def incompatibility(candidate: Candidate, core_version: str) -> Optional[str]:
    """Why the plugin cannot run with this core (``None`` when it can), with the remedy.  A
    pre-release core is held to the bounds like any other version, not refused for being a
    pre-release."""
    try:
        spec = requirement_on(candidate.requires, CORE_DISTRIBUTION)
        ok = spec is None or spec.contains(core_version, prereleases=True)
    except ValueError as exc:
        return f"cannot read its requirement on mskernel: {exc}"
    if ok:
        return None
    return (
        f"{candidate.distribution} {candidate.version} requires mskernel {spec}, "
        f"but mskernel {core_version} is installed; install a {candidate.distribution} "
        f"release built for mskernel {core_version}, or an mskernel that matches {spec}"
    )
