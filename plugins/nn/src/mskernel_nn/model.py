"""``Model``: MindSpore's high-level training API — ``train``, ``fit``, ``eval``, ``predict``.

    model = Model(net, nn.CrossEntropyLoss(), nn.Adam(net.trainable_params(), 1e-3),
                  metrics={"acc": Accuracy()})
    model.train(10, train_ds, callbacks=[LossMonitor(100), TimeMonitor()])
    print(model.eval(test_ds))                  # {"acc": 0.91}

The training network is ``TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)``
(``network`` alone when it already computes its loss: ``loss_fn=None``).  Without an
optimizer, ``network`` (with its loss) is the training step itself: ``Model(train_net)``
trains a cell of your own that computes the loss and updates the parameters, as
MindSpore's custom training loops do; the step's output is the loss the callbacks see.
Evaluation runs ``WithEvalCell(network, loss_fn)`` and feeds its ``(loss, outputs, label)``
to the metrics.

**One switch for graph mode.**  With ``jit=True`` (the default) the whole training step —
forward, loss, backward, the optimizer's update — is compiled into one graph by
``mskernel.jit`` and run once per batch, updating the parameters and the optimizer's state in
place; evaluation and prediction are compiled too.  ``jit=False`` runs everything eagerly
(PyNative: prints and breakpoints work).  Both give the same losses for the same seed.

**Faster training without rewriting the model.**  ``amp_level`` (``"O0"`` … ``"O3"``: mixed
precision) and ``boost_level`` (``"O0"`` … ``"O2"``: the Boost algorithms) are MindSpore's;
each is served by the plugin that registers the training transform of that name
(mskernel-boost provides both) through :func:`mskernel_sdk.apply_training_transforms`, with
the extra keyword arguments (``loss_scale_manager``, ``keep_batchnorm_fp32``,
``boost_config_dict`` …) as its options; an option no transform takes is an error.

Datasets are mskernel-data datasets (each row: the network's inputs, then the label) or any
re-iterable of rows (tuples of tensors or arrays).  A progress bar shows each epoch and
evaluation on a terminal (:mod:`mskernel_nn.progress`).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

import numpy as np
from mskernel import jit as compile_jit
from mskernel_sdk import (
    Tensor, TrainingSetup, apply_training_transforms, data_parallel_group,
)

from .callbacks import Callback, CallbackParam, RunContext
from .cell import Cell
from .metrics import Metric, get_metric_fn
from .optim.optimizer import Optimizer
from .progress import ProgressBar
from .wrappers import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = ["Model"]


class _Callbacks:
    """Several callbacks called as one (in order)."""

    def __init__(self, callbacks: Union[Callback, Sequence[Callback], None]) -> None:
        items = [] if callbacks is None else [callbacks] if isinstance(callbacks, Callback) \
            else list(callbacks)
        for cb in items:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be Callback instances, got "
                                f"{type(cb).__name__}")
        if not any(isinstance(cb, ProgressBar) for cb in items):
            items.append(ProgressBar())
        self.items = items

    def __getattr__(self, hook: str) -> Any:
        def call(run_context: RunContext) -> None:
            for cb in self.items:
                getattr(cb, hook)(run_context)

        return call


def _steps_per_epoch(dataset: Any) -> Optional[int]:
    if hasattr(dataset, "get_dataset_size"):
        size = dataset.get_dataset_size()
        return None if size < 0 else size
    try:
        return len(dataset)
    except TypeError:
        return None


def _epochs(dataset: Any, count: int) -> Iterator[Iterable[Any]]:
    """One iterable of rows per epoch, ``count`` epochs."""
    if count < 1:
        return
    if hasattr(dataset, "create_tuple_iterator"):
        rows = dataset.create_tuple_iterator(num_epochs=count)
        try:
            for _ in range(count):
                yield rows
        finally:
            rows.stop()
    else:
        for _ in range(count):
            yield dataset


def _as_inputs(row: Any) -> list[Any]:
    """A dataset row as the network's arguments: arrays become tensors."""
    items = list(row) if isinstance(row, (tuple, list)) else [row]
    return [Tensor(x) if isinstance(x, np.ndarray) else x for x in items]


