"""Where a plan's time goes: every step timed in C++ over a number of runs.

    report = mskernel_cpu.profile(jitted_fn, x, y, repeats=10)   # a mskernel.jit function
    print(report)                                                 # per step, then per op
    report = executable.profile(args, repeats=10)                 # one CpuExecutable

While a plan profiles, its runs time each top-level step with ``steady_clock`` (a step
running an ``If`` or ``While`` counts its regions); otherwise steps run untimed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .lowering import StepInfo


@dataclass(frozen=True)
class StepProfile:
    """One plan step: what it runs and its time summed over the profiled runs."""

    plan: str  # the graph's name
    index: int
    op: str
    shape: str
    label: str
    seconds: float
    calls: int


@dataclass(frozen=True)
class PlanProfile:
    """The steps of one or more plans over ``runs`` profiled runs."""

    steps: tuple[StepProfile, ...]
    runs: int

    @property
    def total_seconds(self) -> float:
        return sum(step.seconds for step in self.steps)

    def by_op(self) -> list[tuple[str, float, int]]:
        """``(op, seconds, steps)`` per op, most time first."""
        seconds: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for step in self.steps:
            seconds[step.op] += step.seconds
            count[step.op] += 1
        return sorted(((op, seconds[op], count[op]) for op in seconds), key=lambda r: -r[1])

    def table(self, top: int | None = None) -> str:
        """Per step (most time first, ``top`` lines at most), then per op: milliseconds per
        run and share of the total."""
        total = self.total_seconds or 1.0
        per_run = 1e3 / max(self.runs, 1)
        steps = sorted(self.steps, key=lambda s: -s.seconds)[:top]
        lines = [f"{self.total_seconds * per_run:.3f} ms per run over {self.runs} runs, "
                 f"{len(self.steps)} steps",
                 f"{'ms/run':>9} {'share':>6}  step"]
        lines += [f"{s.seconds * per_run:9.3f} {s.seconds / total:6.1%}  "
                  f"@{s.plan} #{s.index} {s.op} {s.shape}" for s in steps]
        lines.append(f"{'ms/run':>9} {'share':>6}  op (steps)")
        lines += [f"{seconds * per_run:9.3f} {seconds / total:6.1%}  {op} ({n})"
                  for op, seconds, n in self.by_op()[:top]]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def profile_plan(plan: Any, infos: Sequence[StepInfo], run: Callable[[], Any],
                 repeats: int) -> PlanProfile:
    """Profile ``plan`` (whose steps ``infos`` describe) over ``repeats`` calls of ``run``."""
    return profile_plans([(plan, infos)], run, repeats)


def profile_plans(plans: Iterable[tuple[Any, Sequence[StepInfo]]], run: Callable[[], Any],
                  repeats: int) -> PlanProfile:
    if repeats < 1:
        raise ValueError(f"profile: repeats must be at least 1, got {repeats}")
    plans = list(plans)
    for plan, _ in plans:
        plan.set_profiling(True)
    try:
        for _ in range(repeats):
            run()
    finally:
        for plan, _ in plans:
            plan.set_profiling(False)
    steps = []
    for plan, infos in plans:
        for index, ((_, seconds, calls), info) in enumerate(zip(plan.step_times(), infos)):
            steps.append(StepProfile(plan.name, index, info.op, info.shape, info.label,
                                     seconds, calls))
    return PlanProfile(tuple(steps), repeats)


def profile(fn: Any, *args: Any, repeats: int = 10, warmup: int = 1,
            **kwargs: Any) -> PlanProfile:
    """Profile the cpu plans of ``fn`` (a ``mskernel.jit`` function) called on ``args``:
    compiled once for their signature, run ``warmup`` times untimed, then ``repeats`` times
    with every step timed.  Calls with state (a training step) update it each run."""
    from .executable import CpuExecutable

    compiled = fn.lower(*args, **kwargs).compile()
    executables = [e for e in compiled.executable.executables
                   if isinstance(e, CpuExecutable)]
    if not executables:
        raise ValueError("profile: no part of this function was compiled for the cpu backend")
    for _ in range(warmup):
        compiled(*args, **kwargs)
    return profile_plans(((e.plan, e.steps) for e in executables),
                         lambda: compiled(*args, **kwargs), repeats)
