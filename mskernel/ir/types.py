"""The types a :class:`~mskernel.ir.graph.Value` can have.

- :class:`TensorType` — a dense tensor: dtype and a static shape.
- :class:`TokenType` — the state token that orders side effects.  An effectful op takes the
  current token and returns the next one, so the order of effects is a data dependency and
  no pass can reorder, merge or delete an effect whose token is used.
- :class:`RefType` — a mutable cell holding a tensor (a parameter, an optimizer slot, an RNG
  state).  Refs are read with ``ref_load`` and written with ``ref_store``, both threaded
  through a token.

Printed forms (also the text IR syntax): ``f32[2,3]``, ``i64[]`` (a scalar), ``!token``,
``!ref<f32[2,3]>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from .dtypes import DType, dtype as to_dtype

Shape = tuple[int, ...]


@dataclass(frozen=True)
class TensorType:
    dtype: DType
    shape: Shape
    # types key every kernel cache: hash once
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", to_dtype(self.dtype))
        shape = tuple(int(d) for d in self.shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"negative dimension in shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "_hash", hash((self.dtype, shape)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def with_shape(self, shape: Shape) -> "TensorType":
        return TensorType(self.dtype, tuple(shape))

    def with_dtype(self, dt: DType) -> "TensorType":
        return TensorType(to_dtype(dt), self.shape)

    def __str__(self) -> str:
        return f"{self.dtype.short}[{','.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class TokenType:
    def __str__(self) -> str:
        return "!token"


@dataclass(frozen=True)
class RefType:
    value: TensorType

    def __str__(self) -> str:
        return f"!ref<{self.value}>"


Type = Union[TensorType, TokenType, RefType]
TOKEN = TokenType()


def tensor_type(dt: DType | str, shape: Shape | list[int] = ()) -> TensorType:
    return TensorType(to_dtype(dt), tuple(shape))
