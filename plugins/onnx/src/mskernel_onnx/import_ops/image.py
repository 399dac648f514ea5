"""Image and detection ops: ``Col2Im``, ``DeformConv``, ``RoiAlign``, ``NonMaxSuppression``
and ``ImageDecoder``.

``DeformConv`` samples the input bilinearly at each kernel tap moved by its offset (zero
outside), scales by the mask, and contracts the samples with the weights per group.
``Col2Im`` scatters each column back to its window positions (a ``scatter`` with
``reduce="add"`` through a position table built at import time).  ``RoiAlign`` gathers the
four bilinear taps of every sample point and weighs them; where the sample grid follows the
boxes (``sampling_ratio=0``) the boxes must be known at import time.  ``NonMaxSuppression``
selects a data-dependent number of boxes, so its inputs must be known at import time; it is
evaluated then, greedily per batch and class as ONNX specifies.  ``ImageDecoder`` decodes its
(known) encoded bytes with Pillow, the decoder ONNX's reference uses, after checking the
image's declared size.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import broadcast, check_table, dtype, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


# --- Col2Im ------------------------------------------------------------------------------------


def _col2im(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    image, block = ctx.ints(1), ctx.ints(2)
    k = len(image)
    dilations = tuple(ctx.attr("dilations", (1,) * k))
    strides = tuple(ctx.attr("strides", (1,) * k))
    pads = tuple(ctx.attr("pads", (0,) * (2 * k)))
    padded = [size + lo + hi for size, lo, hi in zip(image, pads[:k], pads[k:])]
    counts = [(p - d * (b - 1) - 1) // s + 1 for p, d, b, s in zip(padded, dilations, block,
                                                                     strides)]
    n, ck, columns = shape(x)
    kernel = math.prod(block)
    if ck % kernel or columns != math.prod(counts):
        ctx.fail(f"input {list(shape(x))} does not hold columns of block {list(block)} "
                 f"over {math.prod(counts)} positions")
    channels = ck // kernel
    check_table(ctx, (kernel, columns), "the Col2Im position table")
    # the padded position of every (kernel offset, column): [kernel, columns]
    position = np.zeros((kernel, columns), np.int64)
    offsets = np.indices(block).reshape(k, -1)
    starts = np.indices(counts).reshape(k, -1)
    stride = 1
    for d in reversed(range(k)):
        coord = offsets[d][:, None] * dilations[d] + starts[d][None, :] * strides[d]
        position += coord * stride
        stride *= padded[d]
    table = ctx.constant(position.reshape(-1))
    values = ctx.op("reshape", x, shape=(n, channels, kernel * columns))
    index = broadcast(ctx, ctx.op("reshape", table, shape=(1, 1, kernel * columns)),
                      (n, channels, kernel * columns))
    zeros = broadcast(ctx, scalar(ctx, 0, x), (n, channels, math.prod(padded)))
    out = ctx.op("reshape", ctx.op("scatter", zeros, index, values, axis=2, reduce="add"),
                 shape=(n, channels, *padded))
    return ctx.op("slice", out, starts=pads[:k], stops=tuple(p - hi for p, hi in
                                                            zip(padded, pads[k:])),
                  axes=tuple(range(2, 2 + k)))


# --- DeformConv --------------------------------------------------------------------------------


def _deform_conv(ctx: "NodeContext") -> Value:
    x, w, offset = ctx.input(0), ctx.input(1), ctx.input(2)
    if len(shape(x)) != 4:
        ctx.fail(f"only 2-d deformable convolution is supported, got input {list(shape(x))}")
    n, c, h, width = shape(x)
    oc, c_per_group, kh, kw = shape(w)
    oh, ow = shape(offset)[2:]
    groups, offset_groups = ctx.attr("group", 1), ctx.attr("offset_group", 1)
    sh, sw = ctx.attr("strides", (1, 1))
    dh, dw = ctx.attr("dilations", (1, 1))
    top, left = tuple(ctx.attr("pads", (0, 0, 0, 0)))[:2]
    check_table(ctx, (n, c, kh, kw, oh, ow), "the DeformConv sample table")
    taps = (n, offset_groups, kh, kw, oh, ow)
    moves = ctx.op("reshape", offset, shape=(n, offset_groups, kh, kw, 2, oh, ow))
    dy, dx = (ctx.op("squeeze", m, axes=(4,)) for m in ctx.op("split", moves, axis=4,
                                                               sizes=(1, 1)))
    base_y = (np.arange(kh)[:, None, None, None] * dh + np.arange(oh)[None, None, :, None] * sh
              - top).astype(np.float64)
    base_x = (np.arange(kw)[None, :, None, None] * dw + np.arange(ow)[None, None, None, :] * sw
              - left).astype(np.float64)
    py = ctx.op("add", dy, ctx.constant(base_y, dtype(x)))
    px = ctx.op("add", dx, ctx.constant(base_x, dtype(x)))
    y0, x0 = ctx.op("floor", py), ctx.op("floor", px)
    ty, tx = ctx.op("sub", py, y0), ctx.op("sub", px, x0)
    per_group = c // offset_groups
    flat = ctx.op("reshape", x, shape=(n, offset_groups, per_group, h * width))
    sampled = None
    for corner_y, corner_x in ((0, 0), (0, 1), (1, 0), (1, 1)):
        yy = ctx.op("add", y0, scalar(ctx, corner_y, y0))
        xx = ctx.op("add", x0, scalar(ctx, corner_x, x0))
        weight = ctx.op("mul", ty if corner_y else ctx.op("sub", scalar(ctx, 1, ty), ty),
                        tx if corner_x else ctx.op("sub", scalar(ctx, 1, tx), tx))
        inside = ctx.op("logical_and", ctx.op("logical_and", ctx.op(
            "greater_equal", yy, scalar(ctx, 0, yy)), ctx.op("less_equal", yy, scalar(
                ctx, h - 1, yy))), ctx.op("logical_and", ctx.op(
                    "greater_equal", xx, scalar(ctx, 0, xx)), ctx.op("less_equal", xx, scalar(
                        ctx, width - 1, xx))))
        weight = ctx.op("where", inside, weight, scalar(ctx, 0, weight))
        index = ctx.op("add", ctx.op("mul", ctx.op("minimum", ctx.op("maximum", yy, scalar(
            ctx, 0, yy)), scalar(ctx, h - 1, yy)), scalar(ctx, width, yy)), ctx.op(
                "minimum", ctx.op("maximum", xx, scalar(ctx, 0, xx)), scalar(ctx, width - 1, xx)))
        index = ctx.op("reshape", ctx.op("cast", index, dtype="int64"),
                       shape=(n, offset_groups, 1, kh * kw * oh * ow))
        picked = ctx.op("take_along_axis", flat, broadcast(
            ctx, index, (n, offset_groups, per_group, kh * kw * oh * ow)), axis=3)
        term = ctx.op("mul", ctx.op("reshape", picked, shape=(n, offset_groups, per_group,
                                                               kh, kw, oh, ow)),
                      ctx.op("expand_dims", weight, axes=(2,)))
        sampled = term if sampled is None else ctx.op("add", sampled, term)
    if ctx.has(4):
        mask = ctx.op("reshape", ctx.input(4), shape=taps)
        sampled = ctx.op("mul", sampled, ctx.op("expand_dims", mask, axes=(2,)))
    columns = ctx.op("reshape", sampled, shape=(n, groups, c_per_group * kh * kw, oh * ow))
    kernels = ctx.op("reshape", w, shape=(groups, oc // groups, c_per_group * kh * kw))
    out = ctx.op("reshape", ctx.op("matmul", kernels, columns), shape=(n, oc, oh, ow))
    if ctx.has(3):
        out = ctx.op("add", out, ctx.op("reshape", ctx.input(3), shape=(1, oc, 1, 1)))
    return out


# --- RoiAlign ----------------------------------------------------------------------------------


def _roi_samples(ctx: "NodeContext", box: np.ndarray, height: int, width: int, out_h: int,
                 out_w: int, ratio: int, half_pixel: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Bilinear taps ``[out_h, out_w, samples, 4]`` (flat positions, weights) of one box,
    and its sample count, as ONNX's reference computes them."""
    offset = 0.5 if half_pixel else 0.0
    x0, y0, x1, y1 = (float(v) for v in box)
    x0, y0, x1, y1 = x0 - offset, y0 - offset, x1 - offset, y1 - offset
    roi_w, roi_h = x1 - x0, y1 - y0
    if not half_pixel:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_h, bin_w = roi_h / out_h, roi_w / out_w
    grid_h = ratio if ratio > 0 else int(np.ceil(roi_h / out_h))
    grid_w = ratio if ratio > 0 else int(np.ceil(roi_w / out_w))
    check_table(ctx, (out_h, out_w, grid_h, grid_w, 4), "a RoiAlign sample table")
    ph, pw, iy, ix = np.meshgrid(np.arange(out_h), np.arange(out_w), np.arange(grid_h),
                                 np.arange(grid_w), indexing="ij")
    y = y0 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
    x = x0 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = np.maximum(y, 0), np.maximum(x, 0)
    y_low, x_low = y.astype(np.int64), x.astype(np.int64)
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = np.where(y_edge, height - 1, y_low)
    x_low = np.where(x_edge, width - 1, x_low)
    y = np.where(y_edge, y_low, y)
    x = np.where(x_edge, x_low, x)
    y_high = np.where(y_edge, y_low, y_low + 1)
    x_high = np.where(x_edge, x_low, x_low + 1)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx
    pos = np.stack([y_low * width + x_low, y_low * width + x_high,
                    y_high * width + x_low, y_high * width + x_high], axis=-1)
    weight = np.stack([hy * hx, hy * lx, ly * hx, ly * lx], axis=-1)
    pos = np.where(outside[..., None], 0, pos)
    weight = np.where(outside[..., None], 0.0, weight)
    samples = grid_h * grid_w
    return (pos.reshape(out_h, out_w, samples, 4), weight.reshape(out_h, out_w, samples, 4),
            max(samples, 1))


