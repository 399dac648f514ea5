"""Batching rules of the ops over ``[N, C, *spatial]`` tensors — convolutions, pooling,
``batch_norm`` and ``group_norm`` — and of ``layer_norm``.

These ops have a batch axis of their own, ``N``.  When only ``x`` is batched, the vmap batch
folds into it: ``(B, N, ...)`` runs as ``(B * N, ...)`` (every sample is independent there,
or normalised per channel over ``N``, which ``batch_norm`` would mix, so it is not done
for it).  A batched weight or batch statistic folds into the *channels* instead: examples
become groups — ``B * groups`` groups of a convolution whose weights are stacked along
``C_out`` (``C_in`` for ``conv_transpose``), ``B * C`` channels of a ``batch_norm`` — so one
op computes every example with its own parameters.  A batched scale or bias of a
normalisation is applied after normalising with ones and zeros.
"""

from __future__ import annotations

from typing import Any

from mskernel_sdk import Tensor, apply

from ._batch import (
    Flags, aligned, all_batched, example_axis, example_rank, merged, move_axis, split_batch,
)
from ._ops import RuleTable, add, full, mul, reshape

rules = RuleTable()


def _channels_folded(x: Tensor) -> Tensor:
    """``(B, N, C, *S)`` → ``(N, B * C, *S)``: each example's channels a block of its own."""
    size, n, c = x.shape[:3]
    return reshape(move_axis(x, 0, 1), shape=(n, size * c, *x.shape[3:]))


def _channels_unfolded(y: Tensor, size: int) -> Tensor:
    """The inverse of :func:`_channels_folded`."""
    n, bc = y.shape[:2]
    return move_axis(reshape(y, shape=(n, size, bc // size, *y.shape[2:])), 1, 0)


def _per_sample(op: str):
    """Ops treating ``N`` as independent samples (pooling): the batch folds into ``N``."""

    def rule(args: tuple[Tensor, ...], batched: Flags, **attrs: Any) -> tuple[Tensor]:
        (x,) = args
        return (split_batch(apply(op, merged(x), **attrs), x.shape[0], x.shape[1]),)

    return rule


for _op in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool"):
    rules.batch(_op)(_per_sample(_op))


@rules.batch("max_pool_grad")
def _max_pool_grad(args: tuple[Tensor, ...], batched: Flags, **attrs: Any) -> tuple[Tensor]:
    """``x`` and its cotangent ``g`` both batched (an unbatched one is broadcast), the batch
    folded into ``N`` as for the pools."""
    x, g = all_batched(args, batched)
    return (split_batch(apply("max_pool_grad", merged(x), merged(g), **attrs), x.shape[0],
                        x.shape[1]),)


def _convolution(op: str):
    """``conv`` and ``conv_transpose``: batched weights stack along their axis 0 (``C_out``
    of ``conv``'s ``w``, ``C_in`` of ``conv_transpose``'s), each example a block of groups."""

    def rule(args: tuple[Tensor, ...], batched: Flags, *, groups: int,
             **attrs: Any) -> tuple[Tensor]:
        x, w = args
        if not batched[1]:
            out = apply(op, merged(x), w, groups=groups, **attrs)
            return (split_batch(out, x.shape[0], x.shape[1]),)
        x, w = all_batched(args, batched)
        size = x.shape[0]
        stacked = reshape(w, shape=(size * w.shape[1], *w.shape[2:]))
        out = apply(op, _channels_folded(x), stacked, groups=size * groups, **attrs)
        return (_channels_unfolded(out, size),)

    return rule


rules.batch("conv")(_convolution("conv"))
rules.batch("conv_transpose")(_convolution("conv_transpose"))


@rules.batch("batch_norm")
def _batch_norm(args: tuple[Tensor, ...], batched: Flags, **attrs: Any) -> tuple[Tensor, ...]:
    x, *params = all_batched(args, batched)
    size, c = x.shape[0], x.shape[2]
    y, mean, var = apply("batch_norm", _channels_folded(x),
                         *(reshape(p, shape=(size * c,)) for p in params), **attrs)
    return (_channels_unfolded(y, size), reshape(mean, shape=(size, c)),
            reshape(var, shape=(size, c)))


def _affine_after(y: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
    """``y * scale + bias`` for batched ``scale``/``bias`` whose examples cover the trailing
    axes of ``y``'s examples."""
    rank = example_rank(y)
    return add(mul(y, aligned(scale, rank)), aligned(bias, rank))


@rules.batch("layer_norm")
def _layer_norm(args: tuple[Tensor, ...], batched: Flags, *, axis: int,
                eps: float) -> tuple[Tensor, ...]:
    x, scale, bias = all_batched(args, batched)
    first = example_axis(axis, example_rank(x))
    if not batched[1] and not batched[2]:
        return tuple(apply("layer_norm", x, args[1], args[2], axis=first, eps=eps))
    ones, zeros = (full(scale.shape[1:], v, x.dtype) for v in (1.0, 0.0))
    y, mean, rstd = apply("layer_norm", x, ones, zeros, axis=first, eps=eps)
    return _affine_after(y, scale, bias), mean, rstd


@rules.batch("group_norm")
def _group_norm(args: tuple[Tensor, ...], batched: Flags, *, num_groups: int,
                eps: float) -> tuple[Tensor, ...]:
    x, scale, bias = all_batched(args, batched)
    size, n = x.shape[:2]
    if not batched[1] and not batched[2]:
        y, mean, rstd = apply("group_norm", merged(x), args[1], args[2], num_groups=num_groups,
                              eps=eps)
        y = split_batch(y, size, n)
    else:
        ones, zeros = (full(scale.shape[1:], v, x.dtype) for v in (1.0, 0.0))
        y, mean, rstd = apply("group_norm", merged(x), ones, zeros, num_groups=num_groups,
                              eps=eps)
        per_channel = (size, 1, scale.shape[1], *(1,) * (x.ndim - 3))
        y = add(mul(split_batch(y, size, n), reshape(scale, shape=per_channel)),
                reshape(bias, shape=per_channel))
    return y, split_batch(mean, size, n), split_batch(rstd, size, n)


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
