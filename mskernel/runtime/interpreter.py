"""The reference interpreter: runs any graph with the ops' NumPy reference semantics.

This is the specification every backend is compared with.  It checks each result against
the type the op's rule inferred, so a reference function that disagrees with its own shape
rule is reported with the op's name instead of producing a silently wrong graph.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..defaults import or_default_ops
from ..errors import MskernelError
from ..ir.dtypes import as_storage
from ..ir.graph import Graph, Node, Value
from ..ir.lookup import OpLookup
from ..ir.types import TensorType
from ..ops.registry import OpDef


def run_graph(graph: Graph, args: Sequence[Any],
              registry: Optional[OpLookup[OpDef]] = None) -> list[Any]:
    """Evaluate ``graph`` on ``args`` (NumPy arrays in reference storage, ``TOKEN_VALUE``
    for tokens, :class:`~mskernel.runtime.state.RefCell` for refs); return its outputs.
    ``registry`` gives the ops' semantics (default: the process's op registry)."""
    return _run_graph(graph, args, or_default_ops(registry))


def _run_graph(graph: Graph, args: Sequence[Any], registry: OpLookup[OpDef]) -> list[Any]:
    if len(args) != len(graph.inputs):
        raise MskernelError(
            f"graph @{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}"
        )
    env: dict[Value, Any] = {}
    for value, arg in zip(graph.inputs, args):
        env[value] = as_storage(arg, value.type.dtype) if isinstance(value.type, TensorType) else arg
    for node in graph.nodes:
        results = run_node(node, [env[v] for v in node.inputs], registry)
        env.update(zip(node.outputs, results))
    return [env[v] for v in graph.outputs]


def run_node(node: Node, args: Sequence[Any], registry: OpLookup[OpDef]) -> list[Any]:
    """Evaluate one node on concrete inputs and coerce the results to the inferred types."""
    opdef = registry.get(node.op)
    extra: dict[str, Any] = {}
    if node.regions:
        extra["regions"] = node.regions
        extra["run_region"] = lambda region, *region_args: _run_graph(region, region_args, registry)
    return call_kernel(node, opdef.reference, args, extra)


def call_kernel(node: Node, fn: Callable[..., Any], args: Sequence[Any],
                extra: Mapping[str, Any] = MappingProxyType({}), *,
                what: str = "reference") -> list[Any]:
    """``fn(*args, **node.attrs, **extra)`` with floating-point warnings off, its results
    coerced to the node's inferred types; ``what`` names ``fn`` in errors (a result count or
    shape that disagrees with the op's rule)."""
    with np.errstate(all="ignore"):
        result = fn(*args, **node.attrs, **extra)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(results) != len(node.outputs):
        raise MskernelError(
            f"{what} of op '{node.op}'{node.where()} returned {len(results)} results "
            f"for {len(node.outputs)} outputs"
        )
    return [_coerce(node, value, r, what) for value, r in zip(node.outputs, results)]


def _coerce(node: Node, value: Value, result: Any, what: str = "reference") -> Any:
    if not isinstance(value.type, TensorType):
        return result
    arr = np.asarray(result)
    if arr.shape != value.type.shape:
        raise MskernelError(
            f"{what} of op '{node.op}'{node.where()} produced shape {arr.shape}, "
            f"but its rule inferred {value.type}"
        )
    return as_storage(arr, value.type.dtype)
