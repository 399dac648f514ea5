"""The user API of mskernel-autodiff, exposed as ``mskernel.<name>`` and ``mskernel.autodiff``.

``grad`` and ``value_and_grad`` follow MindSpore 2.x's contract — ``(fn, grad_position=0,
weights=None, has_aux=False, return_ids=False)``, positionally or by keyword, with JAX's
``argnums=`` as an alias of ``grad_position`` — together with ``get_grad`` and
``GradOperation``.  ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``stop_gradient``,
``custom_vjp`` and ``custom_jvp`` keep JAX's signatures.  ``weights=`` takes tensors the
function *uses*, such as layer parameters, tracked by identity.

Every transformation works eagerly — Python control flow on concrete values just works, only
the ops that ran are differentiated — and inside ``@jit`` or a control-flow function, where
the derivative is computed on the traced program (``cond``/``while_loop`` become ``If``/
``While`` nodes with region rules) and the backward ops land in the same graph as the
forward ones.  Transformations compose: ``grad(grad(f))``, ``jvp`` of ``grad`` (Hessian-vector
products), ``jacfwd(jacrev(f))``.  Gradients are new tensors; nothing is updated in place.

Arguments may be tensors, Python numbers (made float32 tensors) or nested tuples/lists/dicts
of them; gradients come back in the same structure.

Under ``@jit`` the functions handed to these transformations are converted like the jitted
function itself (Python ``if``/``for``/``while`` on tensors become ``If``/``While`` nodes),
whether the transformation is applied outside (``jit(grad(f))``) or inside the jitted
function: each transformation declares its function parameters with
:func:`mskernel_sdk.user_callables`.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable, NamedTuple, Sequence, Union

import numpy as np
from mskernel.ops import asarray
from mskernel_sdk import (
    MskernelError, Tensor, TreeDef, active_trace, apply, tree_flatten, tree_unflatten,
    user_callables,
)

from .batching import vmap
from .custom import custom_jvp, custom_vjp
from .forward import ForwardMode
from .lookup import MissingRuleError
from .ops import DEPEND, STOP_GRADIENT
from .rules._ops import constant, ones_like, reshape, stack, zeros
from .tape import Tape
from .transform import active_transforms, alias, differentiable

__all__ = [
    "GradOperation", "GradientError", "MissingRuleError", "custom_jvp", "custom_vjp", "depend",
    "get_grad", "grad", "hessian", "jacfwd", "jacrev", "jvp", "stop_gradient", "value_and_grad",
    "vjp", "vmap",
]

ArgNums = Union[int, Sequence[int], None]
_UNSET: Any = object()  # argnums= not given


class GradientError(MskernelError, TypeError):
    """A transformation was asked for a derivative it cannot give (non-scalar or integer
    output, integer input, mismatched cotangent or tangent)."""


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


# -- arguments --------------------------------------------------------------------------------


class _Target:
    """One differentiated positional argument: its leaves (aliases of the caller's tensors,
    or the caller's non-differentiable leaves) and its structure."""

    def __init__(self, leaves: list[Tensor], tree: TreeDef) -> None:
        self.leaves = leaves
        self.tree = tree

    def rebuild(self, values: Sequence[Any]) -> Any:
        return tree_unflatten(self.tree, list(values))


def _positions(argnums: ArgNums, count: int, who: str) -> tuple[int, ...]:
    nums = () if argnums is None else (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -count <= i < count:
            raise GradientError(f"{who}: argnums {argnums!r} does not name a positional argument "
                                f"(the function got {count})")
    positions = tuple(i % count for i in nums)
    if len(set(positions)) != len(positions):
        raise GradientError(f"{who}: argnums {argnums!r} names an argument twice")
    return positions


def _leaf_tensor(leaf: Any, who: str, where: str) -> Tensor:
    if isinstance(leaf, Tensor):
        return leaf
    try:
        return asarray(leaf)
    except (TypeError, ValueError):
        raise GradientError(f"{who}: {where} is a {type(leaf).__name__}, not a tensor or a "
                            "number") from None


def _targets(args: Sequence[Any], positions: Sequence[int], who: str,
             integers: bool) -> tuple[list[Any], list[_Target]]:
    """The arguments with the leaves of ``positions`` replaced by fresh aliases, and one
    :class:`_Target` per position.  Integer leaves raise unless ``integers`` allows them
    (they are then passed unchanged and get no derivative)."""
    new_args, targets = list(args), []
    for i in positions:
        raw, tree = tree_flatten(args[i], _is_tensor)
        leaves = []
        for leaf in raw:
            x = _leaf_tensor(leaf, who, f"argument {i}")
            if differentiable(x):
                x = alias(x)
            elif not integers:
                raise GradientError(
                    f"{who}: argument {i} is a {x.type} tensor; gradients are taken only with "
                    "respect to floating-point or complex tensors — cast it (x.astype("
                    "mskernel.float32)) or leave it out of argnums")
            leaves.append(x)
        new_args[i] = tree_unflatten(tree, leaves)
        targets.append(_Target(leaves, tree))
    return new_args, targets


def _split_aux(result: Any, has_aux: bool, who: str, *, aux_tuple: bool) -> tuple[Any, Any]:
    """``(output, aux)`` of a function's ``result``: with ``has_aux`` the function returns
    several outputs, the first of which is differentiated.  The others are the aux: always a
    tuple with ``aux_tuple`` (MindSpore's ``grad``), else the second output alone when there
    are two (JAX's pair, MindSpore's ``vjp``/``jvp``)."""
    if not has_aux:
        return result, None
    if not isinstance(result, (tuple, list)) or len(result) < 2:
        got = (f"{len(result)} output(s)" if isinstance(result, (tuple, list))
               else f"a {type(result).__name__}")
        raise GradientError(f"{who}: with has_aux=True the function must return more than one "
                            f"output (the first is differentiated, the others are returned as "
                            f"the aux), got {got}")
    rest = tuple(result[1:])
    return result[0], rest if aux_tuple or len(rest) > 1 else rest[0]


def _output_leaves(out: Any, who: str) -> tuple[list[Tensor], TreeDef]:
    leaves, tree = tree_flatten(out, _is_tensor)
    if not leaves or not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise GradientError(f"{who}: the function must return a tensor or a tuple/list/dict of "
                            f"tensors, got {type(out).__name__}")
    return leaves, tree


def _conform(value: Any, like: Tensor, what: str) -> Tensor:
    """``value`` as a tensor of ``like``'s type (numbers and arrays are converted; a tensor
    must already have the type)."""
    t = value if isinstance(value, Tensor) else asarray(value, like.dtype)
    if t.type != like.type:
        raise GradientError(f"{what} has type {t.type}, but it must have its primal's type "
                            f"{like.type}")
    return t


def _leaves_like(value: Any, leaves: Sequence[Tensor], tree: TreeDef, what: str) -> list[Tensor]:
    got, got_tree = tree_flatten(value, _is_tensor)
    if got_tree != tree:
        raise GradientError(f"{what} has structure {got_tree}, but it must match {tree}")
    return [_conform(v, x, f"{what} leaf {k}") for k, (v, x) in enumerate(zip(got, leaves))]


# -- reverse mode -----------------------------------------------------------------------------


def _weight_leaves(weights: Any, who: str) -> tuple[list[Tensor], TreeDef]:
    leaves, tree = tree_flatten(weights, _is_tensor)
    for k, w in enumerate(leaves):
        if not differentiable(w):
            kind = w.type if isinstance(w, Tensor) else type(w).__name__
            raise GradientError(f"{who}: weights entry {k} is a {kind}; weights must be "
                                "floating-point or complex tensors")
    return leaves, tree


def _seeds(out: Any, who: str) -> list[tuple[Tensor, Tensor]]:
    """A cotangent of ones for every real floating-point output: the gradient of the sum of
    all their elements (MindSpore's default sensitivity).  Integer and bool outputs carry no
    derivative and are skipped."""
    leaves, _ = _output_leaves(out, who)
    real = [o for o in leaves if o.dtype.is_floating]
    complex_ = [o for o in leaves if o.dtype.is_complex]
    if complex_ or not real:
        kind = complex_[0].type if complex_ else ", ".join(str(o.type) for o in leaves)
        raise GradientError(
            f"{who}: the function's outputs are differentiated as the sum of their elements, "
            f"which needs real floating-point outputs, got {kind}; use vjp for other outputs, "
            "or sens_param=True to pass the output's cotangent")
    return [(o, ones_like(o)) for o in real]


def _reverse(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
             positions: ArgNums, weights: Any, options: _Options,
             who: str) -> tuple[Any, Any, Any]:
    """Run ``fn`` on a tape and differentiate it: (fn's result, aux, gradients)."""
    if positions is None and weights is None:
        raise GradientError(f"{who}: grad_position=None needs weights= (there is nothing to "
                            "differentiate with respect to)")
    sens: Any = None
    if options.sens_param:
        if "sens" in kwargs:
            kwargs = dict(kwargs)
            sens = kwargs.pop("sens")
        elif args:
            args, sens = args[:-1], args[-1]
        else:
            raise GradientError(f"{who}: sens_param=True takes the output's cotangent as the "
                                "last positional argument or as sens=")
    indices = _positions(positions, len(args), who)
    new_args, targets = _targets(args, indices, who, integers=False)
    weight_leaves, weight_tree = _weight_leaves(weights, who)
    tape = Tape()
    with tape.active():
        for target in targets:
            for x in target.leaves:
                tape.watch(x)
        for w in weight_leaves:
            tape.watch(w)
        result = fn(*new_args, **kwargs)
    out, aux = _split_aux(result, options.has_aux, who, aux_tuple=True)
    if options.sens_param:
        leaves, tree = _output_leaves(out, who)
        seeds = list(zip(leaves, _leaves_like(sens, leaves, tree, f"{who}: sens")))
    else:
        seeds = _seeds(out, who)
    grads = tape.backward(seeds)
    by_arg = [t.rebuild([grads.dense(x) for x in t.leaves]) for t in targets]
    by_weight = [grads.dense(w) for w in weight_leaves]
    if options.return_ids:
        by_arg = [(i, g) for i, g in zip(indices, by_arg)]
        by_weight = [(_weight_id(w, k), g) for k, (w, g) in enumerate(zip(weight_leaves,
                                                                          by_weight))]
    return result, aux, _assemble(positions, by_arg, weights, weight_tree, by_weight)


def _weight_id(w: Tensor, k: int) -> Any:
    """What ``return_ids`` pairs a weight's gradient with: its name (a Parameter's), else its
    index among the weights."""
    name = getattr(w, "name", None)
    return name if name is not None else k


def _assemble(positions: ArgNums, by_arg: list[Any], weights: Any, weight_tree: TreeDef,
              by_weight: list[Any]) -> Any:
    """MindSpore's layout: the argument part is one gradient for an int ``grad_position``,
    else a tuple; the weight part has the structure of ``weights`` (a list, ParameterTuple or
    tuple of weights gives a tuple); with both, the pair ``(arguments, weights)``."""
    arg_part = by_arg[0] if isinstance(positions, int) else tuple(by_arg)
    if weights is None:
        return arg_part
    weight_part = tree_unflatten(weight_tree, by_weight)
    if isinstance(weight_part, list):
        weight_part = tuple(weight_part)
    return weight_part if positions is None else (arg_part, weight_part)


class _Options(NamedTuple):
    has_aux: bool
    return_ids: bool
    sens_param: bool


def _options(who: str, has_aux: Any, return_ids: Any, sens_param: Any) -> _Options:
    for name, value in (("has_aux", has_aux), ("return_ids", return_ids),
                        ("sens_param", sens_param)):
        if not isinstance(value, bool):
            raise GradientError(f"{who}: {name} must be a bool, got {type(value).__name__}")
    return _Options(has_aux, return_ids, sens_param)


def _grad_positions(who: str, grad_position: Any, argnums: Any) -> ArgNums:
    """``grad_position``, or JAX's spelling ``argnums=`` when that is given instead."""
    if argnums is _UNSET:
        return grad_position  # type: ignore[no-any-return]
    if grad_position != 0:
        raise GradientError(f"{who}: argnums= is another name for grad_position; pass only one "
                            "of them")
    return argnums  # type: ignore[no-any-return]


@user_callables("fn")
def value_and_grad(fn: Callable[..., Any], grad_position: ArgNums = 0, weights: Any = None,
                   has_aux: bool = False, return_ids: bool = False, sens_param: bool = False,
                   *, argnums: ArgNums = _UNSET) -> Callable[..., Any]:
    """MindSpore's ``value_and_grad``: a function returning ``(fn(*args), gradient)``.

    - ``grad_position`` (an int, a tuple of ints, or ``None``; JAX's ``argnums=`` is an alias)
      picks the positional arguments to differentiate: the gradient has the structure of that
      argument, or is a tuple for a tuple of positions.
    - ``weights`` (a tensor such as a Parameter, or a list/tuple/ParameterTuple/dict of
      tensors ``fn`` uses) adds their gradients — a tuple for a list or tuple of weights: the
      result is ``(argument gradients, weight gradients)``, or only the weight gradients with
      ``grad_position=None``.
    - ``fn`` may return several outputs.  Without ``has_aux`` all are differentiated, as the
      sum of all their elements (the sensitivity is ``ones_like`` each output).  With
      ``has_aux=True`` only the first is; the value is still everything ``fn`` returned.
    - ``return_ids=True`` replaces each gradient by ``(id, gradient)``: the argument's position,
      or the weight's Parameter name (see :func:`get_grad`).
    - ``sens_param=True``: the caller passes the outputs' cotangent (same structure and types
      as the outputs) as the last positional argument or as ``sens=``.

    Integer arguments cannot be differentiated (a ``GradientError`` says so).
    """
    positions = _grad_positions("value_and_grad", grad_position, argnums)
    options = _options("value_and_grad", has_aux, return_ids, sens_param)

    def value_and_gradient(*args: Any, **kwargs: Any) -> Any:
        result, _, grads = _reverse(fn, args, kwargs, positions, weights, options,
                                    "value_and_grad")
        return result, grads

    return value_and_gradient


@user_callables("fn")
def grad(fn: Callable[..., Any], grad_position: ArgNums = 0, weights: Any = None,
         has_aux: bool = False, return_ids: bool = False, sens_param: bool = False,
         *, argnums: ArgNums = _UNSET) -> Callable[..., Any]:
    """MindSpore's ``grad``: a function returning the gradient of ``fn`` — ``(gradient,
    aux)`` with ``has_aux``, where ``aux`` is the tuple of ``fn``'s outputs after the first.
    The options are those of :func:`value_and_grad`.

    >>> grad(lambda x: mskernel.ops.sum(x * x))(mskernel.Tensor([1.0, 2.0]))
    Tensor([2., 4.], dtype=float32)
    """
    positions = _grad_positions("grad", grad_position, argnums)
    options = _options("grad", has_aux, return_ids, sens_param)

    def gradient(*args: Any, **kwargs: Any) -> Any:
        _, aux, grads = _reverse(fn, args, kwargs, positions, weights, options, "grad")
        return (grads, aux) if has_aux else grads

    return gradient


def get_grad(gradients: Any, identifier: Any) -> Any:
    """The gradient that ``grad(..., return_ids=True)`` (or the second result of
    ``value_and_grad``) paired with ``identifier``: an argument's position, or a Parameter
    (found by its name)."""
    key = getattr(identifier, "name", None) if isinstance(identifier, Tensor) else identifier
    if not isinstance(key, (int, str)) or isinstance(key, bool):
        raise GradientError(f"get_grad: the identifier must be a position or a named Parameter, "
                            f"got {type(identifier).__name__}")
    pending = [gradients]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (tuple, Tensor)):
            if item[0] == key and type(item[0]) is type(key):
                return item[1]
        elif isinstance(item, (tuple, list)):
            pending.extend(reversed(item))
        elif isinstance(item, dict):
            pending.extend(reversed(list(item.values())))
    raise GradientError(f"get_grad: no gradient paired with {key!r}; pass the result of grad "
                        "or value_and_grad with return_ids=True")


@user_callables("fn")
def vjp(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(fn(*primals), vjp_fn)`` — plus ``aux`` with ``has_aux``.  ``vjp_fn(cotangent)``
    takes a cotangent shaped like the output and returns a tuple with one cotangent per
    primal, shaped like it (``None`` for integer leaves); it may be called several times."""
    new_args, targets = _targets(primals, range(len(primals)), "vjp", integers=True)
    tape = Tape()
    with tape.active():
        for target in targets:
            for x in target.leaves:
                if differentiable(x):
                    tape.watch(x)
        result = fn(*new_args)
    out, aux = _split_aux(result, has_aux, "vjp", aux_tuple=False)
    out_leaves, out_tree = _output_leaves(out, "vjp")

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        cts = _leaves_like(cotangent, out_leaves, out_tree, "vjp_fn: the cotangent")
        grads = tape.backward(zip(out_leaves, cts))
        return tuple(t.rebuild([grads.dense(x) if differentiable(x) else None for x in t.leaves])
                     for t in targets)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# -- forward mode -----------------------------------------------------------------------------


def _forward(fn: Callable[..., Any], new_args: Sequence[Any], kwargs: dict[str, Any],
             seeds: Sequence[tuple[Tensor, Tensor]]) -> tuple[Any, ForwardMode]:
    forward = ForwardMode()
    with forward.active():
        for x, tangent in seeds:
            forward.seed(x, tangent)
        result = fn(*new_args, **kwargs)
    return result, forward


@user_callables("fn")
def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(fn(*primals), tangent_out)`` — plus ``aux`` with ``has_aux``: the directional
    derivative of ``fn`` at ``primals`` along ``tangents`` (a sequence shaped like
    ``primals``; tangents of integer leaves are ignored)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)) \
            or len(primals) != len(tangents):
        raise GradientError("jvp: primals and tangents must be tuples or lists of the same length")
    new_args, targets = _targets(primals, range(len(primals)), "jvp", integers=True)
    seeds = []
    for i, (target, tangent) in enumerate(zip(targets, tangents)):
        values = _leaves_like(tangent, target.leaves, target.tree, f"jvp: tangent {i}")
        seeds += [(x, t) for x, t in zip(target.leaves, values) if differentiable(x)]
    result, forward = _forward(fn, new_args, {}, seeds)
    out, aux = _split_aux(result, has_aux, "jvp", aux_tuple=False)
    out_leaves, out_tree = _output_leaves(out, "jvp")
    tangent_out = tree_unflatten(out_tree, [forward.dense(o) for o in out_leaves])
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


# -- Jacobians --------------------------------------------------------------------------------


def _basis(t: Tensor) -> list[Tensor]:
    """The one-hot tensors of ``t``'s type, one per element."""
    eye = np.eye(t.size, dtype=t.dtype.storage)
    return [constant(row.reshape(t.shape), t.dtype) for row in eye]


def _jacobian_block(rows: list[Tensor], out: Tensor, x: Tensor, rows_index_out: bool) -> Tensor:
    """Stack derivatives into the ``out.shape + x.shape`` block: ``rows`` are gradients of
    one output element each (reverse mode) or tangents along one input element each."""
    shape = (*out.shape, *x.shape)
    if not rows:  # a size-0 block, of the dtype its rows would have had
        return zeros(shape, x.dtype if rows_index_out else out.dtype)
    axis = 0 if rows_index_out else out.ndim
    return reshape(stack(*rows, axis=axis), shape=shape)


def _by_output(argnums: ArgNums, out_tree: TreeDef, blocks: list[list[Any]]) -> Any:
    """``blocks[k][a]`` (output leaf k, differentiated argument a) in the output's structure,
    each holding the argument's structure (a tuple of them for a tuple of argnums)."""
    per_output = [b[0] if isinstance(argnums, int) else tuple(b) for b in blocks]
    return tree_unflatten(out_tree, per_output)


@user_callables("fn")
def jacrev(fn: Callable[..., Any], argnums: ArgNums = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` by reverse mode (one backward pass per output element): for an
    output of shape ``O`` and an argument of shape ``I``, a block of shape ``O + I``."""

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        positions = _positions(argnums, len(args), "jacrev")
        new_args, targets = _targets(args, positions, "jacrev", integers=False)
        tape = Tape()
        with tape.active():
            for target in targets:
                for x in target.leaves:
                    tape.watch(x)
            result = fn(*new_args, **kwargs)
        out, aux = _split_aux(result, has_aux, "jacrev", aux_tuple=False)
        out_leaves, out_tree = _output_leaves(out, "jacrev")
        blocks = []
        for o in out_leaves:
            passes = [tape.backward([(o, e)]) for e in _basis(o)]
            blocks.append([t.rebuild([_jacobian_block([g.dense(x) for g in passes], o, x, True)
                                      for x in t.leaves]) for t in targets])
        jac = _by_output(argnums, out_tree, blocks)
        return (jac, aux) if has_aux else jac

    return jacobian


@user_callables("fn")
def jacfwd(fn: Callable[..., Any], argnums: ArgNums = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` by forward mode (one forward pass per input element); same
    layout as :func:`jacrev`."""

    def jacobian(*args: Any, **kwargs: Any) -> Any:
        positions = _positions(argnums, len(args), "jacfwd")
        new_args, targets = _targets(args, positions, "jacfwd", integers=False)
        inputs = [x for t in targets for x in t.leaves]
        columns: list[list[list[Tensor]]] = [[] for _ in inputs]  # input → pass → outputs
        result = None
        for k, x in enumerate(inputs):
            for e in _basis(x):
                result, forward = _forward(fn, new_args, kwargs, [(x, e)])
                out, _ = _split_aux(result, has_aux, "jacfwd", aux_tuple=False)
                columns[k].append([forward.dense(o) for o in _output_leaves(out, "jacfwd")[0]])
        if result is None:  # no input element: the outputs still give the blocks' shapes
            result = fn(*new_args, **kwargs)
        out, aux = _split_aux(result, has_aux, "jacfwd", aux_tuple=False)
        out_leaves, out_tree = _output_leaves(out, "jacfwd")
        blocks = []
        for j, o in enumerate(out_leaves):
            flat = [_jacobian_block([c[j] for c in columns[k]], o, x, False)
                    for k, x in enumerate(inputs)]
            blocks.append(_split_by_target(flat, targets))
        jac = _by_output(argnums, out_tree, blocks)
        return (jac, aux) if has_aux else jac

    return jacobian


def _split_by_target(flat: list[Tensor], targets: list[_Target]) -> list[Any]:
    out, start = [], 0
    for t in targets:
        out.append(t.rebuild(flat[start:start + len(t.leaves)]))
        start += len(t.leaves)
    return out


@user_callables("fn")
def hessian(fn: Callable[..., Any], argnums: ArgNums = 0,
            has_aux: bool = False) -> Callable[..., Any]:
    """The Hessian of a scalar ``fn``: ``jacfwd(jacrev(fn))`` (forward over reverse), of
    shape ``I + I`` for an argument of shape ``I``."""
    return jacfwd(jacrev(fn, argnums, has_aux), argnums, has_aux)


# -- stopping and MindSpore's GradOperation ---------------------------------------------------


def stop_gradient(x: Any) -> Any:
    """``x`` (a tensor or a tuple/list/dict of them), through which no derivative flows:
    every active transformation treats the result as a constant."""
    leaves, tree = tree_flatten(x, _is_tensor)
    return tree_unflatten(tree, [_stopped(asarray(leaf)) for leaf in leaves])


def _stopped(t: Tensor) -> Tensor:
    if active_trace() is not None:  # the graph keeps the stop for later region rules
        return apply(STOP_GRADIENT, t)  # type: ignore[return-value]
    transforms = active_transforms()
    if not any(transform.tracks(t) for transform in transforms):
        return t
    with ExitStack() as stack:  # a copy none of the active transforms records
        for transform in transforms:
            stack.enter_context(transform.paused())
        return alias(t)


def depend(value: Any, expr: Any) -> Any:
    """MindSpore's ``ops.depend``: ``value``, to be used only after ``expr`` (a tensor or a
    tuple/list/dict of them) has been computed.

    Under ``@jit`` each tensor of ``value`` passes through an ``autodiff.depend`` node, an
    effect ordered by the trace's state token (:mod:`mskernel_autodiff.ops`), so ``expr`` is
    computed even when nothing else reads it, after the effects recorded before (parameter
    updates) and before those recorded after.  Derivatives flow to ``value`` only.  Eagerly,
    ``expr`` has already been computed: ``value`` is returned as it is.
    """
    exprs = [leaf for leaf in tree_flatten(expr, _is_tensor)[0] if isinstance(leaf, Tensor)]
    if active_trace() is None or not exprs:
        return value
    leaves, tree = tree_flatten(value, _is_tensor)
    ordered = []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            for e in exprs:
                leaf = apply(DEPEND, leaf, e)
            exprs = [leaf]  # the next tensors of value follow this one
        ordered.append(leaf)
    return tree_unflatten(tree, ordered)


class GradOperation:
    """MindSpore's ``GradOperation``: ``GradOperation(get_all, get_by_list, sens_param)(fn,
    weights)`` is the gradient function of ``fn``.

    - ``get_all=False``: the gradient of the first input; ``True``: a tuple, one per input;
    - ``get_by_list=True``: the gradients of ``weights`` (also with ``get_all``: a pair
      ``(input gradients, weight gradients)``);
    - ``sens_param=True``: the outputs' cotangent is passed as the last positional argument
      or as ``sens=``; otherwise the outputs are differentiated as the sum of their elements.
    """

    def __init__(self, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False) -> None:
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list),
                            ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise GradientError(f"GradOperation: {name} must be a bool, got "
                                    f"{type(value).__name__}")
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    @user_callables("fn")
    def __call__(self, fn: Callable[..., Any], weights: Any = None) -> Callable[..., Any]:
        if self.get_by_list and weights is None:
            raise GradientError("GradOperation(get_by_list=True) needs the weights: "
                                "grad_op(fn, weights)")

        def gradient(*args: Any, **kwargs: Any) -> Any:
            count = len(args) - (1 if self.sens_param and "sens" not in kwargs else 0)
            positions: ArgNums = tuple(range(count)) if self.get_all else 0
            if self.get_by_list and not self.get_all:
                positions = None
            return grad(fn, positions, weights if self.get_by_list else None,
                        sens_param=self.sens_param)(*args, **kwargs)

        return gradient
