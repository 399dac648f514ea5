"""The Ascend lowering pipeline ``ascend.lower``, run by both backends' ``compile`` after
partitioning (the generic pipeline has already run on the whole graph):

1. ``ascend.fuse``: Conv2D + BiasAdd / BatchNorm + Relu, MatMul + bias (:mod:`.fusion`);
2. ``ascend.precision``: each op's compute dtype under the precision mode (:mod:`.precision`);
3. ``ascend.layout``: convolutions in NC1HWC0 with FRACTAL_Z weights (:mod:`.layout`);
4. ``ascend.cancel``: layout conversions and casts between adjacent ops removed;
5. the generic ``cse`` and ``dce``: one cast or conversion per value, nothing unread.

The pipeline is repeated until nothing changes.  :func:`lower` runs it with a precision
mode pinned in the pass context's options.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel_sdk import (
    CompileOptions, Graph, PassContext, PassManager, PipelineResult, op_registry,
)

from .fusion import FUSE_PASS
from .layout import CANCEL_PASS, LAYOUT_PASS
from .precision import PRECISION_PASS, get_precision_mode

PIPELINE = "ascend.lower"
PASSES = (FUSE_PASS, PRECISION_PASS, LAYOUT_PASS, CANCEL_PASS)
PIPELINE_PASSES = (*(p.name for p in PASSES), "cse", "dce")
#: What the offline-model path hands ATC: the graph engine's fusions only (ATC applies the
#: precision mode and the layouts itself).
FUSE_PIPELINE = "ascend.fuse_only"


def register(passes: Any) -> None:
    for pass_ in PASSES:
        passes.register(pass_)
    passes.register_pipeline(PIPELINE, PIPELINE_PASSES)
    passes.register_pipeline(FUSE_PIPELINE, (FUSE_PASS.name, "cse", "dce"))


def lower(graph: Graph, options: CompileOptions = CompileOptions(),
          precision_mode: Optional[str] = None, *, backend: Optional[str] = None
          ) -> PipelineResult:
    """``graph`` lowered for Ascend under ``precision_mode`` (default: the mode in force)."""
    mode = get_precision_mode() if precision_mode is None else precision_mode
    manager = PassManager.from_pipeline(PIPELINE, debug=options.debug)
    context = PassContext(registry=op_registry(), opt_level=options.opt_level, backend=backend,
                          options={"precision_mode": mode})
    return manager.run(graph, context)
