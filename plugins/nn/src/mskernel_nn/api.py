"""``mskernel.nn``: MindSpore's ``mindspore.nn`` names — the :class:`Cell` base class, the
layers (:mod:`mskernel_nn.layers`), the initialisers (:mod:`mskernel_nn.initializer`, with
its function ``mskernel.nn.initializer(init, shape, dtype)``), the losses, the optimizers and learning-rate schedules, the
training wrappers (``WithLossCell``, ``TrainOneStepCell``) and the metrics (also as the module
``mskernel.nn.metrics``, MindSpore 1.x's path).  ``Model`` and the callbacks are in
``mskernel.train``."""

from __future__ import annotations

from . import metrics
from .cell import Cell
from .graph_cell import GraphCell
from .initializer import (
    Constant, HeNormal, HeUniform, Initializer, Normal, One, TruncatedNormal, Uniform,
    XavierNormal, XavierUniform, Zero, calculate_gain, initializer,
)
from .layers import *
from .layers import __all__ as _layers
from .losses import (
    BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss,
    SoftmaxCrossEntropyWithLogits,
)
from .metrics import (
    F1, MAE, MSE, Accuracy, Fbeta, Loss, Metric, Precision, Recall, Top1CategoricalAccuracy,
    Top5CategoricalAccuracy, TopKCategoricalAccuracy,
)
from .optim import (
    SGD, Adam, AdamW, AdamWeightDecay, Lamb, Momentum, Optimizer, OptimizerError, RMSProp,
)
from .schedules import (
    CosineDecayLR, ExponentialDecayLR, LearningRateSchedule, PiecewiseConstantLR,
    PolynomialDecayLR, WarmUpLR,
)
from .wrappers import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = [
    # cells and initialisers
    "Cell", "GraphCell", "Constant", "HeNormal", "HeUniform", "Initializer", "Normal", "One",
    "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform", "Zero", "calculate_gain",
    "initializer", *_layers,
    # losses
    "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "LossBase", "MSELoss", "NLLLoss",
    "SoftmaxCrossEntropyWithLogits",
    # optimizers and schedules
    "Adam", "AdamW", "AdamWeightDecay", "Lamb", "Momentum", "Optimizer", "OptimizerError",
    "RMSProp", "SGD", "CosineDecayLR", "ExponentialDecayLR", "LearningRateSchedule",
    "PiecewiseConstantLR", "PolynomialDecayLR", "WarmUpLR",
    # training wrappers and metrics
    "TrainOneStepCell", "WithEvalCell", "WithLossCell", "Accuracy", "F1", "Fbeta", "Loss", "MAE",
    "MSE", "Metric", "Precision", "Recall", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy", "metrics",
]
