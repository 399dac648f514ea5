"""The plugin module named by the entry point ``ascend``: registers the backends ``ascend``
(the NPU, through CANN) and ``ascend-emulate`` (Ascend's numerics on the CPU), the ops and
passes of the Ascend lowering, and the samples of its ops.  Importing it is cheap: nothing
of CANN is loaded, and the backends probe the machine when first asked."""

from __future__ import annotations

from typing import Any

from mskernel_sdk import SAMPLES_RULE, PluginInfo, hookimpl

from . import __version__

NAME = "ascend"
EMULATE = "ascend-emulate"
#: The NPU, where it is available, is preferred to the cpu backend (100).
PRIORITY = 200
#: Below the reference backend (-1000): the emulator runs only where a user names it
#: (``MSKERNEL_BACKENDS=ascend-emulate,cpu``), never as a default.
EMULATE_PRIORITY = -2000


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name=NAME, version=__version__, kind="backend",
                      provides=[f"backend:{NAME}", f"backend:{EMULATE}", "ops:ascend.*",
                                "passes:ascend.*"],
                      description="Ascend NPU through CANN (ATC offline models run by ACL); "
                                  "Ascend numerics emulated on the CPU")


def _npu() -> Any:
    from .npu import AscendBackend

    return AscendBackend()


def _emulator() -> Any:
    from .emulator import EmulateBackend

    return EmulateBackend()


@hookimpl
def mskernel_register_backends(backends: Any) -> None:
    backends.register(NAME, _npu, priority=PRIORITY)
    backends.register(EMULATE, _emulator, priority=EMULATE_PRIORITY)


@hookimpl
def mskernel_register_ops(registry: Any) -> None:
    from .ops import OPDEFS

    for opdef in OPDEFS:
        registry.define(opdef)


@hookimpl
def mskernel_register_rules(rules: Any) -> None:
    from .offline import ONNX_TRANSLATORS
    from .ops import OPDEFS, samples

    for opdef in OPDEFS:
        rules.register(SAMPLES_RULE, opdef.name,
                       lambda rng, name=opdef.name: (s for s in samples(rng) if s.op == name))
    for op, translate in ONNX_TRANSLATORS.items():
        rules.register("onnx_export", op, translate)


@hookimpl
def mskernel_register_passes(passes: Any) -> None:
    from .passes import register

    register(passes)
