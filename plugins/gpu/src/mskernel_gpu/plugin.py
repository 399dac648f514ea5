"""The plugin module named by the entry point ``gpu``: the backend, its fused op (with samples
for the conformance kit) and its passes.  Importing it imports neither CuPy nor any CUDA
library; the backend probes the machine when first asked."""

from __future__ import annotations

from typing import Any

from mskernel_sdk import ACCUMULATION_RULE, SAMPLES_RULE, PluginInfo, hookimpl

from . import __version__

NAME = "gpu"
#: Above the cpu backend (100): where a GPU is present it is preferred; where none is, the
#: backend reports itself unavailable and the next one runs everything.
PRIORITY = 200


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name=NAME, version=__version__, kind="backend",
                      provides=[f"backend:{NAME}", "ops:gpu.*", "passes:gpu.*"],
                      description="NVIDIA GPUs: CuPy kernels, cuBLAS GEMMs, cuDNN convolutions, "
                                  "fused kernels generated as CUDA C and compiled by NVRTC, "
                                  "CUDA graphs")


def _create_backend() -> Any:
    from .backend import GpuBackend

    return GpuBackend()


@hookimpl
def mskernel_register_backends(backends: Any) -> None:
    backends.register(NAME, _create_backend, priority=PRIORITY)


@hookimpl
def mskernel_register_ops(registry: Any) -> None:
    from . import fused_op, gemm, wgrad

    for opdef in (fused_op.FUSED_OPDEF, gemm.OPDEF, wgrad.OPDEF):
        registry.define(opdef)


@hookimpl
def mskernel_register_passes(passes: Any) -> None:
    from .passes import register

    register(passes)


@hookimpl
def mskernel_register_rules(rules: Any) -> None:
    from . import fused_op, gemm, wgrad

    rules.register(SAMPLES_RULE, fused_op.FUSED_OP, fused_op.samples)
    rules.register(SAMPLES_RULE, gemm.MATMUL_BIAS_ACT, gemm.samples)
    rules.register(SAMPLES_RULE, wgrad.CONV_WGRAD, wgrad.samples)
    rules.register(ACCUMULATION_RULE, gemm.MATMUL_BIAS_ACT, gemm.accumulation)
    rules.register(ACCUMULATION_RULE, wgrad.CONV_WGRAD, wgrad.accumulation)
