"""What both Ascend backends claim: every op of the process's registry that computes a pure
function of its tensors (no effects, no regions), on the dtypes Ascend's kernels take.
Parameter reads and writes, control flow and float64 or complex values run on the next
backend (``MSKERNEL_BACKENDS=ascend-emulate,cpu``: the cpu backend)."""

from __future__ import annotations

from mskernel_sdk import Capabilities, OpSupport, dtype, op_registry

DTYPES = frozenset(dtype(name) for name in (
    "float16", "float32", "int8", "uint8", "int16", "int32", "int64", "bool"))


def ascend_capabilities() -> Capabilities:
    registry = op_registry()
    ops = [name for name in registry.names()
           if not registry.get(name).effectful and not registry.get(name).num_regions]
    return Capabilities.uniform(ops, OpSupport(dtypes=DTYPES))
