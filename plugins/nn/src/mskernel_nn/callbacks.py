"""Training callbacks (MindSpore's ``mindspore.train`` callbacks): the :class:`Callback` base
class, :class:`RunContext`, :class:`LossMonitor`, :class:`TimeMonitor`,
:class:`ModelCheckpoint` with :class:`CheckpointConfig`, :class:`EarlyStopping` and
:class:`LambdaCallback`.  The progress bar is :class:`~mskernel_nn.progress.ProgressBar`.

:class:`~mskernel_nn.model.Model` calls each callback's hooks with a :class:`RunContext`
whose ``original_args()`` are the run's :class:`CallbackParam`: ``train_network``,
``network``, ``optimizer``, ``loss_fn``, ``epoch_num`` (the last epoch), ``batch_num``
(steps per epoch, ``None`` when unknown), ``cur_epoch_num`` (1-based), ``cur_step_num``
(steps taken in the whole run), ``cur_step_in_epoch``, ``net_outputs`` (the last step's loss
tensor), ``epoch_loss`` (the epoch's mean training loss, at epoch end), ``eval_results``
(the validation metrics of :meth:`Model.fit`, at epoch end) and ``mode`` (``"train"`` or
``"eval"``).  ``run_context.request_stop()`` ends training after the current step.

Hooks (all optional): ``on_train_begin``, ``on_train_epoch_begin``, ``on_train_step_begin``,
``on_train_step_end``, ``on_train_epoch_end``, ``on_train_end`` and the ``on_eval_*``
counterparts.  MindSpore 1.x names (``begin``, ``epoch_begin``, ``step_begin``,
``step_end``, ``epoch_end``, ``end``) work too: the ``on_train_*`` hooks call them.
Messages go through ``tqdm.write``, so they do not break a progress bar.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np
from mskernel_sdk import data_parallel_group
from tqdm import tqdm

from .checkpoint import save_checkpoint

__all__ = [
    "Callback", "CallbackParam", "CheckpointConfig", "EarlyStopping", "LambdaCallback",
    "LossMonitor", "ModelCheckpoint", "RunContext", "TimeMonitor",
]


class CallbackParam(dict):
    """The state of a run, as a dict whose keys are also attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"the run has no {name!r} (known: {', '.join(self)})") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


class RunContext:
    """What a callback gets: the run's parameters and a way to stop it."""

    def __init__(self, original_args: CallbackParam) -> None:
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> CallbackParam:
        return self._original_args

    def request_stop(self) -> None:
        """End training after the current step (and the epoch's end hooks)."""
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    """Base class: override the hooks you need; see :mod:`mskernel_nn.callbacks`."""

    def begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_begin`."""

    def epoch_begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_epoch_begin`."""

    def step_begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_step_begin`."""

    def step_end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_step_end`."""

    def epoch_end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_epoch_end`."""

    def end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of :meth:`on_train_end`."""

    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None:
        """Before the first evaluation step."""

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        """Before the evaluation pass over the dataset."""

    def on_eval_step_begin(self, run_context: RunContext) -> None:
        """Before each evaluation step."""

    def on_eval_step_end(self, run_context: RunContext) -> None:
        """After each evaluation step (``net_outputs``: the evaluation network's outputs)."""

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        """After the evaluation pass (``eval_results`` holds the metrics)."""

    def on_eval_end(self, run_context: RunContext) -> None:
        """After evaluation."""


def _loss_value(outputs: Any) -> float:
    """The loss among a step's outputs: the output itself, or its first element."""
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    return float(np.mean(np.asarray(outputs)))


class LossMonitor(Callback):
    """Prints the loss every ``per_print_times`` steps (0: never) and, at each epoch's end,
    the epoch's mean loss and any validation results.  A NaN or infinite loss stops the run
    with a ``ValueError``."""

    def __init__(self, per_print_times: int = 1) -> None:
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"per_print_times must be an int >= 0, got {per_print_times!r}")
        self._per_print_times = per_print_times

    def on_train_step_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        if not self._per_print_times or cb.cur_step_num % self._per_print_times:
            return
        loss = _loss_value(cb.net_outputs)
        if not math.isfinite(loss):
            raise ValueError(f"epoch {cb.cur_epoch_num} step {cb.cur_step_in_epoch}: the loss "
                             f"is {loss}; training stopped")
        total = f"/{cb.batch_num}" if cb.batch_num else ""
        tqdm.write(f"epoch: {cb.cur_epoch_num} step: {cb.cur_step_in_epoch}{total}, "
                   f"loss is {loss:.6f}")

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        message = f"epoch: {cb.cur_epoch_num}, mean loss {cb.epoch_loss:.6f}"
        if cb.eval_results:
            message += ", eval: " + ", ".join(f"{k} {_format(v)}" for k, v in
                                              cb.eval_results.items())
        tqdm.write(message)


