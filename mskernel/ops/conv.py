"""Convolution and pooling ops over channels-first tensors ``[N, C, *spatial]`` with 1, 2 or 3
spatial dims (decided by the input's rank).

- ``conv`` — cross-correlation (what deep-learning frameworks call convolution) of
  ``x [N, C_in, *spatial]`` with ``w [C_out, C_in/groups, *kernel]``; no bias (bias-add is a
  separate op that backends fuse).
- ``conv_transpose`` — the adjoint of ``conv`` with respect to its input, as PyTorch's
  ``conv_transpose{1,2,3}d``: ``w`` is ``[C_in, C_out/groups, *kernel]``.
- ``max_pool``, ``avg_pool`` — PyTorch's pooling, ``ceil_mode`` and ``count_include_pad``
  included.
- ``adaptive_avg_pool``, ``adaptive_max_pool`` — window ``i`` of ``out`` over a dim of size
  ``L`` is ``[floor(i*L/out), ceil((i+1)*L/out))``.

``padding`` is explicit and may be asymmetric: a ``(lo, hi)`` pair per spatial dim, flattened
as ``(lo0, hi0, lo1, hi1, ...)`` (the frontend turns ``"same"``/``"valid"`` into numbers).
``stride``, ``dilation`` and ``output_padding`` have one entry per spatial dim; ``None`` means
all ones (all zeros for ``output_padding``; the kernel for a pooling stride).  A pooling
window lying wholly in padding gives ``-inf`` (max; the lowest value for integers) or 0 (avg).

The references are vectorised NumPy: windows are strided views (:mod:`.windows`), convolution
is one batched matmul per call with groups as the batch dim, and float16 is computed in
float32.
"""

from __future__ import annotations

import math
from types import EllipsisType
from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import InferError
from ..ir.types import Shape, TensorType
from .windows import Window, pad, per_dim, spatial_rank
from .registry import Attr, OpDef
from .rules import FLOAT, require_kind, same_dtype, tensor, widened

Ints = Optional[Sequence[int]]

# ---------------------------------------------------------------------------------------------
# conv
# ---------------------------------------------------------------------------------------------


def _spatial_rank_of_operands(x: TensorType, w: TensorType, groups: int, layout: str) -> int:
    """Check what ``conv`` and ``conv_transpose`` share; return the number of spatial dims."""
    tensor(x, "x")
    tensor(w, "w")
    n = spatial_rank(x, "[N, C_in, *spatial]")
    if w.rank != x.rank:
        raise InferError(f"w must have rank {x.rank} ({layout}) to match x, got {w}")
    same_dtype([x, w])
    require_kind(x, FLOAT)
    if groups < 1:
        raise InferError(f"groups must be positive, got {groups}")
    if x.shape[1] % groups:
        raise InferError(f"x's C_in={x.shape[1]} channels are not divisible by groups={groups}")
    return n


def _conv_window(n: int, w_shape: Shape, stride: Ints, padding: Ints, dilation: Ints) -> Window:
    return Window.of(n, w_shape[2:], stride, padding, dilation,
                     kernel_name="kernel (the spatial dims of w)")


def _conv_infer(x: TensorType, w: TensorType, stride: Ints, padding: Ints, dilation: Ints,
                groups: int) -> TensorType:
    n = _spatial_rank_of_operands(x, w, groups, "[C_out, C_in/groups, *kernel]")
    c_in, c_out = x.shape[1], w.shape[0]
    if c_out % groups:
        raise InferError(f"w's C_out={c_out} is not divisible by groups={groups}")
    if w.shape[1] * groups != c_in:
        raise InferError(
            f"x has C_in={c_in} channels but w (shape {list(w.shape)}) takes {w.shape[1]} per "
            f"group with groups={groups}, i.e. {w.shape[1] * groups}"
        )
    window = _conv_window(n, w.shape, stride, padding, dilation)
    return x.with_shape((x.shape[0], c_out) + window.output_shape(x.shape[2:]))


