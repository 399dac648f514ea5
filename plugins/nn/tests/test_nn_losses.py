"""Losses against torch.nn.functional: values for every reduction and option, gradients, the
same numbers under @jit, and errors in the user's terms."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mskernel
from mskernel import Tensor, jit
from mskernel_sdk import assert_close
from mskernel_autodiff.api import grad
from mskernel_nn.losses import (
    BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss,
    SoftmaxCrossEntropyWithLogits,
)

F32 = mskernel.float32
REDUCTIONS = ("mean", "sum", "none")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def close(ours, theirs, what=""):
    assert_close(np.asarray(ours), theirs.detach().numpy(), F32, rtol=2e-5, atol=2e-6, what=what)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", (0.0, 0.2))
@pytest.mark.parametrize("weighted", (False, True))
def test_cross_entropy_class_indices(rng, reduction, smoothing, weighted):
    logits = rng.standard_normal((6, 5, 3)).astype(np.float32)  # [N, C, d]
    labels = rng.integers(0, 5, (6, 3))
    labels[0, 1] = labels[4, 2] = -100
    weight = rng.uniform(0.5, 2.0, 5).astype(np.float32) if weighted else None
    loss = CrossEntropyLoss(weight=weight, reduction=reduction, label_smoothing=smoothing)
    expected = TF.cross_entropy(torch.tensor(logits), torch.tensor(labels),
                                weight=None if weight is None else torch.tensor(weight),
                                reduction=reduction, label_smoothing=smoothing)
    close(loss(Tensor(logits), Tensor(labels)), expected)


@pytest.mark.parametrize("smoothing", (0.0, 0.1))
def test_cross_entropy_probability_targets(rng, smoothing):
    logits = rng.standard_normal((4, 6)).astype(np.float32)
    targets = rng.dirichlet(np.ones(6), 4).astype(np.float32)
    weight = rng.uniform(0.5, 2.0, 6).astype(np.float32)
    for reduction in REDUCTIONS:
        ours = CrossEntropyLoss(weight=weight, reduction=reduction, label_smoothing=smoothing)
        expected = TF.cross_entropy(torch.tensor(logits), torch.tensor(targets),
                                    weight=torch.tensor(weight), reduction=reduction,
                                    label_smoothing=smoothing)
        close(ours(Tensor(logits), Tensor(targets)), expected, reduction)


def test_cross_entropy_takes_unsigned_labels_and_a_custom_ignore_index(rng):
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    labels = np.array([0, 3, 2, 3, 1], np.uint32)
    ours = CrossEntropyLoss(ignore_index=3)(Tensor(logits), Tensor(labels))
    expected = TF.cross_entropy(torch.tensor(logits), torch.tensor(labels.astype(np.int64)),
                                ignore_index=3)
    close(ours, expected)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(rng, reduction):
    log_probs = np.log(rng.dirichlet(np.ones(4), 7)).astype(np.float32)
    labels = rng.integers(0, 4, 7)
    labels[2] = 1
    weight = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    ours = NLLLoss(weight=weight, ignore_index=1, reduction=reduction)
    expected = TF.nll_loss(torch.tensor(log_probs), torch.tensor(labels),
                           weight=torch.tensor(weight), ignore_index=1, reduction=reduction)
    close(ours(Tensor(log_probs), Tensor(labels)), expected)


@pytest.mark.parametrize("sparse", (True, False))
@pytest.mark.parametrize("smoothing", (0.0, 0.3))
def test_softmax_cross_entropy_with_logits(rng, sparse, smoothing):
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    indices = rng.integers(0, 4, 5)
    labels = indices if sparse else np.eye(4, dtype=np.float32)[indices]
    loss = SoftmaxCrossEntropyWithLogits(sparse=sparse, label_smoothing=smoothing)
    expected = TF.cross_entropy(torch.tensor(logits), torch.tensor(indices), reduction="none",
                                label_smoothing=smoothing)
    close(loss(Tensor(logits), Tensor(labels)), expected)  # MindSpore's default: "none"
    mean = SoftmaxCrossEntropyWithLogits(sparse=sparse, reduction="mean",
                                         label_smoothing=smoothing)
    close(mean(Tensor(logits), Tensor(labels)), expected.mean())


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_and_l1_broadcast_like_torch(rng, reduction):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((4,)).astype(np.float32)
    tx, ty = torch.tensor(x), torch.tensor(np.broadcast_to(y, x.shape).copy())
    close(MSELoss(reduction)(Tensor(x), Tensor(y)), TF.mse_loss(tx, ty, reduction=reduction))
    close(L1Loss(reduction)(Tensor(x), Tensor(y)), TF.l1_loss(tx, ty, reduction=reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_is_stable_and_matches_torch(rng, reduction):
    x = np.concatenate([rng.standard_normal(8) * 3, [-120.0, 95.0, 0.0]]).astype(np.float32)
    x = x.reshape(1, 11).repeat(2, axis=0)
    y = rng.uniform(0, 1, x.shape).astype(np.float32)
    weight = rng.uniform(0.5, 2.0, x.shape).astype(np.float32)
    pos_weight = rng.uniform(0.5, 3.0, 11).astype(np.float32)
    ours = BCEWithLogitsLoss(reduction, weight=weight, pos_weight=pos_weight)(Tensor(x),
                                                                             Tensor(y))
    expected = TF.binary_cross_entropy_with_logits(
        torch.tensor(x), torch.tensor(y), weight=torch.tensor(weight),
        pos_weight=torch.tensor(pos_weight), reduction=reduction)
    assert np.all(np.isfinite(np.asarray(ours)))
    close(ours, expected)
    plain = BCEWithLogitsLoss(reduction)(Tensor(x), Tensor(y))
    close(plain, TF.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(y),
                                                     reduction=reduction))


def test_gradients_match_torch(rng):
    logits = rng.standard_normal((6, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 6)
    labels[3] = -100
    weight = rng.uniform(0.5, 2.0, 5).astype(np.float32)
    binary = rng.uniform(0, 1, (6, 5)).astype(np.float32)
    cases = [
        (CrossEntropyLoss(weight=weight, label_smoothing=0.1), labels,
         lambda t: TF.cross_entropy(t, torch.tensor(labels), weight=torch.tensor(weight),
                                    label_smoothing=0.1)),
        (BCEWithLogitsLoss(), binary,
         lambda t: TF.binary_cross_entropy_with_logits(t, torch.tensor(binary))),
    ]
    for loss, target, torch_loss in cases:
        ours = grad(lambda x, loss=loss, target=target: loss(x, Tensor(target)))(Tensor(logits))
        t = torch.tensor(logits, requires_grad=True)
        torch_loss(t).backward()
        close(ours, t.grad, type(loss).__name__)


def test_losses_give_the_same_numbers_under_jit(rng):
    logits = Tensor(rng.standard_normal((8, 3)).astype(np.float32))
    labels = Tensor(rng.integers(0, 3, 8))
    loss = CrossEntropyLoss(label_smoothing=0.05)
    compiled = jit(lambda x, y: loss(x, y))
    assert_close(compiled(logits, labels).numpy(), loss(logits, labels).numpy(), F32)


def test_bad_input_is_reported_in_the_users_terms(rng):
    logits = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    with pytest.raises(ValueError, match=r"reduction must be one of mean, sum, none"):
        MSELoss("average")
    with pytest.raises(ValueError, match=r"label_smoothing must lie in \[0, 1\]"):
        CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(ValueError,
                       match=r"integers of shape \[4\].*got int64 labels of shape \[4, 1\]"):
        CrossEntropyLoss()(logits, Tensor(np.zeros((4, 1), np.int64)))
    with pytest.raises(ValueError, match=r"weight has 2 entries but the scores have 3 classes"):
        CrossEntropyLoss(weight=np.ones(2, np.float32))(logits, Tensor(np.zeros(4, np.int64)))
    with pytest.raises(ValueError, match=r"probability targets must have the scores' shape"):
        SoftmaxCrossEntropyWithLogits()(logits, Tensor(np.zeros((4, 2), np.float32)))
