"""The precision modes of CANN's ATC compiler (``--precision_mode``) and the pass that
applies one: ``ascend.precision`` chooses each float32 node's compute dtype and writes it in
the graph as casts.

The Ascend AI core has two compute units.  The **Cube** unit (``conv``, ``conv_transpose``,
``matmul``, ``einsum`` and the fused ``ascend.conv2d``, ``ascend.matmul_bias``) multiplies
float16 operands and accumulates in float32; its result leaves in float16.  The **Vector**
unit runs everything else in float16 or float32.  The modes:

- ``force_fp16`` (the default, as ATC's): every float32 op computes in float16;
- ``allow_fp32_to_fp16``: Cube ops in float16; Vector ops keep float32 (they all support it);
- ``must_keep_origin_dtype``: nothing changes precision (the Cube computes float32 where the
  chip supports it; ATC refuses the model on chips whose Cube does not);
- ``allow_mix_precision``: automatic mixed precision by CANN's op lists: Cube ops in float16
  (the white list), numerically sensitive Vector ops in float32 (:data:`KEEP_FP32`, the black
  list), the others follow their inputs (float16 when one of them is float16 already).

Ops that compute no new values (data movement, layout conversion, max pooling, ReLU) follow
their inputs in every mode.  In a training step, the ops that update parameters and optimizer
state from their gradients keep the parameters' dtype (:func:`parameter_updates`), as
Ascend's optimizer kernels update float32 variables in float32.  A node computing in float16 reads its float32 inputs
through ``cast`` nodes and its float32 results are cast back, so the graph computes the same
types as before; the ``ascend.cancel`` pass then removes a cast back to float32 read only
through a cast to float16.  Ops that create a dtype of their own (``cast``, ``full``, ...),
effectful ops and region ops are left as they are.

The mode comes from :func:`set_precision_mode` (or :func:`precision_mode` for a block), else
``MSKERNEL_ASCEND_PRECISION_MODE``, else ``force_fp16``; a pipeline may pin it in
``PassContext.options["precision_mode"]``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Iterator, Optional

from mskernel_sdk import (
    MskernelError, Node, PassContext, Pass, PassResult, Graph, Replacement, Scope, TensorType,
    Value, make_node, rewrite_nodes,
)

from .ops import CONV2D, MATMUL_BIAS, TRANSDATA

FORCE_FP16 = "force_fp16"
PRECISION_MODES = (FORCE_FP16, "allow_fp32_to_fp16", "must_keep_origin_dtype",
                   "allow_mix_precision")
ENV = "MSKERNEL_ASCEND_PRECISION_MODE"

CUBE_OPS = frozenset({"conv", "conv_transpose", "matmul", "einsum", CONV2D, MATMUL_BIAS})
#: Ops that compute no new values (data movement, max pooling, ReLU): they follow their
#: inputs' precision.
EXACT_OPS = frozenset({
    "reshape", "transpose", "broadcast_to", "squeeze", "expand_dims", "slice", "concat",
    "stack", "split", "flip", "tile", "pad", "gather", "take_along_axis", "gather_nd",
    "max_pool", "relu", TRANSDATA,
})
#: allow_mix_precision's black list: Vector ops whose float16 results lose too much
#: (exponentials and logarithms, powers, divisions, reductions, normalisations, softmax).
KEEP_FP32 = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "pow", "div", "reciprocal", "sqrt",
    "rsqrt", "erf", "erfc", "lgamma", "sum", "prod", "mean", "var", "std", "logsumexp",
    "softmax", "log_softmax", "layer_norm", "batch_norm", "group_norm", "cumsum", "cumprod",
    "norm",
})

_mode: ContextVar[Optional[str]] = ContextVar("mskernel_ascend_precision_mode", default=None)


def _checked(mode: str, where: str) -> str:
    if mode not in PRECISION_MODES:
        raise MskernelError(f"{where}: unknown Ascend precision mode {mode!r}; choose one of "
                            f"{', '.join(PRECISION_MODES)}")
    return mode


def set_precision_mode(mode: str) -> None:
    """Choose the precision mode of graphs compiled for Ascend from now on (both backends)."""
    _mode.set(_checked(mode, "set_precision_mode"))


def get_precision_mode() -> str:
    """The precision mode in force: :func:`set_precision_mode`'s, else the environment
    variable ``MSKERNEL_ASCEND_PRECISION_MODE``'s, else ``force_fp16``."""
    chosen = _mode.get()
    if chosen is not None:
        return chosen
    from_env = os.environ.get(ENV, "").strip()
    return _checked(from_env, ENV) if from_env else FORCE_FP16


@contextmanager
def precision_mode(mode: str) -> Iterator[None]:
    """Compile for Ascend with ``mode`` inside the ``with`` block."""
    token = _mode.set(_checked(mode, "precision_mode"))
    try:
        yield
    finally:
        _mode.reset(token)


def mode_of(context: PassContext) -> str:
    mode = context.options.get("precision_mode")
    return get_precision_mode() if mode is None else _checked(mode, "PassContext.options")


def _float_types(values: tuple[Value, ...]) -> list[TensorType]:
    return [v.type for v in values if isinstance(v.type, TensorType) and v.type.dtype.is_floating]


def _is_half(value: Value, scope: Scope) -> bool:
    """Whether ``value`` is float16 or a float32 cast of a float16 value."""
    return _half_source(value, scope) is not None


