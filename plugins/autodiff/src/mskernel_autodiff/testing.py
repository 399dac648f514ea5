"""Checking derivatives against finite differences — for this plugin's tests and for plugin
authors testing the rules of their own ops (JAX's ``check_grads``).

>>> check_grads(lambda x: mskernel.ops.sin(x) * x, (mskernel.Tensor([0.5, 1.5], "float64"),),
...             order=2)

Differences are central, ``(f(x + h v) - f(x - h v)) / 2h``, evaluated in the dtype of the
arguments: give float64 arguments for tight tolerances.  Functions may take and return tensors
or tuples/lists/dicts of them.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
from mskernel_sdk import Tensor, tree_flatten, tree_unflatten

from .api import jvp, vjp
from .transform import differentiable

__all__ = ["check_grads", "numerical_jvp"]


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(leaf.numpy() if isinstance(leaf, Tensor) else leaf, np.float64)
            for leaf in tree_flatten(tree, _is_tensor)[0]]


def _shifted(args: Sequence[Any], tangents: Sequence[Any], step: float) -> list[Any]:
    out = []
    for arg, tangent in zip(args, tangents):
        leaves, tree = tree_flatten(arg, _is_tensor)
        moved = [Tensor(x.numpy() + step * t.numpy(), x.dtype) if differentiable(x) else x
                 for x, t in zip(leaves, tree_flatten(tangent, _is_tensor)[0])]
        out.append(tree_unflatten(tree, moved))
    return out


def numerical_jvp(fn: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any],
                  step: float = 1e-6) -> list[np.ndarray]:
    """The directional derivative of ``fn`` at ``args`` along ``tangents`` by central
    differences, as a list of float64 arrays (one per output leaf)."""
    plus = _leaves(fn(*_shifted(args, tangents, step)))
    minus = _leaves(fn(*_shifted(args, tangents, -step)))
    return [(p - m) / (2 * step) for p, m in zip(plus, minus)]


def _random_like(tree: Any, rng: np.random.Generator) -> Any:
    leaves, treedef = tree_flatten(tree, _is_tensor)
    return tree_unflatten(treedef, [Tensor(rng.standard_normal(x.shape), x.dtype)
                                    if differentiable(x) else x for x in leaves])


def _dot(a: Any, b: Any) -> float:
    return float(sum(np.vdot(x, y).real for x, y in zip(_leaves(a), _leaves(b))))


def check_grads(fn: Callable[..., Any], args: Sequence[Any], order: int = 1,
                modes: Sequence[str] = ("fwd", "rev"), step: float = 1e-6, rtol: float = 1e-5,
                atol: float = 1e-7, rng: Optional[np.random.Generator] = None) -> None:
    """Check the derivatives of ``fn`` at ``args`` up to ``order``.

    ``"fwd"``: ``jvp`` along a random direction agrees with central differences.
    ``"rev"``: ``<vjp(u), v>`` agrees with ``<u, jvp(v)>`` by differences for random ``u``,
    ``v``.  For ``order > 1`` the same checks run on those derivative functions (a random
    directional derivative, a random VJP), as JAX does.  Raises ``AssertionError``.
    """
    rng = rng or np.random.default_rng(0)
    args = tuple(args)
    tangents = tuple(_random_like(a, rng) for a in args)
    numeric = numerical_jvp(fn, args, tangents, step)
    if "fwd" in modes:
        _, tangent_out = jvp(fn, args, tangents)
        for k, (got, want) in enumerate(zip(_leaves(tangent_out), numeric)):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                       err_msg=f"jvp of output leaf {k} (order {order})")
    if "rev" in modes:
        out, pullback = vjp(fn, *args)
        cotangent = _random_like(out, rng)
        analytic = _dot(pullback(cotangent), tangents)
        expected = float(sum(np.vdot(u, d).real for u, d in zip(_leaves(cotangent), numeric)))
        np.testing.assert_allclose(analytic, expected, rtol=rtol, atol=atol,
                                   err_msg=f"<vjp(u), v> against <u, J v> (order {order})")
    if order > 1:
        if "fwd" in modes:
            check_grads(lambda *xs: jvp(fn, xs, tangents)[1], args, order - 1, modes, step,
                        rtol, atol, rng)
        if "rev" in modes:
            out = fn(*args)
            cotangent = _random_like(out, rng)
            check_grads(lambda *xs: vjp(fn, *xs)[1](cotangent), args, order - 1, modes, step,
                        rtol, atol, rng)
