"""``MixedPrecisionCell``: a network run through the mixed-precision passes.

The cell traces the wrapped network's ``construct`` into an IR graph (once per input
signature and training mode, as ``mskernel.jit`` caches), runs the policy's passes on it
(:mod:`.passes`) and applies the resulting graph's ops one by one through the frontend, so
that the casts and the low-precision ops are what runs eagerly, what the enclosing
``@jit`` trace records and what autodiff differentiates: the backward pass of a bfloat16
matmul is bfloat16 matmuls, the gradients of the float32 weights come back through the
casts as float32.  Parameters are read and written as the traced graph does (its ``ref_load``
and ``ref_store`` become reads of the Parameters and ``assign_value``), so batch-norm
statistics and dropout keys update as without mixed precision.

The wrapper is transparent for names (``auto_prefix=False``), so checkpoints of the wrapped
network load into the bare one and back.
"""

from __future__ import annotations

import contextvars
from typing import Any, Optional

from mskernel_sdk import (
    Graph, MskernelError, Parameter, Tensor, TreeDef, apply, op_registry, trace_function,
    tree_unflatten,
)
from mskernel.nn import Cell

from .passes import apply_policy
from .policy import Policy

__all__ = ["MixedPrecisionCell"]


class MixedPrecisionCell(Cell):
    """``network`` computed as ``policy`` says; ``level`` names the registered pipeline
    (``None``: a custom policy)."""

    def __init__(self, network: Cell, policy: Policy, level: Optional[str] = None) -> None:
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"mixed precision applies to a Cell, got {type(network).__name__}")
        self._backbone = network
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "_graphs", {})

    @property
    def network(self) -> Cell:
        return self._backbone  # type: ignore[no-any-return]

    def construct(self, *inputs: Any) -> Any:
        tensors = tuple(x if isinstance(x, Tensor) else Tensor(x) for x in inputs)
        graph, treedef = self.lowered(*tensors)
        return run_graph(graph, treedef, tensors, self._parameters_by_name())

    def lowered(self, *inputs: Tensor) -> tuple[Graph, TreeDef]:
        """The network's graph for these inputs after the mixed-precision passes."""
        key = (tuple(x.type for x in inputs), self._backbone.__jit_state__())
        cached = self._graphs.get(key)
        if cached is None:
            # traced alone: outside the enclosing trace and the transforms (autodiff tapes)
            # watching it, which see the transformed graph's ops when they are applied
            graph, treedef, captured = contextvars.Context().run(
                trace_function, self._backbone, [x.type for x in inputs],
                type(self._backbone).__name__)
            if captured:
                raise MskernelError(f"mixed precision: {type(self._backbone).__name__} uses "
                                    f"{len(captured)} tensor(s) from outside that it does not "
                                    "own; make them Parameters of the network")
            cached = (apply_policy(graph, self.policy, self.level), treedef)
            self._graphs[key] = cached
        return cached

    def _parameters_by_name(self) -> dict[str, Parameter]:
        return {p.name: p for p in self._backbone.get_parameters()}

    def extend_repr(self) -> str:
        return f"{self.level or 'custom'}, {self.policy.low.name}"


def run_graph(graph: Graph, treedef: TreeDef, inputs: tuple[Tensor, ...],
              params: dict[str, Parameter]) -> Any:
    """Apply ``graph``'s ops to ``inputs`` (its first inputs) and the parameters its ``!ref``
    inputs name; the state token is the frontend's (effects are applied in graph order)."""
    registry = op_registry()
    env: dict[Any, Any] = dict(zip(graph.inputs, inputs))
    for value in graph.inputs[len(inputs):]:
        if value.name in params:
            env[value] = params[value.name]
    for node in graph.nodes:
        if node.op == "ref_load":
            env[node.outputs[0]] = env[node.inputs[0]]
        elif node.op == "ref_store":
            env[node.inputs[0]].assign_value(env[node.inputs[1]])
        else:
            effectful = registry.get(node.op).effectful
            operands = node.inputs[:-1] if effectful else node.inputs
            out = apply(node.op, *(env[v] for v in operands), regions=node.regions,
                        **dict(node.attrs))
            outs = out if isinstance(out, tuple) else (out,)
            for value, tensor in zip(node.outputs, outs):
                env[value] = tensor
    return tree_unflatten(treedef, [env[v] for v in graph.outputs])
