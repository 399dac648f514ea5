"""Functional control flow usable in both modes: ``cond``, ``switch``, ``while_loop``,
``fori_loop`` and ``scan`` (JAX's signatures).

Eagerly — no trace active and a concrete predicate or bound — they are plain Python control
flow.  Under a trace they trace their branch or body functions into closed regions and emit
``If``/``While`` nodes; values a function closes over are captured and passed explicitly.
State is any nest of tuples, lists and dicts of tensors (or numbers, which become tensors);
a loop body must return the same structure, dtypes and shapes it receives.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..ir.graph import Graph, Value
from ..ir.types import TensorType, Type
from . import functional as F
from .autograph.callables import user_callables
from .conditions import ControlFlowError, predicate
from .dispatch import apply
from .pytree import TreeDef, flatten, unflatten
from .tensor import Tensor
from .trace import active_trace, trace_function


__all__ = ["ControlFlowError", "cond", "fori_loop", "partial", "scan", "switch", "while_loop"]

#: ``ops.partial(fn, *args, **kwargs)``: ``fn`` with some arguments fixed (MindSpore's name
#: for :func:`functools.partial`; graph-mode code converts what it calls through it).
partial = functools.partial


def _leaves(tree: Any, what: str) -> tuple[list[Tensor], TreeDef]:
    leaves, treedef = flatten(tree, lambda x: isinstance(x, Tensor))
    try:
        return [F.asarray(leaf) for leaf in leaves], treedef
    except (TypeError, ValueError):
        raise ControlFlowError(f"{what} must be tensors, numbers, or tuples/lists/dicts of them") from None


def _is_traced(value: Any) -> bool:
    return isinstance(value, Tensor) and value.is_traced


def _check_same(what: str, expected: Sequence[Type], got: Sequence[Type],
                expected_tree: TreeDef, got_tree: TreeDef) -> None:
    if expected_tree != got_tree:
        raise ControlFlowError(f"{what}: structure {got_tree} differs from {expected_tree}")
    for i, (e, g) in enumerate(zip(expected, got)):
        if e != g:
            raise ControlFlowError(
                f"{what}: value {i} has type {g} but {e} was expected; "
                "cast it (astype) or reshape it so both agree"
            )


def _with_inputs(graph: Graph, inputs: Sequence[Value], outputs: Sequence[Value] | None = None) -> Graph:
    return Graph(tuple(inputs), graph.nodes, tuple(outputs if outputs is not None else graph.outputs),
                 graph.name)


def _fresh(tensors: Sequence[Tensor]) -> list[Value]:
    return [Value(t.type) for t in tensors]


# ---------------------------------------------------------------------------------------------


@user_callables("true_fun", "false_fun")
def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``."""
    if not _is_traced(pred):  # a concrete predicate chooses now, in both modes
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    p = predicate(pred, "cond")
    ops, in_tree = _leaves(operands, "cond operands")
    types = [t.type for t in ops]

    def run(fun: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *xs: fun(*unflatten(in_tree, list(xs)))

    then_g, then_tree, then_caps = trace_function(run(true_fun), types, "then")
    else_g, else_tree, else_caps = trace_function(run(false_fun), types, "else")
    _check_same("cond: the false branch's result", then_g.output_types, else_g.output_types,
                then_tree, else_tree)
    n = len(ops)
    then_r = _with_inputs(then_g, [*then_g.inputs, *_fresh(else_caps)])
    else_r = _with_inputs(else_g, [*else_g.inputs[:n], *_fresh(then_caps), *else_g.inputs[n:]])
    out = apply("If", p, *ops, *then_caps, *else_caps, regions=(then_r, else_r))
    return unflatten(then_tree, list(out) if isinstance(out, tuple) else [out])


@user_callables("branches")
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped to the valid range."""
    if not branches:
        raise ControlFlowError("switch needs at least one branch")
    if not _is_traced(index):
        i = min(max(int(index), 0), len(branches) - 1)
        return branches[i](*operands)
    idx = F.asarray(index)

    def chain(k: int) -> Callable[..., Any]:
        if k == len(branches) - 1:
            return branches[k]
        return lambda *ops: cond(F.less_equal(idx, F.full_like(idx, k)), branches[k], chain(k + 1), *ops)

    return chain(0)(*operands)


@user_callables("cond_fun", "body_fun")
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any,
               max_iterations: int | None = None) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; return the final ``val``.

    ``max_iterations`` bounds the trip count: exceeding it is an error, and a bounded loop
    lets reverse-mode autodiff keep each iteration's state instead of recomputing it."""
    if active_trace() is None:
        val, count = init_val, 0
        while bool(cond_fun(val)):
            if max_iterations is not None and count == max_iterations:
                raise ControlFlowError(f"while_loop ran past max_iterations={max_iterations}")
            val, count = body_fun(val), count + 1
        return val
    state, tree = _leaves(init_val, "while_loop state")
    types = [t.type for t in state]
    n = len(state)

    def cond_flat(*xs: Tensor) -> Tensor:
        return predicate(cond_fun(unflatten(tree, list(xs))), "while_loop condition")

    def body_flat(*xs: Tensor) -> Any:
        return body_fun(unflatten(tree, list(xs)))

    cond_g, _, cond_caps = trace_function(cond_flat, types, "cond")
    body_g, body_tree, body_caps = trace_function(body_flat, types, "body")
    _check_same("while_loop: the body's result", types, body_g.output_types, tree, body_tree)
    cond_r = _with_inputs(cond_g, [*cond_g.inputs, *_fresh(body_caps)])
    body_in = [*body_g.inputs[:n], *_fresh(cond_caps), *body_g.inputs[n:]]
    body_r = _with_inputs(body_g, body_in, [*body_g.outputs, *body_in[n:]])
    out = apply("While", *state, *cond_caps, *body_caps, regions=(cond_r, body_r),
                max_iterations=max_iterations)
    outs = list(out) if isinstance(out, tuple) else [out]
    return unflatten(tree, outs[:n])


@user_callables("body_fun")
def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``."""
    if active_trace() is None:
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(F.asarray(i), val)
        return val
    lo = F.asarray(lower)
    hi = F.astype(F.asarray(upper), lo.dtype)

    def body(carry: tuple[Tensor, Any]) -> tuple[Tensor, Any]:
        i, val = carry
        return F.add(i, F.ones_like(i)), body_fun(i, val)

    trips = _static_trip_count(lower, upper)
    _, val = while_loop(lambda carry: F.less(carry[0], hi), body, (lo, init_val), trips)
    return val


def _static_trip_count(lower: Any, upper: Any) -> int | None:
    """``upper - lower`` when both are Python ints (the loop's exact trip count)."""
    if isinstance(lower, int) and isinstance(upper, int):
        return max(upper - lower, 0)
    return None


@user_callables("f")
def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; return the final
    carry and the ``y`` s stacked along a new leading axis (JAX's ``lax.scan``)."""
    x_leaves, x_tree = _leaves(xs, "scan xs")
    n = _scan_length(x_leaves, length)
    order = range(n - 1, -1, -1) if reverse else range(n)
    if active_trace() is None:
        carry, ys = init, []
        for i in order:
            carry, y = f(carry, unflatten(x_tree, [F.take(x, i, axis=0) for x in x_leaves]))
            ys.append(y)
        if reverse:
            ys.reverse()
        return carry, _stack_results(ys, n)
    return _traced_scan(f, init, x_leaves, x_tree, n, reverse)


def _scan_length(x_leaves: Sequence[Tensor], length: int | None) -> int:
    if any(x.ndim == 0 for x in x_leaves):
        raise ControlFlowError("scan: every leaf of xs needs a leading axis to scan over")
    lengths = {x.shape[0] for x in x_leaves}
    if length is not None:
        lengths.add(length)
    if len(lengths) != 1:
        raise ControlFlowError(f"scan: xs leaves and length disagree on the length: {sorted(lengths)}")
    return lengths.pop()


def _stack_results(ys: list[Any], n: int) -> Any:
    if n == 0:
        return None
    leaves_per_step = [flatten(y, lambda x: isinstance(x, Tensor)) for y in ys]
    tree = leaves_per_step[0][1]
    columns = zip(*[[F.asarray(leaf) for leaf in leaves] for leaves, _ in leaves_per_step])
    return unflatten(tree, [F.stack(list(col)) for col in columns])


def _traced_scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, x_leaves: list[Tensor],
                 x_tree: TreeDef, n: int, reverse: bool) -> tuple[Any, Any]:
    carry, carry_tree = _leaves(init, "scan carry")

    def x_at(i: Tensor) -> Any:
        return unflatten(x_tree, [F.take(x, i, axis=0) for x in x_leaves])

    def y_of_step(*args: Tensor) -> Any:
        return f(unflatten(carry_tree, list(args[:-1])), x_at(args[-1]))[1]

    # The types of y come from tracing one step on its own (the probe graph is discarded).
    index_type = TensorType(F.asarray(0).dtype, ())
    probe, y_tree, _ = trace_function(y_of_step, [*(c.type for c in carry), index_type], "scan_step")
    y_types = [t for t in probe.output_types if isinstance(t, TensorType)]  # every one
    buffers = [F.zeros((n, *t.shape), t.dtype) for t in y_types]
    step = -1 if reverse else 1

    def body(state: tuple[Tensor, Any, list[Tensor]]) -> tuple[Tensor, Any, list[Tensor]]:
        i, c, ys = state
        c2, y = f(c, x_at(i))
        y_leaves, _ = _leaves(y, "scan output")
        ys2 = [F.scatter_nd(buf, F.reshape(i, (1,)), yl) for buf, yl in zip(ys, y_leaves)]
        return F.add(i, step), c2, ys2

    start = F.asarray(n - 1 if reverse else 0)
    stop = -1 if reverse else n
    _, final, ys = while_loop(lambda s: F.not_equal(s[0], stop), body, (start, init, buffers), n)
    return final, unflatten(y_tree, list(ys))
