"""Known deviations of a backend, kept next to its code in a TOML file::

    [acme.xfail]             # run; failing is expected, passing is an error (update the file)
    "op:erf" = "float16 erf is 3 ulp off, issue #12"

    [acme.skip]              # not run at all
    "graph:cnn" = "conv lowering crashes the emulator, issue #15"

Tables are keyed by backend name; keys are ``stage:subject`` patterns (``fnmatch`` style:
``"op:random_*"``, ``"grad:*"``) over the check names ``interface:<check>``, ``op:<op>``,
``grad:<op>``, ``graph:<name>`` and ``coverage:core``; values say why.  Expected failures are
strict, so the list only ever shrinks: a check that starts to pass fails the run until its
entry is removed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Iterable, Optional

KINDS = ("skip", "xfail")


class ExpectationsError(Exception):
    """An expectations file that cannot be read or has entries the kit does not know."""


@dataclass(frozen=True)
class Expectations:
    """``skip`` and ``xfail`` entries (pattern → reason) for one backend."""

    skip: dict[str, str] = field(default_factory=dict)
    xfail: dict[str, str] = field(default_factory=dict)

    def lookup(self, key: str) -> Optional[tuple[str, str]]:
        """``(kind, reason)`` of the first entry matching ``key``, ``None`` if none does."""
        for kind in KINDS:
            for pattern, reason in getattr(self, kind).items():
                if fnmatchcase(key, pattern):
                    return kind, reason
        return None

    def unused(self, keys: Iterable[str]) -> list[str]:
        """Entries matching none of ``keys`` (stale, or misspelt)."""
        keys = list(keys)
        return [f"{kind} {pattern!r}" for kind in KINDS for pattern in getattr(self, kind)
                if not any(fnmatchcase(k, pattern) for k in keys)]


def load_expectations(paths: Iterable[Path], backend: str) -> Expectations:
    """The entries for ``backend`` in ``paths``, merged in order."""
    merged: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
    for path in paths:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ExpectationsError(f"cannot read expectations {path}: {exc}") from exc
        table = data.get(backend, {})
        unknown = sorted(set(table) - set(KINDS))
        if unknown:
            raise ExpectationsError(f"{path}: [{backend}] has unknown key(s) "
                                    f"{', '.join(unknown)}; expected {' and '.join(KINDS)}")
        for kind in KINDS:
            entries = table.get(kind, {})
            if not isinstance(entries, dict) or not all(
                    isinstance(v, str) and v.strip() for v in entries.values()):
                raise ExpectationsError(f"{path}: [{backend}.{kind}] must map check patterns "
                                        f"to non-empty reasons")
            merged[kind].update(entries)
    return Expectations(**merged)
