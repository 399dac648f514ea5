"""What the Ascend backends claim.

Both claim ops that compute a pure function of their tensors (no effects, no regions) on
the dtypes Ascend's kernels take; control flow and float64 or complex values run on the next
backend (``MSKERNEL_BACKENDS=ascend-emulate,cpu``: the cpu backend).  The emulator runs any
such op, and the parameter reads and writes of a training step (``ref_load``,
``ref_store``), as the NPU keeps parameters in device memory.  The NPU runs what reaches it as ONNX, so it
claims the ops mskernel-onnx can write: the core ops it translates and the ops with an
``"onnx_export"`` rule (the fused Ascend ops among them); random numbers and the other ops
ONNX cannot express fall back.
"""

from __future__ import annotations

from mskernel_sdk import Capabilities, OpSupport, dtype, op_registry, rule_registry

DTYPES = frozenset(dtype(name) for name in (
    "float16", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
    "uint64", "bool"))


def _pure_ops() -> list[str]:
    registry = op_registry()
    return [name for name in registry.names()
            if not registry.get(name).effectful and not registry.get(name).num_regions]


#: ops whose ONNX form needs an opset later than the one ATC reads (fft: DFT, opset 17)
NEEDS_LATER_OPSET = ("fft",)

#: the state ops the emulator runs
STATE_OPS = ("ref_load", "ref_store")


def emulator_capabilities() -> Capabilities:
    return Capabilities.uniform([*_pure_ops(), *STATE_OPS], OpSupport(dtypes=DTYPES))


def npu_capabilities() -> Capabilities:
    from mskernel_onnx.export_ops import TRANSLATORS

    rules = rule_registry()
    exportable = [name for name in _pure_ops() if name not in NEEDS_LATER_OPSET
                  and (name in TRANSLATORS or rules.has("onnx_export", name))]
    return Capabilities.uniform(exportable, OpSupport(dtypes=DTYPES))
