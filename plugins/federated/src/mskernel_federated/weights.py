"""A ``Cell``'s parameters as the ordered list of NumPy arrays Flower exchanges.

The order is the cell's ``parameters_dict()`` order, the same in every process that builds
the task's model.  Reading copies each parameter once (tensors are immutable); writing hands
the array Flower decoded straight to the parameter's ``assign_value``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


class UpdateError(ValueError):
    """A client's model does not fit the global model (count, shape, dtype or values)."""


def get_weights(cell: Any) -> list[np.ndarray]:
    """The cell's parameters, in order."""
    return [p.asnumpy() for p in cell.parameters_dict().values()]


def weight_names(cell: Any) -> list[str]:
    return list(cell.parameters_dict())


def set_weights(cell: Any, arrays: Sequence[np.ndarray]) -> None:
    """Load ``arrays`` into the cell's parameters, in order; a mismatch is an
    :class:`UpdateError` naming the parameter."""
    params = list(cell.parameters_dict().items())
    check_like([p.asnumpy() for _, p in params], arrays, [n for n, _ in params])
    for (_, param), array in zip(params, arrays):
        param.assign_value(np.asarray(array))


def check_like(reference: Sequence[np.ndarray], arrays: Sequence[np.ndarray],
               names: Sequence[str] | None = None) -> None:
    """Raise :class:`UpdateError` unless ``arrays`` match ``reference`` in number, shape
    and dtype and hold only finite values."""
    if len(arrays) != len(reference):
        raise UpdateError(f"expected {len(reference)} arrays, got {len(arrays)}")
    for i, (ref, arr) in enumerate(zip(reference, arrays)):
        name = names[i] if names is not None else f"array {i}"
        if not isinstance(arr, np.ndarray):
            raise UpdateError(f"{name}: expected a NumPy array, got {type(arr).__name__}")
        if arr.shape != ref.shape or arr.dtype != ref.dtype:
            raise UpdateError(f"{name}: expected {ref.dtype}{list(ref.shape)}, got "
                              f"{arr.dtype}{list(arr.shape)}")
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            raise UpdateError(f"{name}: holds {int((~np.isfinite(arr)).sum())} non-finite "
                              "values")


def global_norm(arrays: Sequence[np.ndarray]) -> float:
    """The L2 norm of all arrays together (in float64)."""
    return float(np.sqrt(sum(float(np.vdot(a, a).real) for a in
                             (np.asarray(x, np.float64) for x in arrays))))


def nbytes(arrays: Sequence[np.ndarray]) -> int:
    return sum(int(a.nbytes) for a in arrays)
