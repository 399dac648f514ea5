"""Checkpoints: round trips, every integrity check (corruption, truncation, foreign files,
newer formats), atomic saves (an injected failure and a process killed mid-save leave the
previous file intact), strict and non-strict loading, and resuming training exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mskernel
from mskernel import Parameter, Tensor, jit
from mskernel_sdk import FileFormatError
from mskernel_nn.api import Cell, Dense, ReLU
from mskernel.testing.filefuzz import Parts, seal, seal_version_1
from mskernel_nn.checkpoint import (
    FORMAT_VERSION, MAGIC, CheckpointError, load_checkpoint, load_param_into_net, save_checkpoint,
)
from mskernel_nn.losses import CrossEntropyLoss
from mskernel_nn.optim import Adam
from mskernel_nn.wrappers import TrainOneStepCell, WithLossCell


class Net(Cell):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.fc1 = Dense(4, hidden)
        self.act = ReLU()
        self.fc2 = Dense(hidden, 3)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def values(cell: Cell) -> dict[str, np.ndarray]:
    return {p.name: p.numpy() for p in cell.get_parameters()}


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "net.ckpt")


def test_round_trip_keeps_names_dtypes_values_and_metadata(path):
    mskernel.random.set_seed(1)
    net = Net()
    extra = {
        "half": Parameter(np.array([1.5, -2.25], np.float32), name="half", dtype="bfloat16"),
        "count": Parameter(np.array([3, 4], np.int64), name="count"),
    }
    save_checkpoint(net, path, append_dict={"epoch_num": 7, "note": "best", "flag": True})
    loaded = load_checkpoint(path)
    assert list(loaded) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "epoch_num",
                            "note", "flag"]
    for name, value in values(net).items():
        assert isinstance(loaded[name], Parameter) and loaded[name].name == name
        np.testing.assert_array_equal(loaded[name].numpy(), value)
    assert (loaded["epoch_num"], loaded["note"], loaded["flag"]) == (7, "best", True)
    save_checkpoint(list(extra.values()), path)
    again = load_checkpoint(path)
    assert again["half"].dtype is mskernel.bfloat16 and again["count"].dtype is mskernel.int64
    np.testing.assert_array_equal(again["half"].numpy(), [1.5, -2.25])
    np.testing.assert_array_equal(again["count"].numpy(), [3, 4])


def test_other_inputs_and_selections(path):
    save_checkpoint({"a.w": np.ones(2, np.float32), "b.w": np.zeros(3)}, path)
    assert list(load_checkpoint(path, filter_prefix="a.")) == ["b.w"]
    assert list(load_checkpoint(path, specify_prefix=["a."])) == ["a.w"]
    assert list(load_checkpoint(path, choice_func=lambda n: n.endswith("b.w"))) == ["b.w"]
    save_checkpoint([{"name": "x", "data": Tensor([1.0, 2.0])}], path,
                    choice_func=lambda n: n == "x")
    np.testing.assert_array_equal(load_checkpoint(path)["x"].numpy(), [1.0, 2.0])


def test_the_namespace_functions_are_these(path):
    assert mskernel.save_checkpoint is save_checkpoint
    assert mskernel.load_checkpoint is load_checkpoint
    assert mskernel.load_param_into_net is load_param_into_net


def test_naming_problems_are_errors(path):
    a, b = Parameter(np.ones(2, np.float32), name="w"), Parameter(np.ones(2, np.float32), name="w")
    with pytest.raises(CheckpointError, match="two different tensors are named 'w'"):
        save_checkpoint([a, b], path)
    with pytest.raises(CheckpointError, match="append_dict key 'w' is also a parameter name"):
        save_checkpoint([a], path, append_dict={"w": 1})
    with pytest.raises(TypeError, match="append_dict\\['cfg'\\] is a dict"):
        save_checkpoint([a], path, append_dict={"cfg": {}})
    assert not os.path.exists(path)


# -- integrity ----------------------------------------------------------------------------------


@pytest.fixture
def saved(path):
    save_checkpoint({"w": np.arange(40, dtype=np.float32), "b": np.ones(3, np.float64)}, path)
    with open(path, "rb") as f:
        return f.read()


def rewrite(path, data):
    with open(path, "wb") as f:
        f.write(data)


def test_a_damaged_payload_fails_the_checksum(path, saved):
    data = bytearray(saved)
    data[-5] ^= 0x40
    rewrite(path, bytes(data))
    with pytest.raises(FileFormatError, match=r"net.ckpt: corrupt: .*SHA-256 checksum"):
        load_checkpoint(path)


@pytest.mark.parametrize("keep", [4, 16, 100, -1])
def test_truncation_is_reported(path, saved, keep):
    rewrite(path, saved[:keep])
    with pytest.raises(FileFormatError, match="truncated"):
        load_checkpoint(path)


def test_foreign_newer_and_garbled_files_are_refused(path, saved):
    rewrite(path, b"PK\x03\x04 this is a zip file" + bytes(64))
    with pytest.raises(FileFormatError, match="not an mskernel checkpoint"):
        load_checkpoint(path)
    newer = bytearray(saved)
    newer[8] = 99  # the format version, little-endian u32 after the magic
    rewrite(path, bytes(newer))
    with pytest.raises(FileFormatError, match="newer mskernel-nn.*format 99.*upgrade"):
        load_checkpoint(path)
    garbled = bytearray(saved)
    garbled[40] = 0xFF  # inside the JSON header
    rewrite(path, bytes(garbled))
    with pytest.raises(FileFormatError, match="corrupt: the file does not match its SHA-256"):
        load_checkpoint(path)
    rewrite(path, saved + b"\0")
    with pytest.raises(FileFormatError, match="1 unexpected bytes after the payload"):
        load_checkpoint(path)


def test_a_damaged_offset_digit_is_caught_and_nothing_is_loaded(path):
    mskernel.random.set_seed(4)
    source, target = Net(), Net()
    save_checkpoint(source, path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[data.index(b'"offset": 128,') + len(b'"offset": ')] = ord("3")  # 128 -> 328
    rewrite(path, bytes(data))
    before = values(target)
    for strict in (True, False):
        with pytest.raises(FileFormatError, match="net.ckpt: corrupt: the file does not match "
                                                  "its SHA-256 checksum"):
            load_checkpoint(path, net=target, strict_load=strict)
    for name, value in values(target).items():
        np.testing.assert_array_equal(value, before[name])


def forge(path, edit):
    """Re-seal the checkpoint at ``path`` with its header edited (a forged file)."""
    with open(path, "rb") as f:
        parts = Parts.of(f.read())
    header = parts.header
    edit(header)
    rewrite(path, seal(MAGIC, FORMAT_VERSION, json.dumps(header).encode(), parts.payload))


@pytest.mark.parametrize("edit, message", [
    (lambda h: h["metadata"].update(w=1), "metadata 'w' is also the name of a tensor"),
    (lambda h: h["metadata"].update(epoch=[1, 2]), "metadata 'epoch' is a list, not a number"),
    (lambda h: h["metadata"].update(epoch=None), "metadata 'epoch' is a NoneType, not a number"),
    (lambda h: h.update(metadata=[]), "header field 'metadata' is missing or not a JSON object"),
    (lambda h: h["tensors"]["b"].update(offset=128), "tensor 'b' is at payload offset 128"),
])
def test_forged_headers_are_refused(path, edit, message):
    save_checkpoint({"w": np.arange(4, dtype=np.float32), "b": np.ones(3)}, path,
                    append_dict={"epoch": 2})
    forge(path, edit)
    with pytest.raises(FileFormatError, match=f"net.ckpt: invalid header: {message}"):
        load_checkpoint(path)


def test_format_1_checkpoints_load_with_a_warning_until_saved_again(path, saved):
    parts = Parts.of(saved)
    rewrite(path, seal_version_1(MAGIC, parts.header, parts.payload))
    with pytest.warns(UserWarning, match="net.ckpt is a format 1 checkpoint: its checksum "
                                         "covers the tensors but not the header"):
        loaded = load_checkpoint(path)
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(40))
    save_checkpoint(loaded, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(load_checkpoint(path)["b"].numpy(), np.ones(3))


def test_an_injected_failure_leaves_the_previous_file_and_no_temporary(path, saved,
                                                                     monkeypatch, tmp_path):
    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint({"w": np.zeros(40, np.float32)}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["net.ckpt"]
    np.testing.assert_array_equal(load_checkpoint(path)["w"].numpy(), np.arange(40))


def test_a_process_killed_mid_save_leaves_the_previous_file_intact(path, saved, tmp_path):
    child = textwrap.dedent("""
        import os, sys, time
        import numpy as np
        from mskernel_nn.checkpoint import save_checkpoint

        def stall(fd):  # the data is written; stop before it is made durable and renamed
            print("writing", flush=True)
            time.sleep(60)

        os.fsync = stall
        save_checkpoint({"w": np.full(1 << 16, 5.0, np.float32)}, sys.argv[1])
    """)
    proc = subprocess.Popen([sys.executable, "-c", child, path], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    np.testing.assert_array_equal(load_checkpoint(path)["w"].numpy(), np.arange(40))
    save_checkpoint({"w": np.ones(2, np.float32)}, path)  # removes what the killed save left
    assert os.listdir(tmp_path) == ["net.ckpt"]


# -- loading into a network ---------------------------------------------------------------------


def test_strict_loading_names_missing_and_unexpected_parameters(path):
    mskernel.random.set_seed(2)
    source, target = Net(), Net()
    params = values(source)
    params.pop("fc2.bias")
    params["fc3.weight"] = np.zeros((3, 3), np.float32)
    save_checkpoint(params, path)
    before = values(target)
    with pytest.raises(CheckpointError, match=r"missing from the checkpoint: fc2\.bias\n.*"
                                              r"unexpected in the checkpoint.*: fc3\.weight"):
        load_checkpoint(path, net=target, strict_load=True)
    for name, value in values(target).items():  # nothing was assigned
        np.testing.assert_array_equal(value, before[name])
    with pytest.warns(UserWarning, match=r"1 parameter\(s\) of Net were not in the checkpoint.*"
                                         r"fc2\.bias"):
        missing, unexpected = load_param_into_net(target, load_checkpoint(path))
    assert (missing, unexpected) == (["fc2.bias"], ["fc3.weight"])
    np.testing.assert_array_equal(target.fc1.weight.numpy(), source.fc1.weight.numpy())
    np.testing.assert_array_equal(target.fc2.bias.numpy(), before["fc2.bias"])


def test_shape_and_dtype_mismatches_are_always_errors(path):
    mskernel.random.set_seed(3)
    wide, narrow = Net(hidden=8), Net(hidden=5)
    save_checkpoint(wide, path)
    with pytest.raises(CheckpointError, match=r"fc1\.weight: the checkpoint has shape \[8, 4\], "
                                              r"the network \[5, 4\]"):
        load_checkpoint(path, net=narrow, strict_load=False)
    counts = Cell()
    counts.steps = Parameter(np.zeros(2, np.int32))
    with pytest.raises(CheckpointError, match="steps: the checkpoint holds float32, the "
                                              "network's parameter is int32"):
        load_param_into_net(counts, {"steps": np.ones(2, np.float32)})


# -- resuming -----------------------------------------------------------------------------------


def make_training(seed: int):
    mskernel.random.set_seed(seed)
    net = Net()
    train_net = TrainOneStepCell(WithLossCell(net, CrossEntropyLoss()),
                                 Adam(net.trainable_params(), learning_rate=0.05))
    return train_net.set_train()


def batches(count: int):
    rng = np.random.default_rng(5)
    return [(Tensor(rng.standard_normal((8, 4)).astype(np.float32)),
             Tensor(rng.integers(0, 3, 8))) for _ in range(count)]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_resuming_from_a_checkpoint_continues_exactly(path, compiled):
    data = batches(6)

    def run(train_net, rows):
        step = jit(train_net) if compiled else train_net
        return [float(step(x, y)) for x, y in rows]

    straight = make_training(seed=0)
    straight_losses = run(straight, data)

    first = make_training(seed=0)
    first_losses = run(first, data[:3])
    save_checkpoint(first, path)
    resumed = make_training(seed=99)  # other initial weights: all must come from the file
    load_checkpoint(path, net=resumed, strict_load=True)
    assert int(resumed.optimizer.global_step.numpy()) == 3
    resumed_losses = run(resumed, data[3:])

    assert first_losses + resumed_losses == straight_losses
    for name, value in values(straight).items():
        np.testing.assert_array_equal(values(resumed)[name], value, err_msg=name)