def _correlate(x: np.ndarray, w: np.ndarray, window: Window, groups: int) -> np.ndarray:
    """Grouped cross-correlation of ``x [N, C_in, *S]`` with ``w [C_out, C_in/groups, *k]``:
    im2col of each group, then one matmul batched over groups."""
    n = x.ndim - 2
    cols = window.windows(x, 0)  # [N, C_in, *out, *k]
    batch, c_in = x.shape[:2]
    c_out, kernel = w.shape[0], w.shape[2:]
    out = cols.shape[2:2 + n]
    per_in, per_out = c_in // groups, c_out // groups
    cols = cols.reshape((batch, groups, per_in) + out + kernel)
    # [N, G, C/G, *out, *k] -> [G, N, *out, C/G, *k] -> [G, positions, taps]
    cols = cols.transpose((1, 0, *range(3, 3 + n), 2, *range(3 + n, 3 + 2 * n)))
    taps = per_in * math.prod(kernel)
    cols = cols.reshape(groups, batch * math.prod(out), taps)
    y = np.matmul(cols, w.reshape(groups, per_out, taps).transpose(0, 2, 1))
    y = y.reshape((groups, batch) + out + (per_out,))
    y = y.transpose((1, 0, n + 2, *range(2, 2 + n)))  # [N, G, C_out/G, *out]
    return y.reshape((batch, c_out) + out)


def _conv(x: np.ndarray, w: np.ndarray, stride: Ints, padding: Ints, dilation: Ints,
          groups: int) -> np.ndarray:
    window = _conv_window(x.ndim - 2, w.shape, stride, padding, dilation)
    return _correlate(widened(x), widened(w), window, groups).astype(x.dtype)


# ---------------------------------------------------------------------------------------------
# conv_transpose
# ---------------------------------------------------------------------------------------------


def _transpose_geometry(n: int, w_shape: Shape, stride: Ints, padding: Ints,
                        output_padding: Ints, dilation: Ints) -> tuple[Window, tuple[int, ...]]:
    window = _conv_window(n, w_shape, stride, padding, dilation)
    extra = per_dim("output_padding", output_padding, n, 0, minimum=0)
    if any(o >= max(s, d) for o, s, d in zip(extra, window.stride, window.dilation)):
        raise InferError(
            f"output_padding must be smaller than stride or dilation in each spatial dim, got "
            f"output_padding {list(extra)} with stride {list(window.stride)} and dilation "
            f"{list(window.dilation)}"
        )
    return window, extra


def _conv_transpose_infer(x: TensorType, w: TensorType, stride: Ints, padding: Ints,
                          output_padding: Ints, dilation: Ints, groups: int) -> TensorType:
    n = _spatial_rank_of_operands(x, w, groups, "[C_in, C_out/groups, *kernel]")
    if w.shape[0] != x.shape[1]:
        raise InferError(
            f"x has C_in={x.shape[1]} channels but w (shape {list(w.shape)}, laid out "
            f"[C_in, C_out/groups, *kernel]) has {w.shape[0]}"
        )
    window, extra = _transpose_geometry(n, w.shape, stride, padding, output_padding, dilation)
    out = []
    for axis, (size, ext, s, (lo, hi), o) in enumerate(
            zip(x.shape[2:], window.extents, window.stride, window.padding, extra)):
        full = (size - 1) * s + ext + o
        if full - lo - hi < 1:
            raise InferError(
                f"padding {lo} + {hi} along spatial dim {axis} removes the whole output "
                f"of size {full}"
            )
        out.append(full - lo - hi)
    return x.with_shape((x.shape[0], w.shape[1] * groups) + tuple(out))


def _conv_transpose(x: np.ndarray, w: np.ndarray, stride: Ints, padding: Ints,
                    output_padding: Ints, dilation: Ints, groups: int) -> np.ndarray:
    """A stride-1 correlation of ``x`` spread out by the stride (zeros in between) with the
    flipped, channel-transposed kernel; ``padding`` crops and ``output_padding`` extends the
    full output."""
    n = x.ndim - 2
    window, extra = _transpose_geometry(n, w.shape, stride, padding, output_padding, dilation)
    xc = widened(x)
    spread = np.zeros(x.shape[:2] + tuple((size - 1) * s + 1
                                          for size, s in zip(x.shape[2:], window.stride)),
                      xc.dtype)
    every_stride: tuple[EllipsisType | slice, ...] = (
        ..., *(slice(None, None, s) for s in window.stride))
    spread[every_stride] = xc
    edges = [ext - 1 for ext in window.extents]
    spread = pad(spread, [(e - lo, e - hi + o)
                          for e, (lo, hi), o in zip(edges, window.padding, extra)], 0)
    forward = Window(window.kernel, (1,) * n, window.dilation, ((0, 0),) * n)
    return _correlate(spread, _forward_weight(widened(w), groups), forward,
                      groups).astype(x.dtype)