def _roi_align(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    boxes = np.asarray(ctx.const(1), np.float64) * ctx.attr("spatial_scale", 1.0)
    batch = np.asarray(ctx.const(2)).reshape(-1).astype(np.int64)
    c, height, width = shape(x)[1:]
    out_h, out_w = ctx.attr("output_height", 1), ctx.attr("output_width", 1)
    half_pixel = ctx.attr("coordinate_transformation_mode", "half_pixel") == "half_pixel"
    ratio = ctx.attr("sampling_ratio", 0)
    taps = [_roi_samples(ctx, b, height, width, out_h, out_w, ratio, half_pixel)
            for b in boxes]
    most = max((t[0].shape[2] for t in taps), default=1) or 1
    check_table(ctx, (len(taps), out_h, out_w, most, 4), "the RoiAlign sample table")
    pos = np.zeros((len(taps), out_h, out_w, most, 4), np.int64)
    weight = np.zeros(pos.shape)
    real = np.zeros(pos.shape[:4], bool)
    count = np.ones(len(taps))
    for r, (p, w, samples) in enumerate(taps):
        s = p.shape[2]
        pos[r, :, :, :s] = p + batch[r] * height * width
        weight[r, :, :, :s] = w
        real[r, :, :, :s] = True
        count[r] = samples
    flat = ctx.op("reshape", ctx.op("transpose", x, perm=(1, 0, 2, 3)), shape=(c, -1))
    picked = ctx.op("gather", flat, ctx.constant(pos), axis=1)  # [c, r, h, w, s, 4]
    weighted = ctx.op("mul", picked, ctx.constant(weight, dtype(x)))
    if ctx.attr("mode", "avg") == "avg":
        total = ctx.op("sum", weighted, axes=(4, 5))
        out = ctx.op("div", total, ctx.constant(count.reshape(1, -1, 1, 1), dtype(x)))
    else:
        best = ctx.op("max", weighted, axes=(5,))
        lowest = scalar(ctx, -np.inf, x)
        out = ctx.op("max", ctx.op("where", ctx.constant(real), best, lowest), axes=(4,))
    return ctx.op("transpose", out, perm=(1, 0, 2, 3))


# --- NonMaxSuppression -------------------------------------------------------------------------


def _corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """Boxes as ``[x_min, y_min, x_max, y_max]``."""
    if center:
        cx, cy, w, h = boxes.T
        return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    y0, x0, y1, x1 = boxes.T
    return np.stack([np.minimum(x0, x1), np.minimum(y0, y1), np.maximum(x0, x1),
                     np.maximum(y0, y1)], axis=1)


def _suppresses(a: np.ndarray, b: np.ndarray, threshold: float) -> bool:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return False
    inter = width * height
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    union = area_a + area_b - inter
    if area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return bool(inter / union > threshold)


def _non_max_suppression(ctx: "NodeContext") -> Value:
    boxes, scores = np.asarray(ctx.const(0)), np.asarray(ctx.const(1))
    limit = int(ctx.scalar(2, 0)) if ctx.has(2) and np.asarray(ctx.const(2)).size else 0
    iou = float(ctx.scalar(3, 0.0)) if ctx.has(3) and np.asarray(ctx.const(3)).size else 0.0
    floor = (float(ctx.scalar(4)) if ctx.has(4) and np.asarray(ctx.const(4)).size else None)
    center = bool(ctx.attr("center_point_box", 0))
    selected = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b].astype(np.float64), center)
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = sorted((i for i in range(len(s)) if floor is None or s[i] > floor),
                           key=lambda i: (-s[i], i))
            kept: list[int] = []
            for i in order:
                if len(kept) >= max(limit, 0):
                    break
                if not any(_suppresses(corners[i], corners[j], iou) for j in kept):
                    kept.append(i)
            selected += [(b, c, i) for i in kept]
    return ctx.constant(np.array(selected, np.int64).reshape(-1, 3))


