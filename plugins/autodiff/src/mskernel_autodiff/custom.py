"""User-defined derivatives: ``custom_vjp`` and ``custom_jvp`` (JAX's API).

A call of a decorated function is handled by the innermost active transform that tracks one
of its tensor arguments (none: the function just runs).  That transform pauses while the
function's forward computation runs — it does not look inside — and takes the user's rule
instead; enclosing transforms see the forward computation and the rule's operations as
ordinary ops, so they differentiate the rule itself (higher derivatives, as in JAX).

- ``custom_vjp`` on a tape: ``fwd`` gives the output and residuals, ``bwd(residuals,
  cotangent)`` is the step's pullback.  Under forward mode the function is differentiated
  through its implementation ``fun``.
- ``custom_jvp`` under forward mode: the rule gives the output tangent directly.  On a tape
  the rule is *linearised and transposed*: it runs once on zero tangents watched by an inner
  tape, which records just the tangent computation (linear in the tangents); its backward
  pass is the transpose, so one JVP rule serves both modes.

Positional arguments may be nested tuples/lists/dicts of tensors; other leaves (numbers,
strings) are passed through and get no derivative.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence

from mskernel_sdk import (
    MskernelError, Tensor, TreeDef, tree_flatten, tree_unflatten, user_callables,
)

from .forward import ForwardMode
from .lookup import check_results
from .rules._ops import zeros_like
from .tape import Cotangents, Tape
from .transform import differentiable, innermost_tracking


class CustomRuleError(MskernelError, TypeError):
    """A custom derivative rule is missing or returned values of the wrong structure."""


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


class _Arguments:
    """The positional arguments of a call, flattened to leaves."""

    def __init__(self, args: Sequence[Any]) -> None:
        self.args = tuple(args)
        flat = [tree_flatten(a, _is_tensor) for a in self.args]
        self.trees: list[TreeDef] = [tree for _, tree in flat]
        self.leaves: list[Any] = [leaf for leaves, _ in flat for leaf in leaves]

    def rebuild(self, leaves: Sequence[Any]) -> tuple[Any, ...]:
        out, start = [], 0
        for tree in self.trees:
            out.append(tree_unflatten(tree, list(leaves[start:start + tree.num_leaves])))
            start += tree.num_leaves
        return tuple(out)

    def flatten_like(self, values: Any, who: str) -> list[Any]:
        """``values`` — one entry per argument, each ``None`` or shaped like it — as leaves."""
        if not isinstance(values, (tuple, list)) or len(values) != len(self.args):
            raise CustomRuleError(f"{who} must return a tuple with one entry per positional "
                                  f"argument ({len(self.args)}), got {_describe(values)}")
        leaves: list[Any] = []
        for i, (value, tree) in enumerate(zip(values, self.trees)):
            if value is None:
                leaves.extend([None] * tree.num_leaves)
                continue
            got, got_tree = tree_flatten(value, _is_tensor)
            if got_tree != tree:
                raise CustomRuleError(f"{who}: entry {i} has structure {got_tree}, but argument "
                                      f"{i} has structure {tree}")
            leaves.extend(got)
        return leaves


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


def _pair(result: Any, who: str) -> tuple[Any, Any]:
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CustomRuleError(f"{who} must return a pair, got {_describe(result)}")
    return result[0], result[1]


def _output_leaves(out: Any, who: str) -> tuple[list[Tensor], TreeDef]:
    leaves, tree = tree_flatten(out, _is_tensor)
    if not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise CustomRuleError(f"{who} must return tensors (or tuples/lists/dicts of them)")
    return leaves, tree


def _matching_tangents(name: str, out: Any, tangent_out: Any) -> tuple[list[Tensor], list[Any]]:
    """The output leaves and their tangents, checked against each other."""
    who = f"the JVP rule of custom_jvp function '{name}'"
    out_leaves, out_tree = _output_leaves(out, who)
    tangent_leaves, tangent_tree = tree_flatten(tangent_out, _is_tensor)
    if tangent_tree != out_tree:
        raise CustomRuleError(f"{who} returned a tangent of structure {tangent_tree} for an "
                              f"output of structure {out_tree}")
    return out_leaves, list(check_results(who, tuple(tangent_leaves), out_leaves, "tangent"))


class custom_vjp:
    """Give a function its own reverse-mode derivative::

        @custom_vjp
        def clip_gradient(x):
            return x

        def fwd(x):
            return x, None                     # (output, residuals for bwd)

        def bwd(residuals, g):
            return (mskernel.ops.clip(g, -1.0, 1.0),)   # one entry per positional argument

        clip_gradient.defvjp(fwd, bwd)

    ``bwd`` returns a tuple with one cotangent per positional argument, shaped like it
    (``None``: zero).  Forward mode differentiates ``fun`` itself.
    """

    @user_callables("fun")
    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd: Optional[Callable[..., Any]] = None
        self.bwd: Optional[Callable[..., Any]] = None

    @user_callables("fwd", "bwd")
    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        call = _Arguments(args)
        handler = innermost_tracking(call.leaves)
        if isinstance(handler, Tape):
            return self._on_tape(handler, call)
        return self.fun(*args)

    def _on_tape(self, tape: Tape, call: _Arguments) -> Any:
        name = getattr(self.fun, "__name__", "function")
        if self.fwd is None or self.bwd is None:
            raise CustomRuleError(f"custom_vjp function '{name}' is differentiated, but has no "
                                  f"rule: define one with {name}.defvjp(fwd, bwd)")
        bwd = self.bwd
        with tape.paused():
            out, residuals = _pair(self.fwd(*call.args), f"fwd of custom_vjp function '{name}'")
        out_leaves, out_tree = _output_leaves(out, f"fwd of custom_vjp function '{name}'")
        who = f"bwd of custom_vjp function '{name}'"

        def pullback(cotangents: Cotangents) -> Cotangents:
            dense = [zeros_like(o) if ct is None else ct for ct, o in zip(cotangents, out_leaves)]
            grads = call.flatten_like(bwd(residuals, tree_unflatten(out_tree, dense)), who)
            return check_results(who, tuple(grads), call.leaves, "cotangent")

        tape.record(call.leaves, out_leaves, pullback)
        return out


class custom_jvp:
    """Give a function its own derivative, used by both modes::

        @custom_jvp
        def log1pexp(x):
            return mskernel.ops.log(1.0 + mskernel.ops.exp(x))

        @log1pexp.defjvp
        def log1pexp_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return log1pexp(x), t * mskernel.ops.sigmoid(x)

    The rule receives the tuple of positional arguments and a tuple of their tangents (zeros
    where an argument has none) and returns ``(output, output_tangent)``.  The tangent must be
    linear in the tangents: reverse mode transposes it.
    """

    @user_callables("fun")
    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.rule: Optional[Callable[..., Any]] = None

    @user_callables("rule")
    def defjvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.rule = rule
        return rule

    def __call__(self, *args: Any) -> Any:
        call = _Arguments(args)
        handler = innermost_tracking(call.leaves)
        if handler is None:
            return self.fun(*args)
        name = getattr(self.fun, "__name__", "function")
        rule = self.rule
        if rule is None:
            raise CustomRuleError(f"custom_jvp function '{name}' is differentiated, but has no "
                                  f"rule: define one with @{name}.defjvp")

        def run_rule(tangents: list[Optional[Tensor]]) -> tuple[list[Tensor], list[Any], Any]:
            """The output, its leaves and their tangents (checked) for these tangents."""
            out, tangent_out = _pair(rule(call.args, call.rebuild(tangents)),
                                     f"the JVP rule of custom_jvp function '{name}'")
            return (*_matching_tangents(name, out, tangent_out), out)

        if isinstance(handler, ForwardMode):
            return _forward_through_rule(handler, call, run_rule)
        return _transpose_rule_on_tape(handler, call, run_rule)  # type: ignore[arg-type]


RunRule = Callable[[list[Optional[Tensor]]], tuple[list[Tensor], list[Any], Any]]


def _forward_through_rule(forward: ForwardMode, call: _Arguments, run_rule: RunRule) -> Any:
    tangents = [forward.dense(x) if differentiable(x) else None for x in call.leaves]
    with forward.paused():
        out_leaves, out_tangents, out = run_rule(tangents)
    forward.extend(tuple(out_leaves), tuple(out_tangents))
    return out


def _transpose_rule_on_tape(tape: Tape, call: _Arguments, run_rule: RunRule) -> Any:
    """Record the rule linearised: its tangent computation on zero tangents, watched by an
    inner tape whose backward pass is the transpose."""
    zeros = [zeros_like(x) if differentiable(x) else None for x in call.leaves]
    linear = Tape()
    with tape.paused(), linear.active():
        for z in zeros:
            if z is not None:
                linear.watch(z)
        out_leaves, out_tangents, out = run_rule(zeros)

    def pullback(cotangents: Cotangents) -> Cotangents:
        grads = linear.backward(zip(out_tangents, cotangents))
        return tuple(None if z is None else grads.get(z) for z in zeros)

    tape.record(call.leaves, out_leaves, pullback)
    return out
