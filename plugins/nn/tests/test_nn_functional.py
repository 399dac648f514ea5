"""The functional ops mskernel-nn adds to ``mskernel.ops`` (losses, activations, resampling,
patches, distances) and the core's composites, against ``torch``: values, the gradient of a
random projection of the output with respect to every float input, the same values under
``@jit``, and errors naming the op."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import mskernel
from mskernel import Tensor, jit, ops
from mskernel_autodiff.api import grad
from mskernel_nn.functional import ops_members

RNG = np.random.default_rng(11)


def data(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


IMAGE = data(2, 3, 5, 7)
LOGITS, LABELS = data(6, 5, 3), RNG.integers(0, 5, (6, 3))
LABELS[1, 2] = -100
PROBS = np.asarray(torch.softmax(torch.tensor(data(6, 5)), -1))
GRID = data(2, 4, 6, 2, low=-1.1, high=1.1)
SQUARE = data(4, 4) + 4 * np.eye(4, dtype=np.float32)

#: name, our call, torch's call, inputs (float ones are differentiated), gradient tolerance
CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
    ("cross_entropy", lambda x, y: ops.cross_entropy(x, y, label_smoothing=0.1),
     lambda x, y: TF.cross_entropy(x, y, label_smoothing=0.1), (LOGITS, LABELS)),
    ("cross_entropy_probs", lambda x, y: ops.cross_entropy(x, y, reduction="sum"),
     lambda x, y: TF.cross_entropy(x, y, reduction="sum"), (data(6, 5), PROBS)),
    ("nll_loss", lambda x, y: ops.nll_loss(x, y, reduction="none"),
     lambda x, y: TF.nll_loss(x, y, reduction="none"), (LOGITS, LABELS)),
    ("mse_loss", ops.mse_loss, TF.mse_loss, (data(4, 3), data(4, 3))),
    ("l1_loss", lambda x, y: ops.l1_loss(x, y, "sum"),
     lambda x, y: TF.l1_loss(x, y, reduction="sum"), (data(4, 3), data(4, 3))),
    ("smooth_l1_loss", lambda x, y: ops.smooth_l1_loss(x, y, 0.5),
     lambda x, y: TF.smooth_l1_loss(x, y, reduction="none", beta=0.5), (data(4, 3), data(4, 3))),
    ("kl_div", lambda x, y: ops.kl_div(x, y, "batchmean"),
     lambda x, y: TF.kl_div(x, y, reduction="batchmean"),
     (np.log(PROBS), PROBS[::-1].copy())),
    ("kl_div_log_target", lambda x, y: ops.kl_div(x, y, "sum", log_target=True),
     lambda x, y: TF.kl_div(x, y, reduction="sum", log_target=True),
     (np.log(PROBS), np.log(PROBS[::-1]))),
    ("binary_cross_entropy", ops.binary_cross_entropy, TF.binary_cross_entropy,
     (PROBS, (PROBS > 0.2).astype(np.float32))),
    ("leaky_relu", ops.leaky_relu, lambda x: TF.leaky_relu(x, 0.2), (data(5, 4),)),
    ("elu", lambda x: ops.elu(x, 0.7), lambda x: TF.elu(x, 0.7), (data(5, 4),)),
    ("celu", lambda x: ops.celu(x, 0.7), lambda x: TF.celu(x, 0.7), (data(5, 4),)),
    ("selu", ops.selu, TF.selu, (data(5, 4),)),
    ("relu6", ops.relu6, TF.relu6, (data(5, 4, low=-8, high=8),)),
    ("hardtanh", lambda x: ops.hardtanh(x, -0.5, 1.5), lambda x: TF.hardtanh(x, -0.5, 1.5),
     (data(5, 4),)),
    ("hardsigmoid", ops.hardsigmoid, TF.hardsigmoid, (data(5, 4, low=-5, high=5),)),
    ("hardswish", ops.hardswish, TF.hardswish, (data(5, 4, low=-5, high=5),)),
    ("mish", ops.mish, TF.mish, (data(5, 4),)),
    ("logsigmoid", ops.logsigmoid, TF.logsigmoid, (data(5, 4, low=-30, high=30),)),
    ("softsign", ops.softsign, TF.softsign, (data(5, 4),)),
    ("tanhshrink", ops.tanhshrink, TF.tanhshrink, (data(5, 4),)),
    ("softshrink", ops.softshrink, TF.softshrink, (data(5, 4),)),
    ("hardshrink", ops.hardshrink, TF.hardshrink, (data(5, 4),)),
    ("softmin", lambda x: ops.softmin(x, 0), lambda x: TF.softmin(x, 0), (data(5, 4),)),
    ("prelu", ops.prelu, TF.prelu, (data(2, 3, 4), np.array([0.1, 0.2, 0.3], np.float32))),
    ("glu", lambda x: ops.glu(x, 1), lambda x: TF.glu(x, 1), (data(3, 6),)),
    ("interpolate_bilinear", lambda x: ops.interpolate(x, (8, 4), mode="bilinear"),
     lambda x: TF.interpolate(x, (8, 4), mode="bilinear"), (IMAGE,)),
    ("interpolate_bicubic_corners",
     lambda x: ops.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True),
     lambda x: TF.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True), (IMAGE,)),
    ("interpolate_nearest", lambda x: ops.interpolate(x, scale_factor=(2, 0.5)),
     lambda x: TF.interpolate(x, scale_factor=(2, 0.5)), (IMAGE,)),
    ("interpolate_linear", lambda x: ops.interpolate(x, 11, mode="linear", align_corners=True),
     lambda x: TF.interpolate(x, 11, mode="linear", align_corners=True), (data(2, 3, 6),)),
    ("interpolate_trilinear", lambda x: ops.interpolate(x, scale_factor=2, mode="trilinear"),
     lambda x: TF.interpolate(x, scale_factor=2, mode="trilinear"), (data(1, 2, 2, 3, 4),)),
    ("pixel_shuffle", lambda x: ops.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2),
     (data(2, 8, 3, 2),)),
    ("pixel_unshuffle", lambda x: ops.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2),
     (data(2, 2, 4, 6),)),
    ("unfold", lambda x: ops.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     lambda x: TF.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (IMAGE,)),
    ("fold", lambda x: ops.fold(x, (5, 7), 3, padding=1),
     lambda x: TF.fold(x, (5, 7), 3, padding=1), (data(2, 27, 35),)),
    ("grid_sample", lambda x, g: ops.grid_sample(x, g), lambda x, g: TF.grid_sample(
        x, g, align_corners=False), (IMAGE, GRID)),
    ("grid_sample_border", lambda x, g: ops.grid_sample(x, g, "bilinear", "border", True),
     lambda x, g: TF.grid_sample(x, g, "bilinear", "border", True), (IMAGE, GRID)),
    ("normalize", ops.normalize, TF.normalize, (data(4, 5),)),
    ("cosine_similarity", ops.cosine_similarity, TF.cosine_similarity, (data(4, 5), data(4, 5))),
    ("cdist", lambda a, b: ops.cdist(a, b, 1.5), lambda a, b: torch.cdist(a, b, 1.5),
     (data(2, 4, 3), data(2, 5, 3))),
    # the core's composites, differentiated through their core ops
    ("norm", lambda x: ops.norm(x, 3, 1), lambda x: torch.linalg.norm(x, 3, 1), (data(4, 5),)),
    ("matrix_norm", lambda x: ops.norm(x, "fro", (0, 1)), lambda x: torch.linalg.norm(x, "fro"),
     (data(4, 5),)),
    ("diagonal", lambda x: ops.diagonal(x, 1, 1, 2), lambda x: torch.diagonal(x, 1, 1, 2),
     (data(2, 4, 5),)),
    ("trace", ops.trace, torch.trace, (SQUARE,)),
    ("tensordot", lambda a, b: ops.tensordot(a, b, 1), lambda a, b: torch.tensordot(a, b, 1),
     (data(3, 4), data(4, 2))),
    ("kron", ops.kron, torch.kron, (data(2, 3), data(3, 2))),
    ("cross", lambda a, b: ops.cross(a, b, 1), lambda a, b: torch.linalg.cross(a, b, dim=1),
     (data(4, 3), data(4, 3))),
    ("logaddexp", ops.logaddexp, torch.logaddexp, (data(4, 3), data(4, 3))),
    ("diff", lambda x: ops.diff(x, 2, 0), lambda x: torch.diff(x, 2, 0), (data(5, 3),)),
    ("quantile", lambda x: ops.quantile(x, [0.2, 0.7], 1),
     lambda x: torch.quantile(x, torch.tensor([0.2, 0.7]), 1), (data(3, 6),)),
    ("median", lambda x: ops.median(x, 1)[0], lambda x: torch.median(x, 1).values, (data(3, 5),)),
    ("masked_fill", lambda x: ops.masked_fill(x, x > 0.5, 0.0),
     lambda x: x.masked_fill(x > 0.5, 0.0), (data(3, 4),)),
    ("index_add", lambda x, s: ops.index_add(x, np.array([2, 0, 2]), s, 0),
     lambda x, s: x.index_add(0, torch.tensor([2, 0, 2]), s), (data(3, 4), data(3, 4))),
    ("nan_to_num", ops.nan_to_num, torch.nan_to_num, (data(3, 4),)),
    ("rot90", lambda x: ops.rot90(x, 1, (0, 1)), lambda x: torch.rot90(x, 1, (0, 1)),
     (data(3, 4),)),
]


def _projection(out: np.ndarray) -> np.ndarray:
    return np.random.default_rng(3).standard_normal(out.shape).astype(np.float32)


@pytest.mark.parametrize("name, ours, theirs, inputs", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, ours, theirs, inputs):
    want = theirs(*(torch.tensor(v) for v in inputs))
    got = ours(*inputs)
    scale = max(float(want.detach().abs().max()), 1.0)
    np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=2e-5,
                               atol=2e-6 * scale, err_msg=name)
    np.testing.assert_allclose(np.asarray(jit(ours)(*inputs)), np.asarray(got), rtol=2e-6,
                               atol=2e-6 * scale, err_msg=f"{name} under @jit")
    floats = [i for i, v in enumerate(inputs) if v.dtype == np.float32]
    weights = _projection(want.detach().numpy())
    leaves = [torch.tensor(v, requires_grad=i in floats) for i, v in enumerate(inputs)]
    (theirs(*leaves) * torch.tensor(weights)).sum().backward()

    def projected(*args):
        return ops.sum(ops.multiply(ours(*args), Tensor(weights)))

    ours_grads = grad(projected, argnums=tuple(floats))(*(Tensor(v) for v in inputs))
    for i, g in zip(floats, ours_grads):
        want_grad = leaves[i].grad.numpy()
        np.testing.assert_allclose(np.asarray(g), want_grad, rtol=1e-4,
                                   atol=1e-5 * max(float(np.abs(want_grad).max()), 1.0),
                                   err_msg=f"gradient of {name} w.r.t. input {i}")


def test_kl_div_counts_zero_labels_as_zero():
    labels = np.concatenate([PROBS[:, :4], np.zeros((6, 1), np.float32)], 1)
    want = TF.kl_div(torch.tensor(np.log(PROBS)), torch.tensor(labels), reduction="none")
    got = ops.kl_div(np.log(PROBS), labels, "none").numpy()
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-7)  # log p - log p ~ 0
    assert (got[:, 4] == 0).all()


def test_dropout_keeps_the_expected_share_scaled_and_is_reproducible_by_seed_and_key():
    x = np.ones((200, 50), np.float32)
    out = ops.dropout(x, 0.3, seed=5).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(ops.dropout(x, 0.3, seed=5).numpy(), out)
    key = mskernel.random.key(1)
    np.testing.assert_array_equal(jit(lambda v, k: ops.dropout(v, 0.3, key=k))(x, key).numpy(),
                                  ops.dropout(x, 0.3, key=key).numpy())
    assert ops.dropout(x, 0.3, training=False) is not None
    np.testing.assert_array_equal(ops.dropout(x, 0.3, training=False).numpy(), x)
    with pytest.raises(ValueError, match=r"dropout: p must lie in \[0, 1\], got 1.5"):
        ops.dropout(x, 1.5)


@pytest.mark.parametrize("call, message", [
    (lambda: ops.interpolate(IMAGE, (3, 3), mode="linear"), r"mode 'linear' of a f32\[2,3,5,7\]"),
    (lambda: ops.interpolate(IMAGE), "give size or scale_factor, not both"),
    (lambda: ops.pixel_shuffle(IMAGE, 2), "pixel_shuffle: 3 channels do not divide"),
    (lambda: ops.unfold(IMAGE, 9), r"unfold: a 9x9 kernel .* does not fit the padded 5x7 image"),
    (lambda: ops.fold(data(2, 10, 35), (5, 7), 3, padding=1), r"fold: f32\[2,10,35\] columns"),
    (lambda: ops.grid_sample(IMAGE, GRID, "bicubic"), "grid_sample: mode bilinear or nearest"),
    (lambda: ops.cdist(data(4, 3), data(5, 2)), r"cdist: expects \[..., P, M\]"),
    (lambda: ops.glu(data(3, 5)), r"glu: axis -1 of a f32\[3,5\] input must have an even size"),
    (lambda: ops.prelu(data(2, 3), np.ones(4, np.float32)), r"prelu: f32\[4\] weight"),
    (lambda: ops.cross_entropy(LOGITS, LABELS[:, :2]), "cross_entropy: class-index labels"),
    (lambda: ops.mse_loss(LOGITS, LOGITS, "avg"), "mse_loss: reduction must be one of"),
    (lambda: ops.smooth_l1_loss(LOGITS, LOGITS, 0.0), "smooth_l1_loss: beta must be positive"),
])
def test_bad_arguments_are_errors_naming_the_op(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_every_member_is_an_ops_attribute_documented():
    for name, target in ops_members().items():
        member = getattr(ops, name)
        assert member.__doc__, name
        assert f"{member.__module__}:{member.__name__}" == target


def test_the_loss_cells_are_the_functions():
    from mskernel_nn.losses import CrossEntropyLoss

    cell = CrossEntropyLoss(label_smoothing=0.1)
    np.testing.assert_array_equal(cell(LOGITS, LABELS).numpy(),
                                  ops.cross_entropy(LOGITS, LABELS, label_smoothing=0.1).numpy())
    assert math.isfinite(float(cell(LOGITS, LABELS)))
