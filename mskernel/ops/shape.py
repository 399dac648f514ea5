"""Shape ops: make tensors (``constant``, ``full``, ``iota``), move or copy data without
computing on it (``reshape``, ``transpose``, ``broadcast_to``, ``concat``, ``stack``,
``split``, ``slice``, ``squeeze``, ``expand_dims``, ``tile``, ``flip``, ``repeat``), and fill
around or over data (``pad``, ``tril``, ``triu``).

Ops whose every output element is a copy of an input element carry the ``"shape"`` trait, so a
backend may implement them as views and a layout pass may move them freely.  All ops accept
every dtype.  Axis attributes accept negative values, counted from the end.

The composites (see :mod:`.primitives`) are all ``reshape``, ``broadcast_to``, ``slice``,
``concat`` or ``where`` of a mask: ``squeeze``, ``expand_dims``, ``stack``, ``split``,
``flip``, ``tile``, ``repeat``, ``tril``, ``triu`` and ``full`` (a broadcast constant).

``slice`` follows Python's slice rules exactly (``slice.indices``): out-of-range starts and
stops are clamped, negative ones count from the end.  There is no ``None``; "to the end" is a
stop past the end: ``stops=(2**63 - 1,)`` with a positive step, ``stops=(-2**63,)`` (any value
at or below ``-size - 1``) with a negative step — ``starts=(-1,), stops=(-2**63,), steps=(-1,)``
reverses an axis.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, as_storage, dtype as to_dtype, int64
from ..ir.graph import Value
from ..ir.types import Shape, TensorType
from .compose import scalar, tensor_type
from .registry import Attr, DecomposeFn, Emitter, OpDef
from .rules import (
    check_fill_value, normalize_axes, normalize_axis, same_dtype, tensor, with_dim,
)
from .samples import DATA_DTYPES, OpSample, SampleFn, dtype_runs, one_input, random_array

SHAPE = frozenset({"shape"})
PAD_MODES = ("constant", "reflect", "edge")


# --- validation helpers ----------------------------------------------------------------------


def _check_dims(shape: Sequence[int], what: str = "shape") -> Shape:
    if any(d < 0 for d in shape):
        raise InferError(f"{what} {list(shape)} has a negative dimension")
    return tuple(shape)


def _ordered_axes(axes: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    """Normalise ``axes`` keeping their order; a repeated axis is an error."""
    out = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(out)) != len(out):
        raise InferError(f"{what} {list(axes)} repeats an axis")
    return out


# --- creation --------------------------------------------------------------------------------


def _constant_infer(*, value: np.ndarray, dtype: Optional[DType]) -> TensorType:
    try:
        natural = to_dtype(value.dtype)
    except TypeError:
        raise InferError(
            f"value has NumPy dtype {value.dtype}, which no mskernel dtype holds"
        ) from None
    if dtype is None:
        return TensorType(natural, value.shape)
    if value.dtype != dtype.storage:
        raise InferError(
            f"a {dtype} constant is stored as {dtype.storage}, got a {value.dtype} array"
        )
    return TensorType(dtype, value.shape)


def _constant(*, value: np.ndarray, dtype: Optional[DType]) -> np.ndarray:
    return np.array(value)  # a writable copy of the read-only attribute


def _full_infer(*, shape: Shape, value: float, dtype: DType) -> TensorType:
    check_fill_value(value, dtype, "value")
    return TensorType(dtype, _check_dims(shape))


def _full(*, shape: Shape, value: float, dtype: DType) -> np.ndarray:
    return np.full(shape, value, dtype=dtype.storage)


def _iota_infer(*, shape: Shape, axis: int, dtype: DType) -> TensorType:
    shape = _check_dims(shape)
    if not shape:
        raise InferError("iota needs a shape of rank 1 or more (it counts along an axis)")
    axis = normalize_axis(axis, len(shape))
    if dtype.is_bool:
        raise InferError("iota counts 0, 1, 2, ...; bool cannot hold that, use a numeric dtype")
    if dtype.is_integer and shape[axis] - 1 > np.iinfo(dtype.storage).max:
        raise InferError(f"iota of length {shape[axis]} along axis {axis} overflows {dtype}")
    return TensorType(dtype, shape)


def _iota(*, shape: Shape, axis: int, dtype: DType) -> np.ndarray:
    axis = axis % len(shape)
    line = np.arange(shape[axis], dtype=dtype.storage)
    line = line.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return np.array(np.broadcast_to(line, shape))


# --- reshaping -------------------------------------------------------------------------------


def _resolved_shape(x: TensorType, shape: Shape) -> Shape:
    """``shape`` with its (at most one) ``-1`` replaced so the element count matches."""
    if any(d < -1 for d in shape) or list(shape).count(-1) > 1:
        raise InferError(
            f"shape {list(shape)} must have non-negative dimensions and at most one -1"
        )
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape:
        if known == 0:
            raise InferError(
                f"cannot infer the -1 in {list(shape)}: the other dimensions hold 0 elements"
            )
        if x.size % known:
            raise InferError(
                f"cannot reshape {x} ({x.size} elements) to {list(shape)}: "
                f"{x.size} is not a multiple of {known}"
            )
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != x.size:
        raise InferError(
            f"cannot reshape {x} ({x.size} elements) to {list(shape)} "
            f"({math.prod(shape)} elements)"
        )
    return shape


def _reshape_infer(x: TensorType, *, shape: Shape) -> TensorType:
    x = tensor(x)
    return x.with_shape(_resolved_shape(x, shape))


def _reshape(x: np.ndarray, *, shape: Shape) -> np.ndarray:
    return x.reshape(shape)


def _permutation(perm: Optional[Sequence[int]], rank: int) -> tuple[int, ...]:
    if perm is None:
        return tuple(reversed(range(rank)))
    if len(perm) != rank:
        raise InferError(f"perm {list(perm)} has {len(perm)} entries for a rank-{rank} input")
    return _ordered_axes(perm, rank, "perm")


def _transpose_infer(x: TensorType, *, perm: Optional[Sequence[int]]) -> TensorType:
    x = tensor(x)
    return x.with_shape(tuple(x.shape[a] for a in _permutation(perm, x.rank)))


def _transpose(x: np.ndarray, *, perm: Optional[Sequence[int]]) -> np.ndarray:
    return np.transpose(x, _permutation(perm, x.ndim))


def _broadcast_to_infer(x: TensorType, *, shape: Shape) -> TensorType:
    x = tensor(x)
    shape = _check_dims(shape)
    fits = len(shape) >= x.rank and all(
        d in (1, t) for d, t in zip(reversed(x.shape), reversed(shape))
    )
    if not fits:
        raise InferError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    return x.with_shape(shape)


def _broadcast_to(x: np.ndarray, *, shape: Shape) -> np.ndarray:
    return np.array(np.broadcast_to(x, shape))


def _squeezed_shape(shape: Shape, axes: Optional[Sequence[int]]) -> Shape:
    if axes is None:
        return tuple(d for d in shape if d != 1)
    dropped = normalize_axes(axes, len(shape))
    for axis in dropped:
        if shape[axis] != 1:
            raise InferError(
                f"cannot squeeze axis {axis} of shape {list(shape)}: "
                f"it has size {shape[axis]}, not 1"
            )
    return tuple(d for i, d in enumerate(shape) if i not in dropped)


def _squeeze_infer(x: TensorType, *, axes: Optional[Sequence[int]]) -> TensorType:
    x = tensor(x)
    return x.with_shape(_squeezed_shape(x.shape, axes))


def _squeeze(x: np.ndarray, *, axes: Optional[Sequence[int]]) -> np.ndarray:
    return x.reshape(_squeezed_shape(x.shape, axes))


def _expanded_shape(shape: Shape, axes: Sequence[int]) -> Shape:
    """``axes`` index the output (rank ``len(shape) + len(axes)``), as ``np.expand_dims``."""
    new = normalize_axes(axes, len(shape) + len(axes))
    rest = iter(shape)
    return tuple(1 if i in new else next(rest) for i in range(len(shape) + len(axes)))


def _expand_dims_infer(x: TensorType, *, axes: Sequence[int]) -> TensorType:
    x = tensor(x)
    return x.with_shape(_expanded_shape(x.shape, axes))


def _expand_dims(x: np.ndarray, *, axes: Sequence[int]) -> np.ndarray:
    return x.reshape(_expanded_shape(x.shape, axes))


# --- joining and splitting ------------------------------------------------------------------


def _concat_infer(*xs: TensorType, axis: int) -> TensorType:
    xs = tuple(tensor(x, f"input {i}") for i, x in enumerate(xs))
    if not xs:
        raise InferError("needs at least one tensor")
    dt = same_dtype(xs)
    first = xs[0]
    if first.rank == 0:
        raise InferError("cannot concatenate scalars; use stack")
    ax = normalize_axis(axis, first.rank)
    for i, x in enumerate(xs):
        if x.rank != first.rank or with_dim(x.shape, ax, 0) != with_dim(first.shape, ax, 0):
            raise InferError(
                f"input {i} has shape {list(x.shape)}, which does not match input 0's "
                f"{list(first.shape)} outside axis {axis}"
            )
    return TensorType(dt, with_dim(first.shape, ax, sum(x.shape[ax] for x in xs)))


def _concat(*xs: np.ndarray, axis: int) -> np.ndarray:
    return np.concatenate(xs, axis=axis)


def _stack_infer(*xs: TensorType, axis: int) -> TensorType:
    xs = tuple(tensor(x, f"input {i}") for i, x in enumerate(xs))
    if not xs:
        raise InferError("needs at least one tensor")
    dt = same_dtype(xs)
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise InferError(
                f"all inputs must have one shape; input {i} has {list(x.shape)}, "
                f"input 0 has {list(xs[0].shape)}"
            )
    ax = normalize_axis(axis, xs[0].rank + 1)
    return TensorType(dt, xs[0].shape[:ax] + (len(xs),) + xs[0].shape[ax:])


def _stack(*xs: np.ndarray, axis: int) -> np.ndarray:
    return np.stack(xs, axis=axis)


def _split_infer(x: TensorType, *, axis: int, sizes: Sequence[int]) -> tuple[TensorType, ...]:
    x = tensor(x)
    ax = normalize_axis(axis, x.rank)
    if not sizes or any(s < 0 for s in sizes):
        raise InferError(f"sizes {list(sizes)} must be one or more non-negative sizes")
    if sum(sizes) != x.shape[ax]:
        raise InferError(
            f"sizes {list(sizes)} sum to {sum(sizes)}, but axis {axis} of shape "
            f"{list(x.shape)} has size {x.shape[ax]}"
        )
    return tuple(x.with_shape(with_dim(x.shape, ax, s)) for s in sizes)


def _split(x: np.ndarray, *, axis: int, sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


# --- selecting -------------------------------------------------------------------------------


def _slices(shape: Shape, starts: Sequence[int], stops: Sequence[int],
            steps: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> tuple[slice, ...]:
    """One Python ``slice`` per axis of ``shape`` (whole axes where not listed)."""
    rank = len(shape)
    if axes is None:
        if len(starts) != rank:
            raise InferError(
                f"starts {list(starts)} needs one entry per axis of {list(shape)} "
                f"(or pass axes= to slice some axes)"
            )
        axes = tuple(range(rank))
    axes = _ordered_axes(axes, rank, "axes")
    steps = (1,) * len(axes) if steps is None else tuple(steps)
    if not len(starts) == len(stops) == len(steps) == len(axes):
        raise InferError(
            f"starts, stops, steps and axes need one entry each per sliced axis, got "
            f"{len(starts)}, {len(stops)}, {len(steps)} and {len(axes)}"
        )
    if 0 in steps:
        raise InferError(f"steps {list(steps)} contains 0")
    out = [slice(None)] * rank
    for axis, start, stop, step in zip(axes, starts, stops, steps):
        out[axis] = slice(start, stop, step)
    return tuple(out)


def _slice_infer(x: TensorType, *, starts: Sequence[int], stops: Sequence[int],
                 steps: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> TensorType:
    x = tensor(x)
    slices = _slices(x.shape, starts, stops, steps, axes)
    return x.with_shape(tuple(len(range(*s.indices(d))) for s, d in zip(slices, x.shape)))


def _slice(x: np.ndarray, *, starts: Sequence[int], stops: Sequence[int],
           steps: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> np.ndarray:
    return x[_slices(x.shape, starts, stops, steps, axes)]


def _flip_infer(x: TensorType, *, axes: Optional[Sequence[int]]) -> TensorType:
    x = tensor(x)
    normalize_axes(axes, x.rank)
    return x


def _flip(x: np.ndarray, *, axes: Optional[Sequence[int]]) -> np.ndarray:
    return np.flip(x, normalize_axes(axes, x.ndim))


# --- repeating -------------------------------------------------------------------------------


def _tile_infer(x: TensorType, *, reps: Sequence[int]) -> TensorType:
    x = tensor(x)
    _check_dims(reps, "reps")
    rank = max(len(reps), x.rank)
    padded_reps = (1,) * (rank - len(reps)) + tuple(reps)
    padded_shape = (1,) * (rank - x.rank) + x.shape
    return x.with_shape(tuple(d * r for d, r in zip(padded_shape, padded_reps)))


def _tile(x: np.ndarray, *, reps: Sequence[int]) -> np.ndarray:
    return np.tile(x, reps)


def _repeat_infer(x: TensorType, *, repeats: int, axis: Optional[int]) -> TensorType:
    x = tensor(x)
    if repeats < 0:
        raise InferError(f"repeats must be non-negative, got {repeats}")
    if axis is None:
        return x.with_shape((x.size * repeats,))
    ax = normalize_axis(axis, x.rank)
    return x.with_shape(with_dim(x.shape, ax, x.shape[ax] * repeats))


def _repeat(x: np.ndarray, *, repeats: int, axis: Optional[int]) -> np.ndarray:
    return np.repeat(x, repeats, axis=axis)


# --- filling ---------------------------------------------------------------------------------


def _pad_widths(shape: Shape, pads: Sequence[int], mode: str) -> list[tuple[int, int]]:
    rank = len(shape)
    if mode not in PAD_MODES:
        raise InferError(f"mode must be one of {', '.join(PAD_MODES)}, got {mode!r}")
    if len(pads) != 2 * rank:
        raise InferError(
            f"pads needs a (lo, hi) pair per axis: {2 * rank} values for shape "
            f"{list(shape)}, got {len(pads)}"
        )
    widths = list(zip(pads[0::2], pads[1::2]))
    for axis, (dim, (lo, hi)) in enumerate(zip(shape, widths)):
        kept = dim + min(lo, 0) + min(hi, 0)
        if kept < 0:
            raise InferError(
                f"pads ({lo}, {hi}) crop {dim - kept} elements from axis {axis}, "
                f"which has only {dim}"
            )
        if kept == 0 and max(lo, hi) > 0 and mode != "constant":
            raise InferError(f"mode '{mode}' cannot pad axis {axis}: it has no elements to copy")
    return widths


def _pad_infer(x: TensorType, *, pads: Sequence[int], mode: str, value: float) -> TensorType:
    x = tensor(x)
    widths = _pad_widths(x.shape, pads, mode)
    if mode == "constant":
        check_fill_value(value, x.dtype, "value")
    return x.with_shape(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)))


def _pad(x: np.ndarray, *, pads: Sequence[int], mode: str, value: float) -> np.ndarray:
    widths = _pad_widths(x.shape, pads, mode)
    cropped = x[tuple(slice(-min(lo, 0), d + min(hi, 0)) for d, (lo, hi) in zip(x.shape, widths))]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if not any(lo or hi for lo, hi in grow):  # np.pad rejects the empty pad list of a scalar
        return cropped.copy()
    if mode == "constant":
        return np.pad(cropped, grow, mode="constant", constant_values=value)
    return np.pad(cropped, grow, mode=mode)  # type: ignore[call-overload]  # a PAD_MODES name


def _triangle_infer(x: TensorType, *, k: int) -> TensorType:
    x = tensor(x)
    if x.rank < 2:
        raise InferError(f"needs a matrix or a stack of matrices (rank >= 2), got rank {x.rank}")
    return x


def _tril(x: np.ndarray, *, k: int) -> np.ndarray:
    return np.tril(x, k)


def _triu(x: np.ndarray, *, k: int) -> np.ndarray:
    return np.triu(x, k)


# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _decompose_full(b: Emitter, *, shape: Shape, value: float, dtype: DType) -> Value:
    one = as_storage(np.full((), value, dtype=dtype.storage), dtype)
    constant = b.op("constant", value=one, dtype=dtype)
    return b.op("broadcast_to", constant, shape=shape) if shape else constant


def _reshaped_as(infer_shape: Callable[..., Shape]) -> DecomposeFn:
    """A decomposition reshaping ``x`` to the shape ``infer_shape(x.shape, **attrs)`` (the op's
    own shape rule)."""

    def decomposition(b: Emitter, x: Value, **attrs: object) -> Value:
        return b.op("reshape", x, shape=infer_shape(tensor_type(x).shape, **attrs))

    return decomposition


def _decompose_stack(b: Emitter, *xs: Value, axis: int) -> Value:
    shape = tensor_type(xs[0]).shape
    ax = axis % (len(shape) + 1)
    rows = [b.op("reshape", x, shape=shape[:ax] + (1,) + shape[ax:]) for x in xs]
    return b.op("concat", *rows, axis=ax)


def _decompose_split(b: Emitter, x: Value, *, axis: int,
                     sizes: Sequence[int]) -> tuple[Value, ...]:
    ax = axis % tensor_type(x).rank
    starts = np.cumsum((0, *sizes[:-1]))
    return tuple(b.op("slice", x, starts=(int(start),), stops=(int(start) + size,), axes=(ax,))
                 for start, size in zip(starts, sizes))


def _decompose_flip(b: Emitter, x: Value, *, axes: Optional[Sequence[int]]) -> Value:
    dims = normalize_axes(axes, tensor_type(x).rank)
    if not dims:
        return x
    n = len(dims)  # x[-1::-1] on each axis: a stop at or below -size - 1 runs to the start
    return b.op("slice", x, starts=(-1,) * n, stops=(-2**63,) * n, steps=(-1,) * n, axes=dims)


def _decompose_tile(b: Emitter, x: Value, *, reps: Sequence[int]) -> Value:
    shape = tensor_type(x).shape
    rank = max(len(reps), len(shape))
    dims = (1,) * (rank - len(shape)) + shape
    copies = (1,) * (rank - len(reps)) + tuple(reps)
    # each axis d becomes (copies, d), the copies broadcast, then the pairs merge: the copy
    # index varies slowest, as np.tile lays them out
    spread = b.op("reshape", x, shape=tuple(v for d in dims for v in (1, d)))
    copied = b.op("broadcast_to", spread,
                  shape=tuple(v for d, r in zip(dims, copies) for v in (r, d)))
    return b.op("reshape", copied, shape=tuple(d * r for d, r in zip(dims, copies)))


def _decompose_repeat(b: Emitter, x: Value, *, repeats: int,
                      axis: Optional[int]) -> Value:
    if axis is None:
        x = b.op("reshape", x, shape=(tensor_type(x).size,))
        axis = 0
    shape = tensor_type(x).shape
    ax = axis % len(shape)
    # each element gets a new axis of its copies, right after its own
    spread = b.op("reshape", x, shape=shape[:ax + 1] + (1,) + shape[ax + 1:])
    copied = b.op("broadcast_to", spread, shape=shape[:ax + 1] + (repeats,) + shape[ax + 1:])
    return b.op("reshape", copied, shape=with_dim(shape, ax, shape[ax] * repeats))


def _triangle(keep: str) -> DecomposeFn:
    """Keep element (i, j) of the last two axes where ``keep(j - i, k)`` (``less_equal``
    for tril, ``greater_equal`` for triu); zero the others."""

    def decomposition(b: Emitter, x: Value, *, k: int) -> Value:
        t = tensor_type(x)
        plane = t.shape[-2:]
        rows = b.op("iota", shape=plane, axis=0, dtype=int64)
        cols = b.op("iota", shape=plane, axis=1, dtype=int64)
        kept = b.op(keep, b.op("sub", cols, rows), scalar(b, k, int64))
        return b.op("where", kept, x, scalar(b, 0, t.dtype))

    return decomposition


OPS: list[OpDef] = [
    # creation
    OpDef("constant", (), _constant_infer, _constant,
          attrs=(Attr("value", "array"), Attr("dtype", "dtype?", None)),
          doc="the array `value`; `dtype` declares a type whose storage differs from its own "
              "(a bfloat16 constant is a float32 array of bfloat16-rounded values)"),
    OpDef("full", (), _full_infer, _full,
          attrs=(Attr("shape", "ints"), Attr("value", "float"), Attr("dtype", "dtype")),
          doc="a tensor of `shape` filled with `value`, which must be representable in `dtype`",
          decomposition=_decompose_full),
    OpDef("iota", (), _iota_infer, _iota,
          attrs=(Attr("shape", "ints"), Attr("axis", "int"), Attr("dtype", "dtype")),
          doc="0, 1, ..., n-1 along `axis`, repeated along the other axes "
              "(the building block of arange)"),
    # data movement
    OpDef("reshape", ("x",), _reshape_infer, _reshape, attrs=(Attr("shape", "ints"),),
          traits=SHAPE, doc="same elements in row-major order, new shape; one -1 is inferred"),
    OpDef("transpose", ("x",), _transpose_infer, _transpose, attrs=(Attr("perm", "ints?", None),),
          traits=SHAPE, doc="output axis i is input axis perm[i]; None reverses the axes"),
    OpDef("broadcast_to", ("x",), _broadcast_to_infer, _broadcast_to,
          attrs=(Attr("shape", "ints"),), traits=SHAPE,
          doc="repeat size-1 (and missing leading) axes to `shape`, NumPy's broadcast rule"),
    OpDef("concat", ("*xs",), _concat_infer, _concat, attrs=(Attr("axis", "int"),), traits=SHAPE,
          doc="join tensors of one dtype along an existing axis; other dims must match"),
    OpDef("stack", ("*xs",), _stack_infer, _stack, attrs=(Attr("axis", "int"),), traits=SHAPE,
          doc="join tensors of one shape and dtype along a new axis",
          decomposition=_decompose_stack),
    OpDef("split", ("x",), _split_infer, _split,
          attrs=(Attr("axis", "int"), Attr("sizes", "ints")), traits=SHAPE,
          doc="cut `axis` into consecutive pieces of `sizes` (summing to its size); "
              "always returns a tuple", decomposition=_decompose_split),
    OpDef("slice", ("x",), _slice_infer, _slice,
          attrs=(Attr("starts", "ints"), Attr("stops", "ints"), Attr("steps", "ints?", None),
                 Attr("axes", "ints?", None)), traits=SHAPE,
          doc="x[start:stop:step] on each listed axis (all axes when `axes` is None) with "
              "Python's rules; steps default to 1; see the module doc for 'to the end'"),
    OpDef("squeeze", ("x",), _squeeze_infer, _squeeze, attrs=(Attr("axes", "ints?", None),),
          traits=SHAPE, doc="remove the listed size-1 axes (None: every size-1 axis)",
          decomposition=_reshaped_as(_squeezed_shape)),
    OpDef("expand_dims", ("x",), _expand_dims_infer, _expand_dims, attrs=(Attr("axes", "ints"),),
          traits=SHAPE, doc="insert size-1 axes at `axes`, positions in the output",
          decomposition=_reshaped_as(_expanded_shape)),
    OpDef("tile", ("x",), _tile_infer, _tile, attrs=(Attr("reps", "ints"),), traits=SHAPE,
          doc="repeat the whole tensor reps[i] times along axis i (np.tile; shorter of "
              "reps/shape is padded with leading 1s)", decomposition=_decompose_tile),
    OpDef("flip", ("x",), _flip_infer, _flip, attrs=(Attr("axes", "ints?", None),),
          traits=SHAPE, doc="reverse the order of elements along `axes` (None: all)",
          decomposition=_decompose_flip),
    OpDef("repeat", ("x",), _repeat_infer, _repeat,
          attrs=(Attr("repeats", "int"), Attr("axis", "int?", None)), traits=SHAPE,
          doc="repeat each element `repeats` times along `axis` (None: of the flattened input)",
          decomposition=_decompose_repeat),
    # filling
    OpDef("pad", ("x",), _pad_infer, _pad,
          attrs=(Attr("pads", "ints"), Attr("mode", "str", "constant"),
                 Attr("value", "float", 0.0)),
          doc="pads = (lo0, hi0, lo1, hi1, ...): add lo/hi elements before/after each axis; "
              "negative values crop, and cropping happens before padding. mode 'constant' "
              "fills with `value`, 'reflect' mirrors without repeating the edge and 'edge' "
              "repeats it (np.pad's modes, pads larger than the axis included)"),
    OpDef("tril", ("x",), _triangle_infer, _tril, attrs=(Attr("k", "int", 0),),
          doc="zero the elements above diagonal k of the last two axes",
          decomposition=_triangle("less_equal")),
    OpDef("triu", ("x",), _triangle_infer, _triu, attrs=(Attr("k", "int", 0),),
          doc="zero the elements below diagonal k of the last two axes",
          decomposition=_triangle("greater_equal")),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the shape ops: every op on every dtype family (bfloat16 included), negative
# axes, scalars, and size-0 and size-1 dimensions.


def _constant_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in DATA_DTYPES:
        value = random_array(rng, (2, 3), dt)
        declared = {"dtype": dt} if dt == "bfloat16" else {}
        yield OpSample("constant", (), {"value": value, **declared})
    yield OpSample("constant", (), {"value": np.array(2.5, np.float64)})
    yield OpSample("constant", (), {"value": np.zeros((0, 4), np.int8)})


def _full_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((2, 3), 1.5, "float32"), ((2, 3), -3, "int32"), ((4,), 1, "bool"),
             ((3, 1), 0.1, "bfloat16"), ((2,), 2.0, "complex64"), ((), 7, "uint8"),
             ((0, 4), 1.0, "float16"), ((1, 2), float("inf"), "float64")]
    for shape, value, dt in cases:
        yield OpSample("full", (), {"shape": shape, "value": value, "dtype": dt})


def _iota_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((2, 3), 1, "int32"), ((4,), 0, "float32"), ((2, 0, 3), -1, "int64"),
             ((3, 2), 0, "bfloat16"), ((5, 1), -2, "uint8"), ((2, 2), 1, "complex64"),
             ((1,), 0, "float16")]
    for shape, axis, dt in cases:
        yield OpSample("iota", (), {"shape": shape, "axis": axis, "dtype": dt})


def _joined_samples(op: str,
                    shape_sets: Sequence[tuple[Sequence[tuple[int, ...]], int]]) -> SampleFn:
    """Samples of a variadic op over ``(input shapes, axis)`` cases (see :func:`dtype_runs`)."""

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for (shapes, axis), dt in dtype_runs(shape_sets):
            args = tuple(random_array(rng, s, dt) for s in shapes)
            yield OpSample(op, args, {"axis": axis}, dtypes=(dt,) * len(args))

    return fn


_WHOLE = 2**63 - 1  # a stop past the end of any axis (positive steps)
_BEFORE = -(2**63)  # a stop before the start of any axis (negative steps)

SAMPLES: dict[str, SampleFn] = {
    "constant": _constant_samples,
    "full": _full_samples,
    "iota": _iota_samples,
    "reshape": one_input("reshape", [
        ((2, 3, 4), {"shape": (6, -1)}), ((0, 3), {"shape": (3, 0)}), ((), {"shape": (1, 1)}),
        ((1,), {"shape": ()}), ((2, 3), {"shape": (3, 2)}), ((2, 0), {"shape": (0, 7)}),
    ]),
    "transpose": one_input("transpose", [
        ((2, 3, 4), {"perm": (2, 0, 1)}), ((2, 3), {}), ((), {}), ((0, 1, 3), {"perm": (-1, 0, 1)}),
    ]),
    "broadcast_to": one_input("broadcast_to", [
        ((3, 1), {"shape": (2, 3, 4)}), ((), {"shape": (2, 2)}), ((1,), {"shape": (0,)}),
        ((2, 3), {"shape": (2, 3)}),
    ]),
    "concat": _joined_samples("concat", [
        (((2, 3), (2, 1), (2, 0)), -1), (((1, 3), (2, 3)), 0), (((4,),), 0),
        (((0, 2), (0, 2)), 1), (((2, 1, 2), (2, 3, 2)), 1),
    ]),
    "stack": _joined_samples("stack", [
        (((2, 3), (2, 3), (2, 3)), 0), (((2, 3), (2, 3)), -1), (((), (), ()), 0),
        (((0, 2),), 1),
    ]),
    "split": one_input("split", [
        ((5, 3), {"axis": 0, "sizes": (2, 0, 3)}), ((2, 6), {"axis": -1, "sizes": (6,)}),
        ((0, 2), {"axis": 0, "sizes": (0, 0)}), ((3, 4), {"axis": 1, "sizes": (1, 1, 2)}),
    ]),
    "slice": one_input("slice", [
        ((5, 6), {"starts": (1, -1), "stops": (4, _BEFORE), "steps": (2, -2)}),
        ((4,), {"starts": (-10,), "stops": (10,)}),
        ((3, 4, 5), {"starts": (1,), "stops": (3,), "axes": (-1,)}),
        ((5,), {"starts": (4,), "stops": (1,)}),
        ((0, 3), {"starts": (0, 2), "stops": (_WHOLE, 0), "steps": (1, -1)}),
        ((6, 2), {"starts": (_WHOLE, 0), "stops": (_BEFORE, 1), "steps": (-3, 1)}),
    ]),
    "squeeze": one_input("squeeze", [
        ((1, 3, 1), {}), ((1, 3, 1), {"axes": (0,)}), ((1,), {}), ((0, 1), {"axes": (-1,)}),
        ((2, 3), {}),
    ]),
    "expand_dims": one_input("expand_dims", [
        ((2, 3), {"axes": (0,)}), ((2, 3), {"axes": (-1, 1)}), ((), {"axes": (0,)}),
        ((0,), {"axes": (1,)}),
    ]),
    "tile": one_input("tile", [
        ((2, 3), {"reps": (2, 1)}), ((3,), {"reps": (2, 2)}), ((2, 1, 2), {"reps": (3,)}),
        ((2, 3), {"reps": (0, 2)}), ((), {"reps": (3,)}),
    ]),
    "flip": one_input("flip", [
        ((3, 4), {}), ((2, 3, 4), {"axes": (0, -1)}), ((), {}), ((0, 2), {"axes": (1,)}),
    ]),
    "pad": one_input("pad", [
        ((3, 4), {"pads": (1, 2, 0, 1), "value": 1.0}),
        ((3, 4), {"pads": (2, -1, 1, 3), "mode": "reflect"}),
        ((2, 3), {"pads": (0, 1, 3, 0), "mode": "edge"}),
        ((0, 2), {"pads": (1, 1, 0, 0)}), ((), {"pads": ()}),
        ((4,), {"pads": (-2, -2), "mode": "edge"}),
        ((1, 2), {"pads": (2, 2, 5, 0), "mode": "reflect"}),
    ]),
    "repeat": one_input("repeat", [
        ((2, 3), {"repeats": 2, "axis": 1}), ((2, 3), {"repeats": 3}), ((), {"repeats": 2}),
        ((2, 0), {"repeats": 2, "axis": 0}), ((3,), {"repeats": 0, "axis": -1}),
    ]),
    "tril": one_input("tril", [
        ((4, 4), {}), ((2, 3, 5), {"k": 1}), ((3, 2), {"k": -1}), ((0, 3), {}),
    ]),
    "triu": one_input("triu", [
        ((4, 4), {}), ((2, 3, 5), {"k": -2}), ((3, 2), {"k": 1}), ((1, 0), {}),
    ]),
}
