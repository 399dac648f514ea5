"""Indexing ops: read and write elements chosen by integer indices.

- ``gather`` (``np.take``), ``take_along_axis`` (``np.take_along_axis``) and ``scatter``
  (PyTorch's ``scatter`` / ``scatter_reduce``) index one axis;
- ``gather_nd`` and ``scatter_nd`` (TensorFlow's) index the first ``k`` axes with index tuples
  held in the last axis of ``indices`` — the building blocks of NumPy integer-array indexing
  and of ``x.at[idx].set(...)`` / ``.add(...)`` in the frontend;
- ``one_hot`` and ``embedding``.

``gather_nd`` and ``scatter_nd`` are the primitives; the other ops are composites (see
:mod:`.primitives`): ``gather``, ``take_along_axis`` and ``scatter`` address their elements
with index tuples built from ``iota`` and the indices, ``embedding`` is a ``gather`` of rows and
``one_hot`` a comparison with an ``iota``.  Run as decompositions, an out-of-range index is
reported by the ``gather_nd``/``scatter_nd`` it became.

Indices have an integer dtype (signed or unsigned, any width) and must lie in ``[0, size)`` of
the dimension they address.  IR ops take no negative indices: the frontend normalises
Python-style negative indices before it builds a node.  The reference raises ``IndexError``
naming the op, the offending index, its position in the index operand and the dimension size;
another backend may fail differently on an out-of-range index but must never read or write
outside its tensors.  ``one_hot`` is the exception: there an index outside ``[0, depth)``
(negative included) gives a row of ``off_value``, as in TensorFlow and MindSpore.

Scatter ops are functional: they return an updated copy of ``x``.  ``reduce`` says how an
update combines with the element it lands on: ``"none"`` replaces it; ``"add"``, ``"mul"``,
``"max"`` and ``"min"`` combine it with the element and with every other update landing there
(NumPy's ``ufunc.at``, PyTorch's ``scatter_reduce`` with ``include_self=True``).  With
``"none"``, when several updates land on one element, the last one in row-major order of the
indices wins — PyTorch leaves this unspecified; mskernel defines it and backends must match.
"""

from __future__ import annotations

import math
from itertools import cycle
from typing import Iterator, Sequence

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, dtype as to_dtype, float32, int64
from ..ir.graph import Value
from ..ir.types import Shape, TensorType
from .compose import cast, scalar, tensor_type
from .registry import Attr, Emitter, OpDef
from .rules import (
    broadcast_shapes, check_fill_value, normalize_axis, same_dtype, tensor, with_dim,
)
from .samples import (DATA_DTYPES, OpSample, SampleFn, accumulation_tolerance, dtype_runs,
                      random_array)

REDUCE_KINDS = {"none": "biufc", "add": "iufc", "mul": "iufc", "max": "iuf", "min": "iuf"}
_REDUCE_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


# --- validation helpers ----------------------------------------------------------------------


def _index_operand(t: TensorType, what: str = "indices") -> TensorType:
    t = tensor(t, what)
    if not t.dtype.is_integer:
        raise InferError(f"{what} must have an integer dtype, got {t}")
    return t


def _check_reduce(reduce: str, x: TensorType) -> None:
    kinds = REDUCE_KINDS.get(reduce)
    if kinds is None:
        raise InferError(f"reduce must be one of {', '.join(REDUCE_KINDS)}, got {reduce!r}")
    if x.dtype.kind not in kinds:
        raise InferError(f"reduce '{reduce}' is not defined for {x.dtype} tensors")


def _in_range(op: str, indices: np.ndarray, size: int, dim: str, *,
              operand: str = "indices", tail: tuple[int, ...] = ()) -> np.ndarray:
    """``indices`` as ``intp`` after checking every one lies in ``[0, size)``.

    The error names the first offending index in row-major order and where it sits in the
    index operand (``tail`` is appended to its position: the component of an index tuple).
    """
    bad = (indices < 0) | (indices >= size)
    if bad.any():
        pos = np.unravel_index(int(np.argmax(bad)), bad.shape)
        where = ", ".join(str(p) for p in (*map(int, pos), *tail))
        raise IndexError(
            f"{op}: index {indices[pos]} at {operand}[{where}] is out of range for {dim} of "
            f"size {size}; IR indices lie in [0, {size}) (negative indices are normalised by "
            f"the frontend, not by the op)"
        )
    return indices.astype(np.intp)


