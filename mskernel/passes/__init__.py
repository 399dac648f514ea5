"""Passes: the one pass contract, the pass manager, pattern tables, rewriting utilities and
the generic passes (``fold_batch_norm``, ``simplify``, ``fold``, ``cse``, ``dce``) behind the
O0–O3 pipelines."""

from .base import Pass, PassContext, PassResult
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination
from .fold import ConstantFolding
from .manager import PassManager, PassRecord, PassReport, PipelineResult, run_pipeline
from .patterns import FUSED_TRAIT, Pat, Pattern, Patterns, PatternPass, make_node
from .registry import PassRegistry, Pipeline
from .rewrite import Replacement, Scope, is_effectful, map_regions, rewrite_nodes, substitute
from .simplify import SHAPES, SIMPLIFY

__all__ = [
    "CommonSubexpressionElimination", "ConstantFolding", "DeadCodeElimination", "FUSED_TRAIT",
    "Pass", "PassContext", "PassManager", "PassRecord", "PassRegistry", "PassReport",
    "PassResult", "Pat", "Pattern", "PatternPass", "Patterns", "Pipeline", "PipelineResult",
    "Replacement", "SHAPES", "SIMPLIFY", "Scope", "is_effectful", "make_node", "map_regions",
    "rewrite_nodes", "run_pipeline", "substitute",
]
