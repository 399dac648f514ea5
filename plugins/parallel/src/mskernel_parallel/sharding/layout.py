"""Device meshes and tensor layouts: how a tensor is spread over ranks, as data.

A :class:`Mesh` arranges the ranks in a named grid, ``Mesh((2, 4), ("dp", "mp"))``: rank
``r`` sits at the row-major coordinates of ``r`` (the last axis varies fastest, MindSpore's
device matrix).  A :class:`TensorLayout` says, for each dimension of a tensor, which mesh axes
split it (none: the dimension is whole on every rank) and over which axes the ranks hold
*partial* values still to be reduced (a matmul whose contracted dimension is split).  A
dimension split over the axes ``(a, b)`` is cut into ``size(a) * size(b)`` blocks, rank ``r``
holding block ``coord(a) * size(b) + coord(b)``.  Every axis splits at most one dimension.

:class:`Layout` is MindSpore's spelling: ``layout = Layout((2, 4), ("dp", "mp"))``, then
``layout("dp", "None")`` is the layout of a matrix split by rows over ``dp``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from ..errors import ShardingError

#: How ranks holding partial values combine them.
PARTIAL_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
NONE = "None"
Axes = tuple[str, ...]


@dataclass(frozen=True)
class Mesh:
    """Ranks ``0 … size-1`` in a grid of ``shape`` with one name per axis."""

    shape: tuple[int, ...]
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        object.__setattr__(self, "names", tuple(self.names))
        if len(self.shape) != len(self.names) or not self.shape:
            raise ShardingError(f"a mesh needs one name per axis: shape {list(self.shape)}, "
                                f"names {list(self.names)}")
        if any(s < 1 for s in self.shape):
            raise ShardingError(f"mesh axes must have at least one rank: {list(self.shape)}")
        if len(set(self.names)) != len(self.names) or NONE in self.names or any(
                not n or "," in n or "+" in n for n in self.names):
            raise ShardingError(f"mesh axis names must be distinct, non-empty, not {NONE!r} "
                                f"and without ',' or '+': {list(self.names)}")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def axis_size(self, name: str) -> int:
        try:
            return self.shape[self.names.index(name)]
        except ValueError:
            raise ShardingError(f"no mesh axis {name!r}; the mesh has "
                                f"{', '.join(self.names)}") from None

    def axes_size(self, axes: Iterable[str]) -> int:
        return math.prod(self.axis_size(a) for a in axes)

    def coords(self, rank: int) -> dict[str, int]:
        """The coordinates of ``rank``, by axis name."""
        if not 0 <= rank < self.size:
            raise ShardingError(f"rank {rank} is not in a mesh of {self.size} ranks")
        return dict(zip(self.names, (int(c) for c in np.unravel_index(rank, self.shape))))

    def group(self, rank: int, axis: str) -> list[int]:
        """The ranks that differ from ``rank`` only along ``axis``, in coordinate order."""
        coords = self.coords(rank)
        members = []
        for c in range(self.axis_size(axis)):
            coords[axis] = c
            members.append(int(np.ravel_multi_index([coords[n] for n in self.names],
                                                    self.shape)))
        return members


@dataclass(frozen=True)
class TensorLayout:
    """``dims[i]``: the mesh axes splitting dimension ``i`` (outermost first); ``partial``:
    ``(axis, reduction)`` pairs — the ranks along ``axis`` hold values whose ``reduction`` is
    the tensor."""

    mesh: Mesh
    dims: tuple[Axes, ...]
    partial: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dims", tuple(tuple(d) for d in self.dims))
        object.__setattr__(self, "partial", tuple(tuple(p) for p in self.partial))
        used = [a for d in self.dims for a in d] + [a for a, _ in self.partial]
        if not used:
            return
        for a in set(used).difference(self.mesh.names):
            self.mesh.axis_size(a)  # raises, naming the mesh's axes
        if len(set(used)) != len(used):
            raise ShardingError(f"layout {self}: a mesh axis splits more than one dimension")
        reductions = {r for _, r in self.partial}
        if len(reductions) > 1 or not reductions <= set(PARTIAL_REDUCTIONS):
            raise ShardingError(f"layout {self}: partial values combine by one of "
                                f"{', '.join(PARTIAL_REDUCTIONS)}, got {sorted(reductions)}")

    @classmethod
    def replicated(cls, mesh: Mesh, rank: int) -> "TensorLayout":
        return cls(mesh, ((),) * rank)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def splits(self) -> tuple[int, ...]:
        """Into how many blocks each dimension is cut."""
        return tuple(self.mesh.axes_size(d) for d in self.dims)

    def without_partial(self) -> "TensorLayout":
        return TensorLayout(self.mesh, self.dims)

    def check(self, shape: Sequence[int], what: str = "tensor") -> None:
        """Raise unless this layout fits a tensor of ``shape``."""
        if len(shape) != self.rank:
            raise ShardingError(f"layout {self} has {self.rank} dimension(s); the {what} has "
                                f"shape {list(shape)}")
        for i, (n, k) in enumerate(zip(shape, self.splits())):
            if n % k:
                raise ShardingError(f"dimension {i} of the {what} (shape {list(shape)}) is "
                                    f"{n}, not divisible into {k} blocks ({self})")

    def local_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        self.check(shape)
        return tuple(n // k for n, k in zip(shape, self.splits()))

    def block(self, rank: int, dim: int) -> int:
        """The index of ``rank``'s block along ``dim``."""
        coords, index = self.mesh.coords(rank), 0
        for a in self.dims[dim]:
            index = index * self.mesh.axis_size(a) + coords[a]
        return index

    def shard(self, array: np.ndarray, rank: int) -> np.ndarray:
        """``rank``'s part of the whole tensor ``array`` (a partial layout gives the whole
        value to the first rank along the partial axes and the reduction's identity to the
        others: zeros for a sum, ones for a product, the value itself for mean, max, min)."""
        array = np.asarray(array)
        local = self.local_shape(array.shape)
        index = tuple(slice(self.block(rank, i) * n, (self.block(rank, i) + 1) * n)
                      for i, n in enumerate(local))
        part = np.array(array[index], copy=True)
        coords = self.mesh.coords(rank)
        if any(coords[a] for a, _ in self.partial):
            identity = {"sum": 0, "prod": 1}.get(self.partial[0][1])
            if identity is not None:
                part[...] = identity
        return part

    def spec(self) -> str:
        """The text form ``"dp,mp+x,-"`` (``-``: a whole dimension) used in IR attributes."""
        return ",".join("+".join(d) if d else "-" for d in self.dims)

    def __str__(self) -> str:
        parts = ", ".join("(" + ", ".join(d) + ")" if len(d) > 1 else (d[0] if d else NONE)
                          for d in self.dims)
        partial = "".join(f" partial-{r}({a})" for a, r in self.partial)
        return f"[{parts}]{partial}"


