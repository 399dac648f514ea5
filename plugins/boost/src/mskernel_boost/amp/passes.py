"""Mixed precision as IR passes: casts inserted around the ops a policy computes in low
precision, then cancelled where a cast back meets a cast down.

``MixedPrecisionPass(policy)`` rewrites every node the policy names low precision (see
:mod:`.policy`) and whose floating-point operands are float32: each float32 operand is cast
to the low dtype, the op runs in it, and each result is cast back to float32, so every node
keeps its type and the graph computes what it did, rounded where the policy allows.
``cancel_casts`` then removes each ``cast(cast(x: bf16 → f32) → bf16)`` (a widening cast and
its inverse, exact), so values flow in low precision from one low-precision op to the next;
CSE merges the casts of one value and DCE removes the casts nothing reads.  Control flow
(``If``/``While``), effectful ops and the arithmetic of state updates — ops whose results
only feed ``ref_store`` (a batch norm's moving statistics) — keep float32.

The registered pipelines ``amp_<level>_<dtype>`` (``amp_O2_bfloat16``) run a level's pass
then ``amp_cleanup`` (``cancel_casts``, ``cse``, ``dce``).
"""

from __future__ import annotations

from mskernel import bfloat16, float16, float32, float64
from mskernel_sdk import (
    SHAPES, CompileOptions, Graph, MskernelError, Node, PassContext, PassManager, PassResult,
    PatternPass, Patterns, Replacement, Scope, TensorType, make_node, rewrite_nodes,
    run_pipeline,
)

from .policy import LEVELS, Policy, level_policy

__all__ = ["CANCEL_CASTS", "MixedPrecisionPass", "cast_to_low", "pipeline_name",
           "registered_passes"]

#: casts that represent every value of their input exactly
_WIDENING = {(float16, float32), (bfloat16, float32), (float16, float64), (bfloat16, float64),
             (float32, float64)}


def _dtype(value: object) -> object:
    t = getattr(value, "type", None)
    return t.dtype if isinstance(t, TensorType) else None


class MixedPrecisionPass:
    """Compute the ops ``policy`` names in its low dtype (see the module's documentation)."""

    def __init__(self, policy: Policy, name: str | None = None) -> None:
        self.policy = policy
        self.name = name or f"amp_cast[{policy.key}]"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        registry = context.registry
        updates = state_updates(graph)

        def visit(node: Node, scope: Scope) -> Replacement | None:
            if (node.regions or "dtype" in node.attrs or not self.policy.is_low(node.op)
                    or registry.get(node.op).effectful or node.outputs[0] in updates):
                return None
            return cast_to_low(node, self.policy.low, context)

        new = rewrite_nodes(graph, lambda: visit, enter=lambda node: False)
        return PassResult(new, new is not graph)


def state_updates(graph: Graph) -> set[object]:
    """The outputs of the nodes whose results are read only by ``ref_store`` and by other such
    nodes: the arithmetic of parameter updates."""
    readers: dict[object, list[Node]] = {}
    for node in graph.nodes:
        for value in node.inputs:
            readers.setdefault(value, []).append(node)
    outputs = set(graph.outputs)
    found: set[object] = set()
    for node in reversed(graph.nodes):
        if node.op == "ref_store" or not node.outputs:
            continue
        if all(v not in outputs and v in readers
               and all(r.op == "ref_store" or r.outputs[0] in found for r in readers[v])
               for v in node.outputs):
            found.update(node.outputs)
    return found


def cast_to_low(node: Node, low: object, context: PassContext) -> Replacement | None:
    """``node`` computed in ``low``: its float32 operands cast down, its results cast back.
    ``None`` when it has no float32 operand, another floating-point operand, or the op does
    not take ``low``."""
    floats = [_dtype(v) for v in node.inputs if getattr(_dtype(v), "is_floating", False)]
    if float32 not in floats or any(dt is not float32 for dt in floats):
        return None
    try:
        casts = {v: make_node(context, "cast", v, dtype=low)
                 for v in dict.fromkeys(node.inputs) if _dtype(v) is float32}
        core = make_node(context, node.op, *(casts[v].output if v in casts else v
                                             for v in node.inputs), **dict(node.attrs))
    except MskernelError:
        return None
    core = Node(core.op, core.inputs, core.outputs, core.attrs, (), node.loc)
    nodes, values = [*casts.values(), core], []
    for old, new in zip(node.outputs, core.outputs):
        if new.type == old.type:
            values.append(new)
        elif _dtype(old) is float32 and _dtype(new) is low:
            back = make_node(context, "cast", new, dtype=float32)
            nodes.append(back)
            values.append(back.output)
        else:
            return None
    return Replacement(tuple(nodes), tuple(values))


def cast_round_trip(node: Node, scope: Scope, context: PassContext) -> object:
    """``cast(cast(x) → wider) → x's dtype`` is ``x``."""
    inner = scope.get(node.inputs[0])
    if inner is None or inner.op != "cast":
        return None
    x = inner.inputs[0]
    if x.type == node.output.type and (_dtype(x), _dtype(inner.output)) in _WIDENING:
        return x
    return None


CANCEL_CASTS = PatternPass("cancel_casts", Patterns([("cast", cast_round_trip)]) + SHAPES)
CLEANUP = ("cancel_casts", "cse", "dce")


def pipeline_name(level: str, low: object) -> str:
    return f"amp_{level}_{getattr(low, 'name', low)}"


def registered_passes() -> dict[str, MixedPrecisionPass]:
    """The passes of the levels O1–O3 for float16 and bfloat16, by pipeline name."""
    out = {}
    for level in LEVELS[1:]:
        for low in (float16, bfloat16):
            name = pipeline_name(level, low)
            out[name] = MixedPrecisionPass(level_policy(level, low), name)  # type: ignore[arg-type]
    return out


def apply_policy(graph: Graph, policy: Policy, level: str | None = None) -> Graph:
    """``graph`` with ``policy`` applied and its casts cleaned up: the registered pipeline
    of ``level`` when given, else the policy's pass followed by ``amp_cleanup``."""
    options = CompileOptions(opt_level=2)
    if level is not None:
        return run_pipeline(pipeline_name(level, policy.low), graph, options).graph
    manager = PassManager([MixedPrecisionPass(policy), PassManager.from_pipeline("amp_cleanup")],
                          name="amp_custom")
    return manager.run(graph).graph
