"""Spatial and distance functions of MindSpore's ``ops``, with PyTorch's numbers:
:func:`interpolate`, :func:`pixel_shuffle`/:func:`pixel_unshuffle`, :func:`unfold`/:func:`fold`,
:func:`grid_sample`, :func:`normalize`, :func:`cosine_similarity` and :func:`cdist`.

Each is a composition of core ops — resampling is ``take`` at positions computed on the host
from the (static) shapes, ``unfold`` one ``gather`` and ``fold`` one ``scatter``-add of the
same index table, ``grid_sample`` ``take_along_axis`` at positions read from the grid — so
gradients, ``@jit`` and every backend come with them.  Images are channel-first
(``[N, C, H, W]``; 3-d and 5-d inputs for the 1-d and 3-d modes of :func:`interpolate`).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from mskernel import ops as F
from mskernel_sdk import Tensor

__all__ = [
    "cdist", "cosine_similarity", "fold", "grid_sample", "interpolate", "normalize",
    "pixel_shuffle", "pixel_unshuffle", "unfold",
]

_MODES = {"nearest": 0, "linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "area": 0}

#: The cubic convolution constant PyTorch and OpenCV use (Keys, 1981, with a = -0.75).
CUBIC_A = -0.75


def _per_axis(value: Any, count: int, name: str) -> tuple[Any, ...]:
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,) * count
    if len(values) != count:
        raise ValueError(f"{name} needs {count} values, one per spatial axis, got {value}")
    return values


def _source(out_size: int, in_size: int, scale: Optional[float], align_corners: bool,
            mode: str) -> np.ndarray:
    """Where output positions ``0..out_size-1`` sample the input, in input coordinates
    (PyTorch's rules; only linear modes clamp them at 0)."""
    dst = np.arange(out_size, dtype=np.float64)
    step = 1.0 / scale if scale else in_size / out_size
    if mode == "nearest":
        return dst * step
    if align_corners:
        return dst * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    centred = (dst + 0.5) * step - 0.5
    return centred if mode == "bicubic" else np.maximum(centred, 0.0)


def _cubic(t: np.ndarray) -> list[np.ndarray]:
    """The four cubic-convolution weights of the taps at offsets -1, 0, 1, 2."""
    a = CUBIC_A

    def near(d: np.ndarray) -> np.ndarray:
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: np.ndarray) -> np.ndarray:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resample_axis(x: Tensor, axis: int, out_size: int, scale: Optional[float], mode: str,
                   align_corners: bool) -> Tensor:
    n = x.shape[axis]
    position = _source(out_size, n, scale, align_corners, mode)
    if mode == "nearest":
        return F.take(x, np.minimum(np.floor(position), n - 1).astype(np.int64), axis=axis)
    low = np.floor(position)
    frac = position - low
    shape = [-1 if a == axis else 1 for a in range(x.ndim)]
    if mode == "bicubic":
        taps = [(low + k).clip(0, n - 1).astype(np.int64) for k in (-1, 0, 1, 2)]
        weights = _cubic(frac)
    else:
        taps = [low.astype(np.int64).clip(0, n - 1), (low + 1).clip(0, n - 1).astype(np.int64)]
        weights = [1 - frac, frac]
    total: Optional[Tensor] = None
    for tap, weight in zip(taps, weights):
        term = F.multiply(F.take(x, tap, axis=axis),
                          F.reshape(F.asarray(weight.astype(x.dtype.storage)), shape))
        total = term if total is None else F.add(total, term)
    assert total is not None
    return total


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None) -> Tensor:
    """Resize the spatial axes (all but the first two) to ``size``, or by ``scale_factor``:
    ``"nearest"``, ``"linear"`` (3-d input), ``"bilinear"`` and ``"bicubic"`` (4-d),
    ``"trilinear"`` (5-d), separably along each axis; ``align_corners`` maps the corner
    pixels' centres onto each other (PyTorch's ``interpolate``)."""
    x = F.asarray(input)
    if mode not in _MODES or mode == "area":
        raise ValueError(f"interpolate: mode must be one of nearest, linear, bilinear, bicubic, "
                         f"trilinear, got {mode!r}")
    spatial = x.ndim - 2
    if spatial < 1 or (_MODES[mode] and _MODES[mode] != spatial):
        raise ValueError(f"interpolate: mode {mode!r} of a {x.type} input (nearest takes 3-d "
                         "to 5-d inputs, linear 3-d, bilinear and bicubic 4-d, trilinear 5-d)")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give size or scale_factor, not both")
    if align_corners and mode == "nearest":
        raise ValueError("interpolate: align_corners applies to the interpolating modes only")
    scales = (None,) * spatial if scale_factor is None else tuple(
        float(s) for s in _per_axis(scale_factor, spatial, "scale_factor"))
    sizes = _per_axis(size, spatial, "size") if size is not None else tuple(
        int(math.floor(n * s)) for n, s in zip(x.shape[2:], scales))
    if recompute_scale_factor:
        scales = (None,) * spatial
    for axis, (out_size, scale) in enumerate(zip(sizes, scales), start=2):
        x = _resample_axis(x, axis, int(out_size), scale, "bicubic" if mode == "bicubic" else
                           "nearest" if mode == "nearest" else "linear", bool(align_corners))
    return x


