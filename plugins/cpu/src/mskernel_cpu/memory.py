"""The memory planner: places every intermediate buffer of a plan in one arena so that buffers
whose lifetimes overlap never share bytes, and buffers whose lifetimes do not may.

A buffer lives from the step that writes it to the last step that reads it (both inclusive;
scratch memory lives for its one step).  Placement is greedy by size, as TensorFlow Lite's
arena planner: the largest buffers first, each at the lowest 64-byte aligned offset that no
already-placed buffer of an overlapping lifetime covers.  Graph inputs (the caller's arrays) and
graph outputs (fresh arrays per run, owned by the caller) are never in the arena.

    plan = executable.memory_plan()
    print(plan)            # a table of buffers: offset, bytes, lifetime
    plan.arena_bytes       # bytes the arena needs (the peak)
    plan.naive_bytes       # bytes without reuse (one buffer per value)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

ALIGNMENT = 64


def aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class BufferRequest:
    """A buffer to place: a label for dumps, its size, and the first and last step using it."""

    label: str
    nbytes: int
    first: int
    last: int

    def overlaps(self, other: "BufferRequest") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Buffer:
    request: BufferRequest
    offset: int

    @property
    def end(self) -> int:
        return self.offset + self.request.nbytes


@dataclass(frozen=True)
class MemoryPlan:
    """Where a plan keeps its intermediates; ``regions`` are the plans of If/While regions (each
    has its own arena)."""

    name: str
    buffers: tuple[Buffer, ...]
    arena_bytes: int
    regions: tuple["MemoryPlan", ...] = ()

    @property
    def naive_bytes(self) -> int:
        return sum(aligned(b.request.nbytes) for b in self.buffers)

    def __str__(self) -> str:
        lines = [f"memory plan of @{self.name}: arena {self.arena_bytes} B for "
                 f"{len(self.buffers)} buffer(s), {self.naive_bytes} B without reuse"]
        for b in sorted(self.buffers, key=lambda b: (b.offset, b.request.first)):
            r = b.request
            lines.append(f"  [{b.offset:>10} .. {b.end:>10})  {r.nbytes:>10} B  "
                         f"steps {r.first}-{r.last}  {r.label}")
        for region in self.regions:
            lines.extend("  " + line for line in str(region).splitlines())
        return "\n".join(lines)


def plan_memory(name: str, requests: Sequence[BufferRequest],
                regions: Sequence[MemoryPlan] = ()) -> MemoryPlan:
    """Place ``requests`` in one arena (greedy by size, lowest fitting offset)."""
    placed: list[Buffer] = []
    offsets = [0] * len(requests)
    for index in sorted(range(len(requests)),
                        key=lambda i: (-requests[i].nbytes, requests[i].first, i)):
        request = requests[index]
        offset = 0
        clashes = sorted((b for b in placed if b.request.overlaps(request) and b.request.nbytes),
                         key=lambda b: b.offset)
        for other in clashes:
            if offset + request.nbytes <= other.offset:
                break
            offset = max(offset, aligned(other.end))
        placed.append(Buffer(request, offset))
        offsets[index] = offset
    arena = aligned(max((b.end for b in placed), default=0))
    buffers = tuple(Buffer(r, o) for r, o in zip(requests, offsets))
    return MemoryPlan(name, buffers, arena, tuple(regions))
