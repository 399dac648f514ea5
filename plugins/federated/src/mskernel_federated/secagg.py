"""Flower's SecAgg+ workflow, with a clear error when too many clients drop.

Flower's workflow halts a round quietly when the clients still answering cannot remove the
masks (fewer than the reconstruction threshold among some client's neighbours); nothing of
the round is revealed then, and the global model stays as it was.  :class:`SecAggPlus`
raises :class:`SecureAggregationError` saying so, which the server logs and records in the
round's history before going on with the next round.
"""

from __future__ import annotations

from typing import Any

from flwr.server.workflow import SecAggPlusWorkflow
from flwr.server.workflow.secure_aggregation.secaggplus_workflow import WorkflowState


class SecureAggregationError(RuntimeError):
    """A SecAgg+ round could not be completed; its updates stay masked and are discarded."""


class SecAggPlus(SecAggPlusWorkflow):
    """SecAgg+ (Bell et al., 2020) as Flower runs it; raises instead of halting quietly."""

    def __call__(self, grid: Any, context: Any) -> None:
        state = WorkflowState()
        stages = (self.setup_stage, self.share_keys_stage,
                  self.collect_masked_vectors_stage, self.unmask_stage)
        for stage in stages:
            if not stage(grid, context, state):
                raise SecureAggregationError(self._explain(stage.__name__, state))

    @staticmethod
    def _explain(stage: str, state: WorkflowState) -> str:
        sampled, active = len(state.sampled_node_ids), len(state.active_node_ids)
        return (f"SecAgg+ stopped at its {stage.removesuffix('_stage').replace('_', ' ')} "
                f"stage: {active} of {sampled} sampled clients still answer, and with "
                f"{state.num_shares} shares per client a reconstruction threshold of "
                f"{state.threshold} cannot be met, so the masks cannot be removed; no update "
                "of this round is revealed and the global model is unchanged")
