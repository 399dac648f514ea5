"""The kit's machine-readable report, written after every run to
``$MSKERNEL_HOME/conformance/<backend>.json`` (where ``mskernel plugins info`` reads it) and,
with ``--mskernel-report FILE``, to ``FILE`` too."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mskernel import PLUGIN_API_VERSION, __version__ as core_version
from pydantic import BaseModel, Field

from .subject import Subject

Outcome = Literal["passed", "failed", "xfailed", "not run"]
#: Stage of a check → its section in the report, in report order.
SECTIONS = {"interface": "interface", "op": "ops", "grad": "gradients", "graph": "graphs",
            "coverage": "coverage"}


@dataclass(frozen=True)
class Result:
    """What happened to one check: its outcome, why (failures, expected failures, checks not
    run) and what it covered (``"23 samples"``)."""

    outcome: Outcome
    reason: str = ""
    detail: str = ""


#: The result of a check that never ran in the session; a report with one is ``partial``.
UNRUN = Result("not run", "deselected, or the run stopped before it")


class StageReport(BaseModel):
    """One stage: ``checked`` lists every check (for ``ops``: every op claimed); the other
    fields sort them by outcome, with reasons; ``details`` says what each passed one covered."""

    checked: list[str] = Field(default_factory=list)
    passed: list[str] = Field(default_factory=list)
    failed: dict[str, str] = Field(default_factory=dict)
    xfailed: dict[str, str] = Field(default_factory=dict)
    not_run: dict[str, str] = Field(default_factory=dict)
    details: dict[str, str] = Field(default_factory=dict)

    def add(self, subject: str, result: Result) -> None:
        self.checked.append(subject)
        if result.outcome == "passed":
            self.passed.append(subject)
        else:
            {"failed": self.failed, "xfailed": self.xfailed,
             "not run": self.not_run}[result.outcome][subject] = result.reason
        if result.detail:
            self.details[subject] = result.detail

    def summary(self, section: str) -> str:
        if not self.checked:
            return f"{section}: none"
        if len(self.checked) == 1 and self.not_run and not self.passed:
            return f"{section} not run: {next(iter(self.not_run.values()))}"
        extra = [f"{len(getattr(self, k))} {w}" for k, w in
                 (("failed", "failed"), ("xfailed", "expected to fail"), ("not_run", "not run"))
                 if getattr(self, k)]
        return (f"{section} {len(self.passed)}/{len(self.checked)} passed"
                + (f" ({', '.join(extra)})" if extra else ""))


class CoreCoverage(BaseModel):
    """How many of the core's ops the backend claims, and passes the ``op`` stage on."""

    total: int
    claimed: int
    passed: int


class KitReport(BaseModel):
    """The report.  ``status`` is ``failed`` when any check failed, ``partial`` when some check
    never ran in the session (``-k``, ``-x``), ``passed`` otherwise; ``summary`` is one line."""

    backend: str
    distribution: str
    version: str
    mskernel: str
    plugin_api: str
    kit: str
    seed: int
    created: str
    status: Literal["passed", "failed", "partial"]
    summary: str
    core_ops: CoreCoverage
    stages: dict[str, StageReport]


def build_report(subject: Subject, seed: int, kit_version: str,
                 results: list[tuple[str, str, Result]]) -> KitReport:
    """The report from every check's ``(stage, subject, result)``."""
    stages = {section: StageReport() for section in SECTIONS.values()}
    for stage, name, result in results:
        stages[SECTIONS[stage]].add(name, result)
    stages = {k: v for k, v in stages.items() if v.checked}
    core = set(subject.core_ops)
    ops = stages.get("ops", StageReport())
    coverage = CoreCoverage(total=len(core), claimed=len(core & set(subject.capabilities.ops)),
                            passed=len(core & set(ops.passed)))
    failed = any(s.failed for s in stages.values())
    partial = any(r is UNRUN for _, _, r in results)
    summary = "; ".join([s.summary(k) for k, s in stages.items()]
                        + [f"core ops {coverage.passed}/{coverage.total} passed"])
    return KitReport(
        backend=subject.name, distribution=subject.distribution, version=subject.version,
        mskernel=core_version, plugin_api=PLUGIN_API_VERSION, kit=kit_version, seed=seed,
        created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        status="failed" if failed else "partial" if partial else "passed",
        summary=summary, core_ops=coverage, stages=stages)


def write_report(report: KitReport, path: Path) -> None:
    """Write ``report`` to ``path`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
