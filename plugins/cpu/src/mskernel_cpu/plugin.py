"""The plugin module named by the entry point ``cpu``: registers the backend, its private ops
(``cpu.fused_elementwise``, ``cpu.conv_bias_act``, ``cpu.matmul_bias_act``) with samples for
the conformance kit, and its passes and pipelines (``cpu.O0`` … ``cpu.O3``).  Importing it is
cheap; the backend (and its native extension) is created when first needed."""

from __future__ import annotations

from typing import Any

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

NAME = "cpu"
#: Above the reference backend (-1000): the cpu backend is preferred wherever it is available.
PRIORITY = 100


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name=NAME, version=__version__, kind="backend",
                      provides=[f"backend:{NAME}", "ops:cpu.*", "passes:cpu.*"],
                      description="C++ kernels for every core op, fusion passes, compiled plans "
                                  "with a memory planner, multi-threaded")


def _create_backend() -> Any:
    from .backend import CpuBackend

    return CpuBackend()


@hookimpl
def mskernel_register_backends(backends: Any) -> None:
    backends.register(NAME, _create_backend, priority=PRIORITY)


@hookimpl
def mskernel_register_ops(registry: Any) -> None:
    from .fusion import FUSED_OPDEF
    from .gemm_ops import OPDEFS

    for opdef in (FUSED_OPDEF, *OPDEFS):
        registry.define(opdef)


@hookimpl
def mskernel_register_passes(passes: Any) -> None:
    from .passes import register

    register(passes)


@hookimpl
def mskernel_register_rules(rules: Any) -> None:
    from .samples import register

    register(rules)