def parse_spec(mesh: Mesh, spec: str) -> TensorLayout:
    """The inverse of :meth:`TensorLayout.spec`."""
    if spec == "":
        return TensorLayout(mesh, ())
    dims = [() if d == "-" else tuple(d.split("+")) for d in spec.split(",")]
    return TensorLayout(mesh, tuple(dims))


def assemble(parts: Sequence[np.ndarray], layout: TensorLayout,
             shape: Sequence[int]) -> np.ndarray:
    """The whole tensor from every rank's part (``parts[r]`` of rank ``r``), reducing partial
    values; raises when ranks that should hold the same values do not."""
    if len(parts) != layout.mesh.size:
        raise ShardingError(f"assemble: {len(parts)} parts for a mesh of {layout.mesh.size}")
    partial_axes = [a for a, _ in layout.partial]
    whole: Optional[np.ndarray] = None
    groups: dict[tuple[int, ...], list[int]] = {}
    for r in range(layout.mesh.size):  # ranks differing only along partial axes
        coords = layout.mesh.coords(r)
        key = tuple(c for n, c in coords.items() if n not in partial_axes)
        groups.setdefault(key, []).append(r)
    for members in groups.values():
        value = np.asarray(parts[members[0]])
        if layout.partial:
            stack = np.stack([np.asarray(parts[m]) for m in members])
            value = _REDUCE[layout.partial[0][1]](stack)
        if whole is None:
            whole = np.empty(tuple(shape), value.dtype)
        index = tuple(slice(layout.block(members[0], i) * n, (layout.block(members[0], i) + 1) * n)
                      for i, n in enumerate(value.shape))
        whole[index] = value
    assert whole is not None
    return whole


_REDUCE = {"sum": lambda s: s.sum(0), "mean": lambda s: s.mean(0), "max": lambda s: s.max(0),
           "min": lambda s: s.min(0), "prod": lambda s: s.prod(0)}


class Layout:
    """MindSpore's ``Layout(device_matrix, alias_name)``: a mesh; calling it with one entry
    per tensor dimension — an axis name, a tuple of names, or ``"None"`` — gives a
    :class:`TensorLayout`.

        layout = Layout((2, 4), ("dp", "mp"))
        x_layout = layout("dp", "None")        # rows split over dp, replicated over mp
    """

    def __init__(self, device_matrix: Sequence[int], alias_name: Sequence[str]) -> None:
        self.mesh = Mesh(tuple(device_matrix), tuple(alias_name))

    def __call__(self, *tensor_map: Union[str, Sequence[str], None]) -> TensorLayout:
        dims: list[Axes] = []
        for entry in tensor_map:
            if entry is None or entry == NONE:
                dims.append(())
            elif isinstance(entry, str):
                dims.append((entry,))
            else:
                dims.append(tuple(a for a in entry if a != NONE))
        return TensorLayout(self.mesh, tuple(dims))

    def __repr__(self) -> str:
        return f"Layout({self.mesh.shape}, {self.mesh.names})"
