"""``mskernel.export`` / ``mskernel.load`` and ``nn.GraphCell``: the model file round trip,
what the trace sees, the file names, and clear errors."""

from __future__ import annotations

import linecache
import os
import re

import numpy as np
import onnx
import pytest

import mskernel
from mskernel import nn
from mskernel_onnx.capture import DroppedCheckWarning
from mskernel_onnx.export import ExportError
from mskernel_sdk import MskernelError, assert_close, dtype
from models import ANCHORS, branchy, build, example, float32_tolerance
from onnx_checks import run_ort


@pytest.mark.parametrize("name", sorted(ANCHORS))
@pytest.mark.parametrize("device", ["reference", "cpu"])
def test_graph_cell_runs_the_exported_model_like_the_network(name, device, rng, tmp_path):
    with mskernel.device(device):
        net = build(name)
        x = mskernel.Tensor(example(name, rng))
        expected = net(x).numpy()
        path = mskernel.export(net, x, file_name=tmp_path / name)
        assert path == str(tmp_path / f"{name}.mindir")
        cell = nn.GraphCell(mskernel.load(path))
        tolerance = float32_tolerance(name, expected)
        assert_close(cell(x).numpy(), expected, dtype("float32"), **tolerance)
        assert_close(mskernel.jit(cell)(x).numpy(), expected, dtype("float32"), **tolerance)
    assert [n for n, _ in cell.parameters_and_names()] == [n for n, _ in net.parameters_and_names()]


def test_a_jitted_function_with_if_and_while_round_trips(rng, tmp_path):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    path = mskernel.export(branchy, mskernel.Tensor(x), mskernel.Tensor(np.array(3)),
                           file_name=tmp_path / "branchy")
    cell = nn.GraphCell(mskernel.load(path))
    for sign, trips in ((1, 3), (-1, 0)):
        arguments = [mskernel.Tensor(sign * np.abs(x)), mskernel.Tensor(np.array(trips))]
        for got, want in zip(cell(*arguments), branchy(*arguments)):
            assert_close(got.numpy(), want.numpy(), want.dtype)


def test_the_graph_cell_can_be_fine_tuned(rng, tmp_path):
    net = build("lenet")
    x = mskernel.Tensor(example("lenet", rng))
    labels = mskernel.Tensor(np.array([1, 3], np.int32))
    cell = nn.GraphCell(mskernel.load(mskernel.export(net, x, file_name=tmp_path / "lenet")))
    loss = nn.CrossEntropyLoss()
    step = nn.TrainOneStepCell(nn.WithLossCell(cell, loss), nn.SGD(cell.trainable_params(), 0.1))
    losses = [float(step(x, labels)) for _ in range(5)]
    assert losses[-1] < losses[0]
    before = dict(net.parameters_and_names())
    changed = [n for n, p in cell.parameters_and_names()
               if not np.array_equal(p.numpy(), before[n].numpy())]
    assert changed == [n for n, _ in net.parameters_and_names()]


def test_params_init_replaces_weights_by_name(rng, tmp_path):
    net = build("mlp")
    x = mskernel.Tensor(example("mlp", rng))
    model = mskernel.load(mskernel.export(net, x, file_name=tmp_path / "mlp"))
    zeros = np.zeros_like(model.weights["2.bias"])
    cell = nn.GraphCell(model, params_init={"2.bias": zeros})
    np.testing.assert_array_equal(dict(cell.parameters_and_names())["2.bias"].numpy(), zeros)
    with pytest.raises(KeyError, match="params_init names 9.bias, which the graph has no"):
        nn.GraphCell(model, params_init={"9.bias": zeros})


def test_graph_cell_names_a_wrong_input(rng, tmp_path):
    net = build("mlp")
    cell = nn.GraphCell(mskernel.load(mskernel.export(
        net, mskernel.Tensor(example("mlp", rng)), file_name=tmp_path / "mlp")))
    with pytest.raises(MskernelError, match=r"input 0 is f32\[2,784\], but the graph takes "
                                            r"f32\[4,784\]"):
        cell(np.zeros((2, 784), np.float32))
    with pytest.raises(MskernelError, match="takes 1 input"):
        cell()


class Noisy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.drop = nn.Dropout(p=0.5)
        self.bn = nn.BatchNorm1d(4)

    def construct(self, x):
        return self.bn(self.drop(self.fc(x)))


def test_export_traces_in_inference_mode_and_restores_the_flags(rng, tmp_path):
    net = Noisy().set_train(True)
    net.drop.set_train(False)
    x = mskernel.Tensor(rng.standard_normal((8, 4)).astype(np.float32))
    path = mskernel.export(net, x, file_name=tmp_path / "noisy")
    assert [c.training for _, c in net.cells_and_names()] == [True, True, False, True]
    model = mskernel.load(path)
    assert not model.graph.ops_used() & {"random_bernoulli", "ref_store"}
    expected = net.set_train(False)(x).numpy()
    # the exported graph folds batch norm into the dense layer: float32 rounding differs
    assert_close(nn.GraphCell(model)(x).numpy(), expected, dtype("float32"))


def test_a_training_step_cannot_be_exported(rng, tmp_path):
    net = build("mlp")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.SGD(net.trainable_params(), 0.1))
    x = mskernel.Tensor(example("mlp", rng))
    with pytest.raises(MskernelError, match=r"assigns parameter '[\w.]+' .*inference mode"):
        mskernel.export(step, x, mskernel.Tensor(np.zeros(4, np.int32)),
                        file_name=tmp_path / "step")
    assert not os.listdir(tmp_path)


