"""``mskernel.train``: MindSpore's ``mindspore.train`` names — :class:`Model`, the callbacks
(and the progress bar), the metrics, and the checkpoint functions::

    from mskernel.train import Model, LossMonitor, Accuracy
"""

from __future__ import annotations

from .callbacks import (
    Callback, CallbackParam, CheckpointConfig, EarlyStopping, LambdaCallback, LossMonitor,
    ModelCheckpoint, RunContext, TimeMonitor,
)
from .checkpoint import CheckpointError, load_checkpoint, load_param_into_net, save_checkpoint
from .metrics import (
    F1, Accuracy, Fbeta, Loss, Metric, Precision, Recall, Top1CategoricalAccuracy,
    Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, names,
)
from .model import Model
from .progress import ProgressBar

__all__ = [
    "Accuracy", "Callback", "CallbackParam", "CheckpointConfig", "CheckpointError",
    "EarlyStopping", "F1", "Fbeta", "LambdaCallback", "Loss", "LossMonitor", "Metric", "Model",
    "ModelCheckpoint", "Precision", "ProgressBar", "Recall", "RunContext", "TimeMonitor",
    "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "TopKCategoricalAccuracy",
    "get_metric_fn", "load_checkpoint", "load_param_into_net", "names", "save_checkpoint",
]
