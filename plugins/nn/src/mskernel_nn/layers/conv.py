"""Convolutions: ``Conv1d``, ``Conv2d``, ``Conv3d`` and the transposed ``Conv1dTranspose``,
``Conv2dTranspose``, ``Conv3dTranspose`` (MindSpore's signatures, channels first).

``pad_mode`` is MindSpore's:

- ``"same"`` (the default): ``ceil(size / stride)`` outputs (``size * stride`` for a transposed
  convolution); the padding is split evenly, the odd element going after (bottom/right);
- ``"valid"``: no padding;
- ``"pad"``: ``padding`` zeros — an int for every side, or one ``(before, after)`` pair per
  spatial dim flattened: ``(left, right)`` for 1-d, ``(top, bottom, left, right)`` for 2-d,
  ``(head, tail, top, bottom, left, right)`` for 3-d.  ``padding`` must be 0 in the other
  modes.

Weights are ``[out_channels, in_channels / group, *kernel]`` (``[in_channels,
out_channels / group, *kernel]`` when transposed) and default, as in MindSpore 2.x, to
``HeUniform(sqrt(5))``; the bias (``has_bias=False`` by default) to ``Uniform(1 /
sqrt(fan_in))``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Union

from mskernel import float32, ops as F
from mskernel_sdk import Tensor

from ..cell import Cell
from ..initializer import HeUniform, Uniform, parameter

__all__ = ["Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose", "Conv3d",
           "Conv3dTranspose"]

_PAD_MODES = ("same", "valid", "pad")
Padding = Union[str, tuple[tuple[int, int], ...]]


def per_dim(name: str, value: Any, n: int) -> tuple[int, ...]:
    """An int (every spatial dim) or ``n`` ints, as a tuple of ``n`` positive ints."""
    values = (value,) * n if isinstance(value, numbers.Integral) else tuple(value)
    if len(values) != n or not all(isinstance(v, numbers.Integral) and int(v) > 0 for v in values):
        raise ValueError(f"{name} must be a positive int or {n} positive ints, got {value!r}")
    return tuple(int(v) for v in values)


def pad_pairs(pad_mode: str, padding: Any, n: int) -> Padding:
    """MindSpore's ``pad_mode`` and ``padding`` as the functional ops' padding: ``"same"``,
    ``"valid"`` or one ``(before, after)`` pair per spatial dim."""
    flat = resolve_padding(pad_mode, padding, 2 * n, "before and after each spatial dim")
    if isinstance(flat, str):
        return flat
    return tuple((flat[2 * i], flat[2 * i + 1]) for i in range(n))


def resolve_padding(pad_mode: str, padding: Any, count: int,
                    meaning: str) -> Union[str, tuple[int, ...]]:
    """``pad_mode`` checked and lower-cased when it is ``"same"`` or ``"valid"`` (``padding``
    must then be 0), else the ``count`` paddings of ``"pad"`` (an int, or one int, stands for
    all of them); ``meaning`` says in errors what the ``count`` values are."""
    mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    if mode not in _PAD_MODES:
        raise ValueError(f"pad_mode must be one of {_PAD_MODES}, got {pad_mode!r}")
    values = (padding,) if isinstance(padding, numbers.Integral) else tuple(padding)
    if len(values) == 1:
        values *= count
    if len(values) != count or not all(isinstance(p, numbers.Integral) and int(p) >= 0
                                       for p in values):
        raise ValueError(f"padding must be an int >= 0 or {count} ints >= 0 ({meaning}), got "
                         f"{padding!r}")
    if mode != "pad":
        if any(values):
            raise ValueError(f"padding must be 0 when pad_mode is {mode!r}; use "
                             "pad_mode='pad' to give the padding")
        return mode
    return tuple(int(p) for p in values)


class _Conv(Cell):
    """What every convolution holds: geometry, weight and optional bias."""

    dims: int
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, dilation: Any = 1, group: int = 1,
                 has_bias: bool = False, weight_init: Any = None, bias_init: Any = None,
                 dtype: Any = float32) -> None:
        super().__init__()
        n = self.dims
        if group < 1 or in_channels % group or out_channels % group:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must both be divisible by group ({group})")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = per_dim("kernel_size", kernel_size, n)
        self.stride = per_dim("stride", stride, n)
        self.dilation = per_dim("dilation", dilation, n)
        self.pad_mode = pad_mode.lower()
        self.padding = pad_pairs(pad_mode, padding, n)
        self.group = group
        self.has_bias = has_bias
        channels = (in_channels, out_channels // group) if self.transposed \
            else (out_channels, in_channels // group)
        shape = (*channels, *self.kernel_size)
        self.weight = parameter(HeUniform(math.sqrt(5)) if weight_init is None else weight_init,
                                shape, dtype)
        fan_in = shape[1] * math.prod(self.kernel_size)
        self.bias = parameter(Uniform(1 / math.sqrt(fan_in)) if bias_init is None
                              else bias_init, (out_channels,), dtype) if has_bias else None

    def add_bias(self, y: Tensor) -> Tensor:
        if not self.has_bias:
            return y
        return F.add(y, F.reshape(self.bias, (self.out_channels,) + (1,) * self.dims))

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")


_CONV: dict[int, Callable[..., Tensor]] = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_TRANSPOSE: dict[int, Callable[..., Tensor]] = {
    1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


class _Convolution(_Conv):
    def construct(self, x: Any) -> Tensor:
        y = _CONV[self.dims](x, self.weight, None, self.stride, self.padding, self.dilation,
                             self.group)
        return self.add_bias(y)


class Conv1d(_Convolution):
    """1-d convolution of ``x [N, C_in, L]``."""

    dims = 1


class Conv2d(_Convolution):
    """2-d convolution of ``x [N, C_in, H, W]``."""

    dims = 2


class Conv3d(_Convolution):
    """3-d convolution of ``x [N, C_in, D, H, W]``."""

    dims = 3


class _ConvTranspose(_Conv):
    """A transposed convolution: the gradient of the convolution with the same settings with
    respect to its input.  Output sizes (MindSpore's): ``size * stride`` for ``"same"``,
    ``size * stride + max(extent - stride, 0)`` for ``"valid"`` and
    ``(size - 1) * stride + extent - before - after + output_padding`` for ``"pad"``, with
    ``extent = dilation * (kernel - 1) + 1``."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 pad_mode: str = "same", padding: Any = 0, output_padding: Any = 0,
                 dilation: Any = 1, group: int = 1, has_bias: bool = False,
                 weight_init: Any = None, bias_init: Any = None, dtype: Any = float32) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, dtype)
        extra = (output_padding,) * self.dims if isinstance(output_padding, numbers.Integral) \
            else tuple(output_padding)
        if len(extra) != self.dims or any(e < 0 for e in extra) or \
                (any(extra) and self.pad_mode != "pad"):
            raise ValueError(f"output_padding must be {self.dims} ints >= 0, and 0 unless "
                             f"pad_mode='pad'; got {output_padding!r}")
        self.output_padding = tuple(int(e) for e in extra)
        self.pad_pairs = ((0, 0),) * self.dims if isinstance(self.padding, str) else self.padding

    def construct(self, x: Any) -> Tensor:
        y = _CONV_TRANSPOSE[self.dims](x, self.weight, None, self.stride, 0, 0, self.group,
                                       self.dilation)
        return self.add_bias(self._window(y, F.asarray(x).shape[2:]))

    def _window(self, y: Tensor, sizes: tuple[int, ...]) -> Tensor:
        """The output window of the uncropped result ``y``, zero-padded where it reaches
        past ``y``'s end."""
        index: list[slice] = [slice(None), slice(None)]
        tail: list[tuple[int, int]] = [(0, 0), (0, 0)]
        for i, size in enumerate(sizes):
            s, full = self.stride[i], y.shape[2 + i]
            extent = self.dilation[i] * (self.kernel_size[i] - 1) + 1
            if self.pad_mode == "same":
                start, length = max(extent - s, 0) // 2, size * s
            elif self.pad_mode == "valid":
                start, length = 0, size * s + max(extent - s, 0)
            else:
                before, after = self.pad_pairs[i]
                start, length = before, full - before - after + self.output_padding[i]
            index.append(slice(start, min(start + length, full)))
            tail.append((0, max(start + length - full, 0)))
        y = y[tuple(index)]
        return F.pad(y, tail) if any(after for _, after in tail) else y


class Conv1dTranspose(_ConvTranspose):
    """1-d transposed convolution of ``x [N, C_in, L]``."""

    dims = 1


class Conv2dTranspose(_ConvTranspose):
    """2-d transposed convolution of ``x [N, C_in, H, W]``."""

    dims = 2


class Conv3dTranspose(_ConvTranspose):
    """3-d transposed convolution of ``x [N, C_in, D, H, W]``."""

    dims = 3
