"""Checking a plugin's ``Requires-Dist: mskernel ...`` against the running core, from metadata
alone (before importing the plugin).

Only what plugin requirements on the core need is understood: release versions (``1``,
``0.4.2``; pre/post/dev suffixes are ignored for comparison) and the PEP 440 operators
``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``~=`` and ``==X.*``.  The core's runtime
dependencies are deliberately only numpy, pluggy and pydantic, so this does not pull in
``packaging`` for it.
"""

from __future__ import annotations

import re
from typing import Optional

_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_CLAUSE = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*$")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(\(?)([^;)]*)\)?\s*(;.*)?$")


def release(version: str) -> tuple[int, ...]:
    match = _RELEASE.match(version)
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(p) for p in match.group(1).split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def _clause_holds(op: str, target: str, version: tuple[int, ...]) -> bool:
    if target.endswith(".*"):
        if op not in ("==", "!="):
            raise ValueError(f"wildcard only allowed with == or !=, got {op}{target}")
        prefix = release(target[:-2])
        matches = _padded(version, prefix)[0][: len(prefix)] == prefix
        return matches if op == "==" else not matches
    want = release(target)
    if op == "~=":
        if len(want) < 2:
            raise ValueError(f"~= needs at least two release parts, got {target}")
        v, w = _padded(version, want)
        return v >= w and version[: len(want) - 1] == want[:-1]
    v, w = _padded(version, want)
    return {
        "==": v == w, "!=": v != w, "<": v < w, "<=": v <= w, ">": v > w, ">=": v >= w,
    }[op]


def satisfies(version: str, specifier: str) -> bool:
    """Whether ``version`` meets a comma-separated specifier (empty: any version)."""
    v = release(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError(f"cannot read version specifier {clause!r}")
        if not _clause_holds(match.group(1), match.group(2), v):
            return False
    return True


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_on(requirements: list[str], distribution: str) -> Optional[str]:
    """The specifier of the unconditional requirement on ``distribution`` among
    ``Requires-Dist`` lines, ``""`` if it is required without bounds, ``None`` if absent."""
    wanted = normalize_name(distribution)
    for line in requirements:
        match = _REQUIREMENT.match(line)
        if not match or normalize_name(match.group(1)) != wanted:
            continue
        marker = match.group(5) or ""
        if "extra" in marker:
            continue  # an optional extra of the plugin, not what it needs to load
        return match.group(4).strip()
    return None
