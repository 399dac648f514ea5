"""Model.train / fit / eval / predict with callbacks on small synthetic data, eager and graph
mode giving the same loss curve, the metrics, the callbacks and the progress bar."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mskernel
from mskernel import Tensor, dataset
from mskernel_sdk import assert_close
from mskernel_nn.api import Cell, Dense, ReLU
from mskernel_nn.callbacks import (
    CheckpointConfig, EarlyStopping, LambdaCallback, LossMonitor, ModelCheckpoint, TimeMonitor,
)
from mskernel_nn.checkpoint import load_checkpoint
from mskernel_nn.losses import CrossEntropyLoss
from mskernel_nn.metrics import (
    F1, Accuracy, Fbeta, Loss, Precision, Recall, TopKCategoricalAccuracy, get_metric_fn,
)
from mskernel_nn.model import Model
from mskernel_nn.optim import SGD, Adam
from mskernel_nn.progress import PROGRESS_ENV, progress_enabled

F32 = mskernel.float32
CLASSES = 3


class Net(Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = Dense(4, 16)
        self.act = ReLU()
        self.fc2 = Dense(16, CLASSES)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def blobs(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three well-separated Gaussian clusters in 4-d."""
    rng = np.random.default_rng(seed)
    centres = np.array([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]], np.float32)
    labels = rng.integers(0, CLASSES, count)
    x = centres[labels] + 0.4 * rng.standard_normal((count, 4)).astype(np.float32)
    return x.astype(np.float32), labels.astype(np.int32)


