"""Convolution and pooling ops over channels-first tensors ``[N, C, *spatial]`` with 1, 2 or 3
spatial dims (decided by the input's rank).

- ``conv`` — cross-correlation (what deep-learning frameworks call convolution) of
  ``x [N, C_in, *spatial]`` with ``w [C_out, C_in/groups, *kernel]``; no bias (bias-add is a
  separate op that backends fuse).
- ``conv_transpose`` — the adjoint of ``conv`` with respect to its input, as PyTorch's
  ``conv_transpose{1,2,3}d``: ``w`` is ``[C_in, C_out/groups, *kernel]``.
- ``max_pool``, ``avg_pool`` — PyTorch's pooling, ``ceil_mode`` and ``count_include_pad``
  included.
- ``max_pool_grad`` — ``max_pool``'s input gradient: each window's cotangent ``g`` added at
  the window's first maximum of ``x`` in row-major window order (PyTorch's tie rule; a NaN
  counts as the maximum; a window whose maximum is in the padding passes nothing).
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

``conv`` and ``conv_transpose`` are primitives; the pools are composites (see
:mod:`.primitives`): one strided ``slice`` of the padded input per kernel position, combined by
``maximum`` or by ``add`` and a division by the window sizes, and for the adaptive pools one
``mean``/``max`` per window (a ``reshape`` when the windows are of one size);
``max_pool_grad`` gathers the windows through a static table of their positions, takes their
``argmax`` and ``scatter``-adds the cotangent there.
"""

from __future__ import annotations

import functools
import itertools
import math
from types import EllipsisType
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from ..errors import InferError
from ..ir.dtypes import int64
from ..ir.graph import Value
from ..ir.types import Shape, TensorType
from .compose import in_working_precision, tensor_type
from .windows import Window, pad, per_dim, spatial_rank
from .registry import Attr, DecomposeFn, Emitter, OpDef
from .rules import FLOAT, require_kind, same_dtype, tensor, widened
from .samples import FLOATS, OpSample, SampleFn, random_array

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
    return x.with_shape((x.shape[0], w.shape[1] * groups) +
                        _transposed_spatial(x.shape[2:], window, extra))


def _transposed_spatial(spatial: Shape, window: Window, extra: tuple[int, ...]) -> Shape:
    """The spatial dims of ``conv_transpose``'s output: the full output, ``(size - 1) *
    stride + extent + output_padding``, cropped by the padding (to 0 when it crops it all, an
    empty result as PyTorch gives)."""
    out = []
    for axis, (size, ext, s, (lo, hi), o) in enumerate(
            zip(spatial, window.extents, window.stride, window.padding, extra)):
        full = (size - 1) * s + ext + o
        if full - lo - hi < 0:
            raise InferError(
                f"padding {lo} + {hi} along spatial dim {axis} crops more than the whole "
                f"output of size {full}"
            )
        out.append(full - lo - hi)
    return tuple(out)


def _conv_transpose(x: np.ndarray, w: np.ndarray, stride: Ints, padding: Ints,
                    output_padding: Ints, dilation: Ints, groups: int) -> np.ndarray:
    """A stride-1 correlation of ``x`` spread out by the stride (zeros in between) with the
    flipped, channel-transposed kernel; ``padding`` crops and ``output_padding`` extends the
    full output."""
    n = x.ndim - 2
    window, extra = _transpose_geometry(n, w.shape, stride, padding, output_padding, dilation)
    spatial = _transposed_spatial(x.shape[2:], window, extra)
    if 0 in spatial:
        return np.zeros((x.shape[0], w.shape[1] * groups) + spatial, x.dtype)
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


def _max_pool_grad_infer(x: TensorType, g: TensorType, kernel: Sequence[int], stride: Ints,
                         padding: Ints, dilation: Ints, ceil_mode: bool) -> TensorType:
    pooled = _pooled_type(x, "f", "a floating-point", kernel, stride, padding, dilation,
                          ceil_mode)
    same_dtype([x, tensor(g, "g")])
    if g.shape != pooled.shape:
        raise InferError(f"g must have max_pool's output shape {list(pooled.shape)}, "
                         f"got {list(g.shape)}")
    return x


