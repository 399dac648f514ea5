"""The cpu backend's passes and pipelines, registered through ``mskernel_register_passes`` and
run by :meth:`CpuBackend.compile <mskernel_cpu.backend.CpuBackend.compile>` after
partitioning, before lowering.  The generic pipeline of the same opt level has already run on
the whole graph (batch-norm folding, simplification, constant folding, CSE, DCE), so these
are the cpu-specific rewrites only, each a pattern table:

- ``cpu.O0``: nothing, so every node reaches its own kernel (the conformance tests rely on it);
- ``cpu.O1``: ``cpu.fuse_elementwise``;
- ``cpu.O2`` and ``cpu.O3``: ``cpu.fuse_gemm_epilogue`` (a conv or matmul with its bias add and
  activation, a folded batch norm's bias add included), then ``cpu.fold_matmul_transpose`` (a
  transpose of the last two axes read by a product becomes a BLAS transpose flag), then
  ``cpu.fuse_elementwise`` last, so it sees the final elementwise graph and cannot take a bias
  add a GEMM's epilogue does.

The pipeline of ``CompileOptions.opt_level`` runs; ``options.debug`` verifies the graph after
every pass.
"""

from __future__ import annotations

from typing import Any

from mskernel_sdk import CompileOptions, Graph, PipelineResult, run_pipeline

from .fusion import ElementwiseFusion
from .gemm_fusion import FUSE_GEMM_EPILOGUE
from .native import NativeUnavailable, load
from .transpose_folding import FOLD_MATMUL_TRANSPOSE

_OPTIMIZE = ("cpu.fuse_gemm_epilogue", "cpu.fold_matmul_transpose", "cpu.fuse_elementwise")
PIPELINES: dict[str, tuple[str, ...]] = {
    "cpu.O0": (),
    "cpu.O1": ("cpu.fuse_elementwise",),
    "cpu.O2": _OPTIMIZE,
    "cpu.O3": _OPTIMIZE,
}


def fusable_ops() -> tuple[str, ...]:
    """The ops the fused kernel runs (none when the native kernels cannot load)."""
    try:
        return tuple(load().fusable_ops())
    except NativeUnavailable:
        return ()


PASSES = (FUSE_GEMM_EPILOGUE, FOLD_MATMUL_TRANSPOSE, ElementwiseFusion(fusable_ops))


def register(passes: Any) -> None:
    for pass_ in PASSES:
        passes.register(pass_)
    for name, names in PIPELINES.items():
        passes.register_pipeline(name, names)


def optimize(graph: Graph, options: CompileOptions) -> PipelineResult:
    """Run the pipeline ``cpu.O<opt_level>`` on ``graph``."""
    return run_pipeline(f"cpu.O{options.opt_level}", graph, options, backend="cpu")
