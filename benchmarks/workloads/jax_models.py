"""The anchor workloads in JAX, written as a JAX user would: parameters in pytrees, models
as functions of ``jax.numpy`` / ``lax``, images in NHWC (flax's layout, XLA:CPU's fast one),
``optax.sgd(momentum=0.9)`` (the same update as PyTorch's ``SGD``) and the whole training
step — forward, loss, backward, update — under one ``jax.jit`` with the parameters and the
optimizer state donated.  There is no eager mode here: JAX's users jit their steps.

This module runs in its own interpreter (a virtual environment with ``jax`` and ``optax``,
see ``run.py --jax-python``); it needs nothing of mskernel or PyTorch.
"""

from __future__ import annotations

from functools import partial
from itertools import pairwise
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from .spec import (CLASSES, D_FF, D_MODEL, HEADS, LEARNING_RATE, MOMENTUM, RESNET_BLOCKS,
                   WEIGHT_SEED, Workload)

jax.config.update("jax_platforms", "cpu")

Params = dict[str, Any]


def _uniform(key: jax.Array, shape: tuple[int, ...], fan_in: int) -> jax.Array:
    bound = 1.0 / np.sqrt(fan_in)
    return jax.random.uniform(key, shape, jnp.float32, -bound, bound)


def dense_init(key: jax.Array, fan_in: int, fan_out: int) -> Params:
    kw, kb = jax.random.split(key)
    return {"w": _uniform(kw, (fan_in, fan_out), fan_in), "b": _uniform(kb, (fan_out,), fan_in)}


def conv_init(key: jax.Array, size: int, c_in: int, c_out: int, bias: bool = True) -> Params:
    kw, kb = jax.random.split(key)
    fan_in = size * size * c_in
    params = {"w": _uniform(kw, (size, size, c_in, c_out), fan_in)}  # HWIO
    if bias:
        params["b"] = _uniform(kb, (c_out,), fan_in)
    return params


def norm_init(channels: int) -> Params:
    return {"scale": jnp.ones((channels,)), "bias": jnp.zeros((channels,))}


def dense(p: Params, x: jax.Array) -> jax.Array:
    return x @ p["w"] + p["b"]


def conv(p: Params, x: jax.Array, stride: int = 1, padding: Any = "VALID") -> jax.Array:
    y = lax.conv_general_dilated(x, p["w"], (stride, stride), padding,
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y + p["b"] if "b" in p else y


def max_pool2(x: jax.Array) -> jax.Array:
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def batch_norm(p: Params, x: jax.Array, eps: float = 1e-5) -> jax.Array:
    """Training-mode batch norm over N, H, W (the running statistics do not change the
    step's cost and are left out, as the update of the other frameworks' is negligible)."""
    mean = jnp.mean(x, axis=(0, 1, 2))
    var = jnp.var(x, axis=(0, 1, 2))
    return (x - mean) * lax.rsqrt(var + eps) * p["scale"] + p["bias"]


def layer_norm(p: Params, x: jax.Array, eps: float = 1e-5) -> jax.Array:
    mean = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), -1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * p["scale"] + p["bias"]


# -- the models: init(key, workload) -> params; apply(params, x) -> output ---------------------


def lenet_init(key: jax.Array, workload: Workload) -> Params:
    k = jax.random.split(key, 5)
    return {"conv1": conv_init(k[0], 5, 1, 6), "conv2": conv_init(k[1], 5, 6, 16),
            "fc1": dense_init(k[2], 400, 120), "fc2": dense_init(k[3], 120, 84),
            "fc3": dense_init(k[4], 84, CLASSES)}


def lenet_apply(p: Params, x: jax.Array) -> jax.Array:
    x = max_pool2(jax.nn.relu(conv(p["conv1"], x)))
    x = max_pool2(jax.nn.relu(conv(p["conv2"], x)))
    x = x.reshape(x.shape[0], -1)
    x = jax.nn.relu(dense(p["fc1"], x))
    return dense(p["fc3"], jax.nn.relu(dense(p["fc2"], x)))


def mlp_init(key: jax.Array, workload: Workload) -> Params:
    sizes = list(pairwise(workload.mlp_sizes))
    keys = jax.random.split(key, len(sizes))
    return {f"l{i}": dense_init(k, *io) for i, (k, io) in enumerate(zip(keys, sizes))}


def mlp_apply(p: Params, x: jax.Array) -> jax.Array:
    *hidden, last = (p[f"l{i}"] for i in range(len(p)))
    for layer in hidden:
        x = jax.nn.relu(dense(layer, x))
    return dense(last, x)


