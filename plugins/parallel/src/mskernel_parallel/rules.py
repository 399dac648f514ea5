"""Derivative rules of the collectives (read by mskernel-autodiff as ``"vjp"`` and ``"jvp"``).

The program every rank runs is one function of all ranks' inputs, and its objective is the
sum over ranks of what each rank computes — the convention of MindSpore's communication
ops' backward rules and of JAX's ``pmap`` collectives.  Under it each collective's VJP is the
transposed collective, run by every rank in its backward pass at the same point:

=====================  ==========================================  ==================
op                     VJP (cotangent ``g`` of the output)         JVP (tangent ``t``)
=====================  ==========================================  ==================
all_reduce sum         ``all_reduce(g, sum)``                      ``all_reduce(t)``
all_reduce mean        ``all_reduce(g, mean)``                     ``all_reduce(t, mean)``
all_reduce max / min   ``all_reduce(g) * m / all_reduce(m)``,      the same split of
                       ``m = (x == y)``: split evenly over ties    ``t``
all_reduce prod        ``all_reduce(g) * prod_{j != i} x_j``       ``all_reduce(t * …)``
all_gather             ``reduce_scatter(g, sum)``                  ``all_gather(t)``
reduce_scatter sum     ``all_gather(g)`` (mean: ``/ n``)           ``reduce_scatter(t)``
broadcast (root)       ``all_reduce(g)`` on the root, 0 elsewhere  ``broadcast(t)``
all_to_all (s, c)      ``all_to_all(g, split=c, concat=s)``        ``all_to_all(t)``
=====================  ==========================================  ==================

A loss that every rank computes identically (replicated) is counted once per rank under this
convention; seed such a loss's cotangent with ``1 / n`` to differentiate it once.

``send`` and ``recv`` carry values only: a rank's tape cannot see the other end of a message,
so a program that differentiates across ranks exchanges the cotangents itself — the receiver
computes the cotangent of what it received and sends it back, the sender seeds its VJP with
it (a pipeline stage's backward step; ``check_pipeline`` of ``tests/programs/collectives.py``
checks it against one process).  ``reduce_scatter`` with max, min or prod has no rule.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from mskernel_sdk import Tensor, apply

from . import groups, ops

Grads = tuple[Optional[Tensor], ...]


def _collective(op: str, x: Tensor, attrs: dict[str, Any], **changes: Any) -> Tensor:
    return apply(op, x, **{**attrs, **changes})  # type: ignore[return-value]


def _group_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {"group": attrs["group"], "group_size": attrs["group_size"]}


def _like(value: float, x: Tensor) -> Tensor:
    return apply("full", shape=x.shape, value=value, dtype=x.dtype)  # type: ignore[return-value]


def _ties(x: Tensor, y: Tensor, attrs: dict[str, Any]) -> tuple[Tensor, Tensor]:
    """``x == y`` as ``x``'s dtype, and how many ranks tie at each element."""
    mask = apply("cast", apply("equal", x, y), dtype=x.dtype)
    count = _collective(ops.ALL_REDUCE, mask, _group_attrs(attrs), reduction="sum")
    return mask, count  # type: ignore[return-value]


def _others_product(x: Tensor, attrs: dict[str, Any]) -> Tensor:
    """For each element, the product of the other ranks' elements (no division: exact with
    zeros)."""
    n, rank = attrs["group_size"], groups.get_group(attrs["group"]).rank
    stacked = _collective(ops.ALL_GATHER, apply("expand_dims", x, axes=(0,)), _group_attrs(attrs))
    own = Tensor(np.broadcast_to((np.arange(n) == rank).reshape((n,) + (1,) * x.ndim),
                                 stacked.shape))
    others = apply("where", own, _like(1.0, stacked), stacked)
    return apply("prod", others, axes=(0,), keepdims=False)  # type: ignore[return-value]