class Guarded(nn.Cell):
    """A network whose graph checks its input at run time (a raise and an assert)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x):
        if x.sum() > 100:
            raise ValueError("x is too large")
        assert (x > -5).all(), "x is too small"
        return self.fc(x)


@pytest.mark.parametrize("file_format", ["MINDIR", "ONNX"])
def test_runtime_checks_are_left_out_with_a_warning_naming_them(file_format, rng, tmp_path):
    net = Guarded()
    x = mskernel.Tensor(rng.standard_normal((2, 3)).astype(np.float32))
    big = mskernel.Tensor(np.full((2, 3), 50, np.float32))
    with pytest.raises(ValueError, match="x is too large"):
        mskernel.jit(net)(big)  # the graph checks it
    with pytest.warns(DroppedCheckWarning) as caught:
        path = mskernel.export(net, x, file_name=tmp_path / "guarded", file_format=file_format)
    assert all(w.filename == __file__ for w in caught)  # the warning points at export's call
    statements = {}
    for warning in caught:
        where, error = re.fullmatch(r"export: Guarded is exported without its runtime check at "
                                    r"(\S+) \((.+?)\); a model file has no way to raise it, .*",
                                    str(warning.message)).groups()
        file, line = where.rsplit(":", 1)
        statements[error] = linecache.getline(file, int(line)).strip()
    assert statements == {
        "ValueError: x is too large": 'raise ValueError("x is too large")',
        "AssertionError: x is too small": 'assert (x > -5).all(), "x is too small"'}
    for arg in (x, big):
        expected = net.fc(arg).numpy()
        if file_format == "MINDIR":
            model = mskernel.load(path)
            assert len(model.graph.outputs) == 1  # the result alone: no check flags
            assert_close(nn.GraphCell(model)(arg).numpy(), expected, dtype("float32"))
        else:
            assert len(onnx.load(path).graph.output) == 1
            (got,) = run_ort(onnx.load(path), [arg.numpy()])
            assert_close(got, expected, dtype("float32"))


@pytest.mark.parametrize("file_name, file_format, written", [
    ("net", "MINDIR", "net.mindir"), ("net.mindir", "MINDIR", "net.mindir"),
    ("net", "ONNX", "net.onnx"), ("NET.ONNX", "onnx", "NET.ONNX"),
    ("net.mindir", "ONNX", "net.mindir.onnx"),
])
def test_the_suffix_is_added_as_mindspore_adds_it(file_name, file_format, written, tmp_path):
    net = build("mlp")
    x = mskernel.Tensor(np.zeros((1, 784), np.float32))
    path = mskernel.export(net, x, file_name=tmp_path / file_name, file_format=file_format)
    assert path == str(tmp_path / written) and os.listdir(tmp_path) == [written]


def test_bad_arguments_are_named(tmp_path):
    net = build("mlp")
    with pytest.raises(ValueError, match="file_format must be one of MINDIR, ONNX, got 'AIR'"):
        mskernel.export(net, np.zeros((1, 784), np.float32), file_name=tmp_path / "n",
                        file_format="AIR")
    with pytest.raises(MskernelError, match="export needs example inputs"):
        mskernel.export(net, file_name=tmp_path / "n")


def test_external_data_past_the_threshold(rng, tmp_path):
    from mskernel_onnx.capture import capture
    from mskernel_onnx.export import check_onnx, save_onnx, to_onnx

    net = build("mlp")
    x = example("mlp", rng)
    captured = capture(net, [mskernel.Tensor(x)])
    model = to_onnx(captured.graph, captured.weights)
    path = tmp_path / "mlp.onnx"
    save_onnx(model, path, external_data_threshold=1 << 20)
    data = tmp_path / "mlp.onnx.data"
    weight_bytes = sum(a.nbytes for a in captured.weights.values())
    assert data.stat().st_size >= weight_bytes > path.stat().st_size
    check_onnx(path)
    assert all(t.raw_data and t.data_location == onnx.TensorProto.DEFAULT
               for t in model.graph.initializer)  # the model given is left as it was
    stored = onnx.load(str(path), load_external_data=False)
    offsets = [int(e.value) for t in stored.graph.initializer for e in t.external_data
               if e.key == "offset"]
    assert len(offsets) == len(model.graph.initializer) and all(o % 64 == 0 for o in offsets)
    loaded = onnx.load(str(path))  # reads the data file beside it
    (got,) = run_ort(loaded, [x])
    expected = net(mskernel.Tensor(x)).numpy()
    assert_close(got, expected, dtype("float32"), **float32_tolerance("mlp", expected))
    save_onnx(model, tmp_path / "small.onnx")  # under the threshold: one file
    assert not (tmp_path / "small.onnx.data").exists()


def test_an_op_without_onnx_form_names_the_op_and_the_line(tmp_path):
    @mskernel.jit
    def noisy(x):
        return x + mskernel.random.normal(mskernel.random.key(0), (3,))

    with pytest.raises(ExportError) as error:
        mskernel.export(noisy, np.zeros(3, np.float32), file_name=tmp_path / "n",
                        file_format="ONNX")
    message = str(error.value)
    assert "op 'random_" in message and "test_api.py:" in message
    assert "Threefry" in message


def test_onnx_opset_is_selectable_and_checked(tmp_path):
    net = build("mlp")
    x = np.zeros((1, 784), np.float32)
    path = mskernel.export(net, x, file_name=tmp_path / "n", file_format="ONNX", opset=13)
    assert onnx.load(path).opset_import[0].version == 13
    with pytest.raises(ExportError, match="opset 12 is not supported; choose one of 13..23"):
        mskernel.export(net, x, file_name=tmp_path / "n", file_format="ONNX", opset=12)
