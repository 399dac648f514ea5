"""Neural-network functions: softmax, batch/layer/group normalisation, convolution and
transposed convolution, and max, average and adaptive pooling over 1-3 spatial dims.
Spatial inputs are ``[N, C, *spatial]``, as in PyTorch."""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

from ..tensor import Tensor
from ._core import _float_operands, _inexact, _ints, _named, _op, _ops, asarray, astype
from .creation import full
from .elementwise import add
from .shape import reshape


def softmax(x: Any, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably."""
    return _op("softmax", _inexact(x), axis=operator.index(axis))


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``, computed stably."""
    return _op("log_softmax", _inexact(x), axis=operator.index(axis))


# -- normalisation ----------------------------------------------------------------------------


def _parameter(p: Any, default: float, shape: tuple[int, ...], like: Tensor) -> Tensor:
    """A normalisation parameter in ``like``'s dtype (``default`` filled when ``None``)."""
    return full(shape, default, like.dtype) if p is None else astype(p, like.dtype)


def _channels(t: Tensor, what: str) -> tuple[int]:
    """``(C,)``, the shape of the per-channel parameters of ``t [N, C, ...]``."""
    if t.ndim < 2:
        raise ValueError(f"{what} expects x of shape [N, C, ...], got {list(t.shape)}")
    return (t.shape[1],)


def batch_norm(x: Any, mean: Any = None, var: Any = None, weight: Any = None, bias: Any = None,
               *, training: bool = False, eps: float = 1e-5) -> Tensor:
    """Per-channel normalisation of ``x [N, C, ...]``: with the batch's statistics when
    ``training``, else with the given running ``mean`` and ``var`` (required then).  Running
    averages are the caller's to update (tensors are immutable)."""
    t = _inexact(x)
    c = _channels(t, "batch_norm")
    if not training and (mean is None or var is None):
        raise ValueError("batch_norm needs the running mean and var unless training=True")
    params = [_parameter(weight, 1, c, t), _parameter(bias, 0, c, t),
              _parameter(mean, 0, c, t), _parameter(var, 1, c, t)]
    return _ops("batch_norm", t, *params, eps=eps, training=training)[0]


def layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing axes ``normalized_shape`` (PyTorch's ``layer_norm``)."""
    t = _inexact(x)
    shape = _ints(normalized_shape)
    if len(shape) > t.ndim or t.shape[t.ndim - len(shape):] != shape:
        raise ValueError(
            f"layer_norm: normalized_shape {list(shape)} must be the trailing dims of x's "
            f"shape {list(t.shape)}"
        )
    return _ops("layer_norm", t, _parameter(weight, 1, shape, t), _parameter(bias, 0, shape, t),
                axis=t.ndim - len(shape), eps=eps)[0]


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C / num_groups`` consecutive channels of ``x [N, C, ...]``."""
    t = _inexact(x)
    c = _channels(t, "group_norm")
    return _ops("group_norm", t, _parameter(weight, 1, c, t), _parameter(bias, 0, c, t),
                num_groups=operator.index(num_groups), eps=eps)[0]


# -- convolution and pooling ------------------------------------------------------------------


def _per_dim(name: str, value: Any, n: int) -> tuple[int, ...]:
    """An int (every spatial dim) or one int per spatial dim."""
    values = _ints(value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"{name} needs 1 or {n} values, got {list(values)}")
    return values


def _symmetric_padding(padding: Any, n: int) -> tuple[int, ...]:
    """An int or one int per spatial dim as the IR's flat ``(lo0, hi0, lo1, hi1, ...)``, the
    same padding before and after."""
    return tuple(p for p in _per_dim("padding", padding, n) for _ in range(2))


def _padding(padding: Any, n: int, spatial: Sequence[int], kernel: Sequence[int],
             stride: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """``padding`` as the IR's flat ``(lo0, hi0, lo1, hi1, ...)``: an int, one int per dim,
    one ``(lo, hi)`` pair per dim, ``"valid"`` (none) or ``"same"`` (``ceil(size / stride)``
    outputs, the odd element of the padding going after, as TensorFlow and PyTorch)."""
    if isinstance(padding, str):
        mode = padding.lower()
        if mode == "valid":
            return (0,) * (2 * n)
        if mode != "same":
            raise ValueError(f"padding must be 'same', 'valid' or numbers, got {padding!r}")
        flat: list[int] = []
        for size, k, s, d in zip(spatial, kernel, stride, dilation):
            extent = (k - 1) * d + 1
            total = max((-(-size // s) - 1) * s + extent - size, 0)
            flat += [total // 2, total - total // 2]
        return tuple(flat)
    if isinstance(padding, (list, tuple)) and padding and isinstance(padding[0], (list, tuple)):
        if len(padding) != n or any(len(p) != 2 for p in padding):
            raise ValueError(f"padding needs {n} (lo, hi) pairs, got {list(padding)}")
        return tuple(operator.index(v) for pair in padding for v in pair)
    return _symmetric_padding(padding, n)


def _spatial_input(t: Tensor, n: int, what: str) -> Tensor:
    """Check ``t`` is ``[N, C, *spatial]`` with ``n`` spatial dims."""
    if t.ndim != n + 2:
        dims = ["N", "C", *"DHW"[3 - n:]]
        raise ValueError(f"{what} expects x of shape [{', '.join(dims)}] (rank {n + 2}), "
                         f"got shape {list(t.shape)}")
    return t


def _add_bias(y: Tensor, bias: Any) -> Tensor:
    if bias is None:
        return y
    return add(y, reshape(astype(bias, y.dtype), (-1,) + (1,) * (y.ndim - 2)))


def _conv(n: int) -> Callable[..., Tensor]:
    name = f"conv{n}d"

    def fn(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
        t, w = _float_operands(x, weight)
        _spatial_input(t, n, name)
        s, d = _per_dim("stride", stride, n), _per_dim("dilation", dilation, n)
        pads = _padding(padding, n, t.shape[2:], w.shape[2:], s, d)
        y = _op("conv", t, w, stride=s, padding=pads, dilation=d, groups=groups)
        return _add_bias(y, bias)

    return _named(fn, name, f"{n}-d cross-correlation of x [N, C_in, *spatial] with weight "
                  "[C_out, C_in/groups, *kernel], plus bias [C_out] (PyTorch's " + name + "); "
                  "padding is an int, per-dim ints, (lo, hi) pairs, 'same' or 'valid'.")


conv1d, conv2d, conv3d = _conv(1), _conv(2), _conv(3)


def _conv_transpose(n: int) -> Callable[..., Tensor]:
    name = f"conv_transpose{n}d"

    def fn(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
        t, w = _float_operands(x, weight)
        _spatial_input(t, n, name)
        pads = _symmetric_padding(padding, n)
        y = _op("conv_transpose", t, w, stride=_per_dim("stride", stride, n), padding=pads,
                output_padding=_per_dim("output_padding", output_padding, n),
                dilation=_per_dim("dilation", dilation, n), groups=groups)
        return _add_bias(y, bias)

    return _named(fn, name, f"{n}-d transposed convolution of x [N, C_in, *spatial] with weight "
                  f"[C_in, C_out/groups, *kernel], plus bias (PyTorch's {name}).")


conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    _conv_transpose(1), _conv_transpose(2), _conv_transpose(3))


def _pool_geometry(t: Tensor, n: int, kernel_size: Any, stride: Any, padding: Any,
                   dilation: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The kernel, stride (the kernel's when None) and padding attributes of a pooling op."""
    k = _per_dim("kernel_size", kernel_size, n)
    s = k if stride is None else _per_dim("stride", stride, n)
    return {"kernel": k, "stride": s, "padding": _padding(padding, n, t.shape[2:], k, s, dilation)}


def _max_pool(n: int) -> Callable[..., Tensor]:
    name = f"max_pool{n}d"

    def fn(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
           ceil_mode: bool = False) -> Tensor:
        t = _spatial_input(asarray(x), n, name)
        d = _per_dim("dilation", dilation, n)
        geometry = _pool_geometry(t, n, kernel_size, stride, padding, d)
        return _op("max_pool", t, dilation=d, ceil_mode=ceil_mode, **geometry)

    return _named(fn, name, f"Max over {n}-d windows of x [N, C, *spatial] (PyTorch's {name}; "
                  "stride defaults to the kernel size; padding as conv, 'same' included).")


max_pool1d, max_pool2d, max_pool3d = _max_pool(1), _max_pool(2), _max_pool(3)


def _avg_pool(n: int) -> Callable[..., Tensor]:
    name = f"avg_pool{n}d"

    def fn(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
           ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
        t = _spatial_input(_inexact(x), n, name)
        geometry = _pool_geometry(t, n, kernel_size, stride, padding, (1,) * n)
        return _op("avg_pool", t, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                   **geometry)

    return _named(fn, name, f"Mean over {n}-d windows of x [N, C, *spatial] (PyTorch's {name}; "
                  "padding counts in the divisor when count_include_pad).")


avg_pool1d, avg_pool2d, avg_pool3d = _avg_pool(1), _avg_pool(2), _avg_pool(3)


def _adaptive(op: str, n: int, floating: bool) -> Callable[..., Tensor]:
    name = f"{op}{n}d"

    def fn(x: Any, output_size: Any) -> Tensor:
        t = _spatial_input(_inexact(x) if floating else asarray(x), n, name)
        sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * n
        if len(sizes) != n:
            raise ValueError(f"{name}: output_size needs 1 or {n} values, got {list(sizes)}")
        resolved = tuple(t.shape[2 + i] if s is None else operator.index(s)
                         for i, s in enumerate(sizes))
        return _op(op, t, output_size=resolved)

    return _named(fn, name, f"{'Mean' if floating else 'Max'} over output_size windows covering "
                  f"each spatial dim (PyTorch's {name}; None keeps a dim's size).")


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive("adaptive_avg_pool", 1, True), _adaptive("adaptive_avg_pool", 2, True),
    _adaptive("adaptive_avg_pool", 3, True))
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive("adaptive_max_pool", 1, False), _adaptive("adaptive_max_pool", 2, False),
    _adaptive("adaptive_max_pool", 3, False))
