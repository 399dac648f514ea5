"""Sorting and scanning ops: ``sort``, ``argsort``, ``topk``; ``cumsum``, ``cumprod``,
``cummax``, ``cummin``.

Order.  Sorts are stable: equal elements keep their input order, in descending sorts too.  NaN
sorts as in NumPy — after every number in ascending order — so it comes first in descending
order (NaN counts as the largest value, as in PyTorch).  ``topk`` picks what a stable sort
would: ties go to the lower index and NaN counts as the largest value.  The ordering ops accept
bool, integer and float tensors; complex numbers have no order.  ``argsort`` is the primitive:
``sort`` and ``topk`` are composites (see :mod:`.primitives`) taking elements along its order.

Scans.  ``cumsum`` and ``cumprod`` accept numeric tensors and keep their dtype (integers wrap
around); float and complex inputs accumulate in float64 / complex128 and are rounded once to
the result type.  ``reverse`` scans from the end of the axis; ``exclusive`` leaves each element
out of its own result, so the scan starts from 0 (sums) or 1 (products), as TensorFlow's
``cumsum``.  ``cummax`` and ``cummin`` give running extremes (values only); a NaN propagates
to the end of the scan, as in PyTorch.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InferError
from ..ir.dtypes import int64
from ..ir.graph import Value
from ..ir.types import TensorType
from .registry import Attr, Emitter, OpDef
from .rules import normalize_axis, require_kind, tensor, with_dim
from .samples import SampleFn, one_input, random_array

ORDERED = "biuf"
NUMERIC = "iufc"


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices that sort ``x`` stably along ``axis``; in descending order ties keep their input
    order too (the ascending order of the reversed axis, reversed back)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    backwards = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(x.shape[axis] - 1 - backwards, axis)


def _ordered(x: TensorType, axis: int) -> tuple[TensorType, int]:
    x = tensor(x)
    require_kind(x, ORDERED, "a bool, integer or float (complex values have no order)")
    return x, normalize_axis(axis, x.rank)


def _sort_infer(x: TensorType, *, axis: int, descending: bool) -> TensorType:
    return _ordered(x, axis)[0]


def _sort(x: np.ndarray, *, axis: int, descending: bool) -> np.ndarray:
    return np.take_along_axis(x, stable_order(x, axis, descending), axis=axis)


def _argsort_infer(x: TensorType, *, axis: int, descending: bool) -> TensorType:
    return _ordered(x, axis)[0].with_dtype(int64)


def _argsort(x: np.ndarray, *, axis: int, descending: bool) -> np.ndarray:
    return stable_order(x, axis, descending).astype(np.int64)


def _topk_infer(x: TensorType, *, k: int, axis: int, largest: bool,
                sorted: bool) -> tuple[TensorType, TensorType]:
    x, ax = _ordered(x, axis)
    if not 0 <= k <= x.shape[ax]:
        raise InferError(f"k={k} is out of range for axis {axis} of size {x.shape[ax]}")
    shape = with_dim(x.shape, ax, k)
    return TensorType(x.dtype, shape), TensorType(int64, shape)


def _topk(x: np.ndarray, *, k: int, axis: int, largest: bool,
          sorted: bool) -> tuple[np.ndarray, np.ndarray]:
    ax = axis % x.ndim
    picked = np.take(stable_order(x, ax, largest), np.arange(k), axis=ax)
    if not sorted:
        picked = np.sort(picked, axis=ax)
    return np.take_along_axis(x, picked, axis=ax), picked.astype(np.int64)


def _scan_infer(kinds: str, what: str) -> Callable[..., TensorType]:
    def infer(x: TensorType, *, axis: int, **flags: bool) -> TensorType:
        x = tensor(x)
        require_kind(x, kinds, what)
        normalize_axis(axis, x.rank)
        return x

    return infer


def _accumulator(dt: np.dtype) -> np.dtype:
    return np.dtype({"f": np.float64, "c": np.complex128}.get(dt.kind, dt))


def _cumulative(ufunc: np.ufunc, identity: int) -> Callable[..., np.ndarray]:
    """The reference of an accumulating scan of ``ufunc`` (``identity`` starts exclusive scans)."""

    def reference(x: np.ndarray, *, axis: int, reverse: bool, exclusive: bool) -> np.ndarray:
        ax = axis % x.ndim
        acc = ufunc.accumulate(np.flip(x, ax) if reverse else x, axis=ax,
                               dtype=_accumulator(x.dtype))
        if exclusive:
            start = np.full(with_dim(acc.shape, ax, 1), identity, acc.dtype)
            acc = np.take(np.concatenate([start, acc], axis=ax), np.arange(x.shape[ax]), axis=ax)
        return (np.flip(acc, ax) if reverse else acc).astype(x.dtype)

    return reference


def _running(ufunc: np.ufunc) -> Callable[..., np.ndarray]:
    def reference(x: np.ndarray, *, axis: int) -> np.ndarray:
        return ufunc.accumulate(x, axis=axis)

    return reference


_SORT_ATTRS = (Attr("axis", "int", -1), Attr("descending", "bool", False))
_SCAN_ATTRS = (Attr("axis", "int"), Attr("reverse", "bool", False),
               Attr("exclusive", "bool", False))
_numeric_scan = _scan_infer(NUMERIC, "a numeric (cast bool to an integer type first)")
_ordered_scan = _scan_infer(ORDERED, "a bool, integer or float (complex values have no order)")

# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _decompose_sort(b: Emitter, x: Value, *, axis: int, descending: bool) -> Value:
    order = b.op("argsort", x, axis=axis, descending=descending)
    return b.op("take_along_axis", x, order, axis=axis)


def _decompose_topk(b: Emitter, x: Value, *, k: int, axis: int, largest: bool,
                    sorted: bool) -> tuple[Value, Value]:
    order = b.op("argsort", x, axis=axis, descending=largest)
    picked = b.op("slice", order, starts=(0,), stops=(k,), axes=(axis,))
    if not sorted:  # the k picks in index order
        picked = b.op("sort", picked, axis=axis, descending=False)
    return b.op("take_along_axis", x, picked, axis=axis), picked


OPS: list[OpDef] = [
    OpDef("sort", ("x",), _sort_infer, _sort, attrs=_SORT_ATTRS,
          doc="x sorted stably along `axis`; NaN is the largest value",
          decomposition=_decompose_sort),
    OpDef("argsort", ("x",), _argsort_infer, _argsort, attrs=_SORT_ATTRS,
          doc="int64 indices that sort x stably along `axis` (take_along_axis gives sort)"),
    OpDef("topk", ("x",), _topk_infer, _topk,
          attrs=(Attr("k", "int"), Attr("axis", "int", -1), Attr("largest", "bool", True),
                 Attr("sorted", "bool", True)),
          doc="(values, int64 indices) of the k largest (smallest if not `largest`) elements "
              "along `axis`; ties go to the lower index; sorted=False keeps them in index order",
          decomposition=_decompose_topk),
    OpDef("cumsum", ("x",), _numeric_scan, _cumulative(np.add, 0), attrs=_SCAN_ATTRS,
          doc="running sum along `axis`; `reverse` scans from the end, `exclusive` omits "
              "each element from its own sum"),
    OpDef("cumprod", ("x",), _numeric_scan, _cumulative(np.multiply, 1), attrs=_SCAN_ATTRS,
          doc="running product along `axis`; `reverse` and `exclusive` as cumsum"),
    OpDef("cummax", ("x",), _ordered_scan, _running(np.maximum), attrs=(Attr("axis", "int"),),
          doc="running maximum along `axis` (values only; NaN propagates)"),
    OpDef("cummin", ("x",), _ordered_scan, _running(np.minimum), attrs=(Attr("axis", "int"),),
          doc="running minimum along `axis` (values only; NaN propagates)"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the sorting and scanning ops: ties and NaNs (sorts must be stable and order NaN
# as NumPy), every direction and flag, every accepted dtype family, and size-0 and size-1 axes.


_ORDERED_DTYPES = ("float32", "bfloat16", "int64", "bool", "uint8", "float16", "int8",
                   "float64")
_NUMERIC_DTYPES = ("float32", "bfloat16", "int32", "complex64", "uint8", "float16", "int64",
                   "float64", "complex128")


def _with_ties(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Values with many ties; floats also get NaNs (and rounding leaves -0.0 beside 0.0)."""
    x = random_array(rng, shape, dt, -2, 2)
    if x.dtype.kind == "f":
        x = np.round(x)
        x[rng.random(shape) < 0.15] = np.nan
    return x