def _row_major(coords: Sequence[np.ndarray], dims: Shape, batch: Shape) -> np.ndarray:
    """The row-major position, in a tensor of shape ``dims``, of each coordinate tuple."""
    rows = np.zeros(batch, np.intp)
    for coord, dim in zip(coords, dims):
        rows = rows * dim + coord
    return rows


def _as_rows(x: np.ndarray, k: int) -> np.ndarray:
    """``x`` viewed as ``[prod(x.shape[:k]), *x.shape[k:]]``: one row per index tuple."""
    return x.reshape((math.prod(x.shape[:k]),) + x.shape[k:])


def _scatter_rows(x: np.ndarray, k: int, rows: np.ndarray, updates: np.ndarray,
                  reduce: str) -> np.ndarray:
    """A copy of ``x`` with ``updates[i]`` combined into row ``rows[i]`` of ``_as_rows(x, k)``."""
    out = _as_rows(x, k).copy()
    rows = rows.ravel()
    updates = updates.reshape((rows.size,) + out.shape[1:])
    if reduce == "none":
        _, first_from_end = np.unique(rows[::-1], return_index=True)
        last = rows.size - 1 - first_from_end
        out[rows[last]] = updates[last]
    else:
        _REDUCE_UFUNCS[reduce].at(out, rows, updates)
    return out.reshape(x.shape)


# --- along one axis --------------------------------------------------------------------------


def _gather_infer(x: TensorType, indices: TensorType, *, axis: int) -> TensorType:
    x, indices = tensor(x, "x"), _index_operand(indices)
    ax = normalize_axis(axis, x.rank)
    return x.with_shape(x.shape[:ax] + indices.shape + x.shape[ax + 1:])


def _gather(x: np.ndarray, indices: np.ndarray, *, axis: int) -> np.ndarray:
    ax = axis % x.ndim
    return np.take(x, _in_range("gather", indices, x.shape[ax], f"axis {ax}"), axis=ax)


def _take_along_axis_infer(x: TensorType, indices: TensorType, *, axis: int) -> TensorType:
    x, indices = tensor(x, "x"), _index_operand(indices)
    if x.rank != indices.rank:
        raise InferError(f"x and indices must have the same rank, got {x} and {indices}")
    ax = normalize_axis(axis, x.rank)
    try:
        outer = broadcast_shapes(with_dim(x.shape, ax, 1), with_dim(indices.shape, ax, 1))
    except InferError:
        raise InferError(
            f"x {x} and indices {indices} do not broadcast outside axis {axis}"
        ) from None
    return x.with_shape(with_dim(outer, ax, indices.shape[ax]))


def _take_along_axis(x: np.ndarray, indices: np.ndarray, *, axis: int) -> np.ndarray:
    ax = axis % x.ndim
    checked = _in_range("take_along_axis", indices, x.shape[ax], f"axis {ax}")
    return np.take_along_axis(x, checked, axis=ax)


def _scatter_infer(x: TensorType, indices: TensorType, updates: TensorType, *, axis: int,
                   reduce: str) -> TensorType:
    x, indices, updates = tensor(x, "x"), _index_operand(indices), tensor(updates, "updates")
    same_dtype([x, updates])
    _check_reduce(reduce, x)
    ax = normalize_axis(axis, x.rank)
    if indices.rank != x.rank:
        raise InferError(f"indices must have the rank of x, got {indices} for {x}")
    if updates.shape != indices.shape:
        raise InferError(f"updates must have the shape of indices, got {updates} and {indices}")
    for d, (n, limit) in enumerate(zip(indices.shape, x.shape)):
        if d != ax and n > limit:
            raise InferError(
                f"indices {indices} is larger than x {x} along axis {d}; "
                f"outside axis {axis} indices may not exceed x"
            )
    return x


