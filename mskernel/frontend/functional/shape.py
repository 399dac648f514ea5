"""Shape ops: reshaping, permuting and broadcasting axes, joining and splitting tensors
(MindSpore's ``chunk``, ``unbind``, ``narrow``, ``hstack``/``vstack`` among them), tiling,
flipping, rolling, padding, triangular masks and grids."""

from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..promote import promote
from ..tensor import Tensor
from ._core import Axis, _axes, _axis, _ints, _op, _ops, asarray
from .indexing import take


def _with_shape(op: str, x: Any, shape: Any) -> Tensor:
    """``op`` (``reshape`` or ``broadcast_to``) of ``x`` to ``shape``, or ``x`` itself when
    it already has that shape."""
    t = asarray(x)
    dims = _ints(shape)
    return t if dims == t.shape else _op(op, t, shape=dims)


def reshape(x: Any, shape: Any) -> Tensor:
    """Same elements in row-major order, new shape; one dimension may be -1 (inferred)."""
    return _with_shape("reshape", x, shape)


def ravel(x: Any) -> Tensor:
    """``x`` as a 1-d tensor."""
    t = asarray(x)
    return reshape(t, (t.size,))


def flatten(x: Any, start_axis: int = 0, end_axis: int = -1) -> Tensor:
    """Merge axes ``start_axis..end_axis`` (inclusive) into one (all of them by default)."""
    t = asarray(x)
    if t.ndim == 0:
        return reshape(t, (1,))
    lo, hi = _axis(start_axis, t.ndim), _axis(end_axis, t.ndim)
    if lo > hi:
        raise ValueError(f"flatten: start_axis {start_axis} comes after end_axis {end_axis}")
    return reshape(t, t.shape[:lo] + (math.prod(t.shape[lo:hi + 1]),) + t.shape[hi + 1:])


def transpose(x: Any, axes: Any = None) -> Tensor:
    """Permute the axes: output axis i is input axis ``axes[i]`` (reversed when None)."""
    t = asarray(x)
    perm = _axes(axes)
    if perm is not None and perm == tuple(range(t.ndim)):
        return t
    return _op("transpose", t, perm=perm)


permute_dims = transpose


