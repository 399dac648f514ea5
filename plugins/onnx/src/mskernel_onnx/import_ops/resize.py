"""``Resize``, ``Upsample`` and ``GridSample``.

Resizing is separable: each resized axis is an interpolation matrix ``W [out, in]`` computed
at import time (shapes are static) from the mode (``nearest``, ``linear``, ``cubic``, with
``antialias``), the coordinate transformation (``half_pixel``, ``align_corners``,
``asymmetric``, ``pytorch_half_pixel``, ``tf_crop_and_resize``, ``half_pixel_symmetric``),
``nearest_mode``, ``cubic_coeff_a`` and ``exclude_outside``, exactly as ONNX's reference
computes its coefficients.  Nearest rows hold a single 1 and become a ``gather``; the others
a ``matmul`` along the axis (in float32 or float64, integer inputs rounded and saturated back).
``tf_crop_and_resize`` positions outside the input take ``extrapolation_value``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from mskernel_sdk import DType, Value, dtype as to_dtype

from .common import (
    axes as normalize_axes, broadcast, cast, check_table, dtype, move_axis, rank, scalar, shape,
)

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]
Coefficients = Callable[[np.ndarray, float], np.ndarray]


# --- coefficients (ONNX's reference, vectorised over output positions) -------------------------


def _nearest(mode: str) -> Coefficients:
    def coeffs(ratio: np.ndarray, scale: float) -> np.ndarray:
        exact = ratio == 1
        if mode == "round_prefer_floor":
            right = ratio > 0.5
        elif mode == "round_prefer_ceil":
            right = ratio >= 0.5
        elif mode == "floor":
            right = np.zeros_like(exact)
        elif mode == "ceil":
            right = np.ones_like(exact)
        else:
            raise ValueError(f"nearest_mode {mode!r} is not one of round_prefer_floor, "
                             "round_prefer_ceil, floor, ceil")
        right = right | exact
        return np.stack([~right, right], axis=-1).astype(np.float64)
    return coeffs


def _linear(antialias: bool) -> Coefficients:
    def coeffs(ratio: np.ndarray, scale: float) -> np.ndarray:
        if not antialias:
            return np.stack([1 - ratio, ratio], axis=-1)
        scale = min(scale, 1.0)
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, 2 - start)[None, :] - ratio[:, None]) * scale
        w = np.clip(1 - np.abs(args), 0, 1)
        return w / w.sum(axis=1, keepdims=True)
    return coeffs


def _cubic(a: float, antialias: bool) -> Coefficients:
    def kernel(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x <= 1, near, np.where(x < 2, far, 0.0))

    def coeffs(ratio: np.ndarray, scale: float) -> np.ndarray:
        if not antialias:
            offsets = np.array([-1.0, 0.0, 1.0, 2.0])
            return kernel(offsets[None, :] - ratio[:, None])
        scale = min(scale, 1.0)
        start = int(np.floor(-2 / scale) + 1)
        w = kernel(scale * (np.arange(start, 2 - start)[None, :] - ratio[:, None]))
        return w / w.sum(axis=1, keepdims=True)
    return coeffs


def _source_positions(mode: str, out_n: int, in_n: int, scale: float,
                      roi: Optional[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Each output position's coordinate in the input, and which lie outside it (only
    ``tf_crop_and_resize`` extrapolates)."""
    y = np.arange(out_n, dtype=np.float64)
    width = scale * in_n
    outside = np.zeros(out_n, bool)
    if mode == "align_corners":
        x = np.zeros(out_n) if width == 1 else y * (in_n - 1) / (width - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_crop_and_resize":
        lo, hi = roi if roi is not None else (0.0, 1.0)
        x = (np.full(out_n, (hi - lo) * (in_n - 1) / 2) if width == 1
             else y * (hi - lo) * (in_n - 1) / (width - 1))
        x = x + lo * (in_n - 1)
        outside = (x < 0) | (x > in_n - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(out_n, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    elif mode == "half_pixel_symmetric":
        offset = in_n / 2 * (1 - out_n / width)
        x = offset + (y + 0.5) / scale - 0.5
    else:
        raise ValueError(f"coordinate_transformation_mode {mode!r} is not supported")
    return x, outside


def interpolation_matrix(coeffs: Coefficients, coordinates: str, out_n: int, in_n: int,
                         scale: float, roi: Optional[tuple[float, float]],
                         exclude_outside: bool) -> tuple[np.ndarray, np.ndarray]:
    """``W [out_n, in_n]`` and the mask of extrapolated output positions."""
    x, outside = _source_positions(coordinates, out_n, in_n, scale, roi)
    base = np.floor(x)
    ratio = np.where(x == base, 1.0, x - base)
    w = coeffs(ratio, scale)
    n = w.shape[1]
    pad = int(np.ceil(n / 2))
    padded = x + pad
    p = np.floor(padded).astype(np.int64)
    frac = padded - p
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    neighbours = (p + offset)[:, None] + np.arange(n)[None, :] - pad
    if exclude_outside:
        w = np.where((neighbours < 0) | (neighbours >= in_n), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    matrix = np.zeros((out_n, in_n))
    rows = np.repeat(np.arange(out_n), n)
    np.add.at(matrix, (rows, np.clip(neighbours, 0, in_n - 1).reshape(-1)), w.reshape(-1))
    return matrix, outside


# --- applying the matrices ---------------------------------------------------------------------


def _apply(ctx: "NodeContext", x: Value, a: int, matrix: np.ndarray, outside: np.ndarray,
           fill: float, nearest: bool) -> Value:
    if nearest:
        y = ctx.op("gather", x, ctx.constant(matrix.argmax(axis=1).astype(np.int64)), axis=a)
    else:
        work = _work_dtype(dtype(x))
        moved = move_axis(ctx, cast(ctx, x, work), a, -1)
        y = ctx.op("matmul", moved, ctx.constant(matrix.T, work))
        y = move_axis(ctx, y, -1, a)
    if outside.any():
        mask_shape = [1] * rank(y)
        mask_shape[a] = len(outside)
        y = ctx.op("where", ctx.constant(outside.reshape(mask_shape)), scalar(ctx, fill, y), y)
    return y


def _work_dtype(dt: DType) -> DType:
    return dt if dt.name in ("float32", "float64") else to_dtype(
        "float64" if dt.itemsize >= 4 and not dt.is_floating else "float32")


def _saturate(ctx: "NodeContext", y: Value, dt: DType) -> Value:
    if dtype(y) == dt:
        return y
    if dt.is_integer:
        info = np.iinfo(dt.storage)
        y = ctx.op("round", y)
        y = ctx.op("minimum", ctx.op("maximum", y, scalar(ctx, info.min, y)),
                   scalar(ctx, info.max, y))
    return cast(ctx, y, dt)


def _output_geometry(ctx: "NodeContext", x: Value, scales: Optional[tuple[float, ...]],
                     sizes: Optional[tuple[int, ...]], which: tuple[int, ...]
                     ) -> tuple[list[float], list[int]]:
    dims = shape(x)
    scale_of = [1.0] * len(dims)
    size_of = list(dims)
    if sizes is not None:
        for a, s in zip(which, sizes):
            scale_of[a] = s / dims[a]
            size_of[a] = s
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            chosen = [scale_of[a] for a in which]
            common = min(chosen) if policy == "not_larger" else max(chosen)
            for a in which:
                scale_of[a] = common
                size_of[a] = int(common * dims[a] + 0.5)
    elif scales is not None:
        for a, s in zip(which, scales):
            scale_of[a] = s
            size_of[a] = math.floor(s * dims[a])
    else:
        ctx.fail("one of scales and sizes is required")
    return scale_of, size_of


def resize(ctx: "NodeContext", x: Value, scales: Optional[tuple[float, ...]],
           sizes: Optional[tuple[int, ...]], roi: Optional[tuple[float, ...]], mode: str,
           coordinates: str, nearest_mode: str) -> Value:
    which = normalize_axes(ctx, ctx.attr("axes", tuple(range(rank(x)))), rank(x))
    scale_of, size_of = _output_geometry(ctx, x, scales, sizes, which)
    antialias = bool(ctx.attr("antialias", 0))
    if mode == "nearest":
        coeffs = _nearest(nearest_mode)
    elif mode == "linear":
        coeffs = _linear(antialias)
    elif mode == "cubic":
        coeffs = _cubic(ctx.attr("cubic_coeff_a", -0.75), antialias)
    else:
        ctx.fail(f"mode {mode!r} is not one of nearest, linear, cubic")
    exclude = bool(ctx.attr("exclude_outside", 0))
    fill = ctx.attr("extrapolation_value", 0.0)
    out_dtype = dtype(x)
    y = x
    for i, a in enumerate(which):
        span = None if roi is None else (roi[i], roi[i + len(which)])
        identity = (math.isclose(scale_of[a], 1.0) and size_of[a] == shape(x)[a]
                    and (span is None or span == (0.0, 1.0)))
        if identity:
            continue
        check_table(ctx, (size_of[a], shape(x)[a]), f"the interpolation matrix of axis {a}")
        matrix, outside = interpolation_matrix(coeffs, coordinates, size_of[a], shape(x)[a],
                                               scale_of[a], span, exclude)
        y = _apply(ctx, y, a, matrix, outside, fill, mode == "nearest")
    return _saturate(ctx, y, out_dtype)


def _resize(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    if ctx.version < 11:
        scales = tuple(float(s) for s in np.asarray(ctx.const(1)).reshape(-1))
        return resize(ctx, x, scales, None, None, ctx.attr("mode", "nearest"), "asymmetric",
                      "floor" if ctx.attr("mode", "nearest") == "nearest" else "round_prefer_floor")
    roi = ctx.const(1, None)
    roi = None if roi is None or np.asarray(roi).size == 0 else tuple(
        float(v) for v in np.asarray(roi).reshape(-1))
    scales = ctx.const(2, None)
    scales = None if scales is None or np.asarray(scales).size == 0 else tuple(
        float(v) for v in np.asarray(scales).reshape(-1))
    sizes = ctx.ints(3, None)
    return resize(ctx, x, scales, sizes, roi, ctx.attr("mode", "nearest"),
                  ctx.attr("coordinate_transformation_mode", "half_pixel"),
                  ctx.attr("nearest_mode", "round_prefer_floor"))


def _upsample(ctx: "NodeContext") -> Value:
    scales = ctx.attr("scales") if ctx.version < 9 else tuple(
        float(v) for v in np.asarray(ctx.const(1)).reshape(-1))
    mode = ctx.attr("mode", "nearest")
    return resize(ctx, ctx.input(0), tuple(scales), None, None, mode, "asymmetric", "floor")


# --- GridSample --------------------------------------------------------------------------------


def _grid_sample(ctx: "NodeContext") -> Value:
    """Sample ``x [N, C, *S]`` at the normalised positions of ``grid [N, *O, k]`` (whose
    last axis lists the spatial coordinates innermost first).  Each output gathers its taps
    (1 nearest, 2 linear, 4 cubic per dim) from the flattened spatial dims and weighs them.
    As ONNX's reference does, a position outside the input is first clamped (``border``) or
    reflected (``reflection``), then a tap outside reads 0, the border or its reflection."""
    x, grid = ctx.input(0), ctx.input(1)
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(ctx.attr("mode", "linear"),
                                                          ctx.attr("mode", "linear"))
    if mode not in ("nearest", "linear", "cubic"):
        ctx.fail(f"mode {mode!r} is not one of nearest, linear, cubic")
    padding = ctx.attr("padding_mode", "zeros")
    align = bool(ctx.attr("align_corners", 0))
    dims = shape(x)
    n, c, spatial = dims[0], dims[1], dims[2:]
    out = shape(grid)[1:-1]
    points = int(np.prod(out))
    work = _work_dtype(dtype(x))
    coords = ctx.op("split", cast(ctx, grid, work), axis=-1, sizes=(1,) * len(spatial))
    positions = []
    for v, size in zip(reversed(coords), spatial):
        p = ctx.op("reshape", v, shape=(n, *out))
        one = scalar(ctx, 1, p)
        if align:
            p = ctx.op("mul", ctx.op("add", p, one), scalar(ctx, (size - 1) / 2, p))
        else:
            p = ctx.op("div", ctx.op("sub", ctx.op("mul", ctx.op("add", p, one),
                                                   scalar(ctx, size, p)), one), scalar(ctx, 2, p))
        if mode == "nearest":
            p = ctx.op("round", p)
        positions.append(_grid_border(ctx, p, size, padding, align))
    flat_x = ctx.op("reshape", cast(ctx, x, work), shape=(n, c, int(np.prod(spatial))))
    taps = {"nearest": 1, "linear": 2, "cubic": 4}[mode]
    total: Optional[Value] = None
    for offsets in np.ndindex(*(taps,) * len(spatial)):
        index, weight, valid = None, None, None
        for d, (p, size) in enumerate(zip(positions, spatial)):
            idx, w = _tap(ctx, p, offsets[d], mode)
            if padding == "zeros":
                inside = ctx.op("logical_and", ctx.op("greater_equal", idx, scalar(ctx, 0, idx)),
                                ctx.op("less", idx, scalar(ctx, size, idx)))
                valid = inside if valid is None else ctx.op("logical_and", valid, inside)
            elif padding == "reflection":
                idx = cast(ctx, ctx.op("trunc", _grid_border(ctx, cast(ctx, idx, work), size,
                                                            padding, align)), "int64")
            idx = ctx.op("minimum", ctx.op("maximum", idx, scalar(ctx, 0, idx)),
                         scalar(ctx, size - 1, idx))
            term = ctx.op("mul", idx, scalar(ctx, int(np.prod(spatial[d + 1:])), idx))
            index = term if index is None else ctx.op("add", index, term)
            weight = w if weight is None else ctx.op("mul", weight, w)
        if valid is not None:
            weight = ctx.op("where", valid, weight, scalar(ctx, 0, weight))
        at = broadcast(ctx, ctx.op("reshape", index, shape=(n, 1, points)), (n, c, points))
        picked = ctx.op("reshape", ctx.op("take_along_axis", flat_x, at, axis=2),
                        shape=(n, c, *out))
        term = ctx.op("mul", picked, ctx.op("reshape", weight, shape=(n, 1, *out)))
        total = term if total is None else ctx.op("add", total, term)
    assert total is not None
    return _saturate(ctx, total, dtype(x))


def _grid_border(ctx: "NodeContext", p: Value, size: int, padding: str, align: bool) -> Value:
    """A coordinate outside ``[lo, hi]`` (the input's extent) clamped into ``[0, size-1]``
    (``border``) or reflected into ``[lo, hi]`` (``reflection``)."""
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if padding == "border":
        outside = ctx.op("logical_or", ctx.op("less", p, scalar(ctx, lo, p)),
                         ctx.op("greater", p, scalar(ctx, hi, p)))
        clipped = ctx.op("minimum", ctx.op("maximum", p, scalar(ctx, 0, p)),
                         scalar(ctx, size - 1, p))
        return ctx.op("where", outside, clipped, p)
    if padding != "reflection":
        return p
    span = hi - lo
    if span <= 0:
        return ctx.op("mul", p, scalar(ctx, 0, p))
    distance = ctx.op("remainder", ctx.op("abs", ctx.op("sub", p, scalar(ctx, lo, p))),
                      scalar(ctx, 2 * span, p))
    folded = ctx.op("where", ctx.op("greater", distance, scalar(ctx, span, p)),
                    ctx.op("sub", scalar(ctx, 2 * span, p), distance), distance)
    return ctx.op("add", folded, scalar(ctx, lo, p))


def _tap(ctx: "NodeContext", p: Value, offset: int, mode: str) -> tuple[Value, Value]:
    """The input index and weight of one interpolation tap at position ``p``."""
    if mode == "nearest":
        return cast(ctx, p, "int64"), ctx.op("add", ctx.op("mul", p, scalar(ctx, 0, p)),
                                             scalar(ctx, 1, p))
    base = ctx.op("floor", p)
    t = ctx.op("sub", p, base)
    first = -1 if mode == "cubic" else 0
    idx = cast(ctx, ctx.op("add", base, scalar(ctx, first + offset, base)), "int64")
    if mode == "linear":
        return idx, (t if offset else ctx.op("sub", scalar(ctx, 1, t), t))
    a = -0.75
    d = ctx.op("abs", ctx.op("sub", t, scalar(ctx, first + offset, t)))
    near = ctx.op("add", ctx.op("mul", ctx.op("mul", ctx.op(
        "sub", ctx.op("mul", d, scalar(ctx, a + 2, d)), scalar(ctx, a + 3, d)), d), d),
        scalar(ctx, 1, d))
    far = ctx.op("sub", ctx.op("mul", ctx.op("add", ctx.op("mul", ctx.op(
        "sub", ctx.op("mul", d, scalar(ctx, a, d)), scalar(ctx, 5 * a, d)), d),
        scalar(ctx, 8 * a, d)), d), scalar(ctx, 4 * a, d))
    return idx, ctx.op("where", ctx.op("less_equal", d, scalar(ctx, 1, d)), near, far)


OPS: dict[str, Handler] = {"Resize": _resize, "Upsample": _upsample, "GridSample": _grid_sample}
