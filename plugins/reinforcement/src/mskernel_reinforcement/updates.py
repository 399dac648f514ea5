"""Pieces of update steps that every learner uses, written with tensor ops so they land in
the compiled update graph: gradient clipping by global norm and target-network updates."""

from __future__ import annotations

from typing import Any, Sequence

from mskernel import nn, ops
from mskernel_sdk import Tensor

__all__ = ["clip_by_global_norm", "update_target"]


def clip_by_global_norm(gradients: Sequence[Any], max_norm: float) -> tuple[Tensor, ...]:
    """The gradients scaled by ``min(1, max_norm / (norm + 1e-6))``, where ``norm`` is the
    2-norm of all of them together (PyTorch's ``clip_grad_norm_``)."""
    grads = tuple(ops.asarray(g) for g in gradients)
    total = ops.sqrt(sum((ops.sum(ops.square(g)) for g in grads[1:]),
                         ops.sum(ops.square(grads[0]))))
    scale = ops.minimum(ops.divide(max_norm, ops.add(total, 1e-6)), 1.0)
    return tuple(ops.multiply(g, scale) for g in grads)


def update_target(target: nn.Cell, online: nn.Cell, coefficient: Any) -> None:
    """``target ← (1 − coefficient) · target + coefficient · online``, parameter by
    parameter, in place: ``coefficient`` 1 copies the online network exactly (a hard update),
    ``tau`` averages (Polyak), 0 leaves the target as it is.  ``coefficient`` may be a
    tensor, so one compiled step does each of them."""
    keep = ops.subtract(1.0, coefficient)
    for t, o in zip(target.get_parameters(), online.get_parameters()):
        t.assign_value(ops.add(ops.multiply(t, keep), ops.multiply(o, coefficient)))