def _format(value: Any) -> str:
    return f"{value:.6f}" if isinstance(value, float) else str(value)


class TimeMonitor(Callback):
    """Prints each epoch's wall time and the time per step.  ``data_size`` (steps per epoch)
    is taken from the run when ``None``."""

    def __init__(self, data_size: Optional[int] = None) -> None:
        self.data_size = data_size
        self._start = 0.0
        self._steps = 0

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self._start = time.perf_counter()
        self._steps = run_context.original_args().cur_step_num

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        elapsed_ms = (time.perf_counter() - self._start) * 1e3
        steps = self.data_size or (cb.cur_step_num - self._steps)
        per_step = f", per step time: {elapsed_ms / steps:.3f} ms" if steps else ""
        tqdm.write(f"epoch {cb.cur_epoch_num} time: {elapsed_ms:.1f} ms{per_step}")


class CheckpointConfig:
    """When :class:`ModelCheckpoint` saves: every ``save_checkpoint_steps`` steps (and at the
    end of training), keeping the newest ``keep_checkpoint_max`` files.  ``saved_network``
    saves that cell instead of the training network (which holds the optimizer's state too).
    ``append_info`` adds ``"epoch_num"``/``"step_num"`` (the names) and dicts of your own
    values to each file's metadata."""

    def __init__(self, save_checkpoint_steps: int = 1, keep_checkpoint_max: int = 5,
                 saved_network: Any = None,
                 append_info: Optional[Sequence[Any]] = None) -> None:
        for name, value in (("save_checkpoint_steps", save_checkpoint_steps),
                            ("keep_checkpoint_max", keep_checkpoint_max)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"CheckpointConfig: {name} must be an int >= 1, got {value!r}")
        self.save_checkpoint_steps = save_checkpoint_steps
        self.keep_checkpoint_max = keep_checkpoint_max
        self.saved_network = saved_network
        self.append_info = list(append_info or [])
        for item in self.append_info:
            if not (item in ("epoch_num", "step_num") or isinstance(item, dict)):
                raise ValueError(f"CheckpointConfig: append_info holds 'epoch_num', 'step_num' "
                                 f"or dicts, got {item!r}")


class ModelCheckpoint(Callback):
    """Saves checkpoints ``<directory>/<prefix>-<epoch>_<step in epoch>.ckpt`` as ``config``
    says (default: every step, the newest 5 kept), atomically.  A resumed run loads the
    newest one (``latest_ckpt_file_name``) into fresh objects with
    :func:`~mskernel_nn.checkpoint.load_checkpoint`.

    Data parallel (see :func:`mskernel_sdk.data_parallel_group`): the replicas are equal, so
    rank 0 alone writes each file; every rank waits until it is written, so any rank may load
    it as soon as the callback returns."""

    def __init__(self, prefix: str = "CKP", directory: Optional[str] = None,
                 config: Optional[CheckpointConfig] = None) -> None:
        if not prefix or os.sep in prefix:
            raise ValueError(f"ModelCheckpoint: prefix must be a file-name prefix, got {prefix!r}")
        self.prefix = prefix
        self.directory = os.path.abspath(directory or os.getcwd())
        self.config = config or CheckpointConfig()
        self._saved: list[str] = []
        self._last_saved_step = -1
        self.latest_ckpt_file_name: Optional[str] = None

    def on_train_step_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        if cb.cur_step_num % self.config.save_checkpoint_steps == 0:
            self._save(cb)

    def on_train_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        if cb.cur_step_num and cb.cur_step_num != self._last_saved_step:
            self._save(cb)

    def _save(self, cb: CallbackParam) -> None:
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory,
                            f"{self.prefix}-{cb.cur_epoch_num}_{cb.cur_step_in_epoch}.ckpt")
        append: dict[str, Any] = {}
        for item in self.config.append_info:
            if item == "epoch_num":
                append["epoch_num"] = cb.cur_epoch_num
            elif item == "step_num":
                append["step_num"] = cb.cur_step_num
            else:
                append.update(item)
        group = data_parallel_group()
        if group is None or group.rank == 0:
            save_checkpoint(self.config.saved_network or cb.train_network, path,
                            append_dict=append)
        self._last_saved_step = cb.cur_step_num
        self.latest_ckpt_file_name = path
        if path in self._saved:
            self._saved.remove(path)
        self._saved.append(path)
        while len(self._saved) > self.config.keep_checkpoint_max:
            old = self._saved.pop(0)
            if os.path.exists(old) and (group is None or group.rank == 0):
                os.remove(old)
        if group is not None:
            group.barrier()