def _scatter(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, *, axis: int,
             reduce: str) -> np.ndarray:
    ax = axis % x.ndim
    coords: list[np.ndarray] = list(np.indices(indices.shape, sparse=True))
    coords[ax] = _in_range("scatter", indices, x.shape[ax], f"axis {ax}")
    rows = _row_major(coords, x.shape, indices.shape)
    return _scatter_rows(x, x.ndim, rows, updates, reduce)


# --- by index tuples -------------------------------------------------------------------------


def _tuple_length(x: TensorType, indices: TensorType) -> int:
    if indices.rank == 0:
        raise InferError("indices must have rank 1 or more: its last axis holds index tuples")
    k = indices.shape[-1]
    if k > x.rank:
        raise InferError(
            f"index tuples of length {k} (the last dimension of indices {indices}) "
            f"are longer than the rank of x {x}"
        )
    return k


def _tuple_rows(op: str, shape: Shape, indices: np.ndarray) -> np.ndarray:
    """The row of ``_as_rows(x, k)`` each index tuple of ``indices[..., k]`` addresses."""
    k = indices.shape[-1]
    coords = [_in_range(op, indices[..., i], shape[i], f"dimension {i}", tail=(i,))
              for i in range(k)]
    return _row_major(coords, shape[:k], indices.shape[:-1])


def _gather_nd_infer(x: TensorType, indices: TensorType) -> TensorType:
    x, indices = tensor(x, "x"), _index_operand(indices)
    k = _tuple_length(x, indices)
    return x.with_shape(indices.shape[:-1] + x.shape[k:])


