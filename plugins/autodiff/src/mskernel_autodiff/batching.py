"""``vmap``: the batching transform (MindSpore's and JAX's ``vmap``), with one batching rule
per op.

``vmap(fn, in_axes, out_axes)(*args)`` traces ``fn`` once on the *examples* — each mapped
argument without its mapped axis — into a graph, then *replays* that graph with every value
either unbatched (as traced) or batched (the batch in front, at axis 0): a node none of whose
inputs is batched is applied as it is; any other node goes through its op's ``"batch"`` rule,
which emits the ops computing all examples at once.  No Python loop runs over the batch, and
the replay applies its ops through :func:`~mskernel.frontend.dispatch.apply`, so:

- called eagerly, the replay is compiled with ``@jit``: one graph per signature, cached;
- under ``@jit`` (or inside another transform's trace), it lands in that trace — ``jit`` of
  ``vmap`` and ``vmap`` of a jitted function are one graph;
- under an autodiff tape (``grad`` of a function calling ``vmap``) it runs op by op and the
  tape records the batched ops; ``vmap`` of ``grad`` traces the gradient computation of one
  example and batches it — per-example gradients, as differential privacy needs them.

The trace captures every tensor ``fn`` reads from outside (closures, parameters, concrete
constants) as an unbatched input, so transforms that track those tensors see them used.

Rules (rule kind :data:`BATCH`, registered in ``mskernel_register_rules`` like ``"vjp"``)::

    rule(args, batched, **attrs) -> tuple[Tensor, ...]

``args`` are the op's tensor operands, ``batched`` says which carry the batch (at axis 0; at
least one does), the attributes arrive bound (ops with regions also get ``regions=``).  The
rule returns one tensor per output, each batched: of shape ``(batch, *example_shape)`` and the
op's output dtype, which is checked.  A rule computes with ``apply`` only.  An op that cannot
be batched declares why with ``rules.register("not_batchable", op, "reason")``
(:data:`NOT_BATCHABLE`); its error then says so.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence, Union

from mskernel import jit
from mskernel.ops import asarray
from mskernel_sdk import (
    Graph, MskernelError, Tensor, TensorType, Value, apply, do_not_convert, normalize_axes,
    op_registry, rule_registry, trace_function, tree_flatten, tree_unflatten, user_callables,
)

from .transform import as_outputs

BATCH = "batch"
NOT_BATCHABLE = "not_batchable"

Axes = Union[int, None, Sequence[Any], dict]
Flags = tuple[bool, ...]


class BatchingError(MskernelError, ValueError):
    """``vmap`` was called with axes or arguments that do not fit, or met an op it cannot
    batch."""


class MissingBatchRuleError(MskernelError, NotImplementedError):
    """An op with a batched input has no ``"batch"`` rule."""


# -- the transform ----------------------------------------------------------------------------


@user_callables("fn")
def vmap(fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0, *,
         axis_size: Optional[int] = None) -> Callable[..., Any]:
    """The function that maps ``fn`` over an axis of its arguments.

    ``in_axes``: for every positional argument, the axis holding the batch (``None``: not
    mapped, the same value for every example) — one int or ``None`` for all arguments, or a
    tuple/list with one entry per argument, each an int, ``None`` or a nested
    tuple/list/dict matching that argument's structure.  Keyword arguments are not mapped.
    ``out_axes``: where the batch goes in each output, likewise (``None``: the output must be
    the same for every example and is returned once).  Negative axes count from the end.
    ``axis_size`` gives the batch size when no argument is mapped (and must agree otherwise).
    """
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise BatchingError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")

    @do_not_convert
    def mapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(fn, in_axes, out_axes, axis_size, args, kwargs)

    compiled = jit(mapped)

    @functools.wraps(fn)
    def batched(*args: Any, **kwargs: Any) -> Any:
        return compiled(*args, **kwargs)

    return batched


def _vmap_call(fn: Callable[..., Any], in_axes: Axes, out_axes: Axes, axis_size: Optional[int],
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    leaves, tree = tree_flatten(args, _is_tensor)
    axes = _leaf_axes(in_axes, args, "in_axes", top=True)
    size = _batch_size(leaves, axes, axis_size)
    inputs: list[Tensor] = []  # the mapped leaves, batch in front
    for leaf, axis in zip(leaves, axes):
        if axis is not None:
            inputs.append(move_axis(asarray(leaf), axis, 0))

    def example(*xs: Tensor) -> Any:
        it = iter(xs)
        call_leaves = [next(it) if axis is not None else leaf for leaf, axis in zip(leaves, axes)]
        return fn(*tree_unflatten(tree, call_leaves), **kwargs)

    types = [TensorType(x.dtype, x.shape[1:]) for x in inputs]
    graph, out_tree, captured = trace_function(example, types, "vmap", capture_concrete=True)
    outs = replay(graph, [*inputs, *captured], [True] * len(inputs) + [False] * len(captured))
    result = tree_unflatten(out_tree, [t for t, _ in outs])
    out_axes_flat = _leaf_axes(out_axes, result, "out_axes", top=False)
    placed = []
    for k, ((t, is_batched), axis) in enumerate(zip(outs, out_axes_flat)):
        if axis is None:
            if is_batched:
                raise BatchingError(f"vmap: output {k} varies over the batch, but its out_axes "
                                    "entry is None")
            placed.append(t)
        else:
            placed.append(move_axis(t if is_batched else with_batch(t, size), 0, axis))
    return tree_unflatten(out_tree, placed)


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


# -- axes -------------------------------------------------------------------------------------


def _check_spec(spec: Any, what: str) -> None:
    leaves, _ = tree_flatten(spec, lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and (not isinstance(leaf, int) or isinstance(leaf, bool)):
            raise BatchingError(f"vmap: {what} entries must be ints or None, got {leaf!r}")


def _leaf_axes(spec: Axes, value: Any, what: str, *, top: bool) -> list[Optional[int]]:
    """One axis (or ``None``) per tensor leaf of ``value`` (in :func:`flatten`'s order), from
    ``spec``, a prefix of ``value``'s structure: an int or ``None`` covers a whole subtree."""
    out: list[Optional[int]] = []

    def walk(spec: Any, node: Any, path: str) -> None:
        if spec is None or isinstance(spec, int):
            out.extend([spec] * len(tree_flatten(node, _is_tensor)[0]))
            return
        if isinstance(spec, dict):
            if not isinstance(node, dict) or set(node) != set(spec):
                raise BatchingError(f"vmap: {what}{path} is a dict with keys "
                                    f"{sorted(spec, key=repr)}, which the value there does not "
                                    f"match ({_describe(node)})")
            for key in sorted(node, key=repr):
                walk(spec[key], node[key], f"{path}[{key!r}]")
            return
        if not isinstance(node, (tuple, list)) or len(node) != len(spec):
            where = (f"the function got {len(node)} positional argument(s)" if top and not path
                     else f"the value there is {_describe(node)}")
            raise BatchingError(f"vmap: {what}{path} has {len(spec)} entries, but {where}")
        for i, (s, n) in enumerate(zip(spec, node)):
            walk(s, n, f"{path}[{i}]")

    walk(spec, value, "")
    return out


def _describe(node: Any) -> str:
    if isinstance(node, (tuple, list)):
        return f"a {type(node).__name__} of {len(node)}"
    return f"a {type(node).__name__}"


def _batch_size(leaves: Sequence[Any], axes: Sequence[Optional[int]],
                axis_size: Optional[int]) -> int:
    sizes: dict[int, str] = {}
    for k, (leaf, axis) in enumerate(zip(leaves, axes)):
        if axis is None:
            continue
        shape = asarray(leaf).shape
        if not -len(shape) <= axis < len(shape):
            raise BatchingError(f"vmap: in_axes maps axis {axis} of argument leaf {k}, which has "
                                f"shape {list(shape)}")
        sizes.setdefault(shape[axis], f"leaf {k} (shape {list(shape)}, axis {axis})")
    if axis_size is not None:
        sizes.setdefault(axis_size, f"axis_size={axis_size}")
    if not sizes:
        raise BatchingError("vmap: no argument is mapped (every in_axes entry is None); pass "
                            "axis_size= to say how many examples there are")
    if len(sizes) > 1:
        raise BatchingError("vmap: the mapped axes have different sizes: "
                            + "; ".join(f"{n} for {where}" for n, where in sizes.items()))
    return next(iter(sizes))


# -- replaying a graph with the batch ---------------------------------------------------------


Batched = tuple[Tensor, bool]


def replay(graph: Graph, inputs: Sequence[Tensor], batched: Sequence[bool]) -> list[Batched]:
    """Apply ``graph``'s nodes to ``inputs``, those flagged ``batched`` carrying the batch at
    axis 0; return each output with whether it is batched."""
    env: dict[Value, Batched] = {v: (t, b) for v, t, b in zip(graph.inputs, inputs, batched)}
    for node in graph.nodes:
        args = [env[v] for v in node.inputs]
        flags = tuple(b for _, b in args)
        tensors = tuple(t for t, _ in args)
        if any(flags):
            outs = batch_apply(node.op, tensors, flags, node.attrs, node.regions)
        else:
            outs = as_outputs(apply(node.op, *tensors, regions=node.regions, **node.attrs))
        env.update((v, (t, any(flags))) for v, t in zip(node.outputs, outs))
    return [env[v] for v in graph.outputs]


def batch_apply(op: str, args: Sequence[Tensor], batched: Sequence[bool],
                attrs: dict[str, Any], regions: Sequence[Graph] = ()) -> tuple[Tensor, ...]:
    """Apply ``op`` to ``args`` of which those flagged ``batched`` carry the batch, through
    the op's ``"batch"`` rule; every output comes back batched (checked)."""
    rule = rule_registry().get(BATCH, op)
    if rule is None:
        raise _missing(op)
    opdef = op_registry().get(op)
    bound = opdef.bind_attrs(attrs)
    extra = {"regions": tuple(regions)} if opdef.num_regions else {}
    size = size_of(args, batched)
    expected = example_types(op, args, batched, bound, regions)
    if size == 0:  # no example: nothing to compute
        return tuple(apply("full", shape=(0, *t.shape), value=0.0, dtype=t.dtype)
                     for t in expected)  # type: ignore[misc]
    outs = tuple(rule(tuple(args), tuple(batched), **bound, **extra))
    if len(outs) != len(expected):
        raise BatchRuleResultError(f"the 'batch' rule of op '{op}' returned {len(outs)} "
                                   f"output(s), expected {len(expected)}")
    for i, (out, want) in enumerate(zip(outs, expected)):
        shape = (size, *want.shape)
        if not isinstance(out, Tensor) or out.dtype is not want.dtype or out.shape != shape:
            got = str(out.type) if isinstance(out, Tensor) else type(out).__name__
            raise BatchRuleResultError(
                f"the 'batch' rule of op '{op}' returned {got} for output {i}, which must be "
                f"{TensorType(want.dtype, shape)}: the op's output for one example with the "
                "batch in front")
    return outs


class BatchRuleResultError(MskernelError, TypeError):
    """A batching rule returned the wrong number, shapes or dtypes of outputs."""


def _missing(op: str) -> Exception:
    reason = rule_registry().get(NOT_BATCHABLE, op)
    if reason is not None:
        return BatchingError(f"vmap cannot batch op '{op}': {reason}")
    owner = op_registry().get(op).owner
    source = ("a core op, whose rules come with mskernel-autodiff: upgrade mskernel-autodiff, "
              "or register one" if owner == "mskernel" else
              f"defined by {owner}: that plugin (or another) must register one")
    return MissingBatchRuleError(
        f"op '{op}' has no '{BATCH}' rule, so vmap cannot pass a batch through it. '{op}' is "
        f"{source} with rules.register('{BATCH}', '{op}', rule) in its mskernel_register_rules "
        f"hook, or rules.register('{NOT_BATCHABLE}', '{op}', 'why') if it cannot be batched")


def size_of(args: Sequence[Tensor], batched: Sequence[bool]) -> int:
    """The batch size: axis 0 of the batched operands."""
    return next(t.shape[0] for t, b in zip(args, batched) if b)


def with_batch(t: Tensor, size: int) -> Tensor:
    """The unbatched ``t`` repeated for each of ``size`` examples (batch in front)."""
    return apply("broadcast_to", t, shape=(size, *t.shape))  # type: ignore[return-value]


def move_axis(t: Tensor, source: int, destination: int) -> Tensor:
    """``t`` with axis ``source`` moved to position ``destination`` (negatives count from the
    end), the other axes in order."""
    source, destination = (normalize_axes((a,), t.ndim)[0] for a in (source, destination))
    if source == destination:
        return t
    order = [a for a in range(t.ndim) if a != source]
    order.insert(destination, source)
    return apply("transpose", t, perm=tuple(order))  # type: ignore[return-value]


def example_types(op: str, args: Sequence[Tensor], batched: Sequence[bool],
                  attrs: dict[str, Any], regions: Sequence[Graph] = ()) -> tuple[TensorType, ...]:
    """The types of ``op``'s outputs for one example (what the op infers from the examples'
    types): what a rule's results must be, with the batch in front."""
    types = [TensorType(t.dtype, t.shape[1:]) if b else t.type for t, b in zip(args, batched)]
    opdef = op_registry().get(op)
    return opdef.infer_types(types, opdef.bind_attrs(attrs), regions=regions)


def batched_outputs(graph: Graph, batched: Sequence[bool]) -> list[bool]:
    """Which outputs of ``graph`` a replay with ``batched`` inputs may batch: those depending
    on a batched input (a superset of what :func:`replay` batches)."""
    flags = dict(zip(graph.inputs, batched))
    for node in graph.nodes:
        flag = any(flags[v] for v in node.inputs)
        flags.update((v, flag) for v in node.outputs)
    return [flags[v] for v in graph.outputs]


def replay_as(graph: Graph, inputs: Sequence[Tensor], batched: Sequence[bool],
              wanted: Sequence[bool], size: int) -> list[Tensor]:
    """:func:`replay`, with the outputs flagged in ``wanted`` (a superset of the batched
    ones, see :func:`batched_outputs`) broadcast to the batch ``size``."""
    outs = replay(graph, inputs, batched)
    return [with_batch(t, size) if want and not b else t for (t, b), want in zip(outs, wanted)]
