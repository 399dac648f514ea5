"""Gradients of small networks written with the core ops equal PyTorch's autograd, in float32:
an MLP, a CNN with batch normalisation in training mode, and a transformer-style attention
block.

Both sides compute in float32 but sum in different orders, so results agree to a few float32
ulps of the largest gradient entry, not bit for bit: ``rtol = 1e-4`` with an absolute floor
of ``1e-5`` times the largest gradient entry of the network (float32's epsilon is 1.2e-7; a
gradient that is zero in exact arithmetic, such as a bias before batch normalisation, comes
out as rounding noise on both sides).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from mskernel_sdk import Tensor, apply
from mskernel_autodiff import api

Params = dict[str, np.ndarray]


def _parameters(rng: np.random.Generator, shapes: dict[str, tuple[int, ...]]) -> Params:
    return {name: (rng.standard_normal(shape) / math.sqrt(max(shape[-1], 1))).astype(np.float32)
            for name, shape in shapes.items()}


def _check_parity(loss: Callable[..., Tensor], torch_loss: Callable[..., torch.Tensor],
                  params: Params, x: np.ndarray) -> None:
    """Gradients of ``loss(params, x)`` w.r.t. every parameter and ``x`` against torch's."""
    value, (grads, grad_x) = api.value_and_grad(loss, argnums=(0, 1))(
        {name: Tensor(p) for name, p in params.items()}, Tensor(x))
    leaves = {name: torch.tensor(p, requires_grad=True) for name, p in params.items()}
    tx = torch.tensor(x, requires_grad=True)
    expected = torch_loss(leaves, tx)
    expected.backward()
    np.testing.assert_allclose(value.numpy(), expected.detach().numpy(), rtol=1e-5)
    pairs = [(name, grads[name], leaves[name].grad.numpy()) for name in params]
    pairs.append(("x", grad_x, tx.grad.numpy()))
    largest = max(float(np.abs(want).max()) for _, _, want in pairs)
    for name, got, want in pairs:
        assert got.dtype.name == "float32", name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5 * largest,
                                   err_msg=f"gradient of {name}")


def _op(name: str, *args: Tensor, **attrs: Any) -> Any:
    return apply(name, *args, **attrs)