def _forward_weight(w: np.ndarray, groups: int) -> np.ndarray:
    """``conv_transpose``'s ``[C_in, C_out/G, *k]`` kernel as the ``conv`` kernel
    ``[C_out, C_in/G, *k]`` that computes it, spatially flipped."""
    c_in, per_out, kernel = w.shape[0], w.shape[1], w.shape[2:]
    per_in = c_in // groups
    w = w.reshape((groups, per_in, per_out) + kernel).swapaxes(1, 2)
    w = w.reshape((groups * per_out, per_in) + kernel)
    return np.flip(w, axis=tuple(range(2, w.ndim)))


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------


def _pool_window(x_rank: int, kernel: Sequence[int], stride: Ints, padding: Ints,
                 dilation: Ints, ceil_mode: bool) -> Window:
    n = x_rank - 2
    return Window.of(n, kernel, kernel if stride is None else stride, padding, dilation,
                     ceil_mode)


def _pooled_type(x: TensorType, kinds: str, words: str, kernel: Sequence[int], stride: Ints,
                 padding: Ints, dilation: Ints, ceil_mode: bool) -> TensorType:
    x = tensor(x, "x")
    spatial_rank(x)
    require_kind(x, kinds, words)
    window = _pool_window(x.rank, kernel, stride, padding, dilation, ceil_mode)
    return x.with_shape(x.shape[:2] + window.output_shape(x.shape[2:]))


def _kernel_axes(ndim: int) -> tuple[int, ...]:
    """The kernel axes of a ``[N, C, *out, *kernel]`` window view."""
    n = (ndim - 2) // 2
    return tuple(range(2 + n, 2 + 2 * n))


def _lowest(dtype: np.dtype) -> float | int:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_infer(x: TensorType, kernel: Sequence[int], stride: Ints, padding: Ints,
                    dilation: Ints, ceil_mode: bool) -> TensorType:
    return _pooled_type(x, "iuf", "a real numeric", kernel, stride, padding, dilation, ceil_mode)


def _max_pool(x: np.ndarray, kernel: Sequence[int], stride: Ints, padding: Ints,
              dilation: Ints, ceil_mode: bool) -> np.ndarray:
    window = _pool_window(x.ndim, kernel, stride, padding, dilation, ceil_mode)
    view = window.windows(x, _lowest(x.dtype))
    return view.max(axis=_kernel_axes(view.ndim))


def _avg_pool_infer(x: TensorType, kernel: Sequence[int], stride: Ints, padding: Ints,
                    ceil_mode: bool, count_include_pad: bool) -> TensorType:
    return _pooled_type(x, "f", "a floating-point", kernel, stride, padding, None, ceil_mode)


def _avg_pool(x: np.ndarray, kernel: Sequence[int], stride: Ints, padding: Ints,
              ceil_mode: bool, count_include_pad: bool) -> np.ndarray:
    window = _pool_window(x.ndim, kernel, stride, padding, None, ceil_mode)
    view = window.windows(widened(x), 0)
    sums = view.sum(axis=_kernel_axes(view.ndim))
    counts = avg_divisors(window, x.shape[2:], count_include_pad)
    return (sums / counts.astype(sums.dtype)).astype(x.dtype)


def avg_divisors(window: Window, spatial: Shape, count_include_pad: bool) -> np.ndarray:
    """PyTorch's divisor of each window: the positions it covers inside the padded input
    (``count_include_pad``) or inside the input; never below 1."""
    counts = np.ones((), np.int64)
    for size, out, k, s, (lo, hi) in zip(spatial, window.output_shape(spatial), window.kernel,
                                         window.stride, window.padding):
        start = np.arange(out) * s - lo
        end = np.minimum(start + k, size + hi)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        counts = np.multiply.outer(counts, np.maximum(end - start, 1))
    return counts


# ---------------------------------------------------------------------------------------------
# adaptive pooling
# ---------------------------------------------------------------------------------------------


def _adaptive_infer(kinds: str, words: str) -> Callable[..., TensorType]:
    def infer(x: TensorType, output_size: Sequence[int]) -> TensorType:
        x = tensor(x, "x")
        n = spatial_rank(x)
        require_kind(x, kinds, words)
        return x.with_shape(x.shape[:2] + per_dim("output_size", output_size, n, 1, minimum=1))
    return infer


