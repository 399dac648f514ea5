"""The core op set as data a backend keys its kernel families on."""

from __future__ import annotations

from typing import Optional

from mskernel.ops import OpDef, op_registry

CORE = "mskernel"


def core_ops(trait: Optional[str] = None) -> dict[str, OpDef]:
    """The ops the core defines (not those plugins add, nor core ops a plugin overrode), by
    name; with ``trait``, only those carrying it.

    Traits are how a backend learns an op family without importing the core's modules:
    ``core_ops("elementwise")`` are the map-like ops (output element i reads only input
    elements i after broadcasting), ``"reduction"``, ``"shape"``, ``"random"`` and
    ``"commutative"`` others a pass or a kernel table may key on (see :class:`OpDef`)."""
    return {op.name: op for op in op_registry()
            if op.owner == CORE and (trait is None or trait in op.traits)}