def _small(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Values of magnitude up to 1.2, so products stay finite in every dtype."""
    return random_array(rng, shape, dt, -1.2, 1.2)


def _sort_samples(op: str) -> SampleFn:
    return one_input(op, [
        ((4, 6), {}), ((4, 6), {"axis": 0, "descending": True}), ((3, 5), {"descending": True}),
        ((2, 0, 3), {"axis": 1}), ((5, 1), {"axis": -1, "descending": True}), ((1,), {}),
        ((2, 3, 4), {"axis": -2}),
    ], _ORDERED_DTYPES, _with_ties)


def _scan_samples(op: str, make: Callable[..., np.ndarray] = random_array) -> SampleFn:
    return one_input(op, [
        ((3, 5), {"axis": 1}), ((3, 5), {"axis": 0, "reverse": True}),
        ((2, 4), {"axis": -1, "exclusive": True}),
        ((2, 4), {"axis": 1, "reverse": True, "exclusive": True}),
        ((0, 3), {"axis": 0, "exclusive": True}), ((4,), {"axis": 0}),
        ((2, 3, 1), {"axis": -1, "reverse": True}),
    ], _NUMERIC_DTYPES, make)


SAMPLES: dict[str, SampleFn] = {
    "sort": _sort_samples("sort"),
    "argsort": _sort_samples("argsort"),
    "topk": one_input("topk", [
        ((4, 6), {"k": 3}), ((4, 6), {"k": 2, "largest": False}),
        ((4, 6), {"k": 4, "sorted": False}), ((3, 5), {"k": 3, "axis": 0, "largest": False,
                                                       "sorted": False}),
        ((2, 3), {"k": 0}), ((2, 3), {"k": 3}), ((3, 0), {"k": 0, "axis": 0}),
        ((1,), {"k": 1, "largest": False}),
    ], _ORDERED_DTYPES, _with_ties),
    "cumsum": _scan_samples("cumsum"),
    "cumprod": _scan_samples("cumprod", _small),
    "cummax": one_input("cummax", [
        ((3, 6), {"axis": 1}), ((4, 2), {"axis": 0}), ((0, 3), {"axis": -1}), ((5,), {"axis": -1}),
    ], _ORDERED_DTYPES, _with_ties),
    "cummin": one_input("cummin", [
        ((3, 6), {"axis": -1}), ((4, 2), {"axis": -2}), ((2, 0), {"axis": 1}), ((1,), {"axis": 0}),
    ], _ORDERED_DTYPES, _with_ties),
}