def _adaptive_pool(x: np.ndarray, output_size: Sequence[int],
                   reduce: Callable[[np.ndarray, int, np.ndarray, np.ndarray], np.ndarray]
                   ) -> np.ndarray:
    """Pool one spatial dim after another (max and mean over a box are separable).

    ``reduce(taken, axis, valid, counts)`` reduces ``axis`` of ``taken``, the gathered windows
    ``[..., out, width, ...]``, whose positions past a window's end repeat its last element
    and are marked False in ``valid``; ``counts`` are the window sizes.
    """
    for axis, out in enumerate(output_size, start=2):
        size = x.shape[axis]
        i = np.arange(out)
        start, end = i * size // out, -(-(i + 1) * size // out)
        offsets = start[:, None] + np.arange(int((end - start).max()))
        index = np.minimum(offsets, end[:, None] - 1)
        trailing = (1,) * (x.ndim - axis - 1)
        valid = (offsets < end[:, None]).reshape(index.shape + trailing)
        counts = (end - start).reshape((out,) + trailing)
        x = reduce(np.take(x, index, axis=axis), axis + 1, valid, counts)
    return x


def _adaptive_avg_pool(x: np.ndarray, output_size: Sequence[int]) -> np.ndarray:
    def mean(taken: np.ndarray, axis: int, valid: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return np.where(valid, taken, 0).sum(axis=axis) / counts.astype(taken.dtype)
    return _adaptive_pool(widened(x), output_size, mean).astype(x.dtype)


def _adaptive_max_pool(x: np.ndarray, output_size: Sequence[int]) -> np.ndarray:
    def largest(taken: np.ndarray, axis: int, valid: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return taken.max(axis=axis)
    return _adaptive_pool(x, output_size, largest)


# ---------------------------------------------------------------------------------------------
# definitions
# ---------------------------------------------------------------------------------------------

_STRIDE = Attr("stride", "ints?", None)
_PADDING = Attr("padding", "ints?", None)
_DILATION = Attr("dilation", "ints?", None)
_GROUPS = Attr("groups", "int", 1)
_CEIL_MODE = Attr("ceil_mode", "bool", False)

OPS: list[OpDef] = [
    OpDef("conv", ("x", "w"), _conv_infer, _conv,
          attrs=(_STRIDE, _PADDING, _DILATION, _GROUPS),
          doc="cross-correlation of x [N, C_in, *S] with w [C_out, C_in/groups, *k] "
              "(torch.nn.functional.conv{1,2,3}d without bias, padding as (lo, hi) pairs)"),
    OpDef("conv_transpose", ("x", "w"), _conv_transpose_infer, _conv_transpose,
          attrs=(_STRIDE, _PADDING, Attr("output_padding", "ints?", None), _DILATION, _GROUPS),
          doc="transposed convolution of x [N, C_in, *S] with w [C_in, C_out/groups, *k] "
              "(torch.nn.functional.conv_transpose{1,2,3}d without bias); padding (lo, hi) "
              "removes positions from each side of the full output"),
    OpDef("max_pool", ("x",), _max_pool_infer, _max_pool,
          attrs=(Attr("kernel", "ints"), _STRIDE, _PADDING, _DILATION, _CEIL_MODE),
          doc="max over each window (torch.nn.functional.max_pool{1,2,3}d); padding is -inf"),
    OpDef("avg_pool", ("x",), _avg_pool_infer, _avg_pool,
          attrs=(Attr("kernel", "ints"), _STRIDE, _PADDING, _CEIL_MODE,
                 Attr("count_include_pad", "bool", True)),
          doc="mean over each window (torch.nn.functional.avg_pool{1,2,3}d); padding counts "
              "in the divisor when count_include_pad"),
    OpDef("adaptive_avg_pool", ("x",), _adaptive_infer("f", "a floating-point"),
          _adaptive_avg_pool, attrs=(Attr("output_size", "ints"),),
          doc="mean over output_size windows covering each spatial dim "
              "(torch.nn.functional.adaptive_avg_pool{1,2,3}d)"),
    OpDef("adaptive_max_pool", ("x",), _adaptive_infer("iuf", "a real numeric"),
          _adaptive_max_pool, attrs=(Attr("output_size", "ints"),),
          doc="max over output_size windows covering each spatial dim "
              "(torch.nn.functional.adaptive_max_pool{1,2,3}d, values only)"),
]
