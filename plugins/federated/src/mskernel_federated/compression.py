"""Top-k sparsified updates with error feedback (Stich et al., 2018; Lin et al., "Deep
Gradient Compression", 2018).

A client sends, per parameter, the ``k`` largest-magnitude entries of ``update + residual``
as an index array and a value array; the entries it did not send become the next round's
residual, so nothing is lost, only delayed.  The server turns the pairs back into dense
updates before averaging.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .weights import UpdateError


def kept_count(size: int, ratio: float) -> int:
    return max(1, int(np.ceil(size * ratio)))


def compress(update: Sequence[np.ndarray], residual: Sequence[np.ndarray] | None,
             ratio: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(payload, new_residual)``: the payload is ``[indices_0, values_0, indices_1, ...]``
    (flat indices, int32 below 2**31 entries, values in the update's dtype)."""
    payload: list[np.ndarray] = []
    new_residual: list[np.ndarray] = []
    for i, u in enumerate(update):
        full = u if residual is None else u + residual[i]
        flat = full.reshape(-1)
        k = kept_count(flat.size, ratio)
        index = np.argpartition(np.abs(flat), flat.size - k)[flat.size - k:]
        index.sort()
        values = flat[index]
        index_type = np.int32 if flat.size < 2**31 else np.int64
        payload += [index.astype(index_type), values.astype(u.dtype)]
        rest = flat.copy()
        rest[index] = 0
        new_residual.append(rest.reshape(u.shape))
    return payload, new_residual


def decompress(payload: Sequence[np.ndarray], like: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Dense updates shaped like ``like`` from a :func:`compress` payload; a payload that
    does not fit (count, index range, dtype) is an :class:`UpdateError`."""
    if len(payload) != 2 * len(like):
        raise UpdateError(f"a top-k payload holds an index and a value array per parameter: "
                          f"expected {2 * len(like)} arrays, got {len(payload)}")
    dense: list[np.ndarray] = []
    for i, ref in enumerate(like):
        index, values = payload[2 * i], payload[2 * i + 1]
        if index.dtype not in (np.int32, np.int64) or index.ndim != 1 or \
                values.shape != index.shape:
            raise UpdateError(f"parameter {i}: top-k indices must be int32 or int64[k] beside "
                              f"values[k], "
                              f"got {index.dtype}{list(index.shape)} and "
                              f"{values.dtype}{list(values.shape)}")
        if values.dtype != ref.dtype:
            raise UpdateError(f"parameter {i}: expected {ref.dtype} values, got {values.dtype}")
        if index.size and (index.min() < 0 or index.max() >= ref.size):
            raise UpdateError(f"parameter {i}: top-k index outside [0, {ref.size})")
        out = np.zeros(ref.size, ref.dtype)
        out[index] = values
        dense.append(out.reshape(ref.shape))
    return dense