def _max_pool_grad(x: np.ndarray, g: np.ndarray, kernel: Sequence[int], stride: Ints,
                   padding: Ints, dilation: Ints, ceil_mode: bool) -> np.ndarray:
    window = _pool_window(x.ndim, kernel, stride, padding, dilation, ceil_mode)
    pads, table = window.covering_pads(x.shape[2:]), window.positions(x.shape[2:])
    padded = pad(x, pads, -np.inf)
    rows = math.prod(x.shape[:2])
    flat = padded.reshape(rows, math.prod(padded.shape[2:]))
    first_max = table[np.arange(len(table)), np.argmax(flat[:, table], axis=2)]
    summed = np.zeros(flat.shape, widened(g).dtype)
    np.add.at(summed, (np.arange(rows)[:, None], first_max), g.reshape(rows, len(table)))
    grad = summed.reshape(padded.shape)
    return pad(grad, [(-lo, -hi) for lo, hi in pads], 0).astype(x.dtype)


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
# decompositions of the pools (see OpDef.decomposition)
# ---------------------------------------------------------------------------------------------


def _flat(pads: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """``(lo, hi)`` pairs as the ``pad`` op's flat attribute."""
    return tuple(v for pair in pads for v in pair)


def _taps(b: Emitter, x: Value, window: Window, fill: float) -> list[Value]:
    """The windows of ``x`` padded with ``fill``, one kernel position at a time: tap ``t`` is
    ``[N, C, *out]`` holding padded ``x[n, c, *(o*stride + t*dilation)]`` (what
    :meth:`~.windows.Window.windows` gives at kernel position ``t``)."""
    t = tensor_type(x)
    spatial = t.shape[2:]
    out = window.output_shape(spatial)
    pads = (0, 0, 0, 0) + _flat(window.covering_pads(spatial))
    padded = b.op("pad", x, pads=pads, value=fill) if any(pads) else x
    axes = tuple(range(2, t.rank))
    taps = []
    for position in itertools.product(*(range(k) for k in window.kernel)):
        starts = tuple(p * d for p, d in zip(position, window.dilation))
        stops = tuple(st + (o - 1) * s + 1 for st, o, s in zip(starts, out, window.stride))
        taps.append(b.op("slice", padded, starts=starts, stops=stops, steps=window.stride,
                         axes=axes))
    return taps


def _combined(b: Emitter, op: str, values: list[Value]) -> Value:
    return functools.reduce(lambda acc, v: b.op(op, acc, v), values)


def _decompose_max_pool(b: Emitter, x: Value, kernel: Sequence[int], stride: Ints,
                        padding: Ints, dilation: Ints, ceil_mode: bool) -> Value:
    window = _pool_window(tensor_type(x).rank, kernel, stride, padding, dilation, ceil_mode)
    lowest = _lowest(tensor_type(x).dtype.storage)
    return _combined(b, "maximum", _taps(b, x, window, float(lowest)))


def _decompose_max_pool_grad(b: Emitter, x: Value, g: Value, kernel: Sequence[int],
                             stride: Ints, padding: Ints, dilation: Ints,
                             ceil_mode: bool) -> Value:
    t = tensor_type(x)
    window = _pool_window(t.rank, kernel, stride, padding, dilation, ceil_mode)
    pads, table = window.covering_pads(t.shape[2:]), window.positions(t.shape[2:])
    flat_pads = (0, 0, 0, 0) + _flat(pads)
    padded = b.op("pad", x, pads=flat_pads, value=-math.inf) if any(flat_pads) else x
    lead, size = t.shape[:2], math.prod(tensor_type(padded).shape[2:])
    positions = b.op("constant", value=table, dtype=int64)
    windows = b.op("gather", b.op("reshape", padded, shape=lead + (size,)), positions, axis=2)
    every = b.op("broadcast_to", b.op("reshape", positions, shape=(1, 1) + table.shape),
                 shape=lead + table.shape)
    first_max = b.op("take_along_axis", every, b.op("argmax", windows, axis=3, keepdims=True),
                     axis=3)
    zeros = b.op("broadcast_to", b.op("constant", value=np.zeros((), t.dtype.storage),
                                      dtype=t.dtype), shape=lead + (size,))
    summed = b.op("scatter", zeros, b.op("reshape", first_max, shape=lead + (len(table),)),
                  b.op("reshape", g, shape=lead + (len(table),)), axis=2, reduce="add")
    grad = b.op("reshape", summed, shape=tensor_type(padded).shape)
    return b.op("pad", grad, pads=tuple(-v for v in flat_pads)) if any(flat_pads) else grad


def _decompose_avg_pool(b: Emitter, x: Value, kernel: Sequence[int], stride: Ints,
                        padding: Ints, ceil_mode: bool, count_include_pad: bool) -> Value:
    t = tensor_type(x)
    window = _pool_window(t.rank, kernel, stride, padding, None, ceil_mode)
    sums = _combined(b, "add", _taps(b, x, window, 0.0))
    counts = avg_divisors(window, t.shape[2:], count_include_pad)
    divisor = counts.reshape((1, 1) + counts.shape).astype(t.dtype.storage)
    return b.op("div", sums, b.op("constant", value=divisor, dtype=t.dtype))


def _adaptive(reduce: str) -> DecomposeFn:
    """An adaptive pool reducing each window with ``reduce`` (``mean`` or ``max``), one
    spatial dim after another, as the reference does: windows of equal size are a reshape,
    others one slice each."""

    def decomposition(b: Emitter, x: Value, output_size: Sequence[int]) -> Value:
        for axis, out in enumerate(output_size, start=2):
            shape = tensor_type(x).shape
            size = shape[axis]
            if size % out == 0:
                grouped = b.op("reshape", x,
                               shape=shape[:axis] + (out, size // out) + shape[axis + 1:])
                x = b.op(reduce, grouped, axes=(axis + 1,))
                continue
            pieces = []
            for i in range(out):
                start, end = i * size // out, -(-(i + 1) * size // out)
                piece = b.op("slice", x, starts=(start,), stops=(end,), axes=(axis,))
                pieces.append(b.op(reduce, piece, axes=(axis,), keepdims=True))
            x = b.op("concat", *pieces, axis=axis)
        return x

    return decomposition


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
          doc="max over each window (torch.nn.functional.max_pool{1,2,3}d); padding is -inf",
          decomposition=_decompose_max_pool),
    OpDef("max_pool_grad", ("x", "g"), _max_pool_grad_infer, _max_pool_grad,
          attrs=(Attr("kernel", "ints"), _STRIDE, _PADDING, _DILATION, _CEIL_MODE),
          doc="max_pool's input gradient: each window's g added at the first maximum of x in "
              "the window (row-major; NaN counts as the maximum)",
          decomposition=in_working_precision(_decompose_max_pool_grad)),
    OpDef("avg_pool", ("x",), _avg_pool_infer, _avg_pool,
          attrs=(Attr("kernel", "ints"), _STRIDE, _PADDING, _CEIL_MODE,
                 Attr("count_include_pad", "bool", True)),
          doc="mean over each window (torch.nn.functional.avg_pool{1,2,3}d); padding counts "
              "in the divisor when count_include_pad",
          decomposition=in_working_precision(_decompose_avg_pool)),
    OpDef("adaptive_avg_pool", ("x",), _adaptive_infer("f", "a floating-point"),
          _adaptive_avg_pool, attrs=(Attr("output_size", "ints"),),
          doc="mean over output_size windows covering each spatial dim "
              "(torch.nn.functional.adaptive_avg_pool{1,2,3}d)",
          decomposition=in_working_precision(_adaptive("mean"))),
    OpDef("adaptive_max_pool", ("x",), _adaptive_infer("iuf", "a real numeric"),
          _adaptive_max_pool, attrs=(Attr("output_size", "ints"),),
          doc="max over output_size windows covering each spatial dim "
              "(torch.nn.functional.adaptive_max_pool{1,2,3}d, values only)",
          decomposition=_adaptive("max")),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the convolution and pooling ops: 1-, 2- and 3-D, strides, asymmetric padding,
# dilation, groups (depthwise too), ``ceil_mode``, ``count_include_pad``, size-1 spatial dims and
# empty batches, on every float dtype (and the integer dtypes the max ops accept).


def _sample(op: str, rng: np.random.Generator, shapes: tuple[tuple[int, ...], ...], dt: str,
            attrs: Mapping[str, Any], label: str) -> OpSample:
    """``op`` applied to random operands of ``shapes`` and dtype ``dt``."""
    args = tuple(random_array(rng, shape, dt) for shape in shapes)
    return OpSample(op, args, dict(attrs), dtypes=(dt,) * len(args), label=label)


# (label, x shape, w shape, attrs); the first two run on every float dtype.
_CONV_CASES: tuple[tuple[str, Shape, Shape, dict[str, Any]], ...] = (
    ("1d-stride-asym-pad", (2, 4, 9), (6, 4, 3), {"stride": (2,), "padding": (1, 2)}),
    ("2d-groups-dilation", (2, 4, 6, 5), (6, 2, 3, 2),
     {"stride": (1, 2), "padding": (0, 1, 2, 0), "dilation": (2, 1), "groups": 2}),
    ("2d-depthwise", (1, 3, 5, 5), (3, 1, 3, 3), {"padding": (1, 1, 1, 1), "groups": 3}),
    ("3d", (1, 2, 4, 5, 3), (3, 2, 2, 3, 1), {"stride": (1, 2, 1), "padding": (0, 0, 1, 0, 0, 2)}),
    ("size-1-spatial", (2, 3, 1, 1), (4, 3, 1, 1), {}),
    ("batch-0", (0, 3, 5), (2, 3, 2), {"dilation": (2,)}),
    ("defaults", (1, 2, 4, 4), (2, 2, 2, 2), {}),
)

_CONV_TRANSPOSE_CASES: tuple[tuple[str, Shape, Shape, dict[str, Any]], ...] = (
    ("1d-stride-output-padding", (2, 4, 5), (4, 3, 3),
     {"stride": (2,), "padding": (1, 0), "output_padding": (1,)}),
    ("2d-groups-dilation", (1, 4, 3, 4), (4, 2, 2, 3),
     {"stride": (2, 1), "padding": (0, 1, 2, 1), "dilation": (1, 2), "groups": 2,
      "output_padding": (1, 1)}),
    ("2d-depthwise", (2, 3, 4, 4), (3, 1, 3, 3), {"stride": (2, 2), "groups": 3}),
    ("3d", (1, 2, 2, 3, 2), (2, 3, 2, 2, 3), {"stride": (1, 2, 2), "padding": (0, 1, 1, 0, 1, 1)}),
    ("size-1-spatial", (2, 3, 1, 1), (3, 2, 1, 1), {}),
    ("batch-0", (0, 2, 4), (2, 2, 3), {"stride": (3,)}),
    ("padding-crops-all", (2, 2, 2, 2), (2, 1, 3, 3), {"padding": (2, 2, 2, 2)}),
)

# (label, x shape, attrs); the first two run on every float dtype.
_MAX_POOL_CASES: tuple[tuple[str, Shape, dict[str, Any]], ...] = (
    ("1d-ceil", (2, 3, 8), {"kernel": (3,), "stride": (2,), "padding": (1, 1), "ceil_mode": True}),
    ("2d-dilation-asym-pad", (1, 2, 6, 7),
     {"kernel": (2, 3), "stride": (2, 1), "padding": (0, 1, 1, 0), "dilation": (2, 1)}),
    ("2d-floor", (1, 2, 5, 5), {"kernel": (2, 2), "padding": (1, 1, 1, 1)}),
    ("2d-ceil", (1, 2, 5, 5), {"kernel": (2, 2), "padding": (1, 1, 1, 1), "ceil_mode": True}),
    ("3d", (1, 2, 4, 5, 3), {"kernel": (2, 3, 1), "stride": (2, 1, 1), "ceil_mode": True}),
    ("size-1-spatial", (2, 3, 1, 1), {"kernel": (1, 1)}),
    ("batch-0", (0, 3, 4), {"kernel": (2,)}),
)

_AVG_POOL_CASES = tuple(
    (f"{label}-{'with' if include else 'without'}-pad-count", shape,
     {**attrs, "count_include_pad": include})
    for label, shape, attrs in (
        ("1d-ceil", (2, 3, 8),
         {"kernel": (3,), "stride": (2,), "padding": (1, 1), "ceil_mode": True}),
        ("2d-asym-pad", (1, 2, 6, 7),
         {"kernel": (3, 2), "stride": (2, 2), "padding": (1, 0, 0, 1)}),
        ("3d-ceil", (1, 2, 5, 4, 3),
         {"kernel": (2, 2, 2), "padding": (1, 1, 0, 1, 1, 0), "ceil_mode": True}),
    )
    for include in (True, False)
) + (
    ("2d-floor", (1, 2, 5, 5), {"kernel": (2, 2), "stride": (2, 1)}),
    ("size-1-spatial", (2, 3, 1, 1), {"kernel": (1, 1)}),
    ("batch-0", (0, 3, 4), {"kernel": (2,)}),
)

_ADAPTIVE_CASES = (
    ("1d", (2, 3, 7), {"output_size": (3,)}),
    ("2d-overlapping", (1, 2, 5, 9), {"output_size": (3, 4)}),
    ("3d-growing", (1, 2, 3, 4, 2), {"output_size": (5, 2, 3)}),
    ("2d-identity", (1, 2, 3, 3), {"output_size": (3, 3)}),
    ("size-1", (2, 3, 1, 1), {"output_size": (1, 1)}),
    ("batch-0", (0, 3, 4), {"output_size": (2,)}),
)


def _max_pool_grad_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    """max_pool's cases with a cotangent of its output's shape; in float32 also with ties
    (a few distinct values: the first maximum must win) and NaNs."""
    for i, (label, shape, attrs) in enumerate(_MAX_POOL_CASES):
        for dt in FLOATS if i < 2 else FLOATS[:2]:
            x = random_array(rng, shape, dt)
            variants = [(label, x)]
            if dt == "float32" and x.size:
                ties = rng.integers(0, 3, shape).astype(np.float32)
                nans = np.where(rng.random(shape) < 0.2, np.float32(np.nan), x)
                variants += [(f"{label}-ties", ties), (f"{label}-nan", nans)]
            for name, value in variants:
                g = random_array(rng, _max_pool(value, **_pool_attrs(attrs)).shape, dt)
                yield OpSample("max_pool_grad", (value, g), dict(attrs), dtypes=(dt, dt),
                               label=name)


def _pool_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A max pool's attributes with the defaults filled in."""
    defaults = {"stride": None, "padding": None, "dilation": None, "ceil_mode": False}
    return defaults | dict(attrs)


def _window_samples(op: str, cases: tuple, extra_dtypes: tuple[str, ...] = ()) -> SampleFn:
    """Every case in float32 and float64; the first two also in the half types and in
    ``extra_dtypes``."""
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for i, (label, *shapes, attrs) in enumerate(cases):
            dtypes = FLOATS + extra_dtypes if i < 2 else FLOATS[:2]
            for dt in dtypes:
                yield _sample(op, rng, tuple(shapes), dt, attrs, label)
    return fn


SAMPLES: dict[str, SampleFn] = {
    "conv": _window_samples("conv", _CONV_CASES),
    "conv_transpose": _window_samples("conv_transpose", _CONV_TRANSPOSE_CASES),
    "max_pool": _window_samples("max_pool", _MAX_POOL_CASES, ("int32", "uint8")),
    "max_pool_grad": _max_pool_grad_samples,
    "avg_pool": _window_samples("avg_pool", _AVG_POOL_CASES),
    "adaptive_avg_pool": _window_samples("adaptive_avg_pool", _ADAPTIVE_CASES),
    "adaptive_max_pool": _window_samples("adaptive_max_pool", _ADAPTIVE_CASES, ("int32", "uint8")),
}
