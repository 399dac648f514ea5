"""``mskernel.train``: MindSpore's ``mindspore.train`` names — :class:`Model`, the callbacks
(and the progress bar), the metrics, and the checkpoint functions::

    from mskernel.train import Model, LossMonitor, Accuracy

and its modules under MindSpore's paths: ``mskernel.train.callback``,
``mskernel.train.serialization``, ``mskernel.train.model`` and ``mskernel.train.metrics``.
"""

from __future__ import annotations

from . import callbacks as callback, checkpoint as serialization, metrics, model
from .callbacks import (
    Callback, CallbackParam, CheckpointConfig, EarlyStopping, LambdaCallback, LossMonitor,
    ModelCheckpoint, RunContext, TimeMonitor,
)
from .checkpoint import CheckpointError, load_checkpoint, load_param_into_net, save_checkpoint
from .metrics import (
    F1, MAE, MSE, Accuracy, Fbeta, Loss, Metric, Precision, Recall, Top1CategoricalAccuracy,
    Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, names,
)
from .model import Model
from .progress import ProgressBar

__all__ = [
    "Accuracy", "Callback", "CallbackParam", "CheckpointConfig", "CheckpointError",
    "EarlyStopping", "F1", "Fbeta", "LambdaCallback", "Loss", "LossMonitor", "MAE", "MSE",
    "Metric", "Model", "ModelCheckpoint", "Precision", "ProgressBar", "Recall", "RunContext",
    "TimeMonitor", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy", "callback", "get_metric_fn", "load_checkpoint",
    "load_param_into_net", "metrics", "model", "names", "save_checkpoint", "serialization",
]
