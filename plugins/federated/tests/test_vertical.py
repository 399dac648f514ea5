"""Vertical FL: PSI finds exactly the intersection, in one order for both parties; split
training equals training the joined network on the joined data; label DP flips labels at
randomized response's rate."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import nn
from mskernel_federated.vertical import (
    BottomParty, LabelParty, PsiError, PsiParty, intersect, randomized_response, train_split,
)
from mskernel_federated.vertical.label_dp import keep_probability


def test_psi_returns_exactly_the_intersection_in_a_shared_order() -> None:
    rng = np.random.default_rng(0)
    universe = [f"user-{i}" for i in rng.permutation(2000)[:700]]
    a_ids = universe[:500]
    b_ids = universe[300:] + [b"raw-bytes-id"]
    rng.shuffle(b_ids)
    a, b = PsiParty(a_ids), PsiParty(b_ids)
    rows_a, rows_b = intersect(a, b)
    assert set(a.intersection()) == set(a_ids) & set(b_ids) == set(universe[300:500])
    assert a.intersection() == b.intersection()  # row k is the same user at both parties
    assert [a_ids[i] for i in rows_a] == [b_ids[i] for i in rows_b]


def test_psi_with_an_empty_intersection_and_malformed_messages() -> None:
    a, b = PsiParty(["x", "y"]), PsiParty(["z"])
    assert intersect(a, b) == ([], [])
    with pytest.raises(PsiError, match="distinct"):
        PsiParty(["x", "x"])
    c = PsiParty(["x"])
    c.request()
    with pytest.raises(PsiError, match="1 were sent"):
        c.finish([], [])
    with pytest.raises(PsiError, match="33 bytes"):
        PsiParty(["q"]).respond([b"\x01" * 33])


class Joined(nn.Cell):
    """The split network as one cell: the centralised reference."""

    def __init__(self, passive: nn.Cell, bottom: nn.Cell, top: nn.Cell) -> None:
        super().__init__()
        self.passive, self.bottom, self.top = passive, bottom, top

    def construct(self, x_passive, x_label):
        return self.top(mskernel.ops.concat([self.passive(x_passive), self.bottom(x_label)],
                                            axis=1))


def test_split_training_equals_centralised_training_on_the_joined_data() -> None:
    rng = np.random.default_rng(1)
    rows, lr = 96, 0.1
    x_passive = rng.normal(size=(rows, 5)).astype(np.float32)
    x_label = rng.normal(size=(rows, 3)).astype(np.float32)
    y = (x_passive[:, 0] + x_label[:, 1] > 0).astype(np.int32)
    mskernel.random.set_seed(3)
    passive, bottom = nn.Dense(5, 4), nn.Dense(3, 4)
    top = nn.SequentialCell(nn.ReLU(), nn.Dense(8, 2))
    joined = Joined(passive, bottom, top)
    initial = {k: v.asnumpy() for k, v in joined.parameters_dict().items()}
    batches = [rng.permutation(rows)[:32] for _ in range(12)]

    passive_party = BottomParty(passive, nn.SGD(passive.trainable_params(), lr), x_passive)
    label_party = LabelParty(bottom, top, nn.CrossEntropyLoss(),
                             nn.SGD(bottom.trainable_params() + top.trainable_params(), lr),
                             x_label, y)
    losses = train_split(passive_party, label_party, batches)
    split = {k: v.asnumpy() for k, v in joined.parameters_dict().items()}
    assert losses[-1] < losses[0]

    for k, v in joined.parameters_dict().items():  # back to the start, train joined
        v.assign_value(initial[k])
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(joined.trainable_params(), lr)
    weights = joined.trainable_params()
    for batch in batches:
        def loss(xp, xl, yb):
            return loss_fn(joined(xp, xl), yb)
        _, grads = mskernel.value_and_grad(loss, argnums=None, weights=weights)(
            mskernel.Tensor(x_passive[batch]), mskernel.Tensor(x_label[batch]),
            mskernel.Tensor(y[batch]))
        optimizer(tuple(grads))
    for k, v in joined.parameters_dict().items():
        np.testing.assert_allclose(split[k], v.asnumpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_randomized_response_keeps_labels_at_its_rate() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 10, size=200_000).astype(np.int32)
    noisy = randomized_response(labels, 10, epsilon=2.0, rng=rng)
    kept = keep_probability(2.0, 10)
    assert np.mean(noisy == labels) == pytest.approx(kept, abs=4 * np.sqrt(kept / 200_000))
    flipped = noisy[noisy != labels]
    assert np.bincount(flipped, minlength=10).min() > 0  # flips reach every class
    assert noisy.dtype == labels.dtype
    with pytest.raises(ValueError, match="lie in"):
        randomized_response(np.array([10]), 10, 1.0, rng)
