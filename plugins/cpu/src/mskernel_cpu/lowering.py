"""Lowering a graph to a native plan, once per compilation.

1. Each node becomes a step: a kernel prepared by its C++ factory (dtype dispatch, broadcasting
   and attributes are resolved here, not per call), or a plan step for the ops the plan runs
   itself (:data:`PLAN_OPS`: ``ref_load``, ``ref_store``, and ``If``/``While``, whose regions
   are lowered recursively into sub-plans).
2. Every graph output gets a buffer of its own, allocated fresh at each run and handed to the
   caller; the step producing it writes there directly.  An output that is a graph input, or
   that repeats an earlier output, is copied.
3. The remaining tensors, kernel workspaces and loop scratch go into one arena laid out by
   :func:`~mskernel_cpu.memory.plan_memory` from their lifetimes over the steps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from mskernel.ir.dtypes import DType
from mskernel.ir.graph import Graph, Node, Value
from mskernel.ir.types import RefType, TensorType, TokenType, Type
from mskernel.runtime import DeviceArray

from .memory import BufferRequest, MemoryPlan, aligned, plan_memory
from .native import load
from .storage import device_dtype

#: Ops run by plan steps rather than kernels; they take values of any dtype.
PLAN_OPS = ("If", "While", "ref_load", "ref_store")


@dataclass(frozen=True)
class OutputBuffer:
    """The buffer of graph output ``index`` when it is filled by a copy."""

    index: int


@dataclass(frozen=True)
class Scratch:
    """Scratch memory of one step (a kernel's workspace, a loop's second set of buffers)."""

    step: int


Key = Union[Value, OutputBuffer, Scratch]


@dataclass
class StepSpec:
    kind: str  # "kernel", "copy", "ref_load", "ref_store", "If", "While"
    label: str
    uses: list[Key]
    defines: list[Key]
    scratch_bytes: int = 0
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lowered:
    plan: Any  # mskernel_cpu._native.Plan
    memory: MemoryPlan


def lower(graph: Graph, backend: Any) -> Lowered:
    """The native plan of ``graph`` (whose nodes the backend claimed) and its memory plan."""
    return _Lowering(graph, backend, top_level=True).lower()


def kind_of(t: Type) -> str:
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, RefType):
        return "ref"
    if isinstance(t, TokenType):
        return "token"
    raise TypeError(f"the cpu backend cannot hold values of type {t}")


def tensor_spec(t: TensorType) -> tuple[str, list[int]]:
    return t.dtype.name, list(t.shape)


def native_attrs(attrs: Any) -> dict[str, Any]:
    """Attributes in the forms the C++ ABI reads: dtypes by name, the rest unchanged."""
    return {name: value.name if isinstance(value, DType) else value
            for name, value in attrs.items()}


class _Lowering:
    def __init__(self, graph: Graph, backend: Any, *, top_level: bool) -> None:
        self.graph = graph
        self.backend = backend
        self.top_level = top_level
        self.native = load()
        self.steps: list[StepSpec] = []
        self.regions: list[MemoryPlan] = []
        self.arena_keys: list[Key] = []  # the keys placed in the arena, in request order

    # -- 1. steps ----------------------------------------------------------------------------

    def lower(self) -> Lowered:
        for index, node in enumerate(self.graph.nodes):
            self.steps.append(self.step_for(index, node))
        outputs = self.output_keys()
        memory = self.plan_arena(outputs)
        return Lowered(self.build(outputs, memory), memory)

    def label(self, index: int, node: Node) -> str:
        return f"node {index} '{node.op}'{node.where()} of @{self.graph.name}"

    def step_for(self, index: int, node: Node) -> StepSpec:
        label = self.label(index, node)
        uses, defines = list(node.inputs), list(node.outputs)
        if node.op in ("ref_load", "ref_store"):
            return StepSpec(node.op, label, uses, defines)
        if node.op == "If":
            then_plan, else_plan = (self.sub_plan(region) for region in node.regions)
            return StepSpec("If", label, uses, defines,
                            payload={"then": then_plan, "else": else_plan})
        if node.op == "While":
            cond, body = (self.sub_plan(region) for region in node.regions)
            offsets, total = [], 0
            for value in node.outputs:
                offsets.append(total)
                if isinstance(value.type, TensorType):
                    total += aligned(value.type.nbytes)
            return StepSpec("While", label, uses, defines, scratch_bytes=total,
                            payload={"cond": cond, "body": body, "offsets": offsets,
                                     "max_iterations": node.attrs["max_iterations"]})
        try:
            kernel = self.native.prepare(
                node.op, [tensor_spec(v.type) for v in node.inputs],
                [tensor_spec(v.type) for v in node.outputs], native_attrs(node.attrs))
        except Exception as exc:
            exc.add_note(f"while preparing the cpu kernel of {label}")
            raise
        return StepSpec("kernel", label, uses, defines, scratch_bytes=kernel.workspace_bytes,
                        payload={"kernel": kernel})

    def sub_plan(self, region: Graph) -> Any:
        lowered = _Lowering(region, self.backend, top_level=False).lower()
        self.regions.append(lowered.memory)
        return lowered.plan

    # -- 2. outputs --------------------------------------------------------------------------

    def output_keys(self) -> list[Key]:
        """The key holding each graph output: the value itself when a step writes it (first
        occurrence), else an :class:`OutputBuffer` filled by a copy step appended here."""
        produced = {v for step in self.steps for v in step.defines}
        keys: list[Key] = []
        for index, value in enumerate(self.graph.outputs):
            if not isinstance(value.type, TensorType) or (value in produced and value not in keys):
                keys.append(value)
                continue
            buffer = OutputBuffer(index)
            self.steps.append(StepSpec("copy", f"output {index} of @{self.graph.name}",
                                       [value], [buffer],
                                       payload={"nbytes": value.type.nbytes}))
            keys.append(buffer)
        return keys

    # -- 3. the arena ------------------------------------------------------------------------

    def plan_arena(self, outputs: Sequence[Key]) -> MemoryPlan:
        bound = set(self.graph.inputs) | set(outputs)
        first: dict[Key, int] = {}
        last: dict[Key, int] = {}
        for i, step in enumerate(self.steps):
            for key in step.defines:
                first.setdefault(key, i)
                last.setdefault(key, i)
            for key in step.uses:
                last[key] = i
            if step.scratch_bytes:
                first[Scratch(i)] = last[Scratch(i)] = i
        requests = []
        for key in first:
            nbytes = self.nbytes(key)
            if key in bound or nbytes is None:
                continue
            self.arena_keys.append(key)
            requests.append(BufferRequest(self.describe_key(key), nbytes, first[key], last[key]))
        return plan_memory(self.graph.name, requests, self.regions)

    def nbytes(self, key: Key) -> Optional[int]:
        if isinstance(key, Scratch):
            return self.steps[key.step].scratch_bytes
        if isinstance(key, Value):
            return key.type.nbytes if isinstance(key.type, TensorType) else None
        return None  # output buffers are never in the arena

    def describe_key(self, key: Key) -> str:
        if isinstance(key, Scratch):
            return f"scratch of {self.steps[key.step].label}"
        value: Value = key  # type: ignore[assignment]
        return f"%{value.uid}{' ' + value.name if value.name else ''}: {value.type}"

    # -- 4. the native plan ------------------------------------------------------------------

    def build(self, outputs: Sequence[Key], memory: MemoryPlan) -> Any:
        plan = self.native.Plan(self.graph.name, memory.arena_bytes, self.backend)
        offsets = {key: buffer.offset for key, buffer in zip(self.arena_keys, memory.buffers)}
        slots: dict[Key, int] = {}

        def slot(key: Key) -> int:
            if key not in slots:
                slots[key] = plan.add_slot(offsets.get(key, -1))
            return slots[key]

        plan.set_inputs([self.port(slot(v), v.type) for v in self.graph.inputs])
        output_types = [v.type for v in self.graph.outputs]
        plan.set_outputs([self.port(slot(key), t, wrap=self.top_level)
                          for key, t in zip(outputs, output_types)])
        for i, step in enumerate(self.steps):
            self.add_step(plan, step, slot, slot(Scratch(i)) if step.scratch_bytes else -1)
        return plan

    def port(self, slot: int, t: Type, *, wrap: bool = False) -> tuple:
        if isinstance(t, TensorType):
            maker = functools.partial(DeviceArray, self.backend, t) if wrap else None
            return slot, "tensor", device_dtype(t.dtype), list(t.shape), maker
        return slot, kind_of(t), None, [], None

    def add_step(self, plan: Any, step: StepSpec, slot: Any, scratch: int) -> None:
        uses = [slot(k) for k in step.uses]
        defines = [slot(k) for k in step.defines]
        p = step.payload
        if step.kind == "kernel":
            plan.add_kernel(p["kernel"], uses, defines, scratch, step.label)
        elif step.kind == "copy":
            plan.add_copy(uses[0], defines[0], p["nbytes"], step.label)
        elif step.kind == "ref_load":
            cell: TensorType = step.uses[0].type.value  # type: ignore[union-attr]
            plan.add_ref_load(uses[0], defines[0], device_dtype(cell.dtype), list(cell.shape),
                              step.label)
        elif step.kind == "ref_store":
            cell = step.uses[0].type.value  # type: ignore[union-attr]
            plan.add_ref_store(uses[0], uses[1], device_dtype(cell.dtype), list(cell.shape),
                               functools.partial(DeviceArray, self.backend, cell), step.label)
        elif step.kind == "If":
            plan.add_if(uses[0], uses[1:], defines, p["then"], p["else"], step.label)
        elif step.kind == "While":
            types = [v.type for v in step.defines]  # type: ignore[union-attr]
            plan.add_while(uses, defines, [kind_of(t) for t in types],
                           [t.nbytes if isinstance(t, TensorType) else 0 for t in types],
                           scratch, p["offsets"], p["cond"], p["body"],
                           -1 if p["max_iterations"] is None else p["max_iterations"],
                           step.label)
        else:
            raise AssertionError(f"unknown step kind {step.kind!r}")
