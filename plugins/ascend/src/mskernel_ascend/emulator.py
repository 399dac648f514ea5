"""The ``ascend-emulate`` backend: a graph lowered for Ascend, run on the CPU with Ascend's
numerics.

``compile`` runs the Ascend lowering (:mod:`.passes`: fusions, the precision mode's casts,
the 5HD layouts) under the precision mode in force, and the executable evaluates the
lowered graph node by node with each op's reference semantics and these rules:

- a node whose result is float16 computes from its inputs widened to float32 and rounds its
  result once to float16 (:func:`.numerics.to_half`).  For a Cube op (``conv``, ``matmul``,
  ``ascend.conv2d``, ...) this is the Cube's float16 × float16 products accumulated in
  float32, the bias added and the ReLU applied in float32 before the result leaves in float16;
  for a Vector op it is the float16 result of the op;
- float16 overflow saturates to ±65504 (Ascend's default saturation mode), and every
  overflow and underflow is counted (:func:`.numerics.recording`);
- everything else (float32 nodes, integers, booleans) is computed as the reference does;
  parameter reads and writes (``ref_load``, ``ref_store``) too, so a training step runs here
  whole and the precision pass sees which ops update parameters.

It is never a default: its priority is below the reference backend's, so it runs only where a
user asks for it, as in ``MSKERNEL_BACKENDS=ascend-emulate,cpu``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
from mskernel_sdk import (
    Availability, Backend, Capabilities, CompileOptions, DeviceArray, Executable, Graph,
    MskernelError, Node, RefCell, TensorType, as_storage, dtype, op_registry,
)

from .capabilities import emulator_capabilities
from .numerics import to_half
from .passes import lower
from .precision import get_precision_mode

_HALF = dtype("float16")
_SINGLE = dtype("float32")


def node_key(node: Node) -> str:
    """Where a node's rounding events are counted: its user source line."""
    return str(node.loc) if node.loc else "<no source line>"


class _Step:
    """One node of the lowered graph, ready to evaluate."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.fn: Callable[..., Any] = op_registry().get(node.op).reference
        self.half = [isinstance(v.type, TensorType) and v.type.dtype is _HALF
                     for v in node.outputs]
        attrs = dict(node.attrs)
        if node.op == "cast" and any(self.half):
            attrs["dtype"] = _SINGLE  # a float16 cast is the saturating rounding below
        self.attrs = attrs
        self.key = node_key(node)

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        if any(self.half):
            arrays = [a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a
                      for a in arrays]
        with np.errstate(all="ignore"):
            result = self.fn(*arrays, **self.attrs)
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        out = []
        for value, half, r in zip(self.node.outputs, self.half, results):
            if not isinstance(value.type, TensorType):  # a token
                out.append(r)
                continue
            r = to_half(r, key=self.key) if half else as_storage(np.asarray(r), value.type.dtype)
            if r.shape != value.type.shape:
                raise MskernelError(f"ascend-emulate: op '{self.node.op}'{self.node.where()} "
                                    f"produced shape {r.shape}, its rule says {value.type}")
            out.append(r)
        return out


class EmulatedExecutable(Executable):
    """The lowered graph (``self.lowered``) evaluated with Ascend's numerics."""

    def __init__(self, backend: "EmulateBackend", graph: Graph, options: CompileOptions,
                 precision_mode: Optional[str] = None) -> None:
        super().__init__(graph)
        self.backend = backend
        self.precision_mode = precision_mode or get_precision_mode()
        self.lowered = lower(graph, options, self.precision_mode, backend=backend.name).graph
        self.steps = [_Step(node) for node in self.lowered.nodes]

    def run(self, args: Sequence[Any]) -> list[Any]:
        cells = [(arg, RefCell(arg.type, arg.value.data)) for arg in args
                 if isinstance(arg, RefCell)]
        inner = dict((id(outer), cell) for outer, cell in cells)
        host = [arg.data if isinstance(arg, DeviceArray) else inner.get(id(arg), arg)
                for arg in args]
        results = self.run_host(host)
        for outer, cell in cells:  # the parameters the graph wrote
            outer.value = DeviceArray(self.backend, outer.type, cell.value)
        return [DeviceArray(self.backend, v.type, r) if isinstance(v.type, TensorType) else r
                for v, r in zip(self.graph.outputs, results)]

    def run_host(self, arrays: Sequence[Any]) -> list[Any]:
        """Evaluate on host arrays in reference storage (host ``RefCell`` s for refs,
        ``TOKEN_VALUE`` for tokens)."""
        env = dict(zip(self.lowered.inputs, arrays))
        for step in self.steps:
            env.update(zip(step.node.outputs, step([env[v] for v in step.node.inputs])))
        return [env[v] for v in self.lowered.outputs]


class EmulateBackend(Backend):
    """Ascend's numerics on the host CPU; see the module doc."""

    host_memory = True

    def availability(self) -> Availability:
        try:
            mode = f"precision mode {get_precision_mode()}"
        except MskernelError as exc:  # a bad MSKERNEL_ASCEND_PRECISION_MODE: said at compile
            mode = str(exc)
        return Availability(available=True, reason=(
            f"emulates Ascend numerics on the host CPU with NumPy {np.__version__} "
            f"({mode}); no NPU is used"))

    def capabilities(self) -> Capabilities:
        return emulator_capabilities()

    def to_device(self, host: np.ndarray, type: TensorType) -> DeviceArray:
        return DeviceArray(self, type, np.array(as_storage(host, type.dtype)))

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return array.data

    def compile(self, graph: Graph, options: CompileOptions) -> Executable:
        return EmulatedExecutable(self, graph, options)
