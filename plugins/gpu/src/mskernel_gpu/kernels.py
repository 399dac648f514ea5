"""The gpu backend's kernels: one library call (or a short composition of them) per core op.

A kernel is ``fn(lib, *arrays, **attrs)``: ``lib`` is the :class:`ArrayLib` to compute
with — CuPy on the device (its ufuncs and reductions are CUDA kernels, ``matmul`` is cuBLAS,
``fft`` is cuFFT, ``argsort`` Thrust's stable sort), NumPy in the CPU-side tests, where the
same code is checked against the reference semantics without a device.  Arrays are in
device storage (:mod:`.storage`: bfloat16 as its 16-bit patterns), C-contiguous; kernels
return fresh arrays (or views of their inputs for reshapes) and never write their inputs.

Convolutions go to cuDNN through its frontend (:mod:`.cudnn`) when it is installed and a
device is present, else to im2col + cuBLAS GEMM here.  Max and average pooling reduce the
strided slices of the padded input, one per kernel offset, into one output buffer.  Generated CUDA C (NVRTC) computes the
fused elementwise/reduction groups of the fusion pass (:mod:`.codegen`).

:data:`FALLBACK` lists the core ops with no kernel here, each with the reason; they run on the
next backend (``mskernel plugins info gpu`` shows them, and ``fallback="warn"`` warns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from mskernel_sdk import Window, avg_divisors, normalize_axes

from .gemm import MATMUL_BIAS_ACT, kernel as matmul_bias_act, widened
from .wgrad import CONV_WGRAD, kernel as conv_wgrad

Kernel = Callable[..., Any]


@dataclass(frozen=True)
class ArrayLib:
    """The array library kernels compute with: ``np`` (CuPy or NumPy), ``special`` (the
    matching ``scipy.special``), and ``conv`` (a cuDNN convolution, or ``None`` for im2col)."""

    np: ModuleType
    special: Any
    conv: Optional[Any] = None


def host_lib() -> ArrayLib:
    """NumPy and SciPy: the kernels on the host (the CPU-side tests)."""
    import scipy.special

    return ArrayLib(np, scipy.special)


# --- elementwise -------------------------------------------------------------------------

_UNARY = {
    "neg": "negative", "abs": "absolute", "reciprocal": "reciprocal", "sqrt": "sqrt",
    "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2",
    "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin",
    "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "floor": "floor",
    "round": "rint", "bitwise_not": "invert", "conj": "conjugate",
}
_BINARY = {
    "add": "add", "mul": "multiply", "pow": "power", "maximum": "maximum",
    "minimum": "minimum", "atan2": "arctan2", "equal": "equal", "less": "less",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "left_shift": "left_shift", "right_shift": "right_shift",
}
#: computed in float64 as the reference does (scipy.special / cupyx.scipy.special names)
_SPECIAL = {"erf": "erf", "erfc": "erfc", "lgamma": "gammaln"}


def _ufunc(name: str) -> Kernel:
    """A ufunc; ``out`` (an operand's buffer the program reuses) receives the result."""
    return lambda lib, *xs, out=None: getattr(lib.np, name)(*xs, out=out)


def _special(name: str) -> Kernel:
    def kernel(lib: ArrayLib, x: Any) -> Any:
        if not x.size:
            return x.copy()
        return getattr(lib.special, name)(x.astype(np.float64)).astype(x.dtype)
    return kernel


def _part(name: str) -> Kernel:
    """``real``/``imag``: a fresh array (NumPy's are views, ``imag`` of a real array a
    read-only zero array)."""
    return lambda lib, x: lib.np.ascontiguousarray(getattr(lib.np, name)(x)).copy()


def _check_divisor(lib: ArrayLib, x: Any, y: Any, op: str) -> None:
    """Integer division by zero is an error (one device-to-host read of a flag)."""
    if x.dtype.kind in "iu" and x.size and y.size and bool(lib.np.any(y == 0)):
        raise ZeroDivisionError(f"{op}: integer division by zero")


def _div(lib: ArrayLib, x: Any, y: Any) -> Any:
    return lib.np.true_divide(x, y).astype(x.dtype)


def _floor_divide(lib: ArrayLib, x: Any, y: Any) -> Any:
    _check_divisor(lib, x, y, "floor_divide")
    return lib.np.floor_divide(x, y)


def _remainder(lib: ArrayLib, x: Any, y: Any) -> Any:
    _check_divisor(lib, x, y, "remainder")
    return lib.np.remainder(x, y)


def _relu(lib: ArrayLib, x: Any, out: Any = None) -> Any:
    return lib.np.maximum(x, x.dtype.type(0), out=out)


def _where(lib: ArrayLib, cond: Any, x: Any, y: Any) -> Any:
    return lib.np.where(cond, x, y)


# --- reductions --------------------------------------------------------------------------

def _reduction(name: str) -> Kernel:
    def kernel(lib: ArrayLib, x: Any, axes: Optional[Sequence[int]], keepdims: bool) -> Any:
        result = getattr(lib.np, name)(x, axis=normalize_axes(axes, x.ndim), keepdims=keepdims)
        return lib.np.asarray(result).astype(x.dtype, copy=False)
    return kernel


def _arg_reduction(name: str) -> Kernel:
    def kernel(lib: ArrayLib, x: Any, axis: Optional[int], keepdims: bool) -> Any:
        return lib.np.asarray(getattr(lib.np, name)(x, axis=axis, keepdims=keepdims)
                              ).astype(np.int64)
    return kernel


# --- linear algebra ----------------------------------------------------------------------

def _matmul(lib: ArrayLib, x: Any, y: Any) -> Any:
    if x.dtype == np.float16 and lib.np is not np:  # cuBLAS: fp16 storage, fp32 accumulation
        return lib.np.matmul(x, y)
    return lib.np.asarray(lib.np.matmul(widened(x), widened(y))).astype(x.dtype, copy=False)


def _einsum(lib: ArrayLib, *operands: Any, equation: str) -> Any:
    result = lib.np.einsum(equation, *(widened(x) for x in operands))
    return lib.np.asarray(result).astype(operands[0].dtype, copy=False)


# --- convolution -------------------------------------------------------------------------

@dataclass(frozen=True)
class ConvGeometry:
    """A convolution's per-spatial-dim stride, dilation and (lo, hi) padding."""

    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, n: int, stride: Optional[Sequence[int]], padding: Optional[Sequence[int]],
           dilation: Optional[Sequence[int]]) -> "ConvGeometry":
        pads = tuple(padding) if padding is not None else (0,) * (2 * n)
        return cls(tuple(stride or (1,) * n), tuple(dilation or (1,) * n),
                   tuple(zip(pads[0::2], pads[1::2])))


