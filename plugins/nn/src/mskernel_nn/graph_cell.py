"""``mskernel.nn.GraphCell``: a loaded graph run as a cell (MindSpore's ``nn.GraphCell``).

    graph = mskernel.load("lenet.mindir")        # or any format a plugin reads
    net = nn.GraphCell(graph)
    logits = net(x)                               # no Python model code needed

The graph's inputs are the call's tensors followed by its weights; each weight becomes a
:class:`~mskernel.Parameter` of the cell under the name it has in the file
(``"fc1.weight"``), so the cell can be fine-tuned, checkpointed and compiled like any other.
A model file does not say which weights were trainable: all are (freeze one with
``param.requires_grad = False``, a batch norm's moving statistics say).
``construct`` applies the graph's ops one by one through the frontend, so the cell runs
eagerly on the current device, is traced whole under ``mskernel.jit`` and is differentiated
by autodiff.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from mskernel_sdk import Graph, MskernelError, Parameter, Tensor, apply

from .cell import Cell

__all__ = ["GraphCell"]


class GraphCell(Cell):
    """Run ``graph`` — a :class:`mskernel.ir.Model` from ``mskernel.load`` or a bare
    :class:`mskernel.ir.Graph` — as a cell.  ``params_init`` (name → Parameter, Tensor or
    array) replaces the initial values of weights by name."""

    def __init__(self, graph: Any, params_init: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__()
        model_graph = graph if isinstance(graph, Graph) else getattr(graph, "graph", None)
        if not isinstance(model_graph, Graph):
            raise TypeError(f"GraphCell takes what mskernel.load returns (or an IR Graph), got "
                            f"{type(graph).__name__}")
        weights = {} if isinstance(graph, Graph) else dict(graph.weights)
        dtypes = {} if isinstance(graph, Graph) else dict(graph.weight_dtypes)
        overrides = dict(params_init or {})
        unknown = sorted(set(overrides) - set(weights))
        if unknown:
            raise KeyError(f"GraphCell: params_init names {', '.join(unknown)}, which the graph "
                           f"has no weights of (it has: {', '.join(weights) or 'none'})")
        object.__setattr__(self, "_graph", model_graph)
        object.__setattr__(self, "_arguments", [v for v in model_graph.inputs
                                                if v.name not in weights])
        object.__setattr__(self, "_weight_inputs", {v.name: v for v in model_graph.inputs
                                                    if v.name in weights})
        for value in model_graph.inputs:
            if value.name in weights:
                initial = overrides.get(value.name, weights[value.name])
                param = initial if isinstance(initial, Parameter) else Parameter(
                    np.asarray(initial), dtype=dtypes.get(value.name, value.type.dtype))
                if param.type != value.type:
                    raise MskernelError(f"GraphCell: weight '{value.name}' must be "
                                        f"{value.type}, got {param.type}")
                self.insert_param_to_cell(value.name, param, check_name_contain_dot=False)

    @property
    def graph(self) -> Graph:
        return self._graph  # type: ignore[no-any-return]

    def construct(self, *inputs: Any) -> Any:
        return run_graph_ops(self._graph, self._bind(inputs))

    def _bind(self, inputs: tuple[Any, ...]) -> dict[Any, Any]:
        """The graph's inputs → the call's tensors and the cell's parameters."""
        arguments = self._arguments
        if len(inputs) != len(arguments):
            raise MskernelError(
                f"GraphCell: the graph takes {len(arguments)} input(s) "
                f"({', '.join(str(v.type) for v in arguments)}), got {len(inputs)}")
        env: dict[Any, Any] = {}
        for i, (value, given) in enumerate(zip(arguments, inputs)):
            tensor = given if isinstance(given, Tensor) else Tensor(given)
            if tensor.type != value.type:
                raise MskernelError(f"GraphCell: input {i} is {tensor.type}, but the graph "
                                    f"takes {value.type}")
            env[value] = tensor
        for name, value in self._weight_inputs.items():
            env[value] = self._params[name]
        return env

    def extend_repr(self) -> str:
        return (f"{len(self._graph.nodes)} nodes, {len(self._arguments)} input(s), "
                f"{len(self._params)} weight(s)")


def run_graph_ops(graph: Graph, env: dict[Any, Any]) -> Any:
    """Apply ``graph``'s ops to the tensors ``env`` gives its inputs; its output, or the
    tuple of its outputs."""
    for node in graph.nodes:
        out = apply(node.op, *(env[v] for v in node.inputs), regions=node.regions,
                    **dict(node.attrs))
        for value, tensor in zip(node.outputs, out if isinstance(out, tuple) else (out,)):
            env[value] = tensor
    results = tuple(env[v] for v in graph.outputs)
    return results[0] if len(results) == 1 else results
