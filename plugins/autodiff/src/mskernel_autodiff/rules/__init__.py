"""VJP, JVP and batching rules of the core ops, aggregated here for the plugin to register:

- :data:`VJP` and :data:`JVP`: op name → rule (signatures and conventions in :mod:`._ops`),
  one module per op family (mirroring :mod:`mskernel.ops`);
- :data:`NONDIFFERENTIABLE`: the core ops with no derivative — bool and integer results,
  creation ops, random and state ops.  ``If`` and ``While`` are differentiated by the
  machinery (:mod:`mskernel_autodiff.control`), not here;
- :data:`BATCH`: op name → batching rule (:mod:`mskernel_autodiff.batching`), one
  ``batch_*`` module per way of batching (elementwise broadcasting, ops along axes, shape
  ops, linear algebra, ``[N, C, ...]`` ops, indexing, control flow);
- :data:`NOT_BATCHABLE`: op name → why ``vmap`` cannot batch it (random draws from a batch of
  keys, state).  Ops without inputs (``constant``, ``full``, ``iota``, ``random_key``)
  never meet a batch and need neither.

Rules rely on what the machinery guarantees (:func:`mskernel_autodiff.lookup.call_rule`):
attributes arrive bound (every attribute, defaults filled in), a rule runs only when some
cotangent (tangent) is nonzero and never receives one for an integer or bool tensor, and what
it returns for such a tensor is dropped — so gradients flow only through floating and complex
tensors.
"""

from __future__ import annotations

from typing import Any

from . import (
    batch_axes, batch_control, batch_elementwise, batch_indexing, batch_linalg, batch_nn,
    batch_random, batch_shape, conv, elementwise, indexing, linalg, nn, reduction, shape, sorting,
)
from ._ops import JvpRule, VjpRule

_FAMILIES = (elementwise, reduction, linalg, nn, conv, shape, indexing, sorting)
_BATCH_FAMILIES = (batch_elementwise, batch_axes, batch_shape, batch_linalg, batch_nn,
                   batch_indexing, batch_control, batch_random)

#: Random and state ops: they read keys and refs, not differentiable tensors.
_RANDOM_AND_STATE = frozenset({
    "random_key", "random_split", "random_fold_in", "random_bits", "random_uniform",
    "random_normal", "random_truncated_normal", "random_bernoulli", "random_randint",
    "random_permutation", "random_categorical", "ref_load", "ref_store",
})

VJP: dict[str, VjpRule] = {op: rule for family in _FAMILIES for op, rule in family.VJP.items()}
JVP: dict[str, JvpRule] = {op: rule for family in _FAMILIES for op, rule in family.JVP.items()}
NONDIFFERENTIABLE: frozenset[str] = frozenset().union(
    _RANDOM_AND_STATE, *(family.NONDIFFERENTIABLE for family in _FAMILIES))

BATCH: dict[str, Any] = {
    op: rule for family in _BATCH_FAMILIES for op, rule in family.BATCH.items()}
NOT_BATCHABLE: dict[str, str] = {
    op: why for family in _BATCH_FAMILIES for op, why in family.NOT_BATCHABLE.items()}

__all__ = ["BATCH", "JVP", "NONDIFFERENTIABLE", "NOT_BATCHABLE", "VJP"]