def resnet_init(key: jax.Array, workload: Workload) -> Params:
    k = iter(jax.random.split(key, 2 + 3 * len(RESNET_BLOCKS)))
    p: Params = {"conv": conv_init(next(k), 3, 3, 16, bias=False), "bn": norm_init(16)}
    for i, (c_in, c_out, stride) in enumerate(RESNET_BLOCKS):
        block = {"conv1": conv_init(next(k), 3, c_in, c_out, bias=False), "bn1": norm_init(c_out),
                 "conv2": conv_init(next(k), 3, c_out, c_out, bias=False),
                 "bn2": norm_init(c_out)}
        shortcut = next(k)
        if stride != 1 or c_in != c_out:
            block |= {"shortcut": conv_init(shortcut, 1, c_in, c_out, bias=False),
                      "bn_shortcut": norm_init(c_out)}
        p[f"block{i}"] = block
    p["fc"] = dense_init(next(k), RESNET_BLOCKS[-1][1], CLASSES)
    return p


def resnet_apply(p: Params, x: jax.Array) -> jax.Array:
    same = ((1, 1), (1, 1))
    x = jax.nn.relu(batch_norm(p["bn"], conv(p["conv"], x, 1, same)))
    for i, (_, _, stride) in enumerate(RESNET_BLOCKS):
        b = p[f"block{i}"]
        out = jax.nn.relu(batch_norm(b["bn1"], conv(b["conv1"], x, stride, same)))
        out = batch_norm(b["bn2"], conv(b["conv2"], out, 1, same))
        if "shortcut" in b:
            x = batch_norm(b["bn_shortcut"], conv(b["shortcut"], x, stride))
        x = jax.nn.relu(out + x)
    return dense(p["fc"], jnp.mean(x, axis=(1, 2)))


def transformer_init(key: jax.Array, workload: Workload) -> Params:
    k = jax.random.split(key, 4)
    return {"in_proj": dense_init(k[0], D_MODEL, 3 * D_MODEL),
            "out_proj": dense_init(k[1], D_MODEL, D_MODEL),
            "linear1": dense_init(k[2], D_MODEL, D_FF), "linear2": dense_init(k[3], D_FF, D_MODEL),
            "norm1": norm_init(D_MODEL), "norm2": norm_init(D_MODEL)}


def transformer_apply(p: Params, x: jax.Array) -> jax.Array:
    """One post-LN encoder layer (PyTorch's ``TransformerEncoderLayer``, ReLU, no dropout)."""
    b, s, d = x.shape
    qkv = dense(p["in_proj"], x).reshape(b, s, 3, HEADS, d // HEADS)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d // HEADS).astype(np.float32)
    attended = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, -1), v).reshape(b, s, d)
    x = layer_norm(p["norm1"], x + dense(p["out_proj"], attended))
    ff = dense(p["linear2"], jax.nn.relu(dense(p["linear1"], x)))
    return layer_norm(p["norm2"], x + ff)


_MODELS: dict[str, tuple[Callable[[jax.Array, Workload], Params], Callable]] = {
    "lenet5": (lenet_init, lenet_apply), "inference_lenet": (lenet_init, lenet_apply),
    "mlp": (mlp_init, mlp_apply), "resnet_small": (resnet_init, resnet_apply),
    "transformer": (transformer_init, transformer_apply)}


def make_step(workload: Workload) -> Callable[[], Any]:
    """One jitted step on the workload's batch: a training step returning the loss as a
    float, or the logits as a NumPy array."""
    init, apply = _MODELS[workload.name]
    params = init(jax.random.PRNGKey(WEIGHT_SEED), workload)
    x, y = workload.batch_arrays()
    if x.ndim == 4:
        x = x.transpose(0, 2, 3, 1)  # NCHW → NHWC
    x, y = jnp.asarray(x), jnp.asarray(y)
    if not workload.training:
        forward = jax.jit(apply)
        return lambda: np.asarray(forward(params, x))

    def loss_fn(p: Params) -> jax.Array:
        out = apply(p, x)
        if workload.name == "transformer":
            return jnp.mean(jnp.square(out - y))
        return optax.softmax_cross_entropy_with_integer_labels(out, y).mean()

    optimizer = optax.sgd(LEARNING_RATE, momentum=MOMENTUM)

    @partial(jax.jit, donate_argnums=(0, 1))
    def train_step(p: Params, state: Any) -> tuple[Params, Any, jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(p)
        updates, state = optimizer.update(grads, state, p)
        return optax.apply_updates(p, updates), state, loss

    box = {"params": params, "state": optimizer.init(params)}

    def train() -> float:
        box["params"], box["state"], loss = train_step(box["params"], box["state"])
        return float(loss)
    return train


def describe() -> dict[str, Any]:
    return {"version": jax.__version__, "jax_devices": [str(d) for d in jax.devices()]}
