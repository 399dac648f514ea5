"""One kit run inside a pytest session: the checks as pytest items, their outcomes, the
report."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from mskernel.hooks import plugin_host
from mskernel.hooks.report import conformance_path
from mskernel_sdk_pytest import MARKER

from .. import __version__ as kit_version
from .autodiff import namespace_vjp_builder
from .compare import CheckFailure, NotRun
from .expectations import Expectations, ExpectationsError, load_expectations
from .gradients import VJPBuilder, check_gradient, gradient_ops, not_run_reason
from .graphs import MODEL_GRAPHS, check_model_graph
from .interface import check_capabilities, check_transfers
from .op_checks import check_op, composites_run_decomposed
from .report import UNRUN, KitReport, Result, build_report, write_report
from .subject import KitUsageError, Subject, resolve


@dataclass(frozen=True)
class Check:
    """One check: ``stage`` and ``subject`` name it (``op`` and ``add``); ``run`` returns what
    it covered, raises :class:`CheckFailure` when the backend is wrong and :class:`NotRun`
    when the check cannot run."""

    stage: str
    subject: str
    run: Callable[[], str]

    @property
    def name(self) -> str:
        return f"{self.stage}[{self.subject}]"

    @property
    def key(self) -> str:
        return f"{self.stage}:{self.subject}"


class KitItem(pytest.Item):
    """A check as a pytest item; a failure shows the check's message, not the kit's stack."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.detail = ""
        self.failure = ""
        self.add_marker(MARKER)

    def runtest(self) -> None:
        try:
            self.detail = self.check.run()
        except NotRun as exc:
            pytest.skip(str(exc))
        except Exception as exc:
            self.failure = str(exc) if isinstance(exc, CheckFailure) \
                else f"{type(exc).__name__}: {exc}"
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"mskernel conformance {self.name}"


