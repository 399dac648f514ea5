"""The generic, hardware-independent passes and the O0–O3 pipelines, registered as a
built-in plugin through the same hook as any plugin's passes.

- ``O0``: no passes;
- ``O1``: ``dce``;
- ``O2`` and ``O3``: ``fold_batch_norm``, ``simplify``, ``fold``, ``cse``, ``dce``.

The pass manager repeats a pipeline while it changes the graph, up to a number of sweeps set
by the context's opt level (:data:`mskernel.passes.manager.SWEEPS_BY_OPT_LEVEL`: one at O0 and
O1, 4 at O2, 16 at O3).  O2 thus runs to a fixpoint on ordinary graphs; O3 keeps going on
graphs that improve sweep after sweep (each fold exposing another ``x * 1``, say).

The order feeds each pass what the previous one exposes: batch-norm folding (inference graphs)
moves a frozen batch norm into the weights before them, so that folding turns its arithmetic
on constant parameters into constants; simplification and folding leave operands unused and
make equal constants, CSE merges them, DCE removes what no one reads.
A plugin may replace a pipeline with ``register_pipeline(..., override=True)``.
"""

from __future__ import annotations

from ..hooks.markers import hookimpl
from .bn_folding import FOLD_BATCH_NORM
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination
from .fold import ConstantFolding
from .simplify import SIMPLIFY

PASSES = (FOLD_BATCH_NORM, SIMPLIFY, ConstantFolding(), CommonSubexpressionElimination(),
          DeadCodeElimination())

_OPTIMIZE = ("fold_batch_norm", "simplify", "fold", "cse", "dce")
PIPELINES: dict[str, tuple[str, ...]] = {"O0": (), "O1": ("dce",), "O2": _OPTIMIZE, "O3": _OPTIMIZE}


@hookimpl
def mskernel_register_passes(passes) -> None:
    for pass_ in PASSES:
        passes.register(pass_)
    for name, names in PIPELINES.items():
        passes.register_pipeline(name, names)