# --- ImageDecoder ------------------------------------------------------------------------------


def _image_decoder(ctx: "NodeContext") -> Value:
    try:
        from PIL import Image
    except ImportError:
        ctx.fail("decoding images needs Pillow: pip install 'mskernel-onnx[images]'")
    encoded = np.asarray(ctx.const(0)).astype(np.uint8).tobytes()
    fmt = ctx.attr("pixel_format", "RGB")
    if fmt not in ("RGB", "BGR", "Grayscale"):
        ctx.fail(f"pixel_format {fmt!r} is not one of RGB, BGR, Grayscale")
    try:
        with Image.open(io.BytesIO(encoded)) as image:
            width, height = image.size
            check_table(ctx, (height, width, 3), "the decoded image")
            pixels = np.asarray(image.convert("L" if fmt == "Grayscale" else "RGB"))
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        ctx.fail(f"cannot decode the image: {exc}")
    if fmt == "Grayscale":
        pixels = pixels[:, :, None]
    elif fmt == "BGR":
        pixels = pixels[:, :, ::-1]
    return ctx.constant(np.ascontiguousarray(pixels, np.uint8))


OPS: dict[str, Handler] = {
    "ImageDecoder": _image_decoder, "Col2Im": _col2im, "DeformConv": _deform_conv, "RoiAlign": _roi_align, "NonMaxSuppression": _non_max_suppression,
}
