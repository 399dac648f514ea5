"""Checking a plugin's ``Requires-Dist: mskernel ...`` against the running core, from metadata
alone (before importing the plugin).

Only what plugin requirements on the core need is understood: release versions (``1``,
``0.4.2``; pre/post/dev suffixes are ignored for comparison), the PEP 440 operators
``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``~=`` and ``==X.*``, and PEP 508 environment
markers (``; python_version >= "3.11" and extra == "gpu"``).  The core's runtime dependencies
are deliberately only numpy, pluggy and pydantic, so this does not pull in ``packaging``.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from typing import Callable, Optional

_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_CLAUSE = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*$")
_REQUIREMENT = re.compile(
    r"""^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*
        (?:\[[^\]]*\])?\s*                      # extras of the required distribution
        (?:@\s*[^;\s]+\s*|\(?(?P<spec>[^;()]*)\)?)  # a direct URL, or a (parenthesised) specifier
        (?:;(?P<marker>.*))?$""",
    re.VERBOSE,
)
_MARKER_TOKEN = re.compile(
    r"""\s*(?:(?P<string>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)
        |(?P<word>and\b|or\b|[A-Za-z_][A-Za-z0-9_.]*)|(?P<paren>[()]))""",
    re.VERBOSE,
)
_VERSION_OPS = {"==", "!=", "<", "<=", ">", ">=", "~="}

#: PEP 508 marker variables and how to read them on this interpreter.  ``extra`` is empty:
#: discovery asks what a plugin needs in order to load, not what one of its extras needs.
_ENVIRONMENT: dict[str, Callable[[], str]] = {
    "python_version": lambda: "%d.%d" % sys.version_info[:2],
    "python_full_version": platform.python_version,
    "implementation_name": lambda: sys.implementation.name,
    "implementation_version": lambda: "%d.%d.%d" % sys.implementation.version[:3],
    "platform_python_implementation": platform.python_implementation,
    "platform_system": platform.system,
    "platform_machine": platform.machine,
    "platform_release": platform.release,
    "platform_version": platform.version,
    "sys_platform": lambda: sys.platform,
    "os_name": lambda: os.name,
    "extra": lambda: "",
}


def release(version: str) -> tuple[int, ...]:
    """The numeric release part of a version: ``"1.4.2rc1"`` → ``(1, 4, 2)``."""
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
    v, w = _padded(version, want)
    if op == "~=":
        if len(want) < 2:
            raise ValueError(f"~= needs at least two release parts, got {target}")
        return v >= w and v[: len(want) - 1] == w[: len(want) - 1]
    return {
        "==": v == w, "!=": v != w, "<": v < w, "<=": v <= w, ">": v > w, ">=": v >= w,
    }[op]


def satisfies(version: str, specifier: str) -> bool:
    """Whether ``version`` meets a comma-separated specifier (empty: any version).

    >>> satisfies("0.4.1", ">=0.4,<1"), satisfies("1.0", "~=0.4")
    (True, False)
    """
    v = release(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError(f"cannot read version specifier {clause!r}")
        if not _clause_holds(match.group(1), match.group(2), v):
            return False
    return True


def normalize_name(name: str) -> str:
    """A distribution name as PEP 503 compares it: ``Mskernel_NN`` → ``mskernel-nn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_on(requirements: list[str], distribution: str) -> Optional[str]:
    """The specifier the ``Requires-Dist`` lines put on ``distribution`` here: the clauses of
    every line whose environment marker holds on this interpreter (lines under
    ``extra == ...`` belong to an optional extra and never hold), joined with commas.
    ``""`` if it is required without bounds, ``None`` if not required at all.

    >>> requirement_on(["numpy>=1.26", "mskernel>=1,<2", "mskernel>=1.2; extra == 'gpu'"],
    ...                "mskernel")
    '>=1,<2'
    """
    wanted = normalize_name(distribution)
    specs: list[str] = []
    for line in requirements:
        match = _REQUIREMENT.match(line)
        if not match or normalize_name(match.group("name")) != wanted:
            continue
        marker = (match.group("marker") or "").strip()
        if marker and not marker_holds(marker):
            continue
        specs.append((match.group("spec") or "").strip())
    if not specs:
        return None
    return ",".join(s for s in specs if s)


def marker_holds(marker: str) -> bool:
    """Evaluate a PEP 508 environment marker on this interpreter (``extra`` is empty).

    >>> marker_holds('python_version >= "3.8" and extra == "test"')
    False
    """
    tokens = [_token(m) for m in _tokenize(marker)]
    value, rest = _or_expr(tokens)
    if rest:
        raise ValueError(f"cannot read marker {marker!r}: unexpected {rest[0][1]!r}")
    return value


def _tokenize(marker: str) -> list[re.Match[str]]:
    matches, pos = [], 0
    while pos < len(marker.rstrip()):
        match = _MARKER_TOKEN.match(marker, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"cannot read marker {marker!r} at {marker[pos:]!r}")
        matches.append(match)
        pos = match.end()
    return matches


def _token(match: re.Match[str]) -> tuple[str, str]:
    kind = match.lastgroup or ""
    text = match.group(kind)
    if kind == "string":
        return "value", text[1:-1]
    if kind == "op":
        return "op", " ".join(text.split())
    if kind == "word" and text in ("and", "or"):
        return text, text
    if kind == "word":
        if text not in _ENVIRONMENT:
            raise ValueError(f"unknown marker variable {text!r}")
        return "value", _ENVIRONMENT[text]()
    return text, text  # "(" or ")"


Tokens = list[tuple[str, str]]


def _or_expr(tokens: Tokens) -> tuple[bool, Tokens]:
    value, tokens = _and_expr(tokens)
    while tokens and tokens[0][0] == "or":
        right, tokens = _and_expr(tokens[1:])
        value = value or right
    return value, tokens


def _and_expr(tokens: Tokens) -> tuple[bool, Tokens]:
    value, tokens = _atom(tokens)
    while tokens and tokens[0][0] == "and":
        right, tokens = _atom(tokens[1:])
        value = value and right
    return value, tokens


def _atom(tokens: Tokens) -> tuple[bool, Tokens]:
    if tokens and tokens[0][0] == "(":
        value, rest = _or_expr(tokens[1:])
        if not rest or rest[0][0] != ")":
            raise ValueError("unbalanced parenthesis in marker")
        return value, rest[1:]
    if len(tokens) < 3 or [t[0] for t in tokens[:3]] != ["value", "op", "value"]:
        raise ValueError(f"expected 'variable op value' in marker, got {tokens[:3]!r}")
    (_, left), (_, op), (_, right) = tokens[:3]
    return _compare(left, op, right), tokens[3:]


def _compare(left: str, op: str, right: str) -> bool:
    if op in _VERSION_OPS and _is_version(left) and _is_version(right):
        return satisfies(left, f"{op}{right}")
    if op in ("==", "==="):
        return left == right
    if op == "!=":
        return left != right
    if op == "in":
        return left in right
    if op == "not in":
        return left not in right
    raise ValueError(f"cannot compare {left!r} {op} {right!r}: not versions")


def _is_version(text: str) -> bool:
    return re.fullmatch(r"v?\d+(?:\.\d+)*(?:\.\*)?", text.strip()) is not None