def _all_reduce_vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Grads:
    (x,), (y,), (g,) = primals, outputs, cotangents
    op, group = attrs["reduction"], _group_attrs(attrs)
    if op in ("sum", "mean"):
        return (_collective(ops.ALL_REDUCE, g, attrs),)
    total = _collective(ops.ALL_REDUCE, g, group, reduction="sum")
    if op == "prod":
        return (apply("mul", total, _others_product(x, attrs)),)
    mask, count = _ties(x, y, attrs)
    return (apply("div", apply("mul", total, mask), count),)


def _all_reduce_jvp(primals: Any, tangents: Any, outputs: Any, **attrs: Any) -> Grads:
    (x,), (t,), (y,) = primals, tangents, outputs
    op, group = attrs["reduction"], _group_attrs(attrs)
    if op in ("sum", "mean"):
        return (_collective(ops.ALL_REDUCE, t, attrs),)
    if op == "prod":
        return (_collective(ops.ALL_REDUCE, apply("mul", t, _others_product(x, attrs)), group,
                            reduction="sum"),)
    mask, count = _ties(x, y, attrs)
    return (apply("div", _collective(ops.ALL_REDUCE, apply("mul", t, mask), group, reduction="sum"),
                  count),)


def _all_gather_vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Grads:
    return (_collective(ops.REDUCE_SCATTER, cotangents[0], attrs, reduction="sum"),)


def _linear_jvp(op: str) -> Callable[..., Grads]:
    def jvp(primals: Any, tangents: Any, outputs: Any, **attrs: Any) -> Grads:
        return (_collective(op, tangents[0], attrs),)
    return jvp


def _reduce_scatter_vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Grads:
    op = attrs.pop("reduction")
    _linear_only(op)
    g = _collective(ops.ALL_GATHER, cotangents[0], attrs)
    return (g if op == "sum" else apply("div", g, _like(attrs["group_size"], g)),)


def _reduce_scatter_jvp(primals: Any, tangents: Any, outputs: Any, **attrs: Any) -> Grads:
    _linear_only(attrs["reduction"])
    return (_collective(ops.REDUCE_SCATTER, tangents[0], attrs),)


def _linear_only(op: str) -> None:
    if op not in ("sum", "mean"):
        from .errors import CommunicationError

        raise CommunicationError(f"reduce_scatter with op '{op}' has no derivative rule (only "
                                 "sum and mean); differentiate all_reduce and a slice instead")


def _broadcast_vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Grads:
    total = _collective(ops.ALL_REDUCE, cotangents[0], _group_attrs(attrs), reduction="sum")
    if groups.get_group(attrs["group"]).rank == attrs["root"]:
        return (total,)
    return (None,)


def _all_to_all_vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Grads:
    return (_collective(ops.ALL_TO_ALL, cotangents[0], attrs, split_axis=attrs["concat_axis"],
                        concat_axis=attrs["split_axis"]),)


#: (kind, op, rule) for the plugin hook.
RULES: list[tuple[str, str, Any]] = [
    ("vjp", ops.ALL_REDUCE, _all_reduce_vjp), ("jvp", ops.ALL_REDUCE, _all_reduce_jvp),
    ("vjp", ops.ALL_GATHER, _all_gather_vjp), ("jvp", ops.ALL_GATHER, _linear_jvp(ops.ALL_GATHER)),
    ("vjp", ops.REDUCE_SCATTER, _reduce_scatter_vjp),
    ("jvp", ops.REDUCE_SCATTER, _reduce_scatter_jvp),
    ("vjp", ops.BROADCAST, _broadcast_vjp), ("jvp", ops.BROADCAST, _linear_jvp(ops.BROADCAST)),
    ("vjp", ops.ALL_TO_ALL, _all_to_all_vjp), ("jvp", ops.ALL_TO_ALL, _linear_jvp(ops.ALL_TO_ALL)),
    ("nondifferentiable", ops.SEND, True),
]