def swapaxes(x: Any, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes."""
    t = asarray(x)
    perm = list(range(t.ndim))
    a, b = _axis(axis1, t.ndim), _axis(axis2, t.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(t, perm)


def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    """Move axes ``source`` to positions ``destination``, the others keeping their order."""
    t = asarray(x)
    src = [_axis(a, t.ndim) for a in _ints(source)]
    dst = [_axis(a, t.ndim) for a in _ints(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    rest = [a for a in range(t.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        rest.insert(d, s)
    return transpose(t, rest)


def squeeze(x: Any, axis: Axis = None) -> Tensor:
    """Remove size-1 axes (the listed ones, which must have size 1)."""
    return _op("squeeze", asarray(x), axes=_axes(axis))


def expand_dims(x: Any, axis: Union[int, Sequence[int]]) -> Tensor:
    """Insert size-1 axes at ``axis`` (positions in the result)."""
    return _op("expand_dims", asarray(x), axes=_ints(axis))


def unsqueeze(x: Any, axis: int) -> Tensor:
    """Insert one size-1 axis at ``axis`` (PyTorch's name)."""
    return expand_dims(x, operator.index(axis))


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """Repeat size-1 (and missing leading) axes up to ``shape``."""
    return _with_shape("broadcast_to", x, shape)


def broadcast_arrays(*xs: Any) -> tuple[Tensor, ...]:
    """The operands broadcast to their common shape (dtypes unchanged)."""
    ts = [asarray(x) for x in xs]
    shape = np.broadcast_shapes(*(t.shape for t in ts))
    return tuple(broadcast_to(t, shape) for t in ts)


# -- joining and splitting --------------------------------------------------------------------


def concat(xs: Sequence[Any], axis: Optional[int] = 0) -> Tensor:
    """Join tensors (promoted to one dtype) along an existing axis; ``axis=None`` joins the
    flattened tensors."""
    ts = promote(*xs)
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    return ts[0] if len(ts) == 1 else _op("concat", *ts, axis=operator.index(axis))


concatenate = concat


def stack(xs: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of one shape (promoted to one dtype) along a new axis."""
    return _op("stack", *promote(*xs), axis=operator.index(axis))


def split(x: Any, sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """Cut ``axis`` into pieces: an int gives that many equal sections (NumPy; it must
    divide the axis), a sequence gives the sizes of the pieces (MindSpore, PyTorch).  For
    NumPy's split points use :func:`split_at`."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    n = t.shape[ax]
    if isinstance(sections, (list, tuple, np.ndarray, Tensor)):
        sizes = _ints(sections)
    else:
        count = operator.index(sections)
        if count <= 0 or n % count:
            raise ValueError(f"split: axis {axis} of size {n} cannot be divided into {count} "
                             "equal sections; pass the sizes of the pieces instead")
        sizes = (n // count,) * count
    return _ops("split", t, axis=ax, sizes=sizes)


def split_at(x: Any, indices: Sequence[int], axis: int = 0) -> tuple[Tensor, ...]:
    """NumPy's ``split(x, indices)``: the pieces ``x[:i0], x[i0:i1], ..., x[ik:]`` along
    ``axis`` (Python's slice rules: negative points count from the end)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    points = [0, *_ints(indices), 2**63 - 1]
    return tuple(_op("slice", t, starts=(lo,), stops=(hi,), axes=(ax,))
                 for lo, hi in zip(points, points[1:]))


def narrow(x: Any, axis: int, start: int, length: int) -> Tensor:
    """The ``length`` elements of ``x`` from ``start`` along ``axis``."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    lo = operator.index(start) % t.shape[ax] if t.shape[ax] else 0
    if not 0 <= operator.index(length) <= t.shape[ax] - lo:
        raise ValueError(f"narrow: {length} elements from {start} do not fit in axis {axis} "
                         f"of a {t.type} tensor")
    return _op("slice", t, starts=(lo,), stops=(lo + length,), axes=(ax,))


def chunk(x: Any, chunks: int, axis: int = 0) -> tuple[Tensor, ...]:
    """``x`` cut along ``axis`` into at most ``chunks`` pieces of ``ceil(n / chunks)``
    elements, the last one smaller (MindSpore and PyTorch)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    if operator.index(chunks) <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    size = max(-(-t.shape[ax] // chunks), 1)
    return split_at(t, list(range(size, t.shape[ax], size)), ax)


def unbind(x: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, that axis removed."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    return tuple(squeeze(p, ax) for p in split_at(t, list(range(1, t.shape[ax])), ax))


def hstack(xs: Sequence[Any]) -> Tensor:
    """Join along the second axis (the first for 1-d tensors)."""
    ts = [asarray(x) for x in xs]
    return concat(ts, axis=0 if all(t.ndim <= 1 for t in ts) else 1)


def vstack(xs: Sequence[Any]) -> Tensor:
    """Join along the first axis, 1-d tensors taken as rows."""
    return concat([reshape(t, (1, -1)) if t.ndim <= 1 else t for t in map(asarray, xs)], 0)


def meshgrid(*xs: Any, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors: ``"xy"`` (Cartesian, the default) swaps the first
    two output axes of ``"ij"`` (matrix) indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [ravel(x) for x in (xs[0] if len(xs) == 1 and isinstance(xs[0], (list, tuple))
                             else xs)]
    shape = [t.size for t in ts]
    if indexing == "xy" and len(ts) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, t in enumerate(ts):
        at = (1 - i if i < 2 else i) if indexing == "xy" and len(ts) > 1 else i
        grids.append(broadcast_to(reshape(t, [-1 if a == at else 1 for a in range(len(ts))]),
                                  shape))
    return tuple(grids)


# -- rearranging ------------------------------------------------------------------------------


def tile(x: Any, reps: Any) -> Tensor:
    """Repeat the whole tensor ``reps[i]`` times along axis i (NumPy's ``tile``)."""
    return _op("tile", asarray(x), reps=_ints(reps))


def repeat(x: Any, repeats: Any, axis: Optional[int] = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened tensor when
    None); ``repeats`` may give one count per element (NumPy)."""
    t = asarray(x)
    if isinstance(repeats, (list, tuple, np.ndarray, Tensor)):
        counts = _ints(repeats)
        src, ax = (ravel(t), 0) if axis is None else (t, _axis(axis, t.ndim))
        if len(counts) == 1:
            return _op("repeat", src, repeats=counts[0], axis=ax)
        if len(counts) != src.shape[ax]:
            raise ValueError(f"repeat: {len(counts)} counts for axis {ax} of size "
                             f"{src.shape[ax]}; give one count, or one per element")
        return take(src, np.repeat(np.arange(len(counts)), counts), axis=ax)
    return _op("repeat", t, repeats=operator.index(repeats),
               axis=None if axis is None else operator.index(axis))


def flip(x: Any, axis: Axis = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (every axis when None)."""
    return _op("flip", asarray(x), axes=_axes(axis))


def rot90(x: Any, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """``x`` rotated by 90 degrees ``k`` times in the plane of axes ``dims``, from the first
    toward the second (NumPy, MindSpore)."""
    t = asarray(x)
    a, b = (_axis(ax, t.ndim) for ax in dims)
    k = operator.index(k) % 4
    if k == 2:
        return flip(t, (a, b))
    if k == 0:
        return t
    return swapaxes(flip(t, b), a, b) if k == 1 else flip(swapaxes(t, a, b), b)


def roll(x: Any, shift: Any, axis: Axis = None) -> Tensor:
    """Shift elements along ``axis`` cyclically (of the flattened tensor when None)."""
    t = asarray(x)
    if axis is None:
        return reshape(roll(ravel(t), shift, 0), t.shape)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) == 1:
        shifts *= len(axes)
    for s, a in zip(shifts, axes):
        n = t.shape[_axis(a, t.ndim)]
        if n and s % n:
            t = take(t, (np.arange(n) - s) % n, axis=a)
    return t


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: float = 0) -> Tensor:
    """NumPy's ``pad``: ``pad_width`` is an int, ``(before, after)``, or one such pair per
    axis; modes ``constant``, ``reflect`` and ``edge``.  Negative widths crop."""
    t = asarray(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t.ndim, 2))
    return _op("pad", t, pads=tuple(int(w) for w in widths.ravel()), mode=mode,
               value=float(constant_values))


def tril(x: Any, k: int = 0) -> Tensor:
    """Zero the elements above diagonal ``k`` of the last two axes."""
    return _op("tril", asarray(x), k=operator.index(k))


def triu(x: Any, k: int = 0) -> Tensor:
    """Zero the elements below diagonal ``k`` of the last two axes."""
    return _op("triu", asarray(x), k=operator.index(k))
