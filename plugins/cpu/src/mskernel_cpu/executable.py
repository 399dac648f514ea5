"""The compiled form of a graph on the cpu backend."""

from __future__ import annotations

from typing import Any, Sequence

from mskernel.ir.graph import Graph
from mskernel.runtime import Executable

from .lowering import lower
from .memory import MemoryPlan


class CpuExecutable(Executable):
    """A graph lowered once into a native plan.  :meth:`run` is one call into C++, which runs
    every step; outputs are fresh DeviceArrays owned by the caller.  One run executes at a time
    (the plan's arena is reused across runs); runs release the GIL."""

    def __init__(self, backend: Any, graph: Graph) -> None:
        super().__init__(graph)
        lowered = lower(graph, backend)
        self.plan = lowered.plan
        self._memory = lowered.memory

    def run(self, args: Sequence[Any]) -> list[Any]:
        return self.plan.run(args)

    def memory_plan(self) -> MemoryPlan:
        """Where the intermediates live: offsets, sizes and lifetimes, the arena's size (the
        peak) and what one buffer per value would need."""
        return self._memory

    def describe(self) -> str:
        """The steps of the plan, one per line (with what each kernel chose), regions indented."""
        return f"plan of @{self.graph.name}:\n{self.plan.describe()}"
