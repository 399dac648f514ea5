"""The training transform ``boost`` behind ``Model(boost_level=..., boost_config_dict=...)``."""

from __future__ import annotations

from dataclasses import replace

from mskernel_sdk import MskernelError, TrainingSetup
from mskernel.nn import WithLossCell

from .config import AutoBoost
from .step import BoostTrainOneStepCell

__all__ = ["training_transform"]


def training_transform(setup: TrainingSetup, level: str) -> TrainingSetup:
    """The setup trained with the Boost algorithms of ``level`` (option:
    ``boost_config_dict``): LessBN applied to the network, the step a
    :class:`BoostTrainOneStepCell`."""
    options = dict(setup.options)
    boost = AutoBoost(level, options.pop("boost_config_dict", ""))
    if setup.optimizer is None:
        raise MskernelError("boost_level needs Model's optimizer: the Boost algorithms change "
                            "how the optimizer updates the weights")
    if setup.train_network is not None:
        raise MskernelError("boost_level cannot be combined with a training step another "
                            "transform built (float16 loss scaling); use amp_dtype=bfloat16")
    network, optimizer = boost.network_auto_process_train(setup.network, setup.optimizer)
    with_loss = network if setup.loss_fn is None else WithLossCell(network, setup.loss_fn)
    step = BoostTrainOneStepCell(with_loss, optimizer, boost.config)
    return replace(setup, network=network, train_network=step, options=options)
