"""The ONNX op tables: one module per op family, each an ``OPS`` dict from ONNX op type to a
handler (``DOMAIN`` names the module's ONNX domain; the default is ``ai.onnx``).

A handler receives a :class:`~mskernel_onnx.context.NodeContext` and returns the node's
outputs (one value, or a list in output order) built from core ops with ``ctx.op``.  It reads
attributes with ``ctx.attr`` (schema defaults apply), tensor inputs with ``ctx.input`` and
inputs that must be known at import time with ``ctx.const`` / ``ctx.ints``; ``ctx.version``
is the ``since_version`` of the op's definition in the model's opset.  It fails with
``ctx.fail(reason)``, which names the node, op and opset.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Callable

from . import (
    activations, control, elementwise, image, indexing, linalg, ml, nn, quantize, random,
    reduction, resize, rnn, sequence, shape, signal, text, training,
)

if TYPE_CHECKING:
    from ..context import NodeContext

FAMILIES: tuple[ModuleType, ...] = (
    elementwise, activations, reduction, shape, indexing, nn, resize, rnn, quantize, control,
    sequence, signal, training, ml, image, random, linalg, text,
)


def _merge(families: tuple[ModuleType, ...]) -> dict[tuple[str, str], Callable[["NodeContext"], object]]:
    table: dict[tuple[str, str], Callable[["NodeContext"], object]] = {}
    for family in families:
        domain = getattr(family, "DOMAIN", "")
        for op_type, handler in family.OPS.items():
            key = (domain, op_type)
            if key in table:
                raise RuntimeError(f"ONNX op {op_type!r} is translated twice "
                                   f"(again in {family.__name__})")
            table[key] = handler
    return table


#: (domain, op type) → handler, over every family.
HANDLERS = _merge(FAMILIES)
