"""MultiheadAttention and TransformerEncoderLayer against torch.nn with the same weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mskernel
from mskernel import Tensor
from mskernel_sdk import assert_close
from mskernel_nn import api as nn
from mskernel_nn.testing import compare_with_torch

F32 = mskernel.float32
E, HEADS = 8, 2


def _x(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


class _Call(nn.Cell):
    """Calls an attention cell with fixed keyword arguments (masks, flags)."""

    def __init__(self, inner, **kwargs):
        super().__init__()
        self.inner = inner
        self.kwargs = kwargs

    def construct(self, *inputs):
        return self.inner(*inputs, **self.kwargs)


class _TorchCall(torch.nn.Module):
    def __init__(self, inner, **kwargs):
        super().__init__()
        self.inner = inner
        self.kwargs = kwargs

    def forward(self, *inputs):
        return self.inner(*inputs, **self.kwargs)


def _compare(ours, theirs, inputs, check_jit=False, **kwargs):
    torch_kwargs = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                    for k, v in kwargs.items()}
    ours_kwargs = {k: Tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    compare_with_torch(_Call(ours, **ours_kwargs), _TorchCall(theirs, **torch_kwargs), inputs,
                       check_jit=check_jit)


def _qkv(batch_first=False, length=3, source=4, kdim=E, vdim=E):
    def seq(n, dim, seed):
        return _x(2, n, dim, seed=seed) if batch_first else _x(n, 2, dim, seed=seed)

    return [seq(length, E, 0), seq(source, kdim, 1), seq(source, vdim, 2)]


def test_self_attention_with_both_masks_eager_and_jit():
    causal = np.triu(np.ones((3, 3), bool), 1)
    padding = np.array([[False, False, True], [False, False, False]])
    x = _x(3, 2, E)
    _compare(nn.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS), [x, x, x],
             check_jit=True, attn_mask=causal, key_padding_mask=padding)


def test_batch_first_float_mask_and_per_head_weights():
    mask = _x(2 * HEADS, 3, 4, seed=5)
    _compare(nn.MultiheadAttention(E, HEADS, batch_first=True),
             torch.nn.MultiheadAttention(E, HEADS, batch_first=True), _qkv(batch_first=True),
             attn_mask=mask, average_attn_weights=False)


def test_separate_key_and_value_sizes_without_bias():
    _compare(nn.MultiheadAttention(E, HEADS, has_bias=False, kdim=5, vdim=6),
             torch.nn.MultiheadAttention(E, HEADS, bias=False, kdim=5, vdim=6),
             _qkv(kdim=5, vdim=6), need_weights=False)


def test_bias_kv_and_zero_attention_with_masks():
    padding = np.array([[False, True, False, False], [False, False, False, True]])
    _compare(nn.MultiheadAttention(E, HEADS, add_bias_kv=True, add_zero_attn=True),
             torch.nn.MultiheadAttention(E, HEADS, add_bias_kv=True, add_zero_attn=True),
             _qkv(), key_padding_mask=padding, attn_mask=np.eye(3, 4, dtype=bool))


def test_unbatched_input():
    x = _x(3, E)
    _compare(nn.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS), [x, x, x])


def test_attention_parameter_names_follow_torch():
    ours = [n for n, _ in nn.MultiheadAttention(E, HEADS, kdim=5, vdim=6).parameters_and_names()]
    theirs = [n for n, _ in torch.nn.MultiheadAttention(E, HEADS, kdim=5, vdim=6)
              .named_parameters()]
    assert sorted(ours) == sorted(theirs)  # no dropout, so no random key
    assert [n for n, _ in nn.MultiheadAttention(E, HEADS, dropout=0.1).parameters_and_names()
            if n.startswith("dropout")] == ["dropout.rng_key"]
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(E, 3)


def _layer_names(layer) -> dict[str, str]:
    names = {}
    for name, _ in layer.parameters_and_names():
        names[name] = name.replace(".gamma", ".weight").replace(".beta", ".bias")
    return names


@pytest.mark.parametrize("norm_first, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer(norm_first, activation):
    ours = nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=16, dropout=0.0,
                                      activation=activation, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=16, dropout=0.0,
                                              activation=activation, norm_first=norm_first)
    theirs.eval()
    causal = np.triu(np.ones((4, 4), bool), 1)
    compare_with_torch(_Call(ours, src_mask=Tensor(causal)),
                       _TorchCall(theirs, src_mask=torch.from_numpy(causal)), [_x(4, 2, E)],
                       {f"inner.{k}": f"inner.{v}" for k, v in _layer_names(ours).items()},
                       check_jit=norm_first)


def test_encoder_layer_dropout_acts_only_in_training():
    layer = nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=16, batch_first=True)
    x = Tensor(_x(2, 4, E))
    assert_close(layer(x), layer(x), F32)
    layer.set_train()
    assert not np.allclose(np.asarray(layer(x)), np.asarray(layer(x)))
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(E, HEADS, activation="swoosh")
