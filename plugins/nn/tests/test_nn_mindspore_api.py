"""MindSpore's training API as its scripts use it: the top-level names and module paths, the
MAE/MSE metrics, ``Cell(auto_prefix=...)`` and ``set_grad``, cells run compiled after
``set_context(mode=GRAPH_MODE)`` or built inside ``@jit``, and ``Model`` around a training
cell of the user's own."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import mskernel
from mskernel import Tensor
from mskernel.testing import assert_close
from mskernel_nn import callbacks, checkpoint, initializer, metrics, model
from mskernel_nn.api import (
    MAE, MSE, Cell, Dense, Momentum, MSELoss, ReLU, SequentialCell, TrainOneStepCell,
    WithLossCell,
)
from mskernel_nn.callbacks import Callback
from mskernel_nn.model import Model

F32 = mskernel.float32


@pytest.fixture
def graph_mode():
    mskernel.set_context(mode=mskernel.GRAPH_MODE)
    yield
    mskernel.set_context(mode=mskernel.PYNATIVE_MODE)


def line(count: int = 64, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``y = 2x + 3`` with noise, in batches of 16."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-10, 10, (count, 1)).astype(np.float32)
    y = (2 * x + 3 + rng.normal(0, 1, (count, 1))).astype(np.float32)
    return [(x[i:i + 16], y[i:i + 16]) for i in range(0, count, 16)]


# -- names and paths --------------------------------------------------------------------------


def test_top_level_names_are_the_training_api():
    assert mskernel.Model is model.Model
    for name in ("Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
                 "CheckpointConfig"):
        assert getattr(mskernel, name) is getattr(callbacks, name)
    assert mskernel.save_checkpoint is checkpoint.save_checkpoint


@pytest.mark.parametrize("path, module", [
    ("mskernel.train.callback", callbacks), ("mskernel.train.serialization", checkpoint),
    ("mskernel.train.model", model), ("mskernel.nn.metrics", metrics),
    ("mskernel.train.metrics", metrics), ("mskernel.common.initializer", initializer),
])
def test_mindspore_module_paths_import(path, module):
    assert importlib.import_module(path) is module


def test_from_imports_of_mindspore_paths():
    from mskernel.common.initializer import Normal, One  # noqa: PLC0415 - the imports are the test
    from mskernel.train.callback import LossMonitor  # noqa: PLC0415
    from mskernel.train.serialization import load_param_into_net  # noqa: PLC0415

    assert LossMonitor is callbacks.LossMonitor and Normal is initializer.Normal
    assert load_param_into_net is checkpoint.load_param_into_net
    t = Tensor(shape=(2, 2), dtype=F32, init=One())
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 2)))


# -- MAE and MSE ------------------------------------------------------------------------------


def test_mae_and_mse_sum_each_example_s_errors_and_average_over_examples():
    y_pred = np.array([[0.1, 0.2, 0.6, 0.9], [0.1, 0.2, 0.6, 0.9]], np.float32)
    y = np.array([[0.1, 0.25, 0.7, 0.9], [0.1, 0.25, 0.7, 0.9]], np.float32)
    diff = y[0].astype(np.float64) - y_pred[0]  # every row has the same error
    for metric, per_row in ((MAE(), np.abs(diff).sum()), (MSE(), (diff ** 2).sum())):
        metric.update(Tensor(y_pred), Tensor(y))
        metric.update(y_pred[:1], y[:1])
        assert metric.eval() == pytest.approx(per_row)
    assert metrics.get_metric_fn("MAE").__class__ is MAE
    assert metrics.get_metric_fn("mse").__class__ is MSE
    with pytest.raises(ValueError, match="they must hold as many values"):
        MAE().update(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(RuntimeError, match="needs at least one example"):
        MSE().eval()


def test_mae_reshapes_labels_to_the_predictions():
    mae = MAE()
    mae.update(np.array([[1.0], [2.0], [4.0]]), np.array([1.5, 2.0, 3.0]))
    assert mae.eval() == pytest.approx(1.5 / 3)


# -- cells ------------------------------------------------------------------------------------


class Wrapper(Cell):
    def __init__(self, net: Cell, auto_prefix: bool) -> None:
        super().__init__(auto_prefix=auto_prefix)
        self.inner = net

    def construct(self, x):
        return self.inner(x)


def test_auto_prefix_false_names_the_children_s_parameters_as_if_they_stood_in_its_place():
    named = Wrapper(SequentialCell(Dense(2, 2)), True)
    plain = Wrapper(SequentialCell(Dense(2, 2)), False)
    assert [p.name for p in named.get_parameters()] == ["inner.0.weight", "inner.0.bias"]
    assert [p.name for p in plain.get_parameters()] == ["0.weight", "0.bias"]
    outer = SequentialCell(plain)
    assert [p.name for p in outer.get_parameters()] == ["0.0.weight", "0.0.bias"]


def test_set_grad_records_the_flag():
    net = Dense(2, 2)
    assert net.requires_grad is False
    assert net.set_grad() is net and net.requires_grad is True
    assert net.set_grad(False).requires_grad is False


def train_three_steps() -> list[np.ndarray]:
    mskernel.random.set_seed(3)
    net = Dense(1, 1)
    step = TrainOneStepCell(WithLossCell(net, MSELoss()),
                            Momentum(net.trainable_params(), 0.005, 0.9))
    step.set_train()
    losses = [step(Tensor(x), Tensor(y)).numpy() for x, y in line()[:3]]
    return losses + [p.numpy() for p in net.get_parameters()]


def test_graph_mode_compiles_a_called_cell_once_and_matches_pynative(graph_mode):
    graph = train_three_steps()
    mskernel.set_context(mode=mskernel.PYNATIVE_MODE)
    eager = train_three_steps()
    for a, b in zip(graph, eager):
        assert_close(a, b, F32)
    mskernel.set_context(mode=mskernel.GRAPH_MODE)
    net = SequentialCell(Dense(3, 4), ReLU())
    x = Tensor(np.ones((2, 3), np.float32))
    assert_close(net(x).numpy(), net.construct(x).numpy(), F32)
    net(x)
    assert net._compiled_cell.cache_info().misses == 1


def test_a_network_built_inside_jit_has_concrete_weights():
    @mskernel.jit
    def run(x):
        net = SequentialCell(Dense(3, 4), ReLU(), Dense(4, 2))
        return net(x)

    x = Tensor(np.ones((2, 3), np.float32))
    mskernel.random.set_seed(5)
    eager = run.python_function(x)
    mskernel.random.set_seed(5)
    assert len(run.lower(x).program.params) == 4  # the weights are parameters, not constants
    mskernel.random.set_seed(5)
    assert_close(run(x).numpy(), eager.numpy(), F32)
    assert_close(run(x).numpy(), eager.numpy(), F32)  # built once, at compilation


# -- Model around the user's own training cell ----------------------------------------------------


class OwnStep(Cell):
    """A training step of the user's own: the loss, its gradients, the update."""

    def __init__(self, network: Cell, optimizer) -> None:
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters

    def construct(self, x, y):
        loss, grads = mskernel.value_and_grad(self.network, None, weights=self.weights)(x, y)
        self.optimizer(grads)
        return loss


class Losses(Callback):
    def __init__(self) -> None:
        self.seen: list[float] = []

    def on_train_step_end(self, run_context) -> None:
        self.seen.append(float(run_context.original_args().net_outputs.asnumpy()))


@pytest.mark.parametrize("jit", [True, False])
def test_model_trains_a_training_cell_without_an_optimizer(jit):
    mskernel.random.set_seed(1)
    net = Dense(1, 1)
    step = OwnStep(WithLossCell(net, MSELoss()), Momentum(net.trainable_params(), 0.005, 0.9))
    trainer = Model(step, jit=jit)
    assert trainer.train_network is step
    seen = Losses()
    trainer.train(4, line(), callbacks=[seen])
    assert len(seen.seen) == 16 and np.mean(seen.seen[-4:]) < np.mean(seen.seen[:4]) / 4
    assert [p.name for p in step.get_parameters()][:2] == ["weight", "bias"]
