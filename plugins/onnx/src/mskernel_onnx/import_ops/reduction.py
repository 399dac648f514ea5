"""Reductions: ``Reduce*``, ``ArgMax``/``ArgMin``.

``axes`` is an attribute before opset 18 (13 for ``ReduceSum``) and an input after; no axes
reduce everything unless ``noop_with_empty_axes``.  Reducing an empty set gives the
reduction's identity (0 for sums, 1 for products, -inf/+inf, or the dtype's limits, for
``ReduceMax``/``ReduceMin``), as ONNX defines.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from mskernel_sdk import Value

from .common import axes, broadcast, dtype, optional_attr_or_input, rank, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]
Compose = Callable[["NodeContext", Value, tuple[int, ...], bool], Value]


def _reduced_axes(ctx: "NodeContext", since: int) -> Optional[tuple[int, ...]]:
    """The axes to reduce; ``None`` for a no-op (empty axes with noop_with_empty_axes)."""
    x = ctx.input(0)
    found = optional_attr_or_input(ctx, "axes", 1, since)
    if not found:
        if ctx.attr("noop_with_empty_axes", 0):
            return None
        return tuple(range(rank(x)))
    return tuple(sorted(set(axes(ctx, found, rank(x)))))


def reduction(compose: Compose, identity: Callable[[np.dtype], object], since: int = 18
              ) -> Handler:
    """A ``Reduce*`` op: ``compose(ctx, x, axes, keepdims)`` builds it from core ops;
    ``identity(dtype)`` is what an empty reduction gives."""
    def handler(ctx: "NodeContext") -> Value:
        x = ctx.input(0)
        found = _reduced_axes(ctx, since)
        if found is None:
            return x
        keepdims = bool(ctx.attr("keepdims", 1))
        if any(shape(x)[a] == 0 for a in found):
            out = [1 if a in found else d for a, d in enumerate(shape(x)) if keepdims or
                   a not in found]
            fill = identity(dtype(x).storage)
            return broadcast(ctx, scalar(ctx, fill, x), out)
        return compose(ctx, x, found, keepdims)
    return handler


def core(op: str) -> Compose:
    return lambda ctx, x, a, keep: ctx.op(op, x, axes=a, keepdims=keep)


def _then(first: str, compose: Compose, last: Optional[str] = None) -> Compose:
    def run(ctx: "NodeContext", x: Value, a: tuple[int, ...], keep: bool) -> Value:
        out = compose(ctx, ctx.op(first, x), a, keep)
        return ctx.op(last, out) if last else out
    return run


def _extreme(ctx: "NodeContext", x: Value, a: tuple[int, ...], keep: bool, op: str,
             logical: str) -> Value:
    if dtype(x).is_bool:
        return ctx.op(logical, x, axes=a, keepdims=keep)
    return ctx.op(op, x, axes=a, keepdims=keep)


def _lowest(dt: np.dtype) -> object:
    return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)


def _highest(dt: np.dtype) -> object:
    return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)


def arg(op: str) -> Handler:
    """``ArgMax``/``ArgMin``; ``select_last_index`` searches the reversed axis."""
    def handler(ctx: "NodeContext") -> Value:
        x = ctx.input(0)
        a = axes(ctx, [ctx.attr("axis", 0)], rank(x))[0]
        keep = bool(ctx.attr("keepdims", 1))
        if not ctx.attr("select_last_index", 0):
            return ctx.op(op, x, axis=a, keepdims=keep)
        found = ctx.op(op, ctx.op("flip", x, axes=(a,)), axis=a, keepdims=keep)
        return ctx.op("sub", scalar(ctx, shape(x)[a] - 1, "int64"), found)
    return handler


_zero: Callable[[np.dtype], object] = lambda dt: 0  # noqa: E731

OPS: dict[str, Handler] = {
    "ReduceSum": reduction(core("sum"), _zero, since=13),
    "ReduceMean": reduction(core("mean"), lambda dt: math.nan),
    "ReduceProd": reduction(core("prod"), lambda dt: 1),
    "ReduceMax": reduction(lambda c, x, a, k: _extreme(c, x, a, k, "max", "any"), _lowest),
    "ReduceMin": reduction(lambda c, x, a, k: _extreme(c, x, a, k, "min", "all"), _highest),
    "ReduceL1": reduction(_then("abs", core("sum")), _zero),
    "ReduceL2": reduction(_then("square", core("sum"), "sqrt"), _zero),
    "ReduceSumSquare": reduction(_then("square", core("sum")), _zero),
    "ReduceLogSum": reduction(lambda c, x, a, k: c.op("log", c.op("sum", x, axes=a, keepdims=k)),
                              lambda dt: -np.inf),
    "ReduceLogSumExp": reduction(core("logsumexp"), lambda dt: -np.inf),
    "ArgMax": arg("argmax"), "ArgMin": arg("argmin"),
}
