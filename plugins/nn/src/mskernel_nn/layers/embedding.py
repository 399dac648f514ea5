"""``Embedding``: a lookup table of learned vectors (MindSpore's ``nn.Embedding``)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from mskernel_autodiff.api import stop_gradient

from mskernel import float32, ops as F
from mskernel_sdk import Parameter, Tensor

from ..cell import Cell
from ..initializer import Normal, initializer

__all__ = ["Embedding"]


class Embedding(Cell):
    """``embedding_table[ids]``: the rows of an ``[vocab_size, embedding_size]`` table for
    integer ``ids`` of any shape (the result has shape ``ids.shape + (embedding_size,)``).

    ``embedding_table`` is the table's initialiser (``"normal"``: ``Normal(0.01)``, as
    MindSpore).  ``use_one_hot`` computes the lookup as ``one_hot(ids) @ table`` (a dense
    gradient, the same values).  ``padding_idx``: that row starts as zeros and positions holding
    it pass no gradient to the table (PyTorch's behaviour).  ``dtype`` is the table's dtype.
    """

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False,
                 embedding_table: Any = "normal", dtype: Any = float32,
                 padding_idx: Optional[int] = None) -> None:
        super().__init__()
        if padding_idx is not None and not -vocab_size <= padding_idx < vocab_size:
            raise ValueError(f"padding_idx {padding_idx} is outside the vocabulary "
                             f"[0, {vocab_size})")
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.use_one_hot = use_one_hot
        self.padding_idx = None if padding_idx is None else padding_idx % vocab_size
        init = Normal(0.01) if embedding_table == "normal" else embedding_table
        table = np.array(initializer(init, (vocab_size, embedding_size), dtype))
        if self.padding_idx is not None:
            table[self.padding_idx] = 0
        self.embedding_table = Parameter(table, dtype=dtype)

    def construct(self, ids: Any) -> Tensor:
        if self.use_one_hot:
            hot = F.one_hot(ids, self.vocab_size, dtype=self.embedding_table.dtype)
            out = F.matmul(hot, self.embedding_table)
        else:
            out = F.embedding(ids, self.embedding_table)
        if self.padding_idx is None:
            return out
        kept = F.expand_dims(F.not_equal(ids, self.padding_idx), -1)
        return F.where(kept, out, stop_gradient(out))

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, padding_idx={self.padding_idx}")
