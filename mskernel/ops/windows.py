"""Sliding-window geometry shared by the convolution and pooling ops.

Layout is channels-first: ``[N, C, *spatial]`` with 1 to 3 spatial dims.  Per-dim attributes
(``kernel``, ``stride``, ``dilation``) have one entry per spatial dim; ``padding`` has a
``(lo, hi)`` pair per spatial dim, flattened in order: ``(lo0, hi0, lo1, hi1, ...)``.

:class:`Window` validates that geometry, computes PyTorch's output size (``ceil_mode``
included) and gives the windows of an array as a strided view ``[N, C, *out, *kernel]``:
im2col without copying, so references reduce or contract windows with vectorised NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import InferError
from ..ir.types import Shape, TensorType

Pads = tuple[tuple[int, int], ...]


def spatial_rank(x: TensorType, layout: str = "[N, C, *spatial]") -> int:
    """The number of spatial dims of ``x`` (1 to 3); they must be non-empty."""
    n = x.rank - 2
    if not 1 <= n <= 3:
        raise InferError(
            f"x must have rank 3, 4 or 5 ({layout} with 1 to 3 spatial dims), got {x}"
        )
    if 0 in x.shape[2:]:
        raise InferError(
            f"the spatial dims of x must be non-empty (only N and C may be 0), got {x}"
        )
    return n


def per_dim(name: str, value: Optional[Sequence[int]], n: int, default: int,
            minimum: int) -> tuple[int, ...]:
    """One entry per spatial dim, each at least ``minimum``; ``None`` means ``default``."""
    if value is None:
        return (default,) * n
    if len(value) != n:
        raise InferError(
            f"{name} needs {n} value(s), one per spatial dim, got {list(value)}"
        )
    if any(v < minimum for v in value):
        word = "positive" if minimum == 1 else f"at least {minimum}"
        raise InferError(f"{name} must be {word}, got {list(value)}")
    return tuple(value)


def padding_pairs(padding: Optional[Sequence[int]], n: int) -> Pads:
    """``(lo0, hi0, lo1, hi1, ...)`` as ``((lo0, hi0), (lo1, hi1), ...)``; ``None`` pads
    nothing."""
    if padding is None:
        return ((0, 0),) * n
    if len(padding) != 2 * n:
        raise InferError(
            f"padding needs {2 * n} values, a (lo, hi) pair for each of the {n} spatial dim(s), "
            f"got {list(padding)}"
        )
    if any(p < 0 for p in padding):
        raise InferError(f"padding must be non-negative, got {list(padding)}")
    return tuple(zip(padding[::2], padding[1::2]))


def pad(x: np.ndarray, pads: Sequence[tuple[int, int]], fill: Any) -> np.ndarray:
    """Pad the trailing ``len(pads)`` dims of ``x`` with ``fill``; a negative amount crops."""
    lead = x.ndim - len(pads)
    crop = tuple(slice(max(-lo, 0), x.shape[lead + i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(pads))
    x = x[(slice(None),) * lead + crop]
    widths = [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if not any(lo or hi for lo, hi in widths):
        return x
    return np.pad(x, widths, constant_values=fill)


@dataclass(frozen=True)
class Window:
    """Where the windows of a convolution or pooling op lie along each spatial dim."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    padding: Pads
    ceil_mode: bool = False

    @classmethod
    def of(cls, n: int, kernel: Sequence[int], stride: Optional[Sequence[int]],
           padding: Optional[Sequence[int]], dilation: Optional[Sequence[int]] = None,
           ceil_mode: bool = False, *, kernel_name: str = "kernel") -> "Window":
        """Validate the attributes of an op over ``n`` spatial dims; ``stride=None`` means
        stride 1 (pooling ops pass their kernel instead)."""
        return cls(
            per_dim(kernel_name, kernel, n, 1, minimum=1),
            per_dim("stride", stride, n, 1, minimum=1),
            per_dim("dilation", dilation, n, 1, minimum=1),
            padding_pairs(padding, n),
            ceil_mode,
        )

    @property
    def extents(self) -> tuple[int, ...]:
        """How many input positions one window spans along each dim (dilation included)."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    def output_shape(self, spatial: Shape) -> Shape:
        """PyTorch's output size: windows that fit the padded input (with ``ceil_mode``, also
        a last partial window, provided it starts inside the input or its low padding)."""
        out = []
        for axis, (size, ext, s, (lo, hi)) in enumerate(
                zip(spatial, self.extents, self.stride, self.padding)):
            padded = size + lo + hi
            count = (padded - ext + (s - 1 if self.ceil_mode else 0)) // s + 1
            if self.ceil_mode and (count - 1) * s >= size + lo:
                count -= 1
            if count < 1:
                raise InferError(
                    f"the window along spatial dim {axis} spans {ext} position(s), more than "
                    f"the padded input size {padded} (size {size} + padding {lo} + {hi})"
                )
            out.append(count)
        return tuple(out)

    def covering_pads(self, spatial: Shape) -> Pads:
        """The padding that holds every window: the op's, the high side extended where
        ``ceil_mode``'s last window reaches past it."""
        out = self.output_shape(spatial)
        return tuple((lo, max(hi, (o - 1) * s + ext - size - lo)) for size, o, s, ext, (lo, hi)
                     in zip(spatial, out, self.stride, self.extents, self.padding))

    def positions(self, spatial: Shape) -> np.ndarray:
        """Where each window reads, as flat positions in the input padded by
        :meth:`covering_pads`: int64 ``[windows, taps]``, both in row-major order."""
        along = [np.arange(o)[:, None] * s + np.arange(k)[None, :] * d for o, s, k, d
                 in zip(self.output_shape(spatial), self.stride, self.kernel, self.dilation)]
        padded = [size + lo + hi for size, (lo, hi) in zip(spatial, self.covering_pads(spatial))]
        return flat_positions(padded, along)

    def windows(self, x: np.ndarray, fill: Any) -> np.ndarray:
        """Read-only view ``[N, C, *out, *kernel]`` of ``x`` padded with ``fill``: element
        ``[n, c, *o, *t]`` is padded ``x[n, c, *(o*stride + t*dilation)]``."""
        out = self.output_shape(x.shape[2:])
        xp = np.ascontiguousarray(pad(x, self.covering_pads(x.shape[2:]), fill))
        steps = xp.strides[2:]
        return as_strided(
            xp,
            shape=xp.shape[:2] + out + self.kernel,
            strides=xp.strides[:2]
            + tuple(st * s for st, s in zip(steps, self.stride))
            + tuple(st * d for st, d in zip(steps, self.dilation)),
            writeable=False,
        )


def flat_positions(spatial: Sequence[int], along: Sequence[np.ndarray]) -> np.ndarray:
    """Flat positions in a row-major array of shape ``spatial`` from per-dim position tables
    ``along[d]`` of shape ``[out_d, taps_d]``: ``[prod(out), prod(taps)]``, windows and taps
    each in row-major order."""
    n = len(spatial)
    flat = np.zeros((1,) * (2 * n), np.int64)
    for d, (size, table) in enumerate(zip(spatial, along)):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = table.shape
        flat = flat * size + table.reshape(shape)
    outs = tuple(t.shape[0] for t in along)
    taps = tuple(t.shape[1] for t in along)
    flat = np.broadcast_to(flat, outs + taps)
    return flat.reshape(math.prod(outs), math.prod(taps))
