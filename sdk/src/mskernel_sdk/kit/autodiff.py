"""The VJP builder the ``grad`` stage uses when an autodiff plugin provides the user function
``mskernel.vjp`` — JAX's contract: ``vjp(fn, *primals) -> (fn(*primals), pullback)``, with
``pullback(cotangent)`` returning one cotangent per primal — and no pytest plugin implements
``pytest_mskernel_vjp_builder`` (which takes precedence).

It replays the graph's nodes through the frontend inside ``mskernel.vjp`` and traces the
pullback, so the VJP graph holds exactly the ops the autodiff plugin's rules emit.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel.frontend.dispatch import apply
from mskernel.frontend.trace import trace_function
from mskernel.hooks import plugin_host
from mskernel.ir import Graph, TensorType

from .gradients import VJPBuilder, real_float

NAMESPACE = "vjp"


def namespace_vjp_builder() -> Optional[VJPBuilder]:
    """:func:`vjp_through_namespace` when some plugin provides ``mskernel.vjp``."""
    host = plugin_host()
    host.load_external()
    return vjp_through_namespace if NAMESPACE in host.namespaces.modules else None


def vjp_through_namespace(graph: Graph) -> Graph:
    """The VJP graph of ``graph`` (see :class:`~mskernel_sdk.VJPBuilder`), by ``mskernel.vjp``."""
    vjp = plugin_host().namespace(NAMESPACE)
    wrt = [i for i, v in enumerate(graph.inputs) if real_float(v.type)]
    outs = [j for j, v in enumerate(graph.outputs) if real_float(v.type)]
    arity = len(graph.inputs)

    def pulled_back(*args: Any) -> Any:
        inputs, cotangents = list(args[:arity]), tuple(args[arity:])

        def of_floats(*floats: Any) -> tuple[Any, ...]:
            for i, x in zip(wrt, floats):
                inputs[i] = x
            results = _replay(graph, inputs)
            return tuple(results[j] for j in outs)

        _, pullback = vjp(of_floats, *(args[i] for i in wrt))
        return pullback(cotangents)

    types = [t for t in (*(v.type for v in graph.inputs), *(graph.outputs[j].type for j in outs))
             if isinstance(t, TensorType)]  # every one: the kit checks gradients of tensors
    vjp_graph, _, captured = trace_function(pulled_back, types, f"{graph.name}.vjp")
    if captured:
        raise RuntimeError(f"the VJP of @{graph.name} captured {len(captured)} outer tensors")
    return vjp_graph


def _replay(graph: Graph, inputs: Sequence[Any]) -> list[Any]:
    """``graph``'s nodes applied to frontend tensors (recorded by whatever is active)."""
    env = dict(zip(graph.inputs, inputs))
    for node in graph.nodes:
        result = apply(node.op, *(env[v] for v in node.inputs), regions=node.regions,
                       **node.attrs)
        env.update(zip(node.outputs, result if isinstance(result, tuple) else (result,)))
    return [env[v] for v in graph.outputs]
