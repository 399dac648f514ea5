"""A graph compiled for the gpu backend: a program of kernel launches on one stream, with a
liveness-based memory plan, optionally replayed as a CUDA graph.

:class:`Program` lowers the optimized graph once into steps — a kernel from the table
(:mod:`.kernels`), a generated kernel (``gpu.fused``), a constant uploaded at compile time, a
ref read or write — each with the slots it reads and writes.  Running it is a loop over the
steps that does no lookup: every call's kernel and attributes are bound in advance.

Memory: every intermediate is released after the step that reads it last, into CuPy's
caching allocator, which hands the block to the next allocation of its size class, so the
plan's peak, not the sum of the intermediates, is what a run holds (:meth:`memory_plan`
prints each value's lifetime, its bytes and the peak).  An elementwise step whose operand
dies there and is owned by the program (not an input, a constant or a view) writes its result
over that operand (``in place of`` in the plan).

Launch cost: the program runs on its own non-blocking stream; from the second run on, a
program with more steps than a replay's copies and no host synchronisation in it (no control flow, no kernel that reads a flag
back) is captured once as a CUDA graph and then replayed with one launch per run: the
arguments are copied into the graph's static input buffers, each ref cell's value into the
buffer the graph's loads read, and afterwards the values the graph stored are copied into new
arrays for the cells, and the outputs copied out.  A compiled training step (parameters in
ref cells) thus costs a few copies and one graph launch from Python.  The graph allocates
from a memory pool of its own, so no block it writes on a replay is ever another array's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from mskernel import bfloat16
from mskernel_sdk import (
    TOKEN_VALUE, DeviceArray, Executable, Graph, Node, OpError, PassReport, RefCell, RefType,
    TensorType, Value, op_registry,
)

from .codegen import THREADS, generate
from .fused_op import FUSED_OP
from .kernels import _BINARY, _UNARY, DATA_MOVEMENT, KERNELS, ArrayLib
from .storage import device_dtype, from_bfloat16_bits, to_bfloat16_bits, to_device_storage

#: kernels that read a flag back to the host (an error check): a program with them is not
#: captured as a CUDA graph
SYNCING = frozenset({"floor_divide", "remainder", "gather_nd", "scatter_nd", "If", "While"})
#: kernels whose result may share its operand's memory (a view): never written over
VIEWS = frozenset({"reshape", "slice", "transpose", "broadcast_to", "If", "While"})
IN_PLACE = frozenset({*_UNARY, *_BINARY, "relu", FUSED_OP})


@dataclass
class Step:
    """One launch: ``run(*inputs)`` gives the outputs (a tuple)."""

    node: Node
    run: Callable[..., tuple]
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    frees: tuple[int, ...] = ()
    in_place: Optional[int] = None  # the slot whose buffer the output reuses
    note: str = ""


@dataclass(frozen=True)
class Lifetime:
    label: str
    nbytes: int
    first: int
    last: int


@dataclass(frozen=True)
class MemoryPlan:
    """Intermediates' lifetimes (steps, inclusive), their bytes, and what the run holds at
    its peak when each is released after its last read."""

    name: str
    lifetimes: tuple[Lifetime, ...]
    in_place: tuple[str, ...] = ()

    @property
    def peak_bytes(self) -> int:
        last = max((t.last for t in self.lifetimes), default=-1)
        return max((sum(t.nbytes for t in self.lifetimes if t.first <= s <= t.last)
                    for s in range(last + 1)), default=0)

    @property
    def naive_bytes(self) -> int:
        return sum(t.nbytes for t in self.lifetimes)

    def __str__(self) -> str:
        lines = [f"memory plan of @{self.name}: peak {self.peak_bytes} B for "
                 f"{len(self.lifetimes)} intermediate(s), {self.naive_bytes} B without reuse"]
        lines += [f"  steps {t.first:>3}-{t.last:<3} {t.nbytes:>12} B  {t.label}"
                  for t in self.lifetimes]
        lines += [f"  in place: {entry}" for entry in self.in_place]
        return "\n".join(lines)


def _nbytes(value: Value) -> int:
    t = value.type
    return math.prod(t.shape) * device_dtype(t.dtype).itemsize if isinstance(t, TensorType) else 0


def _tensor_type(value: Value) -> TensorType:
    assert isinstance(value.type, TensorType), value
    return value.type


def _bf16(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.dtype is bfloat16


@dataclass
class Program:
    """The steps of a graph (see the module's docstring) on the array library ``lib``."""

    graph: Graph
    lib: ArrayLib
    launch_fused: Optional[Callable[[Node], Callable[..., Any]]] = None
    steps: list[Step] = field(default_factory=list)
    slots: dict[Value, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for v in self.graph.inputs:
            self._slot(v)
        for node in self.graph.nodes:
            self.steps.append(self._step(node))
        self._plan_lifetimes()

    def _slot(self, value: Value) -> int:
        return self.slots.setdefault(value, len(self.slots))

    def _step(self, node: Node) -> Step:
        reads = tuple(self._slot(v) for v in node.inputs)
        writes = tuple(self._slot(v) for v in node.outputs)
        return Step(node, self._runner(node), reads, writes)

    def _runner(self, node: Node) -> Callable[..., tuple]:
        xp = self.lib.np
        if node.op == "constant":
            out = _tensor_type(node.outputs[0])
            value = to_device_storage(xp, np.asarray(node.attrs["value"]), out.dtype)
            return lambda: (value,)
        if node.op == "ref_load":
            return lambda cell, token: (cell.value.data.copy(), TOKEN_VALUE)
        if node.op == "ref_store":
            return self._store
        if node.op in ("If", "While"):
            return self._control(node)
        if node.op == FUSED_OP:
            if self.launch_fused is None:
                raise ValueError("gpu.fused runs only on the device")
            return _wrap(self.launch_fused(node), node, xp, widen=False)
        opdef = op_registry().get(node.op)
        attrs = dict(opdef.bind_attrs(node.attrs, loc=node.loc))
        kernel = KERNELS[node.op]
        lib = self.lib

        def call(*arrays: Any, **out: Any) -> Any:
            return kernel(lib, *arrays, **attrs, **out)

        return _wrap(call, node, xp, widen=node.op not in DATA_MOVEMENT)

    def _control(self, node: Node) -> Callable[..., tuple]:
        """``If`` and ``While`` with their regions as programs of their own; the predicate is
        read back to the host (one synchronisation per branch or iteration)."""
        first, second = (Program(r, self.lib, self.launch_fused) for r in node.regions)
        if node.op == "If":
            return lambda pred, *operands: tuple(
                (first if bool(pred) else second).run(operands))
        limit = node.attrs.get("max_iterations")

        def loop(*carried: Any) -> tuple:
            iterations = 0
            while bool(first.run(carried)[0]):
                if limit is not None and iterations == limit:
                    raise OpError(f"While: the loop exceeded max_iterations={limit} (its cond "
                                  f"region @{first.graph.name} was still true after "
                                  f"{iterations} iterations)")
                carried = tuple(second.run(carried))
                iterations += 1
            return carried

        return loop

    def _store(self, cell: RefCell, value: Any, token: Any) -> tuple:
        cell.value = DeviceArray(cell.value.backend, cell.type, value.copy())
        return (TOKEN_VALUE,)

    def _plan_lifetimes(self) -> None:
        last_read: dict[int, int] = {}
        for i, step in enumerate(self.steps):
            for slot in step.reads:
                last_read[slot] = i
        kept = {self.slots[v] for v in self.graph.outputs if v in self.slots}
        owned: set[int] = set()
        for i, step in enumerate(self.steps):
            step.frees = tuple(s for s in dict.fromkeys(step.reads)
                               if last_read.get(s) == i and s not in kept)
            out = step.node.outputs[0] if len(step.node.outputs) == 1 else None
            if (step.node.op in IN_PLACE and out is not None and isinstance(out.type, TensorType)
                    and not _bf16(out)):
                for slot, v in zip(step.reads, step.node.inputs):
                    if (slot in owned and slot in step.frees and v.type == out.type
                            and step.reads.count(slot) == 1):
                        step.in_place = slot
                        break
            if step.node.op not in VIEWS | {"constant", "ref_load"}:
                owned.update(step.writes)

    def memory_plan(self) -> MemoryPlan:
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, step in enumerate(self.steps):
            for slot in step.writes:
                first.setdefault(slot, i)
                last.setdefault(slot, i)
            for slot in step.reads:
                if slot in first:
                    last[slot] = i
        outputs = {self.slots[v] for v in self.graph.outputs if v in self.slots}
        by_slot = {s: v for v, s in self.slots.items()}
        lifetimes = tuple(
            Lifetime(f"%{by_slot[s].uid} = {self.steps[first[s]].node.op}", _nbytes(by_slot[s]),
                     first[s], len(self.steps) if s in outputs else last[s])
            for s in sorted(first))
        in_place = tuple(f"step {i} ({step.node.op}) writes over %{by_slot[step.in_place].uid}"
                         for i, step in enumerate(self.steps) if step.in_place is not None)
        return MemoryPlan(self.graph.name, lifetimes, in_place)

    @property
    def capturable(self) -> bool:
        """Whether the program can be captured as a CUDA graph: no step reads a value back
        to the host.  Ref cells are rebound to static buffers around each replay."""
        return not any(s.node.op in SYNCING for s in self.steps)

    def run(self, args: Sequence[Any], hold: Optional[list[Any]] = None) -> list[Any]:
        """The outputs for ``args``; with ``hold``, every array made is appended to it, so
        none is released (what a captured CUDA graph writes must stay allocated)."""
        env: list[Any] = [None] * len(self.slots)
        env[:len(args)] = args
        for step in self.steps:
            inputs = [env[s] for s in step.reads]
            outputs = step.run(*inputs, out=env[step.in_place]) if step.in_place is not None \
                else step.run(*inputs)
            for slot, value in zip(step.writes, outputs):
                env[slot] = value
            if hold is not None:
                hold.extend(outputs)
            for slot in step.frees:
                env[slot] = None
        return [env[self.slots[v]] for v in self.graph.outputs]


def _wrap(call: Callable[..., Any], node: Node, xp: Any, widen: bool) -> Callable[..., tuple]:
    """``call`` with bfloat16 operands widened and results rounded (when ``widen``), results
    made contiguous arrays of each output's storage dtype and shape, as a tuple."""
    widen_in = tuple(widen and _bf16(v) for v in node.inputs)
    outs = [(device_dtype(v.type.dtype), v.type.shape, widen and _bf16(v))
            for v in node.outputs if isinstance(v.type, TensorType)]

    def run(*arrays: Any, out: Any = None) -> tuple:
        if any(widen_in):
            arrays = tuple(from_bfloat16_bits(xp, a) if w else a
                           for a, w in zip(arrays, widen_in))
        results = call(*arrays) if out is None else call(*arrays, out=out)
        if not isinstance(results, tuple):
            results = (results,)
        fixed = []
        for r, (dt, shape, narrow) in zip(results, outs):
            if narrow:
                r = to_bfloat16_bits(xp, r)
            if not (isinstance(r, xp.ndarray) and r.dtype == dt and r.shape == shape
                    and r.flags.c_contiguous):  # the common case costs three comparisons
                r = xp.asarray(r)
                r = xp.ascontiguousarray(r if r.dtype == dt else r.astype(dt)).reshape(shape)
            fixed.append(r)
        return tuple(fixed)

    return run


def fused_launcher(device: Any) -> Callable[[Node], Callable[..., Any]]:
    """Generated kernels for ``gpu.fused`` nodes on ``device`` (:mod:`.device`)."""
    cupy = device.cupy

    def launcher(node: Node) -> Callable[..., Any]:
        (region,) = node.regions
        domain = _tensor_type(region.outputs[0]).shape
        reduce = node.attrs.get("reduce", "none")
        inner = math.prod(domain[len(domain) - node.attrs.get("inner", 0):]) \
            if reduce != "none" else 1
        out = _tensor_type(node.outputs[0])
        generated = generate(region, domain, None if reduce == "none" else reduce, inner,
                             out.dtype)
        function = device.function(generated.name, generated.source)
        dt, shape = device_dtype(out.dtype), out.shape
        rows = math.prod(shape)
        n = rows if reduce != "none" else math.prod(domain)

        def launch(*arrays: Any, out: Any = None) -> Any:
            y = cupy.empty(shape, dt) if out is None else out
            if n:
                blocks = min(n, 65535) if reduce != "none" else min(-(-n // THREADS), 8192)
                function((blocks,), (THREADS,), (*arrays, y, np.int64(n)))
            return y

        return launch

    return launcher


class StaticCell(RefCell):
    """A ref cell of a captured graph: ``loaded`` is the buffer its loads read (its value at
    capture), which the cell's current value is copied into before each replay."""

    __slots__ = ("loaded",)

    def __init__(self, type: TensorType, value: DeviceArray) -> None:
        super().__init__(type, value)
        self.loaded = value.data


class GpuExecutable(Executable):
    """A compiled graph on the gpu backend (see the module's docstring).  ``optimized_graph``
    is the graph after the gpu passes, ``pass_report`` what they did."""

    def __init__(self, backend: Any, graph: Graph, optimized: Graph, program: Program,
                 report: Optional[PassReport] = None, graphs: bool = True) -> None:
        super().__init__(graph)
        self.backend = backend
        self.optimized_graph = optimized
        self.pass_report = report
        self.program = program
        self.stream = backend.device.stream()
        # a replay launches one copy per tensor argument and output (and two per ref cell):
        # worth it when the program launches more than that
        copies = len(graph.inputs) + len(graph.outputs) + sum(
            isinstance(v.type, RefType) for v in graph.inputs)
        self._use_graph = graphs and program.capturable and len(program.steps) > copies
        self._runs = 0
        self._captured: Optional[tuple[Any, list[Any], list[Any], list[Any]]] = None
        self.capture_error = ""

    def run(self, args: Sequence[Any]) -> list[Any]:
        datas = [a.data if isinstance(a, DeviceArray) else a for a in args]
        with self.stream:
            self.backend.wait_for_previous(self.stream)
            if self._use_graph and self._runs >= 1:
                outputs = self._replay(datas)
            else:
                outputs = self.program.run(datas)
            self.backend.last_event = self.stream.record()
        self._runs += 1
        return [DeviceArray(self.backend, v.type, o) if isinstance(v.type, TensorType) else o
                for v, o in zip(self.graph.outputs, outputs)]

    def _replay(self, datas: list[Any]) -> list[Any]:
        cupy = self.backend.device.cupy
        if self._captured is None:
            captured = self._capture(datas)
            if captured is None:
                return self.program.run(datas)
            self._captured = captured
        graph, statics, outputs, _ = self._captured
        for static, arg in zip(statics, datas):  # this run's values into the graph's buffers
            if isinstance(static, StaticCell):
                cupy.copyto(static.loaded, arg.value.data)
            elif static is not None:
                cupy.copyto(static, arg)
        graph.launch(self.stream)
        for static, arg in zip(statics, datas):  # the values the graph stored, as new arrays
            if isinstance(static, StaticCell) and static.value.data is not static.loaded:
                arg.value = DeviceArray(self.backend, arg.type, static.value.data.copy())
        return [o.copy() if hasattr(o, "copy") else o for o in outputs]

    def _capture(self, datas: list[Any]) -> Optional[tuple[Any, list[Any], list[Any], list[Any]]]:
        """The program captured as a CUDA graph over static buffers: a copy of each tensor
        argument, and for each ref cell a cell of its own whose loads read a buffer the cell's
        value is copied into before each replay (``loaded``) and whose stores leave the buffer
        the graph writes; ``None`` (and :attr:`capture_error`) when capture fails.  The
        static buffers and the pool the graph allocates from live as long as the graph."""
        statics: list[Any] = []
        for arg in datas:
            if isinstance(arg, RefCell):
                statics.append(StaticCell(arg.type, DeviceArray(self.backend, arg.type,
                                                                arg.value.data.copy())))
            else:
                statics.append(arg.copy() if hasattr(arg, "copy") else None)
        args = [s if s is not None else a for s, a in zip(statics, datas)]

        def reset() -> None:
            for static in statics:
                if isinstance(static, StaticCell):
                    static.value = DeviceArray(self.backend, static.type, static.loaded)

        # Everything the captured kernels touch — results and the temporaries inside kernels
        # (workspaces, partial results) — comes from a memory pool of the graph's own, which
        # nothing else allocates from afterwards: a block a replay writes is never another
        # array's.  A run holding every array first leaves that pool a free block of each
        # size, so the capture itself needs no cudaMalloc.
        cupy = self.backend.device.cupy
        pool = cupy.cuda.MemoryPool()
        held: list[Any] = [pool]
        try:
            with cupy.cuda.using_allocator(pool.malloc):
                self.program.run(args, hold=[])
                reset()
                self.stream.begin_capture()
                try:
                    outputs = self.program.run(args, hold=held)
                finally:
                    graph = self.stream.end_capture()
        except Exception as exc:  # a kernel that cannot be captured: run step by step
            self._use_graph = False
            self.capture_error = f"{type(exc).__name__}: {exc}"
            return None
        return graph, statics, outputs, held

    def memory_plan(self) -> MemoryPlan:
        return self.program.memory_plan()

    def describe(self) -> str:
        mode = "a CUDA graph after the first run" if self._use_graph else "launch by launch"
        if self.capture_error:
            mode += f" (its capture failed: {self.capture_error})"
        lines = [f"program of @{self.graph.name}: {len(self.program.steps)} step(s), "
                 f"run as {mode}"]
        for i, step in enumerate(self.program.steps):
            extra = f"  (in place of slot {step.in_place})" if step.in_place is not None else ""
            lines.append(f"  {i:>3}: {step.node.op}{extra}")
        return "\n".join(lines)

    def explain(self) -> str:
        parts = [f"graph after the gpu passes:\n{self.optimized_graph}"]
        if self.pass_report is not None:
            parts.append(str(self.pass_report))
        parts.append(self.describe())
        parts.append(str(self.memory_plan()))
        return "\n\n".join(parts)
