"""The ONNX translation of every core op that has one, by op family (see
:class:`mskernel_onnx.export.Translator`).  Ops absent here — the random ops, whose
counter-based Threefry streams ONNX's generators cannot reproduce, and ``ref_load`` /
``ref_store``, state that ONNX graphs do not have — are export errors naming the op."""

from __future__ import annotations

from typing import Any

from . import control, conv, elementwise, indexing, linalg, nn, reduction, shape, signal, sorting

TRANSLATORS: dict[str, Any] = {}
for _family in (elementwise, shape, indexing, reduction, nn, conv, linalg, sorting, control,
                signal):
    TRANSLATORS.update(_family.TRANSLATORS)
