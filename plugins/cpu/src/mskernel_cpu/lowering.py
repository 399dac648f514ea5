"""Lowering a graph to a native plan, once per compilation.

1. Each node becomes a step: a kernel prepared by its C++ factory (dtype dispatch, broadcasting
   and attributes are resolved here, not per call), or a plan step for the ops the plan runs
   itself (:data:`PLAN_OPS`: ``ref_load``, ``ref_store``, and ``If``/``While``, whose regions
   are lowered recursively into sub-plans).  A ``constant`` is no step: its data (in device
   storage) is held by the plan and its slot points there.  ``reshape``, ``squeeze`` and
   ``expand_dims`` (:data:`VIEW_OPS`) reinterpret dense C-contiguous data, so with ``views``
   on their result shares its operand's buffer (no step); otherwise they run their kernel, or
   a copy step when none is registered.  A ``cpu.fused_elementwise`` node gets its program
   (and generated code) from :mod:`.fusion_codegen`.  With ``views`` on, a ``ref_load`` whose
   value is no graph output reads the cell's array in place, holding it (no copy, no arena
   buffer): a ``ref_store`` never writes over an array anyone references.  A value stored by
   one ``ref_store`` alone, computed by a kernel of this graph and no graph output, is taken
   over by the store (:meth:`_Lowering.taken_values`): an ``acquire`` step before its kernel
   points its slot at the array the store will put in the cell, and the store copies nothing.
2. Every graph output gets a buffer of its own, allocated fresh at each run and handed to the
   caller; the step producing it writes there directly (a reshape returned as an output is
   never a view).  An output that is a graph input, a constant, or that repeats an earlier
   output, is copied.
3. The remaining tensors, kernel workspaces and loop scratch go into one arena laid out by
   :func:`~mskernel_cpu.memory.plan_memory` from their lifetimes over the steps.  A view is
   no buffer of its own: its uses extend the lifetime of the buffer it shares.  With ``views``
   on, an elementwise kernel (:data:`IN_PLACE_OPS`) whose operand dies at its step writes its
   result over that operand (never over a cell's array read in place).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from mskernel_sdk import (
    DType, DeviceArray, Graph, Node, RefType, TensorType, TokenType, Type, Value, as_storage,
    core_ops,
)

from .fusion import FUSED_OP
from .fusion_codegen import compile_fused_nodes, kernel_attrs
from .memory import BufferRequest, MemoryPlan, aligned, plan_memory
from .native import load
from .storage import device_dtype, to_device_data

#: Ops run by the plan itself rather than by kernels; they take values of any dtype.
PLAN_OPS = ("If", "While", "ref_load", "ref_store", "constant")

#: Ops whose result is their operand's data under another shape: views when ``views`` is on.
VIEW_OPS = ("reshape", "squeeze", "expand_dims")

#: Ops whose kernels accept an output aliasing an input of the output's shape and element size
#: (they read element i before writing it; KERNELS.md): the core elementwise ops, whose kernels
#: are the map loops of elementwise.hpp.  With ``views`` on, such an output takes the buffer of
#: an operand that dies at its node.
IN_PLACE_OPS = frozenset(core_ops("elementwise"))


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
    op: str = "copy"  # the node's op (for profiles); output copies say "copy"
    shape: str = ""  # the first output's type, as text


@dataclass(frozen=True)
class StepInfo:
    """What a plan step runs, for profiles: its label, op and first output's type."""

    label: str
    op: str
    shape: str


@dataclass(frozen=True)
class Lowered:
    plan: Any  # mskernel_cpu._native.Plan
    memory: MemoryPlan
    steps: tuple[StepInfo, ...]


def lower(graph: Graph, backend: Any, *, views: bool = False) -> Lowered:
    """The native plan of ``graph`` (whose nodes the backend claimed) and its memory plan;
    ``views`` lets reshapes share their operand's buffer and elementwise results overwrite
    operands that die."""
    generated = compile_fused_nodes(graph)
    return _Lowering(graph, backend, top_level=True, views=views, generated=generated).lower()


@functools.cache
def registered_kernels() -> frozenset[str]:
    return frozenset(op for op, _ in load().kernel_table())


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
    """Attributes in the forms the C++ ABI reads: dtypes by name, integers as int64 (one in
    [2**63, 2**64) — a uint64 seed or bound — as its two's-complement bit pattern, which
    kernels read back as uint64), the rest unchanged."""
    return {name: _native_value(value) for name, value in attrs.items()}


