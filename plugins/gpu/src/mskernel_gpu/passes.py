"""The gpu backend's pipelines, run by :meth:`GpuBackend.compile
<mskernel_gpu.backend.GpuBackend.compile>` after partitioning (the generic pipeline of the
same opt level has run on the whole graph):

- ``gpu.O0``: nothing, so every node reaches its own kernel (the conformance kit relies on it);
- ``gpu.O1``: ``gpu.fuse`` (:mod:`.fusion`: elementwise chains with their broadcasts and the
  reduction reading them, one generated kernel each), then ``dce``;
- ``gpu.O2``, ``gpu.O3``: first ``gpu.fuse_conv_wgrad`` (:mod:`.wgrad`: a convolution's
  weight gradient as one cuDNN backward-filter) and ``gpu.fuse_gemm_epilogue`` (:mod:`.gemm`:
  a matmul with its bias add and relu), then as ``gpu.O1``.
"""

from __future__ import annotations

from typing import Any

from mskernel_sdk import CompileOptions, Graph, PipelineResult, run_pipeline

from .fusion import FUSE
from .gemm import FUSE_GEMM_EPILOGUE
from .wgrad import FUSE_CONV_WGRAD

PIPELINES: dict[str, tuple[str, ...]] = {
    "gpu.O0": (),
    "gpu.O1": ("gpu.fuse", "dce"),
    "gpu.O2": ("gpu.fuse_conv_wgrad", "gpu.fuse_gemm_epilogue", "gpu.fuse", "dce"),
    "gpu.O3": ("gpu.fuse_conv_wgrad", "gpu.fuse_gemm_epilogue", "gpu.fuse", "dce"),
}


def register(passes: Any) -> None:
    passes.register(FUSE)
    passes.register(FUSE_GEMM_EPILOGUE)
    passes.register(FUSE_CONV_WGRAD)
    for name, names in PIPELINES.items():
        passes.register_pipeline(name, names)


def optimize(graph: Graph, options: CompileOptions) -> PipelineResult:
    """Run the pipeline ``gpu.O<opt_level>`` on ``graph``."""
    return run_pipeline(f"gpu.O{options.opt_level}", graph, options, backend="gpu")
