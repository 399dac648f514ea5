"""Which ops a mixed-precision level computes in low precision.

MindSpore's levels, stated on IR ops rather than on cells:

- ``O0``: nothing changes (float32);
- ``O1``: the *white list* — the ops whose cost is their multiply-adds (``matmul``, ``conv``,
  ``conv_transpose``, ``einsum``) and ``relu``, MindSpore's ``AMP_WHITE_LIST`` — run in low
  precision, everything else in float32;
- ``O2``: every floating-point op runs in low precision except the *black list* — the
  normalisations (``batch_norm``, ``layer_norm``, ``group_norm``: MindSpore's
  ``AMP_BLACK_LIST``), whose statistics need float32;
- ``O3``: every floating-point op runs in low precision.

The weights stay float32 at every level (the optimizer updates float32 master weights) and the
network's outputs are float32 again, so the loss is computed in float32 (MindSpore's
``_OutputTo32``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

from mskernel import bfloat16, float16
from mskernel_sdk import DType, dtype as to_dtype

__all__ = ["AMP_BLACK_LIST", "AMP_WHITE_LIST", "LEVELS", "Policy", "level_policy"]

LEVELS = ("O0", "O1", "O2", "O3")

#: ops computed in low precision at O1
AMP_WHITE_LIST = frozenset({"matmul", "conv", "conv_transpose", "einsum", "relu"})
#: ops kept in float32 at O2
AMP_BLACK_LIST = frozenset({"batch_norm", "layer_norm", "group_norm"})

#: ops that make values rather than compute on them: never cast
SOURCES = frozenset({"cast", "constant", "full", "iota", "ref_load", "ref_store"})


@dataclass(frozen=True)
class Policy:
    """``low``: the low-precision dtype; ``mode``: ``"white"`` computes the ``ops`` in low
    precision and nothing else, ``"black"`` computes every floating-point op in low precision
    except the ``ops``."""

    low: DType
    mode: Literal["white", "black"]
    ops: frozenset[str]

    def is_low(self, op: str) -> bool:
        if op in SOURCES or op.startswith("random_"):
            return False
        return (op in self.ops) == (self.mode == "white")

    @property
    def key(self) -> str:
        return f"{self.mode}:{self.low.name}:{','.join(sorted(self.ops))}"


def low_dtype(value: object) -> DType:
    """``float16`` or ``bfloat16`` (a DType or its name), checked."""
    try:
        dt = to_dtype(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, KeyError):
        dt = None
    if dt not in (float16, bfloat16):
        raise ValueError(f"mixed precision runs in float16 or bfloat16, got {value!r}")
    return dt  # type: ignore[return-value]


def level_policy(level: str, low: object = bfloat16) -> Policy | None:
    """The policy of ``level`` (``None`` for ``O0``)."""
    if level not in LEVELS:
        raise ValueError(f"amp_level must be one of {', '.join(LEVELS)}, got {level!r}")
    dt = low_dtype(low)
    if level == "O0":
        return None
    if level == "O1":
        return Policy(dt, "white", AMP_WHITE_LIST)
    return Policy(dt, "black", AMP_BLACK_LIST if level == "O2" else frozenset())


def custom_policy(low: object, white_list: Iterable[str] | None,
                  black_list: Iterable[str] | None) -> Policy:
    """The policy of user lists of op names: exactly one of the two."""
    if (white_list is None) == (black_list is None):
        raise ValueError("custom_mixed_precision needs exactly one of white_list and black_list")
    chosen = white_list if white_list is not None else black_list
    names = frozenset(chosen)  # type: ignore[arg-type]
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"the lists name IR ops as strings ('matmul', 'conv'), got {name!r}")
    return Policy(low_dtype(low), "white" if white_list is not None else "black", names)
