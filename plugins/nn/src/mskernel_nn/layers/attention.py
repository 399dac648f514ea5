"""Attention: ``MultiheadAttention`` and ``TransformerEncoderLayer`` (MindSpore 2.x's
signatures, which follow PyTorch's, and the same parameter names: ``in_proj_weight``,
``in_proj_bias``, ``out_proj.weight`` …).

Sequences are ``[L, N, E]`` (length first) unless ``batch_first``; a 2-d input is one
unbatched sequence ``[L, E]``.  Masks follow PyTorch: a boolean ``attn_mask`` (``[L, S]`` or
``[N * num_heads, L, S]``) or ``key_padding_mask`` (``[N, S]``) is ``True`` where attention
is *not* allowed; a floating-point mask is added to the attention scores.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

from mskernel import float32, ops as F
from mskernel_sdk import Tensor

from ..cell import Cell
from ..initializer import XavierNormal, XavierUniform, parameter
from .basic import GELU, Dense, Dropout, ReLU
from .norm import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer"]


def _additive(mask: Any, like: Tensor) -> Tensor:
    """A mask as scores to add: ``-inf`` where a boolean mask is True, else the float mask."""
    m = F.asarray(mask)
    if m.dtype.is_bool:
        return F.where(m, F.full((), -math.inf, like.dtype), F.zeros((), like.dtype))
    return F.astype(m, like.dtype)


def _linear(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    y = F.matmul(x, F.transpose(weight))
    return y if bias is None else F.add(y, bias)


def _pad_last(mask: Optional[Tensor], count: int) -> Optional[Tensor]:
    """``mask`` with ``count`` more keys that every query may attend to."""
    if mask is None:
        return None
    return F.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, count)])


class MultiheadAttention(Cell):
    """Attention of queries to keys and values over ``num_heads`` heads of size
    ``embed_dim / num_heads``; returns ``(output, weights)`` — the weights (averaged over the
    heads unless ``average_attn_weights=False``) only with ``need_weights``, else ``None``.

    ``kdim``/``vdim`` (default ``embed_dim``) give keys and values their own sizes (separate
    ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` then).  ``add_bias_kv`` appends a
    learned key and value (``bias_k``, ``bias_v``) to every sequence; ``add_zero_attn``
    appends a zero key and value.  ``dropout`` drops attention weights in training.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 has_bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: Optional[int] = None, vdim: Optional[int] = None,
                 batch_first: bool = False, dtype: Any = float32) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.batch_first = batch_first
        self.has_bias = has_bias
        self.add_zero_attn = add_zero_attn
        self.same_dims = self.kdim == embed_dim and self.vdim == embed_dim
        if self.same_dims:
            self.in_proj_weight = parameter(XavierUniform(), (3 * embed_dim, embed_dim), dtype)
        else:
            self.q_proj_weight = parameter(XavierUniform(), (embed_dim, embed_dim), dtype)
            self.k_proj_weight = parameter(XavierUniform(), (embed_dim, self.kdim), dtype)
            self.v_proj_weight = parameter(XavierUniform(), (embed_dim, self.vdim), dtype)
        if has_bias:
            self.in_proj_bias = parameter("zeros", (3 * embed_dim,), dtype)
        self.out_proj = Dense(embed_dim, embed_dim, bias_init="zeros", has_bias=has_bias,
                              dtype=dtype)
        self.add_bias_kv = add_bias_kv
        if add_bias_kv:
            self.bias_k = parameter(XavierNormal(), (1, 1, embed_dim), dtype)
            self.bias_v = parameter(XavierNormal(), (1, 1, embed_dim), dtype)
        self.dropout = Dropout(p=dropout)

    def _projections(self) -> tuple[list[Tensor], list[Optional[Tensor]]]:
        if self.same_dims:
            weights = list(F.split(self.in_proj_weight, 3))
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases: list[Optional[Tensor]] = [None] * 3
        if self.has_bias:
            biases = list(F.split(self.in_proj_bias, 3))
        return weights, biases

    def _heads(self, x: Tensor) -> Tensor:
        """``[N, L, E]`` → ``[N, heads, L, head_dim]``."""
        n, length = x.shape[0], x.shape[1]
        return F.transpose(F.reshape(x, (n, length, self.num_heads, self.head_dim)),
                           (0, 2, 1, 3))

    def construct(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                  need_weights: bool = True, attn_mask: Any = None,
                  average_attn_weights: bool = True) -> tuple[Tensor, Optional[Tensor]]:
        q, k, v = F.asarray(query), F.asarray(key), F.asarray(value)
        unbatched = q.ndim == 2
        if unbatched:
            q, k, v = F.expand_dims(q, 0), F.expand_dims(k, 0), F.expand_dims(v, 0)
            if key_padding_mask is not None:
                key_padding_mask = F.expand_dims(key_padding_mask, 0)
        elif not self.batch_first:
            q, k, v = F.swapaxes(q, 0, 1), F.swapaxes(k, 0, 1), F.swapaxes(v, 0, 1)
        n, length = q.shape[0], q.shape[1]
        (wq, wk, wv), (bq, bk, bv) = self._projections()
        q, k, v = _linear(q, wq, bq), _linear(k, wk, bk), _linear(v, wv, bv)
        mask = None if attn_mask is None else _additive(attn_mask, q)
        padding = None if key_padding_mask is None else _additive(key_padding_mask, q)
        if self.add_bias_kv:
            k = F.concat([k, F.broadcast_to(self.bias_k, (n, 1, self.embed_dim))], axis=1)
            v = F.concat([v, F.broadcast_to(self.bias_v, (n, 1, self.embed_dim))], axis=1)
            mask, padding = _pad_last(mask, 1), _pad_last(padding, 1)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if self.add_zero_attn:
            zero = F.zeros((n, self.num_heads, 1, self.head_dim), k.dtype)
            k, v = F.concat([k, zero], axis=2), F.concat([v, zero], axis=2)
            mask, padding = _pad_last(mask, 1), _pad_last(padding, 1)
        scores = F.divide(F.matmul(q, F.swapaxes(k, -1, -2)), math.sqrt(self.head_dim))
        if mask is not None:
            if mask.ndim == 3:
                mask = F.reshape(mask, (n, self.num_heads) + mask.shape[1:])
            scores = F.add(scores, mask)
        if padding is not None:
            scores = F.add(scores, F.reshape(padding, (n, 1, 1, padding.shape[-1])))
        attention = self.dropout(F.softmax(scores, -1))
        out = F.reshape(F.transpose(F.matmul(attention, v), (0, 2, 1, 3)),
                        (n, length, self.embed_dim))
        out = self.out_proj(out)
        if unbatched:
            out = F.squeeze(out, 0)
        elif not self.batch_first:
            out = F.swapaxes(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            attention = F.mean(attention, axis=1)
        return out, (F.squeeze(attention, 0) if unbatched else attention)

    def extend_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"batch_first={self.batch_first}")


_FEEDFORWARD_ACTIVATIONS = {"relu": ReLU, "gelu": lambda: GELU(approximate=False)}


class TransformerEncoderLayer(Cell):
    """Self-attention then a feed-forward network, each with a residual connection and
    layer norm (after each block, or before with ``norm_first``).  ``activation``:
    ``"relu"``, ``"gelu"`` (exact) or a cell."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Union[str, Cell] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, dtype: Any = float32) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Dense(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(p=dropout)
        self.linear2 = Dense(dim_feedforward, d_model, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)
        if isinstance(activation, str):
            make = _FEEDFORWARD_ACTIVATIONS.get(activation.lower())
            if make is None:
                raise ValueError(f"activation must be 'relu', 'gelu' or a Cell, got "
                                 f"{activation!r}")
            activation = make()
        self.activation = activation

    def _attention_block(self, x: Tensor, mask: Any, padding: Any) -> Tensor:
        out, _ = self.self_attn(x, x, x, key_padding_mask=padding, need_weights=False,
                                attn_mask=mask)
        return self.dropout1(out)

    def _feedforward_block(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout2(self.linear2(hidden))

    def construct(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None
                  ) -> Tensor:
        x = F.asarray(src)
        if self.norm_first:
            x = F.add(x, self._attention_block(self.norm1(x), src_mask, src_key_padding_mask))
            return F.add(x, self._feedforward_block(self.norm2(x)))
        x = self.norm1(F.add(x, self._attention_block(x, src_mask, src_key_padding_mask)))
        return self.norm2(F.add(x, self._feedforward_block(x)))
