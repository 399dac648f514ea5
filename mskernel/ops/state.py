"""State ops: reading and writing mutable cells, ordered by tokens.

Side effects are explicit in the IR.  A ``!ref<T>`` value names a mutable cell holding a
tensor of type ``T`` (a parameter, an optimizer slot, an RNG key); a ``!token`` value stands
for "everything that has happened so far".  Each effectful op takes the current token and
returns the next one, so the order of effects is a data dependency that passes respect
without knowing what the ops do.

The token convention:

- A graph with effects takes its initial token as an input and returns its final token as an
  output (there is no op that makes a token from nothing, so the caller always decides what
  an effect is ordered after).  At run time a token is :data:`~mskernel.runtime.state.TOKEN_VALUE`
  and a ref is a :class:`~mskernel.runtime.state.RefCell` owned by the caller.
- Tokens are linear: each token is consumed by at most one node (or returned once), so two
  effects never both follow the same token and their order is never ambiguous.
  :func:`mskernel.ir.verify.verify` checks this.
- ``If`` and ``While`` carry tokens and refs like any other value; effects in their regions
  are ordered by the token passed through the node.

``ref_load(ref, token) -> (T, !token)``
    The cell's current value (a copy: later stores do not change it).
``ref_store(ref, value, token) -> !token``
    Replace the cell's value; ``value`` must have exactly the cell's type ``T``.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..errors import InferError
from ..ir.types import TOKEN, RefType, TokenType, Type, tensor_type
from ..runtime.state import TOKEN_VALUE, RefCell
from .registry import OpDef
from .samples import OpSample, SampleFn, random_array


def _ref(t: Type) -> RefType:
    if not isinstance(t, RefType):
        raise InferError(f"ref must be a !ref<T>, got {t}")
    return t


def _token(t: Type) -> None:
    if not isinstance(t, TokenType):
        raise InferError(f"token must be a {TOKEN}, got {t}")


def _load_infer(ref: Type, token: Type) -> tuple[Type, Type]:
    cell = _ref(ref)
    _token(token)
    return cell.value, TOKEN


def _ref_load(ref: RefCell, token: Any) -> tuple[np.ndarray, Any]:
    return np.array(ref.value, copy=True), TOKEN_VALUE


def _store_infer(ref: Type, value: Type, token: Type) -> Type:
    cell = _ref(ref)
    if value != cell.value:
        raise InferError(f"value has type {value}, but the ref holds {cell.value}; "
                         "cast or reshape it to the ref's type first")
    _token(token)
    return TOKEN


def _ref_store(ref: RefCell, value: np.ndarray, token: Any) -> Any:
    ref.value = np.array(value, copy=True)
    return TOKEN_VALUE


OPS: list[OpDef] = [
    OpDef("ref_load", ("ref", "token"), _load_infer, _ref_load, effectful=True,
          doc="read a ref's value after the effects the token follows"),
    OpDef("ref_store", ("ref", "value", "token"), _store_infer, _ref_store, effectful=True,
          doc="write a value of exactly the ref's type into the ref"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for ``ref_load`` and ``ref_store``: cells of every dtype family, including bfloat16
# (stored as float32), scalars and size-0 tensors.  Each sample has its own cell, and a store
# writes the sample's own value, so running a sample again gives the same cell contents.


_CELLS = (("float32", (2, 3)), ("bfloat16", (4,)), ("int64", ()), ("bool", (3,)),
          ("complex64", (2,)), ("float64", (0, 3)), ("uint8", (1, 1)))


def _cell(rng: np.random.Generator, dt: str, shape: tuple[int, ...]) -> RefCell:
    return RefCell(tensor_type(dt, shape), random_array(rng, shape, dt))


def _ref_load_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in _CELLS:
        yield OpSample("ref_load", (_cell(rng, dt, shape), TOKEN_VALUE))


def _ref_store_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in _CELLS:
        value = random_array(rng, shape, dt)
        yield OpSample("ref_store", (_cell(rng, dt, shape), value, TOKEN_VALUE),
                       dtypes=(None, dt, None))


SAMPLES: dict[str, SampleFn] = {"ref_load": _ref_load_samples, "ref_store": _ref_store_samples}
