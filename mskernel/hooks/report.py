"""Everything known about one plugin, for ``mskernel plugins info``: its record and what it
added to each registry — ops (and the ops it overrode), rules, backends with their
availability, capabilities and conformance report, passes, pipelines, namespaces, model file
formats and CLI
commands.

Conformance reports are JSON files written by the conformance kit of mskernel-sdk
(``pytest --mskernel-backend NAME``) to :func:`conformance_path`.  The core only reads them:
it shows the keys ``status``, ``summary``, ``distribution``, ``version``, ``seed`` and
``created``, and passes the whole object through in ``--json`` output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from .containment import Contained
from .host import CORE, PluginHost
from .info import PluginRecord


HOME_ENV = "MSKERNEL_HOME"


def mskernel_home() -> Path:
    """Per-user state of mskernel: ``$MSKERNEL_HOME``, by default ``~/.cache/mskernel``."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".cache" / "mskernel")


def conformance_path(backend: str) -> Path:
    """Where the conformance kit keeps its latest report on ``backend``."""
    return mskernel_home() / "conformance" / f"{backend}.json"


class ConformanceReport(BaseModel):
    """The kit's latest report on a backend: the JSON object as written (``report``), or why
    the file at ``path`` could not be read (``error``)."""

    path: str
    report: Optional[dict[str, Any]] = None
    error: str = ""


def read_conformance(backend: str) -> Optional[ConformanceReport]:
    """The conformance report on ``backend``, ``None`` when the kit never wrote one."""
    path = conformance_path(backend)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return ConformanceReport(path=str(path), error=f"{type(exc).__name__}: {exc}")
    if not isinstance(data, dict):
        return ConformanceReport(path=str(path), error="not a JSON object")
    return ConformanceReport(path=str(path), report=data)


class BackendReport(BaseModel):
    """A backend a plugin registered.  ``ops_claimed`` counts the ops its capabilities list;
    ``falls_back`` names the core ops it does not claim (they run on another backend);
    ``error`` says why the capabilities could not be read (both are then empty);
    ``conformance`` is the kit's latest report on it (``None``: never certified here)."""

    name: str
    priority: int
    available: bool
    reason: str
    ops_claimed: int = 0
    falls_back: list[str] = Field(default_factory=list)
    error: str = ""
    conformance: Optional[ConformanceReport] = None


class PluginReport(BaseModel):
    record: PluginRecord
    traceback: Optional[str] = None
    ops: list[str] = Field(default_factory=list)
    overrides: dict[str, str] = Field(default_factory=dict)  # op → the owner it replaced
    rules: dict[str, list[str]] = Field(default_factory=dict)  # kind → op names
    backends: list[BackendReport] = Field(default_factory=list)
    passes: list[str] = Field(default_factory=list)
    pipelines: dict[str, list[str]] = Field(default_factory=dict)  # name → pass names
    namespaces: dict[str, str] = Field(default_factory=dict)  # name → module
    model_formats: dict[str, list[str]] = Field(default_factory=dict)  # format → suffixes
    commands: list[str] = Field(default_factory=list)


def plugin_report(host: PluginHost, name: str) -> Optional[PluginReport]:
    """The report on plugin ``name`` (an entry-point name), ``None`` if no such plugin."""
    record = host.record(name)
    if record is None:
        return None
    owner = record.distribution
    rules: dict[str, list[str]] = {}
    for kind, op in host.rules_registered_by(name):
        rules.setdefault(kind, []).append(op)
    return PluginReport(
        record=record,
        traceback=record.detail,
        ops=[op.name for op in host.ops if op.owner == owner],
        overrides={op: old for op, (old, new) in sorted(host.ops.overrides.items())
                   if new == owner},
        rules=rules,
        backends=[_backend_report(host, entry_name)
                  for entry_name, entry in sorted(host.backends.entries.items())
                  if entry.owner == owner],
        passes=sorted(n for n, (_, pass_owner) in host.passes.passes.items()
                      if pass_owner == owner),
        pipelines={n: list(p.passes) for n, p in sorted(host.passes.pipelines.items())
                   if p.owner == owner},
        namespaces={n: module for n, (module, ns_owner) in sorted(host.namespaces.modules.items())
                    if ns_owner == owner},
        model_formats={f: list(r.suffixes) for f, r in sorted(host.model_readers.readers.items())
                       if r.owner == owner},
        commands=sorted(n for n, c in host.commands().commands.items() if c.owner == owner),
    )


def _backend_report(host: PluginHost, name: str) -> BackendReport:
    entry = host.backends.entries[name]
    availability = entry.availability()
    report = BackendReport(name=name, priority=entry.priority,
                           available=availability.available, reason=availability.reason,
                           conformance=read_conformance(name))
    backend = entry.get()
    if backend is None:
        return report.model_copy(update=dict(error=entry.error or "factory failed"))
    core_ops = [op.name for op in host.ops if op.owner == CORE]
    with Contained() as asking:  # a plugin's bug, shown rather than raised
        claimed = backend.capabilities()
        return report.model_copy(update=dict(
            ops_claimed=len(claimed.ops), falls_back=[op for op in core_ops if op not in claimed]))
    return report.model_copy(update=dict(error=f"capabilities() raised {asking.reason}"))
