"""Pooling: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d`` with MindSpore's ``pad_mode``, and the
adaptive ``AdaptiveAvgPool1d/2d/3d`` and ``AdaptiveMaxPool1d/2d``.

``pad_mode``: ``"valid"`` (the default, no padding), ``"same"`` (``ceil(size / stride)``
outputs, the odd padding element after; an average counts only the input elements in its
window) or ``"pad"`` (``padding`` elements each side of every spatial dim: an int, or one int
per dim).  Padding never wins a max; in ``"pad"`` mode an average counts it when
``count_include_pad``.
"""

from __future__ import annotations

from typing import Any, Callable

from mskernel import ops as F
from mskernel_sdk import Tensor

from ..cell import Cell
from .conv import per_dim, resolve_padding

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d",
    "MaxPool3d",
]


class _Pool(Cell):
    dims: int

    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid",
                 padding: Any = 0, ceil_mode: bool = False) -> None:
        super().__init__()
        n = self.dims
        self.kernel_size = per_dim("kernel_size", kernel_size, n)
        self.stride = per_dim("stride", stride, n)
        self.pad_mode = pad_mode.lower()
        self.padding = resolve_padding(pad_mode, padding, n, "each spatial dim, both sides")
        self.ceil_mode = ceil_mode

    def extend_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}")


_MAX_POOL: dict[int, Callable[..., Tensor]] = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG_POOL: dict[int, Callable[..., Tensor]] = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


class _MaxPool(_Pool):
    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid",
                 padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False) -> None:
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        self.dilation = per_dim("dilation", dilation, self.dims)

    def construct(self, x: Any) -> Tensor:
        return _MAX_POOL[self.dims](x, self.kernel_size, self.stride, self.padding,
                                    self.dilation, self.ceil_mode)


class _AvgPool(_Pool):
    def __init__(self, kernel_size: Any = 1, stride: Any = 1, pad_mode: str = "valid",
                 padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        self.count_include_pad = count_include_pad and self.pad_mode == "pad"

    def construct(self, x: Any) -> Tensor:
        return _AVG_POOL[self.dims](x, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad)


class MaxPool1d(_MaxPool):
    """Max over windows of ``x [N, C, L]``."""

    dims = 1


class MaxPool2d(_MaxPool):
    """Max over windows of ``x [N, C, H, W]``."""

    dims = 2


class MaxPool3d(_MaxPool):
    """Max over windows of ``x [N, C, D, H, W]``."""

    dims = 3


class AvgPool1d(_AvgPool):
    """Mean over windows of ``x [N, C, L]``."""

    dims = 1


class AvgPool2d(_AvgPool):
    """Mean over windows of ``x [N, C, H, W]``."""

    dims = 2


class AvgPool3d(_AvgPool):
    """Mean over windows of ``x [N, C, D, H, W]``."""

    dims = 3


class _Adaptive(Cell):
    fn: Callable[..., Tensor]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def construct(self, x: Any) -> Tensor:
        return type(self).fn(x, self.output_size)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Mean over ``output_size`` windows covering ``x [N, C, L]``."""

    fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_Adaptive):
    """Mean over ``output_size`` windows covering each spatial dim of ``x [N, C, H, W]``
    (``None`` in ``output_size`` keeps that dim's size)."""

    fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_Adaptive):
    """Mean over ``output_size`` windows covering each spatial dim of ``x [N, C, D, H, W]``."""

    fn = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_Adaptive):
    """Max over ``output_size`` windows covering ``x [N, C, L]``."""

    fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_Adaptive):
    """Max over ``output_size`` windows covering each spatial dim of ``x [N, C, H, W]``."""

    fn = staticmethod(F.adaptive_max_pool2d)