class Model:
    """Training and evaluation of ``network``; see :mod:`mskernel_nn.model`.

    ``metrics``: a dict name → :class:`~mskernel_nn.metrics.Metric`, or a set of metric names
    (``{"accuracy", "loss"}``).  ``eval_network``: your own evaluation cell; ``eval_indexes``
    picks ``(loss, outputs, label)`` from its outputs.  ``jit``: graph mode for every step.
    ``parallel_mode`` (``"data_parallel"``; default: the process-wide setting of the plugin
    providing the ranks) trains data parallel: see :class:`TrainOneStepCell`; evaluation then
    sums each metric's counts over the ranks, so every rank gets the metric of all the ranks'
    data.  ``amp_level``, ``boost_level`` and the other keyword arguments: see
    :mod:`mskernel_nn.model`.
    """

    def __init__(self, network: Cell, loss_fn: Any = None, optimizer: Optional[Optimizer] = None,
                 metrics: Union[Mapping[str, Metric], Iterable[str], None] = None,
                 eval_network: Optional[Cell] = None,
                 eval_indexes: Optional[Sequence[int]] = None, jit: bool = True,
                 parallel_mode: Optional[str] = None, amp_level: str = "O0",
                 boost_level: str = "O0", **kwargs: Any) -> None:
        if not isinstance(network, Cell):
            raise TypeError(f"Model: network must be a Cell, got {type(network).__name__}")
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError(f"Model: optimizer must be an nn Optimizer, got "
                            f"{type(optimizer).__name__}")
        if eval_indexes is not None and len(eval_indexes) != 3:
            raise ValueError(f"Model: eval_indexes gives the positions of (loss, outputs, label) "
                             f"among eval_network's outputs, got {list(eval_indexes)}")
        setup = apply_training_transforms(
            TrainingSetup(network, loss_fn, optimizer, options=dict(kwargs)), "Model",
            amp=amp_level, boost=boost_level)
        network, loss_fn, optimizer = setup.network, setup.loss_fn, setup.optimizer
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._metrics = _metric_table(metrics)
        self._jit = jit
        with_loss = network if loss_fn is None else WithLossCell(network, loss_fn)
        self._train_network = setup.train_network or (
            with_loss if optimizer is None
            else TrainOneStepCell(with_loss, optimizer, parallel_mode))
        self._eval_network = eval_network or WithEvalCell(network, loss_fn)
        self._eval_indexes = None if eval_indexes is None else list(eval_indexes)
        self._steps: dict[str, Any] = {}

    @property
    def train_network(self) -> Cell:
        """The training step cell."""
        return self._train_network

    @property
    def eval_network(self) -> Cell:
        return self._eval_network

    @property
    def predict_network(self) -> Cell:
        return self._network

    def _step(self, kind: str, cell: Cell) -> Any:
        """The callable running ``cell``: compiled once (``jit``) or the cell itself."""
        if not self._jit:
            return cell
        if kind not in self._steps:
            self._steps[kind] = compile_jit(cell)
        return self._steps[kind]

    # -- training ---------------------------------------------------------------------------

    def train(self, epoch: int, train_dataset: Any, callbacks: Any = None,
              dataset_sink_mode: bool = False, sink_size: int = -1,
              initial_epoch: int = 0) -> None:
        """Train for epochs ``initial_epoch + 1`` … ``epoch`` over ``train_dataset``.
        ``dataset_sink_mode`` and ``sink_size`` are accepted for MindSpore scripts; rows are
        always fed from the host."""
        self._fit(epoch, train_dataset, None, 1, callbacks, initial_epoch)

    def fit(self, epoch: int, train_dataset: Any, valid_dataset: Any = None,
            valid_frequency: int = 1, callbacks: Any = None, dataset_sink_mode: bool = False,
            valid_dataset_sink_mode: bool = False, sink_size: int = -1,
            initial_epoch: int = 0) -> None:
        """:meth:`train`, evaluating on ``valid_dataset`` every ``valid_frequency`` epochs;
        the results (the metrics, plus ``eval_loss`` when there is a loss function) are the
        callbacks' ``eval_results``."""
        self._fit(epoch, train_dataset, valid_dataset, valid_frequency, callbacks, initial_epoch)

    def _fit(self, epoch: int, train_dataset: Any, valid_dataset: Any, valid_frequency: int,
             callbacks: Any, initial_epoch: int) -> None:
        if not isinstance(epoch, int) or not 0 <= initial_epoch <= epoch:
            raise ValueError(f"Model.train: need 0 <= initial_epoch <= epoch, got epoch={epoch!r}"
                             f", initial_epoch={initial_epoch!r}")
        if not isinstance(valid_frequency, int) or valid_frequency < 1:
            raise ValueError(f"Model.fit: valid_frequency must be an int >= 1, got "
                             f"{valid_frequency!r}")
        cbs = _Callbacks(callbacks)
        cb = CallbackParam(
            train_network=self._train_network, network=self._network,
            optimizer=self._optimizer, loss_fn=self._loss_fn, train_dataset=train_dataset,
            valid_dataset=valid_dataset, epoch_num=epoch, batch_num=_steps_per_epoch(train_dataset),
            cur_epoch_num=initial_epoch, cur_step_num=0, cur_step_in_epoch=0, net_outputs=None,
            epoch_loss=float("nan"), eval_results=None, mode="train")
        run_context = RunContext(cb)
        step = self._step("train", self._train_network)
        cbs.on_train_begin(run_context)
        for rows in _epochs(train_dataset, epoch - initial_epoch):
            self._train_network.set_train(True)
            cb.cur_epoch_num += 1
            cb.cur_step_in_epoch = 0
            cb.eval_results = None
            cbs.on_train_epoch_begin(run_context)
            losses = []
            for row in rows:
                cbs.on_train_step_begin(run_context)
                cb.net_outputs = step(*_as_inputs(row))
                losses.append(cb.net_outputs)
                cb.cur_step_num += 1
                cb.cur_step_in_epoch += 1
                cbs.on_train_step_end(run_context)
                if run_context.get_stop_requested():
                    break
            cb.epoch_loss = _mean_loss(losses)
            if valid_dataset is not None and cb.cur_epoch_num % valid_frequency == 0:
                cb.eval_results = self._evaluate(valid_dataset, cbs, with_loss=True)
            cbs.on_train_epoch_end(run_context)
            if run_context.get_stop_requested():
                break
        cbs.on_train_end(run_context)

    # -- evaluation and prediction ----------------------------------------------------------

    def eval(self, valid_dataset: Any, callbacks: Any = None,
             dataset_sink_mode: bool = False) -> dict[str, Any]:
        """The metrics over ``valid_dataset``, as ``{name: value}``."""
        if not self._metrics:
            raise ValueError("Model.eval needs metrics: Model(..., metrics={'acc': Accuracy()})")
        return self._evaluate(valid_dataset, _Callbacks(callbacks), with_loss=False)

    def _evaluate(self, dataset: Any, cbs: _Callbacks, with_loss: bool) -> dict[str, Any]:
        metrics = dict(self._metrics)
        if with_loss and self._loss_fn is not None:
            metrics["eval_loss"] = get_metric_fn("loss")
        for metric in metrics.values():
            metric.clear()
        cb = CallbackParam(network=self._network, eval_network=self._eval_network,
                           valid_dataset=dataset, batch_num=_steps_per_epoch(dataset),
                           cur_step_num=0, net_outputs=None, metrics=metrics,
                           eval_results=None, mode="eval")
        run_context = RunContext(cb)
        step = self._step("eval", self._eval_network)
        self._eval_network.set_train(False)
        cbs.on_eval_begin(run_context)
        cbs.on_eval_epoch_begin(run_context)
        for rows in _epochs(dataset, 1):
            for row in rows:
                cbs.on_eval_step_begin(run_context)
                cb.net_outputs = step(*_as_inputs(row))
                triple = self._triple(cb.net_outputs)
                for name, metric in metrics.items():
                    picked = [triple[i] for i in metric.indexes]
                    if any(x is None for x in picked):
                        raise ValueError(f"metric {name!r} needs the loss, but the model has "
                                         "no loss_fn")
                    metric.update(*picked)
                cb.cur_step_num += 1
                cbs.on_eval_step_end(run_context)
        group = data_parallel_group()
        if group is not None:
            for metric in metrics.values():
                metric.merge_over(group)
        cb.eval_results = {name: metric.eval() for name, metric in metrics.items()}
        cbs.on_eval_epoch_end(run_context)
        cbs.on_eval_end(run_context)
        return cb.eval_results

    def _triple(self, outputs: Any) -> Sequence[Any]:
        if self._eval_indexes is not None:
            return [outputs[i] for i in self._eval_indexes]
        if not isinstance(outputs, (tuple, list)) or len(outputs) != 3:
            raise ValueError("the evaluation network must return (loss, outputs, label); give "
                             "eval_indexes to pick them from a custom eval_network's outputs")
        return outputs

    def predict(self, *predict_data: Any) -> Any:
        """``network(*predict_data)`` in inference mode (compiled with ``jit``)."""
        self._network.set_train(False)
        return self._step("predict", self._network)(*_as_inputs(predict_data))


def _metric_table(metrics: Union[Mapping[str, Metric], Iterable[str], None]) -> dict[str, Metric]:
    if metrics is None:
        return {}
    if isinstance(metrics, Mapping):
        table = dict(metrics)
        for name, metric in table.items():
            if not isinstance(metric, Metric):
                raise TypeError(f"Model: metric {name!r} must be a Metric, got "
                                f"{type(metric).__name__}")
        return table
    if isinstance(metrics, str):
        metrics = [metrics]
    return {name: get_metric_fn(name) for name in metrics}


def _mean_loss(losses: list[Any]) -> float:
    if not losses:
        return float("nan")
    values = [np.mean(np.asarray(x[0] if isinstance(x, (tuple, list)) else x)) for x in losses]
    return float(np.mean(values))
