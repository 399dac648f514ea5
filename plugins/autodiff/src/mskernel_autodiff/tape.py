"""Reverse mode: a tape of the ops applied to watched tensors, and the backward pass over it.

While active, a :class:`Tape` sees every op applied at its trace level.  An op reading a
tracked tensor is recorded with its inputs and outputs, and its floating-point outputs become
tracked in turn; nothing else is recorded, so eager Python control flow just works (only the
ops that ran are on the tape) and a tape inside ``@jit`` records traced ops.

:meth:`Tape.backward` walks the entries in reverse and applies each op's ``"vjp"`` rule
through :func:`~mskernel_sdk.apply`.  It runs after the tape is no longer
active, so the backward ops go wherever ops go at that moment: into the same trace as the
forward ops (one graph, optimised as a whole), and onto the tapes of enclosing ``grad``
calls, which then differentiate the backward pass itself — higher derivatives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from mskernel_sdk import ApplyResult, Graph, Tensor

from .lookup import VJP, call_rule, is_nondifferentiable
from .rules._ops import add, zeros_like
from .transform import Transform, as_outputs, differentiable

Cotangents = tuple[Optional[Tensor], ...]
Pullback = Callable[[Cotangents], Cotangents]


@dataclass(frozen=True)
class Entry:
    """One differentiable step: ``pullback`` maps the outputs' cotangents (``None``: zero)
    to the inputs' (one per input, ``None``: zero or not differentiable)."""

    inputs: tuple[Any, ...]
    outputs: tuple[Tensor, ...]
    pullback: Pullback


class OpPullback:
    """The ``"vjp"`` rule of one applied op, looked up when the backward pass reaches it (an
    op without a rule fails only if a cotangent actually flows through it)."""

    __slots__ = ("op", "attrs", "regions", "inputs", "outputs")

    def __init__(self, op: str, attrs: dict[str, Any], regions: tuple[Graph, ...],
                 inputs: tuple[Tensor, ...], outputs: tuple[Tensor, ...]) -> None:
        self.op, self.attrs, self.regions = op, attrs, regions
        self.inputs, self.outputs = inputs, outputs

    def __call__(self, cotangents: Cotangents) -> Cotangents:
        return call_rule(VJP, self.op, self.inputs, self.outputs, cotangents, self.attrs,
                         self.regions, self.inputs)


class Gradients:
    """The result of a backward pass: the cotangent reaching each tracked tensor."""

    def __init__(self, by_id: dict[int, Tensor]) -> None:
        self._by_id = by_id

    def get(self, t: Tensor) -> Optional[Tensor]:
        """The cotangent of ``t``, ``None`` when none reached it (a zero)."""
        return self._by_id.get(id(t))

    def dense(self, t: Tensor) -> Tensor:
        """The cotangent of ``t``, zeros of its type when none reached it."""
        ct = self._by_id.get(id(t))
        return zeros_like(t) if ct is None else ct


class Tape(Transform):
    """Records differentiable steps applied to watched tensors; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._entries: list[Entry] = []
        self._tracked: dict[int, Tensor] = {}

    def watch(self, t: Tensor) -> None:
        """Differentiate with respect to ``t`` (tracked by identity)."""
        self._tracked[id(t)] = t

    def tracks(self, t: Any) -> bool:
        return id(t) in self._tracked

    def apply(self, op: str, args: tuple[Tensor, ...], attrs: dict[str, Any],
              regions: tuple[Graph, ...], inner: Callable[..., ApplyResult]) -> ApplyResult:
        out = inner(op, args, attrs, regions)
        if self.sees() and any(id(a) in self._tracked for a in args) \
                and not is_nondifferentiable(op):
            outs = as_outputs(out)
            self.record(args, outs, OpPullback(op, attrs, regions, args, outs))
        return out

    def record(self, inputs: Iterable[Any], outputs: Iterable[Tensor], pullback: Pullback) -> None:
        """Add a step (ops record themselves; custom rules add theirs here)."""
        outs = tuple(outputs)
        if not any(differentiable(o) for o in outs):
            return
        self._entries.append(Entry(tuple(inputs), outs, pullback))
        for o in outs:
            if differentiable(o):
                self._tracked[id(o)] = o

    def backward(self, seeds: Iterable[tuple[Tensor, Optional[Tensor]]]) -> Gradients:
        """Propagate the cotangents ``seeds`` gives for some tracked tensors (each of its
        tensor's type; ``None`` is a zero) back to every tracked tensor.  The tape is left
        unchanged, so a backward pass may run several times."""
        cts: dict[int, Tensor] = {}
        for t, ct in seeds:
            if ct is not None and id(t) in self._tracked:
                _accumulate(cts, t, ct)
        for entry in reversed(self._entries):
            out_cts = tuple(cts.pop(id(o), None) for o in entry.outputs)
            if all(ct is None for ct in out_cts):
                continue
            for x, ct in zip(entry.inputs, entry.pullback(out_cts)):
                if ct is not None and id(x) in self._tracked:
                    _accumulate(cts, x, ct)
        return Gradients(cts)


def _accumulate(cts: dict[int, Tensor], t: Tensor, ct: Tensor) -> None:
    previous = cts.get(id(t))
    cts[id(t)] = ct if previous is None else add(previous, ct)