def rows(count: int = 96, batch: int = 16, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    x, y = blobs(count, seed)
    return [(x[i:i + batch], y[i:i + batch]) for i in range(0, count, batch)]


def make_model(jit: bool = True, lr: float = 0.05, seed: int = 0, **kwargs) -> Model:
    mskernel.random.set_seed(seed)
    net = Net()
    return Model(net, CrossEntropyLoss(), Adam(net.trainable_params(), lr),
                 metrics={"acc": Accuracy(), "loss": Loss()}, jit=jit, **kwargs)


def step_losses(model: Model, data, epochs: int = 2) -> list[float]:
    losses: list[float] = []
    model.train(epochs, data, callbacks=LambdaCallback(
        on_train_step_end=lambda ctx: losses.append(float(ctx.original_args().net_outputs))))
    return losses


# -- the training API ---------------------------------------------------------------------------


def test_train_eval_predict_with_callbacks(capsys):
    model = make_model()
    events = []

    def record(name):
        return lambda ctx: events.append((name, ctx.original_args().cur_epoch_num,
                                          ctx.original_args().cur_step_num))

    hooks = ("on_train_begin", "on_train_epoch_begin", "on_train_step_end",
             "on_train_epoch_end", "on_train_end")
    model.train(3, rows(), callbacks=[LambdaCallback(**{h: record(h) for h in hooks}),
                                      LossMonitor(per_print_times=3), TimeMonitor()])
    assert events[0] == ("on_train_begin", 0, 0) and events[-1] == ("on_train_end", 3, 18)
    assert [e for e in events if e[0] == "on_train_epoch_end"] == [
        ("on_train_epoch_end", k, 6 * k) for k in (1, 2, 3)]
    assert sum(e[0] == "on_train_step_end" for e in events) == 18
    out = capsys.readouterr().out
    assert out.count("loss is") == 6 and "epoch: 3 step: 6/6, loss is" in out
    assert out.count("mean loss") == 3 and out.count("per step time") == 3

    results = model.eval(rows(48, seed=1))
    assert set(results) == {"acc", "loss"}
    assert results["acc"] > 0.9 and results["loss"] < 0.5
    x, y = blobs(10, seed=2)
    predicted = model.predict(Tensor(x))
    assert_close(predicted.numpy(), model.predict_network(Tensor(x)).numpy(), F32)
    assert np.mean(predicted.numpy().argmax(1) == y) >= 0.9


def test_eager_and_graph_mode_give_the_same_loss_curve():
    eager = step_losses(make_model(jit=False), rows())
    graph = step_losses(make_model(jit=True), rows())
    assert len(eager) == 12 and eager[-1] < eager[0]
    assert_close(graph, eager, F32, rtol=1e-5, atol=1e-6)


def test_graph_mode_compiles_the_step_once():
    model = make_model()
    model.train(2, rows())
    assert model._steps["train"].cache_info().misses == 1  # one signature: one graph


def test_initial_epoch_continues_the_epoch_count():
    epochs = []
    make_model().train(3, rows(), initial_epoch=2, callbacks=LambdaCallback(
        on_train_epoch_begin=lambda ctx: epochs.append(ctx.original_args().cur_epoch_num)))
    assert epochs == [3]


def test_a_data_plugin_dataset_trains_and_evaluates():
    x, y = blobs(96, seed=0)
    ds = dataset.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(16)
    model = make_model()
    model.train(2, ds)
    assert model.eval(ds)["acc"] > 0.9


def test_fit_validates_and_early_stopping_stops_and_restores():
    model = make_model(lr=0.05)
    stopper = EarlyStopping(monitor="eval_loss", patience=1, restore_best_weights=True)
    seen = []
    model.fit(4, rows(), valid_dataset=rows(48, seed=1), callbacks=[stopper, LambdaCallback(
        on_train_epoch_end=lambda ctx: seen.append(dict(ctx.original_args().eval_results)))])
    assert [set(r) for r in seen] == [{"acc", "loss", "eval_loss"}] * 4
    assert stopper.stopped_epoch == 0  # a learning model keeps improving

    # training loss falls, so "max" finds its best at epoch 1 and stops one epoch later
    model = make_model()
    stopper = EarlyStopping(monitor="loss", mode="max", patience=1, restore_best_weights=True)
    after_epoch = {}
    model.fit(5, rows(), callbacks=[stopper, LambdaCallback(on_train_epoch_end=lambda ctx: (
        after_epoch.__setitem__(ctx.original_args().cur_epoch_num,
                                [p.numpy() for p in model.predict_network.get_parameters()])))])
    assert stopper.stopped_epoch == 2 and sorted(after_epoch) == [1, 2]
    for p, value in zip(model.predict_network.get_parameters(), after_epoch[1]):
        np.testing.assert_array_equal(p.numpy(), value, err_msg=p.name)
    assert not np.array_equal(after_epoch[1][0], after_epoch[2][0])


def test_model_checkpoint_saves_every_n_steps_and_keeps_the_newest(tmp_path):
    model = make_model()
    saver = ModelCheckpoint("net", str(tmp_path), CheckpointConfig(
        save_checkpoint_steps=4, keep_checkpoint_max=2, append_info=["epoch_num", "step_num"]))
    model.train(2, rows(), callbacks=saver)  # steps 4, 8, 12 (= the end)
    assert sorted(os.listdir(tmp_path)) == ["net-2_2.ckpt", "net-2_6.ckpt"]
    assert saver.latest_ckpt_file_name == str(tmp_path / "net-2_6.ckpt")
    saved = load_checkpoint(saver.latest_ckpt_file_name)
    assert (saved["epoch_num"], saved["step_num"]) == (2, 12)
    assert int(saved["global_step"].numpy()) == 12 and "moment1.fc1.weight" in saved
    fresh = make_model(seed=5)
    load_checkpoint(saver.latest_ckpt_file_name, net=fresh.train_network, strict_load=True)
    x = Tensor(blobs(4, seed=3)[0])
    assert_close(fresh.predict(x).numpy(), model.predict(x).numpy(), F32)


def test_loss_monitor_stops_on_a_non_finite_loss():
    mskernel.random.set_seed(0)
    net = Net()
    model = Model(net, CrossEntropyLoss(), SGD(net.trainable_params(), 1e30), jit=False)
    with pytest.raises(ValueError, match=r"epoch 1 step \d+: the loss is (nan|inf)"):
        model.train(3, rows(), callbacks=LossMonitor())


def test_model_errors_name_what_is_missing():
    mskernel.random.set_seed(0)
    net = Net()
    with pytest.raises(ValueError, match="Model.eval needs metrics"):
        Model(net, CrossEntropyLoss()).eval(rows())
    with pytest.raises(ValueError, match="metric 'loss' needs the loss, but the model has no "
                                         "loss_fn"):
        Model(net, metrics={"loss"}).eval(rows())
    with pytest.raises(TypeError, match="callbacks must be Callback instances"):
        make_model().train(1, rows(), callbacks=[print])
    with pytest.raises(ValueError, match="EarlyStopping monitors 'f1'.*known: loss, acc"):
        make_model().fit(1, rows(), rows(), callbacks=EarlyStopping(monitor="f1"))


# -- progress -----------------------------------------------------------------------------------


def test_the_progress_bar_draws_only_for_a_person(monkeypatch, capsys):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    with open(os.devnull, "w") as log:
        assert progress_enabled(Terminal()) and not progress_enabled(log)
    monkeypatch.setenv("CI", "true")
    assert not progress_enabled(Terminal())
    make_model().train(1, rows())
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(PROGRESS_ENV, "1")
    make_model().train(1, rows())
    assert "epoch 1/1" in capsys.readouterr().err


# -- metrics ------------------------------------------------------------------------------------


def test_classification_metrics_against_a_confusion_matrix():
    rng = np.random.default_rng(4)
    scores = rng.standard_normal((50, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 50)
    pred = scores.argmax(1)
    confusion = np.zeros((4, 4))
    np.add.at(confusion, (labels, pred), 1)
    tp = np.diag(confusion)
    precision, recall = tp / confusion.sum(0), tp / confusion.sum(1)
    f_half = 1.25 * precision * recall / (0.25 * precision + recall)
    for metric, expected in ((Precision(), precision), (Recall(), recall),
                             (F1(), 2 * precision * recall / (precision + recall)),
                             (Fbeta(0.5), f_half)):
        metric.update(Tensor(scores[:20]), Tensor(labels[:20]))
        metric.update(scores[20:], np.eye(4)[labels[20:]])  # one-hot labels work too
        np.testing.assert_allclose(metric.eval(), expected, rtol=1e-12)
        assert metric.eval(average=True) == pytest.approx(expected.mean())
    accuracy = get_metric_fn("accuracy")
    accuracy.update(scores, labels)
    assert accuracy.eval() == pytest.approx(np.mean(pred == labels))
    top2 = TopKCategoricalAccuracy(2)
    top2.update(scores, labels)
    in_top2 = [labels[i] in np.argsort(-scores[i])[:2] for i in range(50)]
    assert top2.eval() == pytest.approx(np.mean(in_top2))


def test_other_metric_forms_and_errors():
    multilabel = Accuracy("multilabel")
    multilabel.update(np.array([[0.9, 0.2], [0.4, 0.6]]), np.array([[1, 0], [1, 1]]))
    assert multilabel.eval() == 0.5
    loss = Loss()
    loss.update(Tensor(2.0))
    loss.update(np.array([1.0, 3.0, 5.0]))
    assert loss.eval() == 2.75
    never_predicted = Precision()
    never_predicted.update(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([0, 1]))
    np.testing.assert_array_equal(never_predicted.eval(), [0.5, 0.0])
    with pytest.raises(RuntimeError, match="Accuracy.eval\\(\\) needs at least one example"):
        Accuracy().eval()
    with pytest.raises(ValueError, match="y_pred has 2 rows but y has 3 labels"):
        Accuracy().update(np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="labels must lie in \\[0, 2\\)"):
        Recall().update(np.zeros((2, 2)), np.array([0, 2]))
    with pytest.raises(ValueError, match="unknown metric 'auc'; known: acc, accuracy"):
        get_metric_fn("auc")
