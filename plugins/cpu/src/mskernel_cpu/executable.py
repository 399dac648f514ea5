"""The compiled form of a graph on the cpu backend."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel_sdk import Executable, Graph, PassReport

from .lowering import lower
from .memory import MemoryPlan
from .profiling import PlanProfile, profile_plan


class CpuExecutable(Executable):
    """A graph lowered once into a native plan.  :meth:`run` is one call into C++, which runs
    every step; outputs are fresh DeviceArrays owned by the caller.  One run executes at a time
    (the plan's arena is reused across runs); runs release the GIL.

    ``graph`` is the graph as the backend received it, ``optimized_graph`` the one lowered
    (after the cpu passes; ``pass_report`` says what they did)."""

    def __init__(self, backend: Any, graph: Graph, optimized: Optional[Graph] = None, *,
                 report: Optional[PassReport] = None, views: bool = False) -> None:
        super().__init__(graph)
        self.optimized_graph = graph if optimized is None else optimized
        self.pass_report = report
        lowered = lower(self.optimized_graph, backend, views=views)
        self.plan = lowered.plan
        self.steps = lowered.steps  # what each plan step runs (StepInfo)
        self._memory = lowered.memory

    def run(self, args: Sequence[Any]) -> list[Any]:
        return self.plan.run(args)

    def profile(self, args: Sequence[Any], repeats: int = 10) -> PlanProfile:
        """Run ``repeats`` times on ``args`` with every step timed; the per-step and per-op
        times (see :mod:`mskernel_cpu.profiling`)."""
        return profile_plan(self.plan, self.steps, lambda: self.plan.run(args), repeats)

    def memory_plan(self) -> MemoryPlan:
        """Where the intermediates live: offsets, sizes and lifetimes, the arena's size (the
        peak) and what one buffer per value would need."""
        return self._memory

    def describe(self) -> str:
        """The steps of the plan, one per line (with what each kernel chose), regions indented."""
        return f"plan of @{self.graph.name}:\n{self.plan.describe()}"

    def explain(self) -> str:
        """The graph after the cpu passes (fused regions included), what the passes did, and
        the plan's steps."""
        parts = [f"graph after the cpu passes:\n{self.optimized_graph}"]
        if self.pass_report is not None:
            parts.append(str(self.pass_report))
        parts.append(self.describe())
        return "\n\n".join(parts)