def _gather_nd(x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    k = indices.shape[-1]
    return _as_rows(x, k)[_tuple_rows("gather_nd", x.shape, indices)]


def _scatter_nd_infer(x: TensorType, indices: TensorType, updates: TensorType, *,
                      reduce: str) -> TensorType:
    x, indices, updates = tensor(x, "x"), _index_operand(indices), tensor(updates, "updates")
    same_dtype([x, updates])
    _check_reduce(reduce, x)
    k = _tuple_length(x, indices)
    expected = indices.shape[:-1] + x.shape[k:]
    if updates.shape != expected:
        raise InferError(
            f"updates must have shape {list(expected)} (the leading dimensions of indices, "
            f"then the dimensions of x past the first {k}), got {list(updates.shape)}"
        )
    return x


def _scatter_nd(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
                reduce: str) -> np.ndarray:
    rows = _tuple_rows("scatter_nd", x.shape, indices)
    return _scatter_rows(x, indices.shape[-1], rows, updates, reduce)


# --- encodings and lookups -------------------------------------------------------------------


def _one_hot_infer(indices: TensorType, *, depth: int, axis: int, dtype: DType,
                   on_value: float, off_value: float) -> TensorType:
    indices = _index_operand(indices)
    if depth < 0:
        raise InferError(f"depth must be non-negative, got {depth}")
    ax = normalize_axis(axis, indices.rank + 1)
    check_fill_value(on_value, dtype, "on_value")
    check_fill_value(off_value, dtype, "off_value")
    return TensorType(dtype, indices.shape[:ax] + (depth,) + indices.shape[ax:])


def _one_hot(indices: np.ndarray, *, depth: int, axis: int, dtype: DType, on_value: float,
             off_value: float) -> np.ndarray:
    hot = indices[..., None] == np.arange(depth)
    values = np.where(hot, on_value, off_value).astype(dtype.storage)
    return np.moveaxis(values, -1, axis % (indices.ndim + 1))


def _embedding_infer(table: TensorType, ids: TensorType) -> TensorType:
    table, ids = tensor(table, "table"), _index_operand(ids, "ids")
    if table.rank != 2:
        raise InferError(f"table must be a [vocabulary, features] matrix, got {table}")
    return table.with_shape(ids.shape + (table.shape[1],))


def _embedding(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    rows = _in_range("embedding", ids, table.shape[0], "the table's rows", operand="ids")
    return table[rows]


# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _decompose_gather(b: Emitter, x: Value, indices: Value, *, axis: int) -> Value:
    rank, batch = tensor_type(x).rank, tensor_type(indices).shape
    ax = axis % rank
    rest = tuple(d for d in range(rank) if d != ax)
    leading = b.op("transpose", x, perm=(ax, *rest)) if ax else x
    picked = b.op("gather_nd", leading, b.op("reshape", indices, shape=batch + (1,)))
    if not ax:
        return picked
    # picked is indices.shape + x.shape[:ax] + x.shape[ax + 1:]; move x's leading axes first
    n = len(batch)
    perm = (*range(n, n + ax), *range(n), *range(n + ax, n + rank - 1))
    return b.op("transpose", picked, perm=perm)


def _coordinates(b: Emitter, shape: Shape, axis: int, along: Value,
                 unit: tuple[int, ...] = ()) -> Value:
    """Index tuples ``[*shape, rank]`` addressing, at each position of ``shape``, the element
    with ``along`` as its ``axis`` coordinate and the position's own coordinates elsewhere
    (0 on the axes in ``unit``, of size 1)."""
    coordinate = cast(b, along, int64)
    if tensor_type(coordinate).shape != shape:
        coordinate = b.op("broadcast_to", coordinate, shape=shape)
    parts = [coordinate if d == axis
             else b.op("full", shape=shape, value=0, dtype=int64) if d in unit
             else b.op("iota", shape=shape, axis=d, dtype=int64)
             for d in range(len(shape))]
    return b.op("stack", *parts, axis=-1)


def _decompose_take_along_axis(b: Emitter, x: Value, indices: Value, *, axis: int) -> Value:
    t, i = tensor_type(x), tensor_type(indices)
    ax = axis % t.rank
    shape = tuple(n if d == ax else max(m, n) for d, (m, n) in enumerate(zip(t.shape, i.shape)))
    unit = tuple(d for d in range(t.rank) if d != ax and t.shape[d] == 1)
    return b.op("gather_nd", x, _coordinates(b, shape, ax, indices, unit))


def _decompose_scatter(b: Emitter, x: Value, indices: Value, updates: Value, *, axis: int,
                       reduce: str) -> Value:
    shape = tensor_type(indices).shape
    tuples = _coordinates(b, shape, axis % len(shape), indices)
    return b.op("scatter_nd", x, tuples, updates, reduce=reduce)


def _decompose_one_hot(b: Emitter, indices: Value, *, depth: int, axis: int,
                       dtype: DType, on_value: float, off_value: float) -> Value:
    shape = tensor_type(indices).shape
    ax = axis % (len(shape) + 1)
    # int64 holds every index that can hit [0, depth); larger unsigned ones wrap to negatives,
    # which hit nothing either
    wide = cast(b, indices, int64)
    spread = b.op("reshape", wide, shape=shape[:ax] + (1,) + shape[ax:])
    positions = b.op("iota", shape=shape[:ax] + (depth,) + shape[ax:], axis=ax, dtype=int64)
    hot = b.op("equal", spread, positions)
    return b.op("where", hot, scalar(b, on_value, dtype), scalar(b, off_value, dtype))


def _decompose_embedding(b: Emitter, table: Value, ids: Value) -> Value:
    return b.op("gather", table, ids, axis=0)


OPS: list[OpDef] = [
    OpDef("gather", ("x", "indices"), _gather_infer, _gather, attrs=(Attr("axis", "int"),),
          doc="np.take: the slices of x at `indices` along `axis`; the result's shape is "
              "x.shape[:axis] + indices.shape + x.shape[axis+1:]",
          decomposition=_decompose_gather),
    OpDef("take_along_axis", ("x", "indices"), _take_along_axis_infer, _take_along_axis,
          attrs=(Attr("axis", "int"),),
          doc="np.take_along_axis: out[..., i, ...] = x[..., indices[..., i, ...], ...] along "
              "`axis`; x and indices have one rank and broadcast outside `axis`",
          decomposition=_decompose_take_along_axis),
    OpDef("gather_nd", ("x", "indices"), _gather_nd_infer, _gather_nd,
          doc="TensorFlow's gather_nd: indices[..., k] holds tuples indexing the first k axes "
              "of x; the result's shape is indices.shape[:-1] + x.shape[k:]"),
    OpDef("scatter", ("x", "indices", "updates"), _scatter_infer, _scatter,
          attrs=(Attr("axis", "int"), Attr("reduce", "str", "none")),
          doc="PyTorch's scatter/scatter_reduce (include_self=True) as a copy of x: "
              "updates[p] lands on x[p with p[axis] replaced by indices[p]]; indices and "
              "updates have one shape, no larger than x outside `axis`; reduce in "
              "none/add/mul/max/min (see the module doc for duplicates)",
          decomposition=_decompose_scatter),
    OpDef("scatter_nd", ("x", "indices", "updates"), _scatter_nd_infer, _scatter_nd,
          attrs=(Attr("reduce", "str", "none"),),
          doc="the inverse of gather_nd as a copy of x (x.at[idx].set/add/...): "
              "updates[i...] lands on the slice of x at the tuple indices[i..., :]; "
              "reduce 'add' is np.add.at"),
    OpDef("one_hot", ("indices",), _one_hot_infer, _one_hot,
          attrs=(Attr("depth", "int"), Attr("axis", "int", -1), Attr("dtype", "dtype", float32),
                 Attr("on_value", "float", 1.0), Attr("off_value", "float", 0.0)),
          doc="on_value where the new axis (of size `depth`, at `axis`) equals the index, "
              "off_value elsewhere; indices outside [0, depth) give all-off rows",
          decomposition=_decompose_one_hot),
    OpDef("embedding", ("table", "ids"), _embedding_infer, _embedding,
          doc="rows of table [V, D] at integer ids of any shape; result ids.shape + [D]",
          decomposition=_decompose_embedding),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the indexing ops: every dtype family of the indexed tensor, signed and unsigned
# index dtypes, scalar and empty index sets, broadcasting gathers, and duplicate scatter indices
# under every reduction.


_INDEX_DTYPES = ("int64", "int32", "uint8", "int8")


def _indices(rng: np.random.Generator, shape: tuple[int, ...], size: int, dt: str) -> np.ndarray:
    """Random in-range indices (with repeats) for a dimension of ``size``."""
    return rng.integers(0, max(size, 1), size=shape).astype(dt)


def _tuples(rng: np.random.Generator, batch: tuple[int, ...], dims: tuple[int, ...],
            dt: str = "int64") -> np.ndarray:
    """Random in-range index tuples ``[*batch, len(dims)]`` into a tensor of shape ``dims``."""
    cols = [_indices(rng, batch + (1,), d, dt) for d in dims]
    return np.concatenate(cols, axis=-1) if cols else np.zeros(batch + (0,), dt)


def _runs(cases: Sequence[tuple]) -> Iterator[tuple[tuple[tuple, str], str]]:
    """``((case, data dtype), index dtype)`` for each case of :func:`dtype_runs`."""
    return zip(dtype_runs(cases), cycle(_INDEX_DTYPES))


def _gather_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((4, 5), (2, 3), 1), ((3,), (), 0), ((4, 2, 3), (0,), -2), ((3, 4), (5,), 0),
             ((2, 1), (3, 2), -1)]
    for ((x_shape, i_shape, axis), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _indices(rng, i_shape, x_shape[axis], idt)
        yield OpSample("gather", (x, idx), {"axis": axis}, dtypes=(dt, None))


def _take_along_axis_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((3, 4), (3, 2), 1), ((1, 4), (3, 6), 1), ((3, 4), (1, 6), -1),
             ((2, 3, 4), (2, 5, 1), -2), ((0, 3), (0, 2), 1), ((5,), (0,), 0)]
    for ((x_shape, i_shape, axis), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _indices(rng, i_shape, x_shape[axis], idt)
        yield OpSample("take_along_axis", (x, idx), {"axis": axis}, dtypes=(dt, None))


def _gather_nd_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((3, 4, 5), (2,), 2), ((3, 4, 5), (4,), 3), ((3, 4), (2,), 0), ((3, 4), (2, 3), 1),
             ((0, 3), (0,), 1), ((2, 3), (), 2)]
    for ((x_shape, batch, k), dt), idt in _runs(cases):
        x = random_array(rng, x_shape, dt)
        idx = _tuples(rng, batch, x_shape[:k], idt)
        yield OpSample("gather_nd", (x, idx), dtypes=(dt, None))


def _reduce_dtypes(reduce: str) -> list[str]:
    return [dt for dt in DATA_DTYPES if to_dtype(dt).kind in REDUCE_KINDS[reduce]]


def _scatter_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for reduce in REDUCE_KINDS:
        for dt in _reduce_dtypes(reduce):
            x = random_array(rng, (3, 5), dt)
            idx = _indices(rng, (4, 5), 3, "int64")  # 4 rows into 3: duplicates
            updates = random_array(rng, (4, 5), dt)
            # duplicates combine in an order (and an accumulator) the backend chooses
            tol = accumulation_tolerance(dt) if reduce in ("add", "mul") else {}
            yield OpSample("scatter", (x, idx, updates), {"axis": 0, "reduce": reduce},
                           dtypes=(dt, None, dt), **tol)
    edge = [((4, 5), (2, 3), -1, "add"), ((4, 5), (0, 5), 0, "none"), ((2,), (6,), 0, "max"),
            ((2, 3), (2, 3), 1, "mul")]
    for x_shape, i_shape, axis, reduce in edge:
        x = random_array(rng, x_shape, "float32")
        idx = _indices(rng, i_shape, x_shape[axis], "int32")
        updates = random_array(rng, i_shape, "float32")
        yield OpSample("scatter", (x, idx, updates), {"axis": axis, "reduce": reduce})


def _scatter_nd_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for reduce in REDUCE_KINDS:
        for dt in _reduce_dtypes(reduce):
            x = random_array(rng, (4, 3), dt)
            idx = _tuples(rng, (6,), (4,))  # 6 rows into 4: duplicates
            updates = random_array(rng, (6, 3), dt)
            tol = accumulation_tolerance(dt) if reduce in ("add", "mul") else {}
            yield OpSample("scatter_nd", (x, idx, updates), {"reduce": reduce},
                           dtypes=(dt, None, dt), **tol)
    edge = [((3, 4), (6,), 2, "add"), ((3, 4), (2,), 0, "add"), ((3, 4), (0,), 2, "none"),
            ((2, 3, 2), (2, 2), 1, "min"), ((2, 2), (5,), 2, "none")]
    for x_shape, batch, k, reduce in edge:
        x = random_array(rng, x_shape, "float64")
        idx = _tuples(rng, batch, x_shape[:k], "int32")
        updates = random_array(rng, batch + x_shape[k:], "float64")
        yield OpSample("scatter_nd", (x, idx, updates), {"reduce": reduce})


def _one_hot_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    wide = rng.integers(-2, 6, size=(5,))  # depth 4: some indices out of range, some negative
    yield OpSample("one_hot", (wide,), {"depth": 4})
    yield OpSample("one_hot", (wide.reshape(5, 1),), {"depth": 4, "axis": 0, "dtype": "int32",
                                                      "on_value": 5, "off_value": -1})
    yield OpSample("one_hot", (_indices(rng, (2, 3), 3, "uint8"),),
                   {"depth": 3, "axis": 1, "dtype": "bool"})
    yield OpSample("one_hot", (_indices(rng, (3,), 2, "int32"),),
                   {"depth": 2, "dtype": "bfloat16", "on_value": 0.5, "off_value": 0.25})
    yield OpSample("one_hot", (np.array(2, np.int8),), {"depth": 3, "dtype": "complex64"})
    yield OpSample("one_hot", (np.zeros((0, 2), np.int64),), {"depth": 3, "axis": -2})
    yield OpSample("one_hot", (_indices(rng, (3,), 1, "int64"),), {"depth": 0})


def _embedding_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = [((6, 3), (2, 4)), ((5, 2), ()), ((4, 3), (0,)), ((1, 0), (3,)), ((3, 2), (2, 1, 2))]
    for ((t_shape, i_shape), dt), idt in _runs(cases):
        table = random_array(rng, t_shape, dt)
        ids = _indices(rng, i_shape, t_shape[0], idt)
        yield OpSample("embedding", (table, ids), dtypes=(dt, None))


SAMPLES: dict[str, SampleFn] = {
    "gather": _gather_samples,
    "take_along_axis": _take_along_axis_samples,
    "gather_nd": _gather_nd_samples,
    "scatter": _scatter_samples,
    "scatter_nd": _scatter_nd_samples,
    "one_hot": _one_hot_samples,
    "embedding": _embedding_samples,
}
