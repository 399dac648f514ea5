"""Passes: the one pass contract, the pass manager, pattern tables, rewriting utilities and
the generic passes (``dce``, ``cse``, ``fold``, ``simplify``) behind the O0–O3 pipelines."""

from .base import Pass, PassContext, PassResult
from .cse import CommonSubexpressionElimination
from .dce import DeadCodeElimination
from .fold import ConstantFolding
from .manager import PassManager, PassRecord, PassReport, PipelineResult
from .patterns import Pattern, Patterns, PatternPass, make_node
from .registry import PassRegistry, Pipeline
from .rewrite import Replacement, is_effectful, rewrite_nodes, substitute
from .simplify import SIMPLIFY

__all__ = [
    "CommonSubexpressionElimination", "ConstantFolding", "DeadCodeElimination", "Pass",
    "PassContext", "PassManager", "PassRecord", "PassRegistry", "PassReport", "PassResult",
    "Pattern", "PatternPass", "Patterns", "Pipeline", "PipelineResult", "Replacement",
    "SIMPLIFY", "is_effectful", "make_node", "rewrite_nodes", "substitute",
]