def _half_source(value: Value, scope: Scope) -> Optional[Value]:
    if not isinstance(value.type, TensorType):
        return None
    if value.type.dtype.name == "float16":
        return value
    producer = scope.get(value)
    if producer is not None and producer.op == "cast":
        source = producer.inputs[0]
        if isinstance(source.type, TensorType) and source.type.dtype.name == "float16":
            return source
    return None


def computes_in_half(node: Node, scope: Scope, mode: str) -> bool:
    """Whether ``node`` (a float32 node) computes in float16 under ``mode``."""
    if node.op in CUBE_OPS:
        return mode != "must_keep_origin_dtype"
    follows = any(_is_half(v, scope) for v in node.inputs)
    if node.op in EXACT_OPS:
        return follows
    if mode == FORCE_FP16:
        return True
    if mode == "allow_mix_precision":
        return node.op not in KEEP_FP32 and follows
    return False


def _eligible(node: Node, context: PassContext) -> bool:
    """A node of float32 tensors (some of them float), without regions, effects or a dtype
    of its own."""
    if node.regions or "dtype" in node.attrs or context.registry.get(node.op).effectful:
        return False
    values = (*node.inputs, *node.outputs)
    if not all(isinstance(v.type, TensorType) for v in values):
        return False
    floats = _float_types(values)
    return bool(floats) and all(t.dtype.name == "float32" for t in floats)


def parameter_updates(graph: Graph) -> set[Value]:
    """The values of the ops that update parameters in a training step: the ops reached from
    a read of a parameter (or optimizer state) that the graph writes back, through ops that
    are not Cube ops and do not feed a result the graph returns (its forward computation),
    and the ops whose results only those read (a gradient's square, a bias gradient's sum).
    The gradients reach them from the Cube ops; the arithmetic on the state is what Ascend's
    optimizer kernels (ApplyAdam, ApplyMomentum, ...) do in the parameters' dtype."""
    stored = {n.inputs[0] for n in graph.nodes if n.op == "ref_store"}
    if not stored:
        return set()
    producers = {v: n for n in graph.nodes for v in n.outputs}
    returned: set[Value] = set()
    pending = [v for v in graph.outputs if isinstance(v.type, TensorType)]
    while pending:
        value = pending.pop()
        if value in returned:
            continue
        returned.add(value)
        producer = producers.get(value)
        if producer is not None:  # along tensors only: tokens order everything
            pending.extend(v for v in producer.inputs if isinstance(v.type, TensorType))
    updates: set[Value] = set()
    for node in graph.nodes:
        tensors = [v for v in node.outputs if isinstance(v.type, TensorType)]
        if node.op == "ref_load":
            if node.inputs[0] in stored:
                updates.update(tensors)
        elif (node.op not in CUBE_OPS and not node.regions and not returned.intersection(tensors)
              and updates.intersection(node.inputs)):
            updates.update(tensors)
    readers: dict[Value, list[Node]] = {}
    for node in graph.nodes:
        for value in node.inputs:
            readers.setdefault(value, []).append(node)
    for node in reversed(graph.nodes):  # what only the updates read: g * g of ApplyAdam
        tensors = [v for v in node.outputs if isinstance(v.type, TensorType)]
        if (node.op in CUBE_OPS or node.regions or node.op == "ref_load" or not tensors
                or returned.intersection(tensors) or updates.issuperset(tensors)):
            continue
        read_by = [r for v in tensors for r in readers.get(v, ())]
        if read_by and all(r.op == "ref_store" or updates.intersection(r.outputs)
                           for r in read_by):
            updates.update(tensors)
    return updates


class PrecisionPass:
    """``ascend.precision``: the casts of the precision mode (see the module doc)."""

    name = "ascend.precision"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        mode = mode_of(context)
        if mode == "must_keep_origin_dtype":
            return PassResult(graph, False)
        updates = parameter_updates(graph)

        def visit(node: Node, scope: Scope) -> Optional[Replacement]:
            if (not _eligible(node, context) or updates.intersection(node.outputs)
                    or not computes_in_half(node, scope, mode)):
                return None
            return _in_half(node, scope, context)

        new = rewrite_nodes(graph, lambda: visit)
        return PassResult(new, new is not graph)


def _in_half(node: Node, scope: Scope, context: PassContext) -> Optional[Replacement]:
    nodes: list[Node] = []
    inputs: list[Value] = []
    for value in node.inputs:
        if not (isinstance(value.type, TensorType) and value.type.dtype.name == "float32"):
            inputs.append(value)
            continue
        source = _half_source(value, scope)
        if source is None:
            nodes.append(replace(make_node(context, "cast", value, dtype="float16"), loc=node.loc))
            source = nodes[-1].output
        inputs.append(source)
    try:
        half = make_node(context, node.op, *inputs, **node.attrs)
    except MskernelError:  # the op takes no float16: it keeps float32
        return None
    nodes.append(replace(half, loc=node.loc))
    results: list[Value] = []
    for old, new in zip(node.outputs, half.outputs):
        if old.type != new.type:
            nodes.append(replace(make_node(context, "cast", new, dtype="float32"), loc=node.loc))
            new = nodes[-1].output
        results.append(new)
    return Replacement(tuple(nodes), tuple(results))


PRECISION_PASS: Pass = PrecisionPass()
