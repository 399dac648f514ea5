"""A SecAgg+ round that cannot be unmasked is a clear error, recorded, and training goes on
(the run with real processes is in test_deployment.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from flwr.app import ConfigRecord
from flwr.server.strategy import FedAvg

from mskernel_federated.guard import GuardedStrategy
from mskernel_federated.secagg import SecAggPlus, SecureAggregationError
from mskernel_federated.server import MAIN_CONFIGS_RECORD, ROUND_KEY, _RoundGuard


class HaltingSecAgg(SecAggPlus):
    """Flower's stages replaced: 4 of 10 clients answer the masked-vector request."""

    unmasked = False

    def setup_stage(self, grid, context, state) -> bool:
        state.sampled_node_ids = set(range(10))
        state.active_node_ids = set(range(10))
        state.num_shares, state.threshold = 7, 4
        return True

    def share_keys_stage(self, grid, context, state) -> bool:
        return True

    def collect_masked_vectors_stage(self, grid, context, state) -> bool:
        state.active_node_ids = {0, 1, 2, 3}
        return False

    def unmask_stage(self, grid, context, state) -> bool:
        self.unmasked = True
        return True


def test_too_many_dropouts_raise_a_clear_error_and_nothing_is_unmasked() -> None:
    workflow = HaltingSecAgg(num_shares=7, reconstruction_threshold=4)
    with pytest.raises(SecureAggregationError) as error:
        workflow(None, None)
    assert str(error.value) == (
        "SecAgg+ stopped at its collect masked vectors stage: 4 of 10 sampled clients still "
        "answer, and with 7 shares per client a reconstruction threshold of 4 cannot be met, "
        "so the masks cannot be removed; no update of this round is revealed and the global "
        "model is unchanged")
    assert not workflow.unmasked


def test_the_failed_round_is_recorded_and_the_run_goes_on(caplog) -> None:
    strategy = GuardedStrategy(FedAvg())
    state = SimpleNamespace(config_records={MAIN_CONFIGS_RECORD: ConfigRecord({ROUND_KEY: 3})})
    _RoundGuard(HaltingSecAgg(num_shares=7, reconstruction_threshold=4), strategy)(
        None, SimpleNamespace(state=state))
    assert strategy.rounds[3]["error"].startswith("round 3: SecAgg+ stopped")
    assert "round 3: SecAgg+ stopped" in caplog.text