class KitCollector(pytest.Collector):
    """The parent of the kit's items, collected after everything else in the session (so
    every ``conftest.py`` has been seen when the checks are planned)."""

    def __init__(self, *, kit: "KitSession", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kit = kit

    def collect(self) -> list[KitItem]:
        return self.kit.items_for(self)


class KitSession:
    """The pytest plugin object of one run; registered only with ``--mskernel-backend``."""

    def __init__(self, config: pytest.Config, subject: Subject, seed: int,
                 expectations: Expectations) -> None:
        self.config = config
        self.subject = subject
        self.seed = seed
        self.expectations = expectations
        self.checks: list[Check] = []
        self.items: dict[str, KitItem] = {}
        self.results: dict[str, Result] = {}
        self.report: Optional[KitReport] = None
        self.written: list[Path] = []

    @classmethod
    def start(cls, config: pytest.Config, name: str) -> "KitSession":
        seed = config.getoption("mskernel_seed")
        paths = [*config.getini("mskernel_expectations"),
                 *(Path(p) for p in config.getoption("mskernel_expectations"))]
        try:
            return cls(config, resolve(name), secrets.randbelow(2**31) if seed is None else seed,
                       load_expectations(paths, name))
        except (KitUsageError, ExpectationsError) as exc:
            raise pytest.UsageError(f"mskernel conformance: {exc}") from None

    # -- the checks ----------------------------------------------------------------------------

    def plan(self) -> list[Check]:
        """Every check of this run, in the order they run."""
        subject, seed = self.subject, self.seed
        checks = [Check("interface", "capabilities", lambda: check_capabilities(subject)),
                  Check("interface", "transfers", lambda: check_transfers(subject, seed))]
        ops = sorted({op for op in subject.capabilities.ops if op in plugin_host().ops}
                     | set(composites_run_decomposed(subject, seed)))
        checks += [Check("op", op, partial(check_op, subject, op, seed)) for op in ops]
        checks += self._gradient_checks()
        checks += [Check("graph", name, partial(check_model_graph, subject, name, seed))
                   for name in MODEL_GRAPHS]
        if self.config.getoption("mskernel_core_coverage") is not None:
            checks.append(Check("coverage", "core", self._check_core_coverage))
        return checks

    def _gradient_checks(self) -> list[Check]:
        builder: Optional[VJPBuilder] = self.config.hook.pytest_mskernel_vjp_builder(
            config=self.config) or namespace_vjp_builder()
        reason = not_run_reason(self.subject, builder)
        if reason is not None:
            return [Check("grad", "*", partial(_not_run, reason))]
        assert builder is not None  # not_run_reason says why when there is none
        subject, seed = self.subject, self.seed
        return [Check("grad", op, partial(check_gradient, subject, op, seed, builder))
                for op in gradient_ops(subject)]

    def _check_core_coverage(self) -> str:
        wanted = float(self.config.getoption("mskernel_core_coverage"))
        core = self.subject.core_ops
        passed = [op for op in core
                  if self.results.get(f"op:{op}", UNRUN).outcome == "passed"]
        share = 100.0 * len(passed) / len(core)
        if share + 1e-9 < wanted:
            missing = sorted(set(core) - set(passed))
            raise CheckFailure(f"passes {len(passed)} of {len(core)} core ops ({share:.1f}%), "
                               f"below the required {wanted:g}%; not passed: "
                               f"{', '.join(missing)}")
        return f"{len(passed)} of {len(core)} core ops ({share:.1f}%)"

    # -- pytest hooks --------------------------------------------------------------------------

    def pytest_report_header(self) -> list[str]:
        s = self.subject
        return [f"mskernel conformance kit {kit_version}: backend '{s.name}' "
                f"({s.distribution} {s.version}), seed {self.seed} "
                f"(reproduce with --mskernel-seed {self.seed})"]

    def items_for(self, collector: KitCollector) -> list[KitItem]:
        """The checks as items of ``collector``, marked as the expectations say."""
        self.checks = self.plan()
        for check in self.checks:
            item = KitItem.from_parent(collector, name=check.name, check=check)
            expected = self.expectations.lookup(check.key)
            if expected is not None:
                kind, reason = expected
                item.add_marker(pytest.mark.skip(reason=reason) if kind == "skip"
                                else pytest.mark.xfail(reason=reason, strict=True))
            self.items[item.nodeid] = item
        return list(self.items.values())

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """Add the kit's collector to what the session collects from its arguments."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            name = f"mskernel-conformance[{self.subject.name}]"
            report.result.append(KitCollector.from_parent(collector, name=name, nodeid=name,
                                                          kit=self))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        item = self.items.get(report.nodeid)
        if item is None or (report.passed and report.when != "call"):
            return
        key = item.check.key
        if key in self.results and self.results[key].outcome != "passed":
            return  # a teardown report does not hide what the call found
        self.results[key] = _result(report, item)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.results:  # nothing ran (--collect-only, or everything deselected)
            return
        results = [(c.stage, c.subject, self.results.get(c.key, UNRUN)) for c in self.checks]
        self.report = build_report(self.subject, self.seed, kit_version, results)
        targets = [conformance_path(self.subject.name)]
        if self.config.getoption("mskernel_report"):
            targets.append(Path(self.config.getoption("mskernel_report")))
        for path in targets:
            write_report(self.report, path)
            self.written.append(path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        tr = terminalreporter
        tr.section("mskernel conformance")
        tr.line(f"backend '{self.subject.name}': {self.report.status}: {self.report.summary}")
        for stale in self.expectations.unused(c.key for c in self.checks):
            tr.line(f"expectation matches no check (stale or misspelt): {stale}", yellow=True)
        if self.report.status != "passed":
            tr.line(f"reproduce with: pytest --mskernel-backend {self.subject.name} "
                    f"--mskernel-seed {self.seed}")
        for path in self.written:
            tr.line(f"report: {path}")


def _not_run(reason: str) -> str:
    raise NotRun(reason)


def _result(report: pytest.TestReport, item: KitItem) -> Result:
    if report.skipped and hasattr(report, "wasxfail"):
        return Result("xfailed", report.wasxfail)
    if report.skipped:
        longrepr = report.longrepr
        message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        return Result("not run", message.removeprefix("Skipped: "))
    if report.failed:
        text = report.longreprtext
        if "[XPASS(strict)]" in text:
            return Result("failed", f"passed, but is listed as expected to fail "
                                    f"({text.split('] ', 1)[-1].strip()}); remove its entry")
        return Result("failed", item.failure or text.strip().splitlines()[-1])
    return Result("passed", detail=item.detail)