def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:
    """``[..., C * r * r, H, W]`` to ``[..., C, H * r, W * r]``."""
    x = F.asarray(input)
    r = int(upscale_factor)
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: {c} channels do not divide by upscale_factor**2 = "
                         f"{r * r}")
    k = len(lead)
    x = F.reshape(x, (*lead, c // (r * r), r, r, h, w))
    x = F.transpose(x, (*range(k), k, k + 3, k + 1, k + 4, k + 2))
    return F.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:
    """``[..., C, H * r, W * r]`` to ``[..., C * r * r, H, W]`` (undoes :func:`pixel_shuffle`)."""
    x = F.asarray(input)
    r = int(downscale_factor)
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: spatial size {h}x{w} does not divide by "
                         f"downscale_factor {r}")
    k = len(lead)
    x = F.reshape(x, (*lead, c, h // r, r, w // r, r))
    x = F.transpose(x, (*range(k), k, k + 2, k + 4, k + 1, k + 3))
    return F.reshape(x, (*lead, c * r * r, h // r, w // r))


def _patch_table(size: Sequence[int], kernel_size: Any, dilation: Any, padding: Any,
                 stride: Any, who: str) -> tuple[np.ndarray, tuple[int, int], tuple[int, int]]:
    """For a padded ``size`` image: the flat index of each kernel offset's pixel in each
    block (``[kh * kw, L]``), the padded size and the padding."""
    kh, kw = _per_axis(kernel_size, 2, "kernel_size")
    dh, dw = _per_axis(dilation, 2, "dilation")
    ph, pw = _per_axis(padding, 2, "padding")
    sh, sw = _per_axis(stride, 2, "stride")
    hp, wp = size[0] + 2 * ph, size[1] + 2 * pw
    blocks_h, blocks_w = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if blocks_h <= 0 or blocks_w <= 0:
        raise ValueError(f"{who}: a {kh}x{kw} kernel (dilation {dh}x{dw}) does not fit the "
                         f"padded {hp}x{wp} image")
    rows = (np.arange(kh)[:, None] * dh)[:, None, :, None] + \
        (np.arange(blocks_h) * sh)[None, None, :, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(blocks_w) * sw)[None, None,
                                                                                    None, :]
    table = (rows * wp + cols).reshape(kh * kw, blocks_h * blocks_w)
    return table, (hp, wp), (ph, pw)


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """The sliding blocks of ``[N, C, H, W]`` as columns: ``[N, C * kh * kw, L]`` (im2col,
    PyTorch's ``unfold``)."""
    x = F.asarray(input)
    if x.ndim != 4:
        raise ValueError(f"unfold: expects a [N, C, H, W] input, got {x.type}")
    n, c = x.shape[:2]
    table, (hp, wp), (ph, pw) = _patch_table(x.shape[2:], kernel_size, dilation, padding,
                                             stride, "unfold")
    padded = F.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    columns = F.take(F.reshape(padded, (n, c, hp * wp)), table.reshape(-1), axis=2)
    return F.reshape(columns, (n, c * table.shape[0], table.shape[1]))


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sum columns ``[N, C * kh * kw, L]`` back into ``[N, C, *output_size]`` (col2im, the
    adjoint of :func:`unfold`; overlapping blocks add up)."""
    x = F.asarray(input)
    size = _per_axis(output_size, 2, "output_size")
    table, (hp, wp), (ph, pw) = _patch_table(size, kernel_size, dilation, padding, stride,
                                             "fold")
    n, ck, blocks = x.shape if x.ndim == 3 else (None, None, None)
    if x.ndim != 3 or ck % table.shape[0] or blocks != table.shape[1]:
        raise ValueError(f"fold: {x.type} columns do not match {table.shape[1]} blocks of a "
                         f"{table.shape[0]}-pixel kernel")
    c = ck // table.shape[0]
    values = F.reshape(x, (n, c, table.size))
    where_to = F.broadcast_to(F.asarray(table.reshape(-1)), values.shape)
    image = F.scatter(F.zeros((n, c, hp * wp), x.dtype), 2, where_to, values, reduce="add")
    image = F.reshape(image, (n, c, hp, wp))
    return image[:, :, ph:hp - ph, pw:wp - pw]


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = False) -> Tensor:
    """Sample ``[N, C, H, W]`` at the normalised (x, y) positions of ``grid [N, Ho, Wo, 2]``
    (-1 and 1 are the edges: the corner pixels' centres with ``align_corners``, else their
    outer edges): ``"bilinear"`` or ``"nearest"``, and ``"zeros"`` or ``"border"`` outside."""
    x, g = F.asarray(input), F.asarray(grid)
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise ValueError(f"grid_sample: expects [N, C, H, W] input and [N, Ho, Wo, 2] grid, "
                         f"got {x.type} and {g.type}")
    if mode not in ("bilinear", "nearest") or padding_mode not in ("zeros", "border"):
        raise ValueError(f"grid_sample: mode bilinear or nearest and padding_mode zeros or "
                         f"border are supported, got {mode!r}, {padding_mode!r}")
    n, c, h, w = x.shape
    _, ho, wo, _ = g.shape
    g = F.astype(g, x.dtype)
    ix, iy = (_unnormalise(F.take(g, i, axis=-1), size, align_corners, padding_mode)
              for i, size in ((0, w), (1, h)))
    flat = F.reshape(x, (n, c, h * w))
    if mode == "nearest":
        corners = [(F.round(iy), F.round(ix), None)]
    else:
        x0, y0 = F.floor(ix), F.floor(iy)
        fx, fy = F.subtract(ix, x0), F.subtract(iy, y0)
        corners = [(y, xx, F.multiply(wy, wx))
                   for y, wy in ((y0, F.subtract(1.0, fy)), (F.add(y0, 1.0), fy))
                   for xx, wx in ((x0, F.subtract(1.0, fx)), (F.add(x0, 1.0), fx))]
    total: Optional[Tensor] = None
    for y, xx, weight in corners:
        inside = F.logical_and(F.logical_and(F.greater_equal(xx, 0), F.less_equal(xx, w - 1)),
                               F.logical_and(F.greater_equal(y, 0), F.less_equal(y, h - 1)))
        index = F.astype(F.add(F.multiply(F.clip(y, 0, h - 1), w), F.clip(xx, 0, w - 1)),
                         "int64")
        index = F.broadcast_to(F.reshape(index, (n, 1, ho * wo)), (n, c, ho * wo))
        scale = F.astype(inside, x.dtype) if weight is None else \
            F.where(inside, weight, F.zeros_like(weight))
        term = F.multiply(F.take_along_axis(flat, index, axis=2),
                          F.reshape(scale, (n, 1, ho * wo)))
        total = term if total is None else F.add(total, term)
    assert total is not None
    return F.reshape(total, (n, c, ho, wo))


def _unnormalise(coord: Tensor, size: int, align_corners: bool, padding_mode: str) -> Tensor:
    """Grid coordinates in [-1, 1] as pixel coordinates (clamped for ``"border"``)."""
    if align_corners:
        pixel = F.multiply(F.add(coord, 1.0), (size - 1) / 2)
    else:
        pixel = F.divide(F.subtract(F.multiply(F.add(coord, 1.0), size), 1.0), 2.0)
    return F.clip(pixel, 0, size - 1) if padding_mode == "border" else pixel


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``x / max(norm_p(x along dim), eps)``."""
    x = F.asarray(input)
    length = F.norm(x, p, dim, keepdims=True)
    return F.divide(x, F.maximum(length, eps))


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast), each norm
    clamped below at ``eps``."""
    a, b = F.asarray(x1), F.asarray(x2)
    dot = F.sum(F.multiply(a, b), dim)
    lengths = F.multiply(F.maximum(F.norm(a, 2, dim), eps), F.maximum(F.norm(b, 2, dim), eps))
    return F.divide(dot, lengths)


def cdist(x1: Any, x2: Any, p: float = 2.0) -> Tensor:
    """The ``p``-norm distance of every row of ``x1 [..., P, M]`` to every row of
    ``x2 [..., R, M]``: ``[..., P, R]``."""
    a, b = F.asarray(x1), F.asarray(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"cdist: expects [..., P, M] and [..., R, M] inputs, got {a.type} and "
                         f"{b.type}")
    return F.norm(F.subtract(F.expand_dims(a, -2), F.expand_dims(b, -3)), p, -1)