_HIGHER_IS_BETTER = ("acc", "precision", "recall", "f1", "fbeta", "auc", "map")


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs after the one that set the best value.

    ``monitor`` is ``"loss"`` (the epoch's mean training loss) or a key of the validation
    results of :meth:`Model.fit` (a metric name, or ``"eval_loss"``).  ``mode`` is ``"min"``,
    ``"max"`` or ``"auto"`` (max for accuracy-like names, else min).  ``baseline``: a value
    the monitor must beat to count as improving.  ``restore_best_weights`` puts back the
    network's parameters (not the optimizer's state) of the best epoch at the end."""

    def __init__(self, monitor: str = "eval_loss", min_delta: float = 0.0, patience: int = 0,
                 verbose: bool = False, mode: str = "auto", baseline: Optional[float] = None,
                 restore_best_weights: bool = False) -> None:
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got {mode!r}")
        if not isinstance(patience, int) or patience < 0:
            raise ValueError(f"EarlyStopping: patience must be an int >= 0, got {patience!r}")
        self.monitor = monitor
        self.min_delta = abs(float(min_delta))
        self.patience = patience
        self.verbose = verbose
        if mode == "auto":
            mode = "max" if any(k in monitor.lower() for k in _HIGHER_IS_BETTER) else "min"
        self.mode = mode
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.stopped_epoch = 0
        self.best: float = math.nan
        self._wait = 0
        self._best_weights: Optional[list[np.ndarray]] = None

    def _improved(self, current: float, reference: float) -> bool:
        if self.mode == "min":
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def on_train_begin(self, run_context: RunContext) -> None:
        self._wait = 0
        self.stopped_epoch = 0
        self.best = math.inf if self.mode == "min" else -math.inf
        if self.baseline is not None:
            self.best = float(self.baseline)
        self._best_weights = None

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        current = self._current(cb)
        if self._improved(current, self.best):
            self.best = current
            self._wait = 0
            if self.restore_best_weights:
                self._best_weights = [p.numpy() for p in cb.network.get_parameters()]
            return
        self._wait += 1
        if self._wait >= self.patience:
            self.stopped_epoch = cb.cur_epoch_num
            run_context.request_stop()
            if self.verbose:
                tqdm.write(f"epoch {cb.cur_epoch_num}: early stopping, {self.monitor} has not "
                           f"improved on {self.best:.6f} for {self._wait} epoch(s)")

    def on_train_end(self, run_context: RunContext) -> None:
        if self.restore_best_weights and self._best_weights is not None:
            params = run_context.original_args().network.get_parameters()
            for p, value in zip(params, self._best_weights):
                p.assign_value(value)

    def _current(self, cb: CallbackParam) -> float:
        if self.monitor == "loss":
            return float(cb.epoch_loss)
        results = cb.eval_results or {}
        if self.monitor not in results:
            known = ", ".join(["loss", *results]) if results else "loss (no validation ran)"
            raise ValueError(f"EarlyStopping monitors {self.monitor!r}, which this run does not "
                             f"report; known: {known}")
        return float(results[self.monitor])


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_train_epoch_end=lambda ctx: ...)``;
    any hook name of :class:`Callback` may be given."""

    def __init__(self, **hooks: Callable[[RunContext], Any]) -> None:
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise TypeError(f"LambdaCallback: {name!r} is not a callback hook")
            setattr(self, name, fn)
