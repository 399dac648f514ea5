"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``LayerNorm`` and ``GroupNorm`` (MindSpore's
signatures and parameter names: ``gamma``, ``beta``, ``moving_mean``, ``moving_variance``).

Batch norm in training mode normalises with the batch's statistics and updates the moving
ones in place — ``moving = momentum * moving + (1 - momentum) * batch``, MindSpore's
convention (PyTorch's ``momentum`` is ``1 -`` this one), with the unbiased batch variance —
through :meth:`~mskernel.Parameter.assign_value`, so a jitted training step updates them on
the device.  In inference mode it normalises with the moving statistics.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel import float32, ops as F
from mskernel_sdk import Tensor

from ..cell import Cell
from ..initializer import parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm"]


class _BatchNorm(Cell):
    """Per-channel normalisation of ``x [N, C, ...]`` with learned ``gamma``/``beta`` and
    moving statistics.

    ``use_batch_statistics``: ``None`` (the default) uses and updates the batch statistics in
    training mode and the moving ones otherwise; ``True`` always the batch's (updating the
    moving ones); ``False`` always the moving ones.  With ``affine=False``, ``gamma`` and
    ``beta`` stay 1 and 0 (they are kept, not trainable).
    """

    ranks: tuple[int, ...]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9,
                 affine: bool = True, gamma_init: Any = "ones", beta_init: Any = "zeros",
                 moving_mean_init: Any = "zeros", moving_var_init: Any = "ones",
                 use_batch_statistics: Optional[bool] = None, dtype: Any = float32) -> None:
        super().__init__()
        if not 0 <= momentum <= 1:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.use_batch_statistics = use_batch_statistics
        shape = (num_features,)
        self.gamma = parameter(gamma_init, shape, dtype, requires_grad=affine)
        self.beta = parameter(beta_init, shape, dtype, requires_grad=affine)
        self.moving_mean = parameter(moving_mean_init, shape, dtype, requires_grad=False)
        self.moving_variance = parameter(moving_var_init, shape, dtype, requires_grad=False)

    def construct(self, x: Any) -> Tensor:
        x = F.asarray(x)
        if x.ndim not in self.ranks:
            raise ValueError(f"{type(self).__name__} expects x of rank "
                             f"{' or '.join(map(str, self.ranks))} ([N, C, ...]), got shape "
                             f"{list(x.shape)}")
        use_batch = self.training if self.use_batch_statistics is None \
            else self.use_batch_statistics
        if not use_batch:
            return F.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma,
                                self.beta, training=False, eps=self.eps)
        y, mean, var = F.apply("batch_norm", x, F.astype(self.gamma, x.dtype),
                               F.astype(self.beta, x.dtype),
                               F.astype(self.moving_mean, x.dtype),
                               F.astype(self.moving_variance, x.dtype),
                               eps=self.eps, training=True)
        count = x.size // x.shape[1]
        self._update(self.moving_mean, mean)
        self._update(self.moving_variance, F.multiply(var, count / max(count - 1, 1)))
        return y

    def _update(self, moving: Any, batch: Tensor) -> None:
        m = self.momentum
        moving.assign_value(F.add(F.multiply(moving, m), F.multiply(batch, 1 - m)))

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma.name}, beta={self.beta.name}, "
                f"moving_mean={self.moving_mean.name}, "
                f"moving_variance={self.moving_variance.name}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``x [N, C]`` or ``[N, C, L]``."""

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``x [N, C, H, W]``."""

    ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``x [N, C, D, H, W]``."""

    ranks = (5,)


class LayerNorm(Cell):
    """Normalisation over the axes from ``begin_norm_axis`` on, then ``gamma * y + beta``
    with ``gamma``/``beta`` of shape ``normalized_shape`` covering the axes from
    ``begin_params_axis`` on (MindSpore's ``LayerNorm``; its default ``epsilon`` is 1e-7)."""

    def __init__(self, normalized_shape: Sequence[int], begin_norm_axis: int = -1,
                 begin_params_axis: int = -1, gamma_init: Any = "ones", beta_init: Any = "zeros",
                 epsilon: float = 1e-7, dtype: Any = float32) -> None:
        super().__init__()
        if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"normalized_shape must be a tuple or list of ints, got "
                            f"{normalized_shape!r}")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = epsilon
        self.gamma = parameter(gamma_init, self.normalized_shape, dtype)
        self.beta = parameter(beta_init, self.normalized_shape, dtype)

    def construct(self, x: Any) -> Tensor:
        x = F.asarray(x)
        norm_axis = self.begin_norm_axis % x.ndim
        params_axis = self.begin_params_axis % x.ndim
        if x.shape[params_axis:] != self.normalized_shape:
            raise ValueError(f"LayerNorm: the axes of x from begin_params_axis "
                             f"({self.begin_params_axis}) on have shape "
                             f"{list(x.shape[params_axis:])}, but normalized_shape is "
                             f"{list(self.normalized_shape)}")
        if norm_axis == params_axis:
            return F.layer_norm(x, x.shape[norm_axis:], self.gamma, self.beta, self.epsilon)
        y = F.layer_norm(x, x.shape[norm_axis:], eps=self.epsilon)
        return F.add(F.multiply(y, self.gamma), self.beta)

    def extend_repr(self) -> str:
        return (f"normalized_shape={self.normalized_shape}, "
                f"begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}")


class GroupNorm(Cell):
    """Normalisation of each group of ``num_channels / num_groups`` consecutive channels of
    each sample of ``x [N, C, ...]``, then per-channel ``gamma``/``beta``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, gamma_init: Any = "ones", beta_init: Any = "zeros",
                 dtype: Any = float32) -> None:
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self.gamma = parameter(gamma_init, (num_channels,), dtype, requires_grad=affine)
        self.beta = parameter(beta_init, (num_channels,), dtype, requires_grad=affine)

    def construct(self, x: Any) -> Tensor:
        return F.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"