def im2col_conv(lib: ArrayLib, x: Any, w: Any, geometry: ConvGeometry, groups: int) -> Any:
    """Cross-correlation as one batched GEMM per group over the windows of ``x`` (gathered
    by strided slices of the padded input: one per kernel offset)."""
    xp = lib.np
    n = x.ndim - 2
    xw, ww = widened(x), widened(w)
    padded = xp.pad(xw, [(0, 0), (0, 0), *geometry.padding])
    kernel = w.shape[2:]
    out = tuple((padded.shape[2 + i] - geometry.dilation[i] * (kernel[i] - 1) - 1)
                // geometry.stride[i] + 1 for i in range(n))
    batch, channels = x.shape[:2]
    c_out = w.shape[0]
    cg, og = channels // groups, c_out // groups
    columns = []
    for offset in np.ndindex(*kernel):
        index = tuple(slice(o * d, o * d + s * (m - 1) + 1, s) for o, d, s, m in
                      zip(offset, geometry.dilation, geometry.stride, out))
        columns.append(padded[(slice(None), slice(None), *index)])
    k = math.prod(kernel)
    cols = xp.stack(columns, axis=2) if columns else xp.zeros((batch, channels, 0, *out), xw.dtype)
    # [N, G, Cg, K, O] -> [G, Cg*K, N*O]
    cols = cols.reshape(batch, groups, cg * k, math.prod(out))
    cols = xp.ascontiguousarray(cols.transpose(1, 2, 0, 3)).reshape(groups, cg * k, -1)
    weights = ww.reshape(groups, og, cg * k)
    result = xp.matmul(weights, cols).reshape(groups, og, batch, *out)
    result = xp.moveaxis(result, 2, 0).reshape(batch, c_out, *out)
    return xp.ascontiguousarray(result).astype(x.dtype, copy=False)


def _conv(lib: ArrayLib, x: Any, w: Any, stride: Any, padding: Any, dilation: Any,
          groups: int) -> Any:
    geometry = ConvGeometry.of(x.ndim - 2, stride, padding, dilation)
    if lib.conv is not None and lib.conv.supports(x.dtype):
        y = lib.conv.forward(x, w, geometry, groups)
        if y is not None:
            return y
    return im2col_conv(lib, x, w, geometry, groups)


def _conv_transpose(lib: ArrayLib, x: Any, w: Any, stride: Any, padding: Any,
                    output_padding: Any, dilation: Any, groups: int) -> Any:
    """The gradient of a convolution with respect to its input: cuDNN's backward-data, or a
    stride-1 correlation of ``x`` spread by the stride with the flipped, channel-transposed
    kernel, cropped by the padding."""
    xp = lib.np
    n = x.ndim - 2
    geometry = ConvGeometry.of(n, stride, padding, dilation)
    extra = tuple(output_padding or (0,) * n)
    kernel = w.shape[2:]
    full = [(size - 1) * s + d * (k - 1) + 1 + o for size, s, d, k, o in
            zip(x.shape[2:], geometry.stride, geometry.dilation, kernel, extra)]
    spatial = tuple(f - lo - hi for f, (lo, hi) in zip(full, geometry.padding))
    c_in, og = w.shape[0], w.shape[1]
    if 0 in spatial or 0 in x.shape[:2]:
        return xp.zeros((x.shape[0], og * groups, *spatial), x.dtype)
    if lib.conv is not None and lib.conv.supports(x.dtype):
        dx = lib.conv.backward_data(x, w, geometry, groups, spatial)
        if dx is not None:
            return dx
    spread = xp.zeros((*x.shape[:2], *((size - 1) * s + 1 for size, s in
                                        zip(x.shape[2:], geometry.stride))), x.dtype)
    spread[(slice(None), slice(None), *(slice(None, None, s) for s in geometry.stride))] = x
    flipped = w[(slice(None), slice(None), *(slice(None, None, -1),) * n)]
    flipped = flipped.reshape(groups, c_in // groups, og, *kernel).swapaxes(1, 2)
    flipped = xp.ascontiguousarray(flipped).reshape(groups * og, c_in // groups, *kernel)
    reach = [d * (k - 1) for d, k in zip(geometry.dilation, kernel)]
    pads = tuple((r - lo, r - hi + o) for r, (lo, hi), o in zip(reach, geometry.padding, extra))
    crop = tuple(slice(max(-lo, 0), spread.shape[2 + i] + (hi if hi < 0 else 0) + max(lo, 0)
                       - max(-lo, 0) + max(-lo, 0))
                 for i, (lo, hi) in enumerate(pads))
    spread = spread[(slice(None), slice(None), *crop)]
    inner = ConvGeometry((1,) * n, geometry.dilation,
                         tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads))
    return im2col_conv(lib, spread, flipped, inner, groups)


# --- pooling ---------------------------------------------------------------------------

def _windows(lib: ArrayLib, x: Any, window: Window, fill: Any) -> Iterator[Any]:
    """For each kernel offset, the ``[N, C, *out]`` elements the windows read there, from
    ``x`` padded with ``fill`` (and on the high side as far as ``ceil_mode``'s last windows
    reach)."""
    out = window.output_shape(x.shape[2:])
    pads = []
    for size, o, k, s, d, (lo, hi) in zip(x.shape[2:], out, window.kernel, window.stride,
                                          window.dilation, window.padding):
        reach = (o - 1) * s + d * (k - 1) + 1
        pads.append((lo, max(hi, reach - size - lo)))
    padded = lib.np.pad(x, [(0, 0), (0, 0), *pads], constant_values=fill)
    for offset in np.ndindex(*window.kernel):
        yield padded[(slice(None), slice(None), *(
            slice(j * d, j * d + s * (o - 1) + 1, s) for j, d, s, o in
            zip(offset, window.dilation, window.stride, out)))]


def _max_pool(lib: ArrayLib, x: Any, kernel: Sequence[int], stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool) -> Any:
    window = Window.of(x.ndim - 2, kernel, kernel if stride is None else stride, padding,
                       dilation, ceil_mode)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    parts = _windows(lib, x, window, lowest)
    result = next(parts).copy()  # a window has at least one position
    for part in parts:
        lib.np.maximum(result, part, out=result)
    return result


def _avg_pool(lib: ArrayLib, x: Any, kernel: Sequence[int], stride: Any, padding: Any,
              ceil_mode: bool, count_include_pad: bool) -> Any:
    window = Window.of(x.ndim - 2, kernel, kernel if stride is None else stride, padding,
                       None, ceil_mode)
    parts = _windows(lib, widened(x), window, 0)
    total = next(parts).copy()  # a window has at least one position
    for part in parts:
        lib.np.add(total, part, out=total)
    counts = lib.np.asarray(avg_divisors(window, x.shape[2:], count_include_pad))
    return (total / counts.astype(total.dtype)).astype(x.dtype)


# --- shapes and data movement (dtype-agnostic: bfloat16 bits move as they are) -----------

def _iota(lib: ArrayLib, shape: Sequence[int], axis: int, dtype: Any) -> Any:
    axis %= len(shape)
    line = lib.np.arange(shape[axis], dtype=dtype.storage)
    line = line.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return lib.np.ascontiguousarray(lib.np.broadcast_to(line, tuple(shape)))


def _transpose(lib: ArrayLib, x: Any, perm: Optional[Sequence[int]]) -> Any:
    perm = tuple(reversed(range(x.ndim))) if perm is None else tuple(p % x.ndim for p in perm)
    return lib.np.ascontiguousarray(lib.np.transpose(x, perm))


def _broadcast_to(lib: ArrayLib, x: Any, shape: Sequence[int]) -> Any:
    return lib.np.ascontiguousarray(lib.np.broadcast_to(x, tuple(shape)))


def _concat(lib: ArrayLib, *xs: Any, axis: int) -> Any:
    return lib.np.concatenate(xs, axis=axis)


def _slice(lib: ArrayLib, x: Any, starts: Sequence[int], stops: Sequence[int],
           steps: Optional[Sequence[int]], axes: Optional[Sequence[int]]) -> Any:
    rank = x.ndim
    axes = tuple(range(rank)) if axes is None else tuple(a % rank for a in axes)
    steps = (1,) * len(axes) if steps is None else tuple(steps)
    index = [slice(None)] * rank
    for axis, start, stop, step in zip(axes, starts, stops, steps):
        index[axis] = slice(start, stop, step)
    return lib.np.ascontiguousarray(x[tuple(index)])


def _pad(lib: ArrayLib, x: Any, pads: Sequence[int], mode: str, value: float) -> Any:
    widths = list(zip(pads[0::2], pads[1::2]))
    cropped = x[tuple(slice(-min(lo, 0), d + min(hi, 0)) for d, (lo, hi) in zip(x.shape, widths))]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if not any(lo or hi for lo, hi in grow):
        return lib.np.ascontiguousarray(cropped).copy()
    if mode == "constant":
        return lib.np.pad(cropped, grow, mode="constant", constant_values=value)
    return lib.np.pad(cropped, grow, mode=mode)


def _reshape(lib: ArrayLib, x: Any, shape: Sequence[int]) -> Any:
    return x.reshape(tuple(shape))


# --- indexing ----------------------------------------------------------------------------

def _rows(lib: ArrayLib, op: str, shape: Sequence[int], indices: Any) -> Any:
    """The row of ``x`` viewed as ``[prod(shape[:k]), ...]`` each index tuple addresses;
    an index outside ``[0, size)`` is an error (one device-to-host read of a flag)."""
    k = indices.shape[-1]
    rows = lib.np.zeros(indices.shape[:-1], np.int64)
    for i in range(k):
        coord = indices[..., i].astype(np.int64)
        if coord.size and bool(lib.np.any((coord < 0) | (coord >= shape[i]))):
            bad = lib.np.asarray((coord < 0) | (coord >= shape[i]))
            first = int(lib.np.argmax(bad.ravel()))
            raise IndexError(f"{op}: index {int(coord.ravel()[first])} is out of range for "
                             f"dimension {i} of size {shape[i]}; IR indices lie in "
                             f"[0, {shape[i]})")
        rows = rows * shape[i] + coord
    return rows


def _gather_nd(lib: ArrayLib, x: Any, indices: Any) -> Any:
    k = indices.shape[-1]
    table = x.reshape((math.prod(x.shape[:k]),) + x.shape[k:])
    return table[_rows(lib, "gather_nd", x.shape, indices)]


def _scatter_nd(lib: ArrayLib, x: Any, indices: Any, updates: Any, reduce: str) -> Any:
    xp = lib.np
    k = indices.shape[-1]
    out = x.reshape((math.prod(x.shape[:k]),) + x.shape[k:]).copy()
    rows = _rows(lib, "scatter_nd", x.shape, indices).ravel()
    updates = updates.reshape((rows.size,) + out.shape[1:])
    if reduce == "none":  # the last update of each row wins
        _, first_from_end = xp.unique(rows[::-1], return_index=True)
        last = rows.size - 1 - first_from_end
        out[rows[last]] = updates[last]
    elif xp is np:
        {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduce].at(
            out, rows, updates)
    elif reduce == "mul":  # CuPy has no multiply.at: the product of each row's updates
        order = xp.argsort(rows)
        for row, update in zip(rows[order].get().tolist(), updates[order]):
            out[row] *= update
    else:
        import cupyx

        getattr(cupyx, f"scatter_{reduce}")(out, rows, updates)
    return out.reshape(x.shape)


# --- sorting and scans -------------------------------------------------------------------

def _argsort(lib: ArrayLib, x: Any, axis: int, descending: bool) -> Any:
    xp = lib.np
    kind = "stable" if xp is np else None  # CuPy's sort is always stable, and takes no kind
    if not descending:
        return xp.argsort(x, axis=axis, kind=kind).astype(np.int64)
    backwards = xp.argsort(xp.flip(x, axis), axis=axis, kind=kind)
    return xp.flip(x.shape[axis] - 1 - backwards, axis).astype(np.int64)


def _accumulator(dt: np.dtype) -> np.dtype:
    return np.dtype({"f": np.float64, "c": np.complex128}.get(dt.kind, dt))


def _scan(name: str, identity: int) -> Kernel:
    def kernel(lib: ArrayLib, x: Any, axis: int, reverse: bool, exclusive: bool) -> Any:
        xp = lib.np
        ax = axis % x.ndim
        acc = getattr(xp, name)(xp.flip(x, ax) if reverse else x, axis=ax,
                                dtype=_accumulator(x.dtype))
        if exclusive:
            start = xp.full(acc.shape[:ax] + (1,) + acc.shape[ax + 1:], identity, acc.dtype)
            acc = xp.concatenate([start, acc], axis=ax)
            acc = acc[(slice(None),) * ax + (slice(0, x.shape[ax]),)]
        return xp.ascontiguousarray(xp.flip(acc, ax) if reverse else acc).astype(x.dtype)
    return kernel


def _running(name: str) -> Kernel:
    """A running max/min along ``axis`` as a log-depth scan of ``maximum``/``minimum``
    (which propagate NaN, as the reference's ``accumulate``)."""
    def kernel(lib: ArrayLib, x: Any, axis: int) -> Any:
        xp = lib.np
        ax = axis % x.ndim
        out = xp.ascontiguousarray(x).copy()
        shift = 1
        while shift < x.shape[ax]:
            head = (slice(None),) * ax
            later, earlier = head + (slice(shift, None),), head + (slice(None, -shift),)
            out[later] = getattr(xp, name)(out[later], out[earlier])
            shift *= 2
        return out
    return kernel


def _fft(lib: ArrayLib, x: Any, axis: int, n: Optional[int], norm: str, inverse: bool,
         real: bool) -> Any:
    name = ("i" if inverse else "") + ("rfft" if real else "fft")
    return getattr(lib.np.fft, name)(x, n=n, axis=axis, norm=norm)


def _cast(lib: ArrayLib, x: Any, dtype: Any) -> Any:
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real  # as NumPy's astype, without its ComplexWarning
    return x.astype(dtype.storage)


KERNELS: dict[str, Kernel] = {
    **{op: _ufunc(name) for op, name in _UNARY.items()},
    **{op: _ufunc(name) for op, name in _BINARY.items()},
    **{op: _special(name) for op, name in _SPECIAL.items()},
    "real": _part("real"), "imag": _part("imag"),
    "relu": _relu, "div": _div, "floor_divide": _floor_divide, "remainder": _remainder, "where": _where,
    "cast": _cast,
    **{op: _reduction(op if op in ("sum", "prod", "any") else f"a{op}")
       for op in ("sum", "prod", "max", "min", "any")},
    "argmax": _arg_reduction("argmax"), "argmin": _arg_reduction("argmin"),
    "max_pool": _max_pool, "avg_pool": _avg_pool, CONV_WGRAD: conv_wgrad,
    "matmul": _matmul, MATMUL_BIAS_ACT: matmul_bias_act, "einsum": _einsum, "conv": _conv, "conv_transpose": _conv_transpose,
    "iota": _iota, "reshape": _reshape, "transpose": _transpose,
    "broadcast_to": _broadcast_to, "concat": _concat, "slice": _slice, "pad": _pad,
    "gather_nd": _gather_nd, "scatter_nd": _scatter_nd,
    "argsort": _argsort, "cumsum": _scan("cumsum", 0), "cumprod": _scan("cumprod", 1),
    "cummax": _running("maximum"), "cummin": _running("minimum"),
    "fft": _fft,
}

#: Ops that move elements without reading them: they run on bfloat16 storage (16-bit
#: patterns) as it is.  Every other kernel computes bfloat16 in float32: its bfloat16 operands
#: are widened and its bfloat16 results rounded (nearest even), as the reference does.
DATA_MOVEMENT = frozenset({"reshape", "transpose", "broadcast_to", "concat", "slice",
                           "gather_nd"})

#: Core ops with no kernel here, and why; the partitioner places them on the next backend.
FALLBACK: dict[str, str] = {
    **{op: "counter-based random bits are not generated on the device yet"
       for op in ("random_key", "random_split", "random_fold_in", "random_bits",
                  "random_uniform", "random_normal", "random_truncated_normal",
                  "random_bernoulli", "random_randint", "random_permutation",
                  "random_categorical")},
}
