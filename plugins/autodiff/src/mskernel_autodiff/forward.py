"""Forward mode: a map from tensors to their tangents, extended op by op.

While active, a :class:`ForwardMode` sees every op applied at its trace level.  When an op
reads a tensor that has a tangent, the op's ``"jvp"`` rule computes the tangents of its
outputs at once.  The rule's own ops are applied while the transform is paused — it never
differentiates its own tangent computations — but enclosing transforms see them: a tape
around a ``jvp`` differentiates the tangents (reverse over forward), and a ``jvp`` around a
``grad`` gives the tangent of the gradient, a Hessian-vector product (forward over reverse).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from mskernel_sdk import ApplyResult, Graph, Tensor

from .lookup import JVP, call_rule, is_nondifferentiable
from .rules._ops import zeros_like
from .transform import Transform, as_outputs, differentiable


class ForwardMode(Transform):
    """Tangents of the tensors derived from seeded ones; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._tangents: dict[int, tuple[Tensor, Tensor]] = {}  # id → (tensor, tangent)

    def seed(self, t: Tensor, tangent: Tensor) -> None:
        """Give ``t`` the tangent ``tangent`` (of ``t``'s type)."""
        self._tangents[id(t)] = (t, tangent)

    def tangent(self, t: Any) -> Optional[Tensor]:
        """The tangent of ``t``, ``None`` when it has none (a zero)."""
        pair = self._tangents.get(id(t))
        return None if pair is None else pair[1]

    def dense(self, t: Tensor) -> Tensor:
        tangent = self.tangent(t)
        return zeros_like(t) if tangent is None else tangent

    def tracks(self, t: Any) -> bool:
        return id(t) in self._tangents

    def apply(self, op: str, args: tuple[Tensor, ...], attrs: dict[str, Any],
              regions: tuple[Graph, ...], inner: Callable[..., ApplyResult]) -> ApplyResult:
        out = inner(op, args, attrs, regions)
        if not self.sees():
            return out
        tangents = tuple(self.tangent(a) for a in args)
        outs = as_outputs(out)
        if all(t is None for t in tangents) or not any(differentiable(o) for o in outs) \
                or is_nondifferentiable(op):
            return out
        with self.paused():
            out_tangents = call_rule(JVP, op, args, tangents, outs, attrs, regions, outs)
        self.extend(outs, out_tangents)
        return out

    def extend(self, outputs: tuple[Tensor, ...], tangents: tuple[Optional[Tensor], ...]) -> None:
        """Record the tangents of new tensors (``None``: zero)."""
        for o, tangent in zip(outputs, tangents):
            if tangent is not None:
                self.seed(o, tangent)