def _dense(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    return _op("add", _op("matmul", x, w), b)


def _scalar(value: float) -> Tensor:
    return Tensor(np.float32(value))


# -- MLP --------------------------------------------------------------------------------------


def test_mlp_gradients_match_torch() -> None:
    rng = np.random.default_rng(0)
    params = _parameters(rng, {"w1": (5, 16), "b1": (16,), "w2": (16, 8), "b2": (8,),
                               "w3": (8, 3), "b3": (3,)})
    x = rng.standard_normal((8, 5)).astype(np.float32)
    labels = rng.integers(0, 3, size=(8, 1))

    def loss(p: dict[str, Tensor], x: Tensor) -> Tensor:
        h = _op("relu", _dense(x, p["w1"], p["b1"]))
        h = _op("tanh", _dense(h, p["w2"], p["b2"]))
        logp = _op("log_softmax", _dense(h, p["w3"], p["b3"]), axis=-1)
        picked = _op("take_along_axis", logp, Tensor(labels), axis=1)
        return _op("neg", _op("mean", picked))

    def torch_loss(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(x @ p["w1"] + p["b1"])
        h = torch.tanh(h @ p["w2"] + p["b2"])
        logits = h @ p["w3"] + p["b3"]
        return F.cross_entropy(logits, torch.tensor(labels[:, 0]))

    _check_parity(loss, torch_loss, params, x)


# -- CNN with batch norm ----------------------------------------------------------------------


def test_cnn_with_batch_norm_gradients_match_torch() -> None:
    rng = np.random.default_rng(1)
    params = _parameters(rng, {"k1": (6, 3, 3, 3), "c1": (6,), "gamma": (6,), "beta": (6,),
                               "k2": (8, 6, 3, 3), "w": (8 * 2 * 2, 4), "b": (4,)})
    params["gamma"] += 1.0
    x = rng.standard_normal((4, 3, 9, 9)).astype(np.float32)
    target = rng.standard_normal((4, 4)).astype(np.float32)
    stats = (np.zeros(6, np.float32), np.ones(6, np.float32))

    def loss(p: dict[str, Tensor], x: Tensor) -> Tensor:
        h = _op("conv", x, p["k1"], padding=(1, 1, 1, 1))
        h = _op("add", h, _op("reshape", p["c1"], shape=(1, 6, 1, 1)))
        h, _, _ = _op("batch_norm", h, p["gamma"], p["beta"], *map(Tensor, stats),
                      training=True, eps=1e-5)
        h = _op("max_pool", _op("relu", h), kernel=(2, 2), ceil_mode=True)  # 9x9 -> 5x5
        h = _op("conv", h, p["k2"], stride=(2, 2), padding=(1, 1, 1, 1))  # -> 3x3
        h = _op("avg_pool", h, kernel=(2, 2), stride=(1, 1))  # -> 2x2
        out = _dense(_op("reshape", h, shape=(4, 32)), p["w"], p["b"])
        return _op("mean", _op("square", _op("sub", out, Tensor(target))))

    def torch_loss(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = F.conv2d(x, p["k1"], p["c1"], padding=1)
        h = F.batch_norm(h, torch.tensor(stats[0]), torch.tensor(stats[1]), p["gamma"],
                         p["beta"], training=True, eps=1e-5)
        h = F.max_pool2d(F.relu(h), 2, ceil_mode=True)
        h = F.conv2d(h, p["k2"], stride=2, padding=1)
        h = F.avg_pool2d(h, 2, stride=1)
        out = h.reshape(4, 32) @ p["w"] + p["b"]
        return ((out - torch.tensor(target)) ** 2).mean()

    _check_parity(loss, torch_loss, params, x)


# -- attention block --------------------------------------------------------------------------


def test_attention_block_gradients_match_torch() -> None:
    rng = np.random.default_rng(2)
    d, heads, hidden = 8, 2, 16
    params = _parameters(rng, {"g1": (d,), "b1": (d,), "wq": (d, d), "wk": (d, d),
                               "wv": (d, d), "wo": (d, d), "g2": (d,), "b2": (d,),
                               "w1": (d, hidden), "c1": (hidden,), "w2": (hidden, d)})
    params["g1"] += 1.0
    params["g2"] += 1.0
    x = rng.standard_normal((2, 5, d)).astype(np.float32)
    scale = 1 / math.sqrt(d // heads)

    def loss(p: dict[str, Tensor], x: Tensor) -> Tensor:
        def split_heads(t: Tensor) -> Tensor:
            return _op("reshape", t, shape=(2, 5, heads, d // heads))

        h, _, _ = _op("layer_norm", x, p["g1"], p["b1"])
        q, k, v = (split_heads(_op("matmul", h, p[w])) for w in ("wq", "wk", "wv"))
        scores = _op("mul", _op("einsum", q, k, equation="bqhd,bkhd->bhqk"), _scalar(scale))
        mixed = _op("einsum", _op("softmax", scores, axis=-1), v,
                    equation="bhqk,bkhd->bqhd")
        x = _op("add", x, _op("matmul", _op("reshape", mixed, shape=(2, 5, d)), p["wo"]))
        h, _, _ = _op("layer_norm", x, p["g2"], p["b2"])
        h = _op("gelu", _dense(h, p["w1"], p["c1"]))
        x = _op("add", x, _op("matmul", h, p["w2"]))
        return _op("sum", _op("square", x))

    def torch_loss(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = F.layer_norm(x, (d,), p["g1"], p["b1"])
        q, k, v = ((h @ p[w]).reshape(2, 5, heads, d // heads) for w in ("wq", "wk", "wv"))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
        mixed = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)
        x = x + mixed.reshape(2, 5, d) @ p["wo"]
        h = F.layer_norm(x, (d,), p["g2"], p["b2"])
        h = F.gelu(h @ p["w1"] + p["c1"])
        return ((x + h @ p["w2"]) ** 2).sum()

    _check_parity(loss, torch_loss, params, x)