def _native_value(value: Any) -> Any:
    if isinstance(value, DType):
        return value.name
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2**63:
        return value - 2**64
    return value


class _Lowering:
    def __init__(self, graph: Graph, backend: Any, *, top_level: bool, views: bool,
                 generated: Mapping[Node, tuple[str, str]]) -> None:
        self.graph = graph
        self.generated = generated  # fused node → (shared object, symbol) of its code
        self.backend = backend
        self.top_level = top_level
        self.views = views
        self.native = load()
        self.steps: list[StepSpec] = []
        self.constants: dict[Value, np.ndarray] = {}  # device data of constant nodes
        self.shared: dict[Value, Key] = {}  # a view or in-place result → the value it shares
        self.defined = {v for node in graph.nodes for v in node.outputs}
        self.regions: list[MemoryPlan] = []
        self.arena_keys: list[Key] = []  # the keys placed in the arena, in request order
        self.aliased: set[Value] = set()  # ref_load results reading the cell's array in place
        self.taken: set[Value] = set()  # values computed in the array their store puts in a cell
        self.store_arrays: dict[Node, Any] = {}  # a ref_store → its _native.StoreArrays

    # -- 1. steps ----------------------------------------------------------------------------

    def lower(self) -> Lowered:
        outputs = set(self.graph.outputs)
        stepped: list[tuple[int, Node]] = []
        for index, node in enumerate(self.graph.nodes):
            if node.op == "constant":
                value = node.output
                host = as_storage(node.attrs["value"], value.type.dtype)
                self.constants[value] = to_device_data(host, value.type.dtype)
            elif self.views and node.op in VIEW_OPS and node.output not in outputs:
                self.shared[node.output] = self.key(node.inputs[0])
            else:
                stepped.append((index, node))
        last_use = self.last_uses() if self.views else {}
        if self.views:
            self.aliased = self.aliased_loads()
            self.taken = self.taken_values()
        stores = {node.inputs[1]: node for node in self.graph.nodes if node.op == "ref_store"}
        for index, node in stepped:
            if self.views:
                self.reuse_operand(index, node, last_use)
            for value in node.outputs:
                if value in self.taken:
                    self.steps.append(StepSpec("acquire", f"{self.label(index, node)}: acquire "
                                               "the array its store puts in the cell", [],
                                               [value], payload={"store": stores[value]},
                                               op="ref_acquire", shape=str(value.type)))
            step = self.step_for(index, node)
            step.op = node.op
            step.shape = str(node.outputs[0].type) if node.outputs else ""
            self.steps.append(step)
        outputs = self.output_keys()
        memory = self.plan_arena(outputs)
        infos = tuple(StepInfo(s.label, s.op, s.shape) for s in self.steps)
        return Lowered(self.build(outputs, memory), memory, infos)

    def last_uses(self) -> dict[Key, float]:
        """The index of the last node reading each buffer (views count for what they share;
        graph outputs live on)."""
        last: dict[Key, float] = {}
        for index, node in enumerate(self.graph.nodes):
            for value in node.inputs:
                last[self.key(value)] = index
        for value in self.graph.outputs:
            last[self.key(value)] = float("inf")
        return last

    def aliased_loads(self) -> set[Value]:
        """The ``ref_load`` results that read the cell's array in place: those that are no
        graph output (a store never writes over an array the load holds)."""
        returned = set(self.graph.outputs)
        return {node.outputs[0] for node in self.graph.nodes
                if node.op == "ref_load" and isinstance(node.outputs[0].type, TensorType)
                and node.outputs[0] not in returned}

    def taken_values(self) -> set[Value]:
        """The values a ``ref_store`` takes over: stored by it alone, computed by a kernel of
        this graph (no view, no region, no ref_load), no graph output."""
        stored: dict[Value, int] = {}
        for node in self.graph.nodes:
            if node.op == "ref_store":
                stored[node.inputs[1]] = stored.get(node.inputs[1], 0) + 1
        producers = self.graph.producers()
        returned = set(self.graph.outputs)
        taken = set()
        for value, count in stored.items():
            producer = producers.get(value)
            if (count == 1 and producer is not None and producer.op not in PLAN_OPS
                    and value not in self.shared and value not in returned
                    and not any(self.shared.get(v) == value for v in self.shared)
                    and isinstance(value.type, TensorType)):
                taken.add(value)
        return taken

    def reuse_operand(self, index: int, node: Node, last_use: dict[Key, float]) -> None:
        """Let an elementwise kernel write over an operand of its output's shape and element
        size that dies at this node (see :data:`IN_PLACE_OPS`): the output shares its buffer."""
        if node.op not in IN_PLACE_OPS or len(node.outputs) != 1:
            return
        out = node.output
        if (out in self.graph.outputs or out in self.taken
                or not isinstance(out.type, TensorType)):
            return
        size = device_dtype(out.type.dtype).itemsize
        for value in node.inputs:
            key = self.key(value)
            if (not isinstance(key, Value) or key not in self.defined or key in self.constants
                    or key in self.aliased or key in self.taken or last_use.get(key) != index
                    or device_dtype(key.type.dtype).itemsize != size):
                continue
            # every read of the buffer at this node must be of element i for output element i
            reads = [v for v in node.inputs if self.key(v) == key]
            if all(v.type.shape == out.type.shape for v in reads):
                self.shared[out] = key
                last_use[key] = last_use.get(out, index)
                return

    def label(self, index: int, node: Node) -> str:
        return f"node {index} '{node.op}'{node.where()} of @{self.graph.name}"

    def key(self, value: Value) -> Key:
        """The key whose buffer holds ``value`` (itself unless it shares another's)."""
        while value in self.shared:
            value = self.shared[value]  # type: ignore[assignment]
        return value

    def step_for(self, index: int, node: Node) -> StepSpec:
        label = self.label(index, node)
        uses, defines = [self.key(v) for v in node.inputs], [self.key(v) for v in node.outputs]
        if node.op in ("ref_load", "ref_store"):
            return StepSpec(node.op, label, uses, defines, payload={"node": node})
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
        if node.op in VIEW_OPS and not self.has_kernel(node.op):
            return StepSpec("copy", label, uses, defines,
                            payload={"nbytes": node.output.type.nbytes})
        attrs = (kernel_attrs(node, self.generated) if node.op == FUSED_OP
                 else native_attrs(node.attrs))
        try:
            kernel = self.native.prepare(
                node.op, [tensor_spec(v.type) for v in node.inputs],
                [tensor_spec(v.type) for v in node.outputs], attrs)
        except Exception as exc:
            exc.add_note(f"while preparing the cpu kernel of {label}")
            raise
        return StepSpec("kernel", label, uses, defines, scratch_bytes=kernel.workspace_bytes,
                        payload={"kernel": kernel})

    def has_kernel(self, op: str) -> bool:
        return op in registered_kernels()

    def sub_plan(self, region: Graph) -> Any:
        lowered = _Lowering(region, self.backend, top_level=False, views=self.views,
                            generated=self.generated).lower()
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
        bound = (set(self.graph.inputs) | set(outputs) | set(self.constants) | self.aliased
                 | self.taken)
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
            key = self.key(key) if isinstance(key, Value) else key
            if key not in slots:
                data = self.constants.get(key)  # type: ignore[call-overload]
                slots[key] = (plan.add_slot(offsets.get(key, -1)) if data is None
                              else plan.add_constant(data))
            return slots[key]

        plan.set_inputs([self.port(slot(v), v.type) for v in self.graph.inputs])
        output_types = [v.type for v in self.graph.outputs]
        plan.set_outputs([self.port(slot(key), t, wrap=self.top_level)
                          for key, t in zip(outputs, output_types)])
        for i, step in enumerate(self.steps):
            self.add_step(plan, step, slot, slot(Scratch(i)) if step.scratch_bytes else -1)
        return plan

    def arrays_of(self, store: Node) -> Any:
        """The StoreArrays of a ``ref_store`` node, shared with its value's acquire step."""
        if store not in self.store_arrays:
            self.store_arrays[store] = self.native.StoreArrays()
        return self.store_arrays[store]

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
                              step.defines[0] in self.aliased, step.label)
        elif step.kind == "ref_store":
            cell = step.uses[0].type.value  # type: ignore[union-attr]
            plan.add_ref_store(uses[0], uses[1], device_dtype(cell.dtype), list(cell.shape),
                               functools.partial(DeviceArray, self.backend, cell),
                               self.arrays_of(p["node"]), step.uses[1] in self.taken,
                               step.label)
        elif step.kind == "acquire":
            value: Value = step.defines[0]  # type: ignore[assignment]
            plan.add_acquire(defines[0], device_dtype(value.type.dtype), list(value.type.shape),
                             self.arrays_of(p["store"]), step.label)
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
