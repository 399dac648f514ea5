"""Mutation fuzzing of checkpoints (weights, optimizer state, metadata), with a fixed seed and
a bounded count, loaded into a training network strictly and not: every damaged or forged file
is refused with a clear one-line FileFormatError naming the file and leaves the network as it
was, or loads exactly what was saved — never another exception, never other content.

``MSKERNEL_FUZZ_MUTANTS`` sets the count per family (default 300); run with ``-s`` to see
the outcome counts."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import mskernel
from mskernel import Parameter, Tensor
from mskernel_sdk import FileFormatError
from mskernel.testing.filefuzz import mutants, outcomes, same_arrays
from mskernel_nn.api import Cell, Dense, ReLU
from mskernel_nn.checkpoint import load_checkpoint, save_checkpoint
from mskernel_nn.losses import CrossEntropyLoss
from mskernel_nn.optim import Adam
from mskernel_nn.wrappers import TrainOneStepCell, WithLossCell

COUNT = int(os.environ.get("MSKERNEL_FUZZ_MUTANTS", "300"))
METADATA = {"epoch_num": 3, "lr": 0.05, "note": "best so far", "flag": True}


class Net(Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = Dense(4, 6)
        self.act = ReLU()
        self.fc2 = Dense(6, 3)
        self.ema = Parameter(np.array([0.5, -1.0], np.float32), requires_grad=False,
                             dtype="bfloat16")
        self.empty = Parameter(np.zeros((0, 5), np.int32), requires_grad=False)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def training(seed: int) -> TrainOneStepCell:
    mskernel.random.set_seed(seed)
    net = Net()
    return TrainOneStepCell(WithLossCell(net, CrossEntropyLoss()),
                            Adam(net.trainable_params(), learning_rate=0.05)).set_train()


def state(cell: Cell) -> dict[str, np.ndarray]:
    return {p.name: p.numpy().copy() for p in cell.get_parameters()}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    train = training(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(2):  # moments and step count that are not their initial values
        train(Tensor(rng.standard_normal((8, 4)).astype(np.float32)), Tensor(rng.integers(0, 3, 8)))
    path = str(tmp_path_factory.mktemp("fuzz") / "train.ckpt")
    save_checkpoint(train, path, append_dict=METADATA)
    return path, load_checkpoint(path), state(train)


def same_checkpoint(loaded, original) -> bool:
    if loaded.keys() != original.keys():
        return False
    for name, value in loaded.items():
        expected = original[name]
        if isinstance(expected, Parameter):
            if not (isinstance(value, Parameter) and value.dtype is expected.dtype
                    and same_arrays(value.numpy(), expected.numpy())):
                return False
        elif type(value) is not type(expected) or value != expected:
            return False
    return True


def _metadata(edit):
    def forge(header, payload, rng):
        edit(header, rng)
        return json.dumps(header), payload
    return forge


def _name_a_tensor(header, rng):
    names = list(header["tensors"])
    header["metadata"][names[int(rng.integers(len(names)))]] = 1


CHECKPOINT_FORGERIES = {
    "metadata names a tensor": _metadata(_name_a_tensor),
    "metadata not a scalar": _metadata(lambda h, rng: h["metadata"].update(
        epoch_num=[None, [3], {"v": 3}][int(rng.integers(3))])),
    "metadata not an object": _metadata(lambda h, rng: h.update(metadata=[["epoch_num", 3]])),
}


def test_damaged_and_forged_checkpoints_never_reach_the_network(saved, tmp_path):
    path, original, trained = saved
    target = training(seed=7)
    loads = iter(range(10**9))

    def load_into_network(mutant_path):
        strict = next(loads) % 2 == 0
        before = state(target)
        try:
            loaded = load_checkpoint(mutant_path, net=target, strict_load=strict)
        except FileFormatError:
            after = state(target)
            assert all(np.array_equal(after[n], before[n]) for n in before), "changed"
            raise
        after = state(target)
        assert all(same_arrays(after[n], trained[n]) for n in trained), "loaded other values"
        return loaded

    counts, others = outcomes(str(tmp_path / "mutant.ckpt"),
                              mutants(open(path, "rb").read(), 2 * COUNT, seed=29,
                                      extra_forgeries=CHECKPOINT_FORGERIES),
                              load_into_network, lambda c: same_checkpoint(c, original))
    print("\ncheckpoints: " + ", ".join(f"{family} {outcome} {n}"
                                        for (family, outcome), n in sorted(counts.items())))
    assert others == []
    assert counts["damaged", "identical"] == 0  # the digest catches every damage
    assert counts["damaged", "error"] > 0.95 * COUNT
    assert counts["forged", "error"] > 0.8 * COUNT and counts["forged", "identical"] > 0


def test_the_saved_checkpoint_holds_optimizer_state_and_metadata(saved):
    _, original, trained = saved
    assert {"moment1.fc1.weight", "moment2.fc2.bias", "global_step", "ema",
            "empty"} <= original.keys()
    assert original["ema"].dtype is mskernel.bfloat16 and original["empty"].shape == (0, 5)
    assert int(original["global_step"].numpy()) == 2
    assert {k: original[k] for k in METADATA} == METADATA
    assert set(trained) <= original.keys()
