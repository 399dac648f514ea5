"""``mskernel.amp``: automatic mixed precision (MindSpore's ``mindspore.amp``).

    net = mskernel.amp.auto_mixed_precision(net, "O2", mskernel.bfloat16)
    model = Model(net, loss, opt, amp_level="O2")          # the same through Model

The levels (:mod:`.policy`) are IR passes (:mod:`.passes`, registered as the pipelines
``amp_<level>_<dtype>``) applied to the network's graph by :class:`MixedPrecisionCell`; loss
scaling and overflow detection are in :mod:`.loss_scale`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Optional

from mskernel import bfloat16, float16
from mskernel_sdk import TrainingSetup, apply_training_transforms
from mskernel.nn import Cell, Optimizer, TrainOneStepCell, WithLossCell

from .cell import MixedPrecisionCell
from .loss_scale import (
    DynamicLossScaleManager, DynamicLossScaler, FixedLossScaleManager, LossScaleManager,
    LossScaler, StaticLossScaler, TrainOneStepWithLossScaleCell, all_finite,
)
from .policy import AMP_BLACK_LIST, AMP_WHITE_LIST, custom_policy, level_policy, low_dtype

__all__ = ["DynamicLossScaleManager", "DynamicLossScaler", "FixedLossScaleManager",
           "LossScaleManager", "LossScaler", "MixedPrecisionCell", "StaticLossScaler",
           "TrainOneStepWithLossScaleCell", "all_finite", "auto_mixed_precision",
           "build_train_network", "custom_mixed_precision", "get_black_list", "get_white_list"]


def auto_mixed_precision(network: Cell, amp_level: str = "O0", dtype: Any = float16) -> Cell:
    """``network`` computed at ``amp_level`` (``"O0"`` … ``"O3"``) in ``dtype`` (float16, as
    MindSpore's default, or bfloat16); ``O0`` returns ``network`` itself."""
    policy = level_policy(amp_level, dtype)
    return network if policy is None else MixedPrecisionCell(network, policy, amp_level)


def custom_mixed_precision(network: Cell, *, white_list: Optional[Iterable[str]] = None,
                           black_list: Optional[Iterable[str]] = None,
                           dtype: Any = float16) -> Cell:
    """``network`` with the IR ops in ``white_list`` computed in ``dtype``, or every
    floating-point op except those in ``black_list`` (op names: ``"matmul"``, ``"conv"``)."""
    return MixedPrecisionCell(network, custom_policy(dtype, white_list, black_list))


def get_white_list() -> list[str]:
    """The ops level O1 computes in low precision."""
    return sorted(AMP_WHITE_LIST)


def get_black_list() -> list[str]:
    """The ops level O2 keeps in float32."""
    return sorted(AMP_BLACK_LIST)


def build_train_network(network: Cell, optimizer: Optimizer, loss_fn: Any = None,
                        level: str = "O0", boost_level: str = "O0", **kwargs: Any) -> Cell:
    """The training step ``Model(network, loss_fn, optimizer, amp_level=level, ...)`` runs."""
    setup = apply_training_transforms(
        TrainingSetup(network, loss_fn, optimizer, options=dict(kwargs)), "build_train_network",
        amp=level, boost=boost_level)
    if setup.train_network is not None:
        return setup.train_network  # type: ignore[no-any-return]
    with_loss = setup.network if setup.loss_fn is None else WithLossCell(setup.network,
                                                                        setup.loss_fn)
    return TrainOneStepCell(with_loss, setup.optimizer)


def training_transform(setup: TrainingSetup, level: str) -> TrainingSetup:
    """``Model(amp_level=...)``: the network wrapped at ``level``.  Options: ``amp_dtype``
    (bfloat16 by default: the low-precision type CPUs compute fast, with float32's range, so
    it needs no loss scaling), ``keep_batchnorm_fp32`` (at O2; ``False`` computes batch norm
    in low precision too) and ``loss_scale_manager`` (default: dynamic loss scaling for
    float16 at O2 and O3, none otherwise)."""
    options = setup.options
    low = low_dtype(options.pop("amp_dtype", bfloat16))
    keep_bn = options.pop("keep_batchnorm_fp32", True)
    manager = options.pop("loss_scale_manager", None)
    policy = level_policy(level, low)
    if policy is None:
        return setup
    name: Optional[str] = level
    if level == "O2" and not keep_bn:
        policy, name = replace(policy, ops=frozenset()), None
    network = MixedPrecisionCell(setup.network, policy, name)
    if manager is None and low is float16 and level in ("O2", "O3"):
        manager = DynamicLossScaleManager()
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise TypeError(f"loss_scale_manager must be a LossScaleManager, got "
                        f"{type(manager).__name__}")
    train_network = setup.train_network
    if manager is not None and setup.optimizer is not None:
        with_loss = network if setup.loss_fn is None else WithLossCell(network, setup.loss_fn)
        train_network = TrainOneStepWithLossScaleCell(with_loss, setup.optimizer, manager)
    return replace(setup, network=network, train_network=train_network, options=options)
