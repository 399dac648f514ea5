"""Derivatives of the convolution and pooling ops.

``conv``: the cotangent of ``x`` is a ``conv_transpose`` of the output's cotangent with the same
``w``, stride, padding, dilation and groups, its ``output_padding`` restoring the positions of
``x`` no window reached; that of ``w`` is a convolution of ``x`` with the cotangent over the
batch (stride and dilation swap roles, groups stay groups).  ``conv_transpose`` is the adjoint
of ``conv`` in ``x``, so the roles reverse.  Both are bilinear: JVPs apply the op to one
tangent at a time.

Pooling: ``avg_pool``'s VJP spreads each cotangent, divided by its window's divisor
(``count_include_pad`` and ``ceil_mode`` as the op), over the window with a ``conv_transpose``
by a ones kernel; ``adaptive_avg_pool``'s multiplies by each spatial dim's averaging matrix.
``max_pool`` and ``adaptive_max_pool`` route the gradient to the first maximum of each window
in row-major window order (PyTorch's tie rule; a NaN counts as the maximum): ``max_pool``'s
VJP is the core op ``max_pool_grad`` (one kernel on backends that have it); otherwise a static
table of each window's input positions, ``argmax`` over it, then ``scatter``-add (VJP) or
``take_along_axis`` (JVP, and ``max_pool_grad``'s own VJP: linear in its cotangent, which it
routes; the positions are piecewise constant in ``x``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from mskernel_sdk import Tensor, Window, avg_divisors, flat_positions

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()


def _flat_pads(pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    return tuple(v for pair in pairs for v in pair)


def _spatial_slice(t: Tensor, sizes: Sequence[int]) -> Tensor:
    """The first ``sizes`` positions of each spatial dim of ``[N, C, *spatial]``."""
    if tuple(t.shape[2:]) == tuple(sizes):
        return t
    return ops.slice(t, starts=(0,) * len(sizes), stops=tuple(sizes),
                     axes=tuple(range(2, 2 + len(sizes))))


# -- conv and conv_transpose ------------------------------------------------------------------


def _weight_grad(inputs: Tensor, cotangent: Tensor, kernel: Sequence[int], window: Window,
                 groups: int) -> Tensor:
    """The cotangent of ``w`` in ``conv(inputs, w)`` whose output has cotangent ``cotangent``
    (which may cover only the first output positions): ``[C_out, C_in/groups, *kernel]``.

    It is the correlation of each input channel with each output channel's cotangent over the
    batch: a grouped ``conv`` with the batch as channels, stride and dilation swapped."""
    batch, c_in = inputs.shape[:2]
    n = inputs.ndim - 2
    per_in = c_in // groups
    spatial = inputs.shape[2:]
    x = ops.reshape(inputs, shape=(batch, groups, per_in) + spatial)
    x = ops.transpose(x, perm=(2, 1, 0) + tuple(range(3, 3 + n)))
    x = ops.reshape(x, shape=(per_in, groups * batch) + spatial)
    k = ops.transpose(cotangent, perm=(1, 0) + tuple(range(2, 2 + n)))
    taps = ops.conv(x, k, stride=window.dilation, padding=_flat_pads(window.padding),
                    dilation=window.stride, groups=groups)
    taps = _spatial_slice(taps, kernel)  # [C_in/groups, C_out, *kernel]
    return ops.transpose(taps, perm=(1, 0) + tuple(range(2, 2 + n)))


def _conv_window(w: Tensor, stride, padding, dilation) -> Window:
    return Window.of(w.ndim - 2, w.shape[2:], stride, padding, dilation)


@rules.vjp("conv")
def _conv_vjp(primals, outputs, cotangents, *, stride, padding, dilation, groups) -> Grads:
    (x, w), (g,) = primals, cotangents
    window = _conv_window(w, stride, padding, dilation)
    unreached = tuple((size + lo + hi - extent) % s for size, (lo, hi), extent, s in zip(
        x.shape[2:], window.padding, window.extents, window.stride))
    g_x = ops.conv_transpose(g, w, stride=window.stride, padding=_flat_pads(window.padding),
                             output_padding=unreached, dilation=window.dilation, groups=groups)
    return g_x, _weight_grad(x, g, w.shape[2:], window, groups)


@rules.jvp("conv")
def _conv_jvp(primals, tangents, outputs, **attrs) -> Grads:
    (x, w), (tx, tw) = primals, tangents
    return (ops.add_all(None if tx is None else ops.conv(tx, w, **attrs),
                        None if tw is None else ops.conv(x, tw, **attrs)),)


@rules.vjp("conv_transpose")
def _conv_transpose_vjp(primals, outputs, cotangents, *, stride, padding, output_padding,
                        dilation, groups) -> Grads:
    (x, w), (g,) = primals, cotangents
    if 0 in g.shape[2:]:  # the padding cropped the whole output: nothing flows back
        return ops.zeros_like(x), ops.zeros_like(w)
    window = _conv_window(w, stride, padding, dilation)
    pads = _flat_pads(window.padding)
    # conv of the cotangent may reach past x (when output_padding >= stride): keep x's part.
    g_x = ops.conv(g, w, stride=window.stride, padding=pads, dilation=window.dilation,
                   groups=groups)
    return _spatial_slice(g_x, x.shape[2:]), _weight_grad(g, x, w.shape[2:], window, groups)


@rules.jvp("conv_transpose")
def _conv_transpose_jvp(primals, tangents, outputs, **attrs) -> Grads:
    (x, w), (tx, tw) = primals, tangents
    return (ops.add_all(None if tx is None else ops.conv_transpose(tx, w, **attrs),
                        None if tw is None else ops.conv_transpose(x, tw, **attrs)),)


# -- avg_pool ---------------------------------------------------------------------------------


def _pool_window(x: Tensor, kernel, stride, padding, dilation, ceil_mode) -> Window:
    return Window.of(x.ndim - 2, kernel, kernel if stride is None else stride, padding,
                     dilation, ceil_mode)


@rules.vjp("avg_pool")
def _avg_pool_vjp(primals, outputs, cotangents, *, kernel, stride, padding, ceil_mode,
                  count_include_pad) -> Grads:
    (x,), (g,) = primals, cotangents
    window = _pool_window(x, kernel, stride, padding, None, ceil_mode)
    spatial, out = x.shape[2:], g.shape[2:]
    divisors = avg_divisors(window, spatial, count_include_pad)
    shares = ops.div(g, ops.constant(divisors, g.dtype))
    # Spread each share over its window: conv_transpose by ones, cropped to x; ceil_mode's
    # last windows may reach past the high padding, which is cropped too.
    crop_hi, extra = [], []
    for size, o, k, s, (lo, _) in zip(spatial, out, window.kernel, window.stride,
                                       window.padding):
        reach = (o - 1) * s + k
        crop_hi.append(max(reach - lo - size, 0))
        extra.append(max(size + lo - reach, 0))
    channels = (x.shape[0] * x.shape[1], 1)
    spread = ops.conv_transpose(
        ops.reshape(shares, shape=channels + out), ops.full((1, 1) + window.kernel, 1.0, x.dtype),
        stride=window.stride, output_padding=tuple(extra),
        padding=_flat_pads([(lo, hi) for (lo, _), hi in zip(window.padding, crop_hi)]))
    return (ops.reshape(spread, shape=x.shape),)


rules.jvp("avg_pool")(ops.linear_jvp("avg_pool"))
rules.jvp("adaptive_avg_pool")(ops.linear_jvp("adaptive_avg_pool"))


# -- adaptive_avg_pool ------------------------------------------------------------------------


def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Window ``i`` of ``out`` over a dim of ``size``: ``[start_i, end_i)``."""
    i = np.arange(out)
    return i * size // out, -(-(i + 1) * size // out)


def _averaging_matrix(size: int, out: int) -> np.ndarray:
    """``[out, size]``: row ``i`` averages window ``i``."""
    start, end = _adaptive_bounds(size, out)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return inside / (end - start)[:, None]


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _contract_dim(t: Tensor, matrix: Tensor, axis: int) -> Tensor:
    """``t`` with dim ``axis`` contracted against the first dim of ``matrix`` and replaced by
    its second."""
    letters = _LETTERS[:t.ndim]
    new = _LETTERS[t.ndim]
    result = letters[:axis] + new + letters[axis + 1:]
    return ops.einsum(t, matrix, equation=f"{letters},{letters[axis]}{new}->{result}")


@rules.vjp("adaptive_avg_pool")
def _adaptive_avg_pool_vjp(primals, outputs, cotangents, *, output_size) -> Grads:
    (x,), (g,) = primals, cotangents
    for axis, (size, out) in enumerate(zip(x.shape[2:], output_size), start=2):
        g = _contract_dim(g, ops.constant(_averaging_matrix(size, out), g.dtype), axis)
    return (g,)


# -- max pools: routing to each window's first maximum ----------------------------------------


@dataclass(frozen=True)
class _Routing:
    """Where a max pool's windows read: ``x`` padded by ``pads`` (per spatial dim) and
    flattened over its spatial dims, window ``o`` reads the positions ``table[o, :]``."""

    pads: tuple[tuple[int, int], ...]
    table: np.ndarray  # int64 [windows, taps]
    out: tuple[int, ...]

    def padded(self, t: Tensor, fill: float) -> Tensor:
        """``t`` padded, its spatial dims flattened: ``[N, C, positions]``."""
        if any(lo or hi for lo, hi in self.pads):
            t = ops.pad(t, pads=(0, 0, 0, 0) + _flat_pads(self.pads), value=fill)
        return ops.reshape(t, shape=t.shape[:2] + (math.prod(t.shape[2:]),))

    def unpadded(self, flat: Tensor, like: Tensor) -> Tensor:
        """The inverse of :meth:`padded` (padding cropped off) for a tensor shaped ``like``."""
        spatial = tuple(size + lo + hi for size, (lo, hi) in zip(like.shape[2:], self.pads))
        t = ops.reshape(flat, shape=like.shape[:2] + spatial)
        if any(lo or hi for lo, hi in self.pads):
            t = ops.pad(t, pads=(0, 0, 0, 0) + tuple(-v for v in _flat_pads(self.pads)))
        return t

    def positions(self, x: Tensor) -> Tensor:
        """For each window of each ``[n, c]``, the flat padded position of its first maximum:
        int64 ``[N, C, windows]``."""
        flat = self.padded(x, -math.inf)
        table = ops.index_constant(self.table)
        windows = ops.gather(flat, table, axis=2)  # [N, C, windows, taps]
        best = ops.argmax(windows, axis=3, keepdims=True)
        where = ops.take_along_axis(ops.reshape(table, shape=(1, 1) + self.table.shape), best,
                                    axis=3)
        return ops.reshape(where, shape=x.shape[:2] + (self.table.shape[0],))


def _max_pool_routing(x: Tensor, kernel, stride, padding, dilation, ceil_mode) -> _Routing:
    window = _pool_window(x, kernel, stride, padding, dilation, ceil_mode)
    spatial = x.shape[2:]
    return _Routing(window.covering_pads(spatial), window.positions(spatial),
                    window.output_shape(spatial))


def _adaptive_routing(x: Tensor, output_size) -> _Routing:
    along = []
    for size, out in zip(x.shape[2:], output_size):
        start, end = _adaptive_bounds(size, out)
        offsets = start[:, None] + np.arange(int((end - start).max()))
        along.append(np.minimum(offsets, end[:, None] - 1))  # short windows repeat their last
    return _Routing(((0, 0),) * (x.ndim - 2), flat_positions(x.shape[2:], along),
                    tuple(output_size))


def _routed(route: _Routing, x: Tensor, t: Tensor, shape: Sequence[int]) -> Tensor:
    """``t`` (shaped as ``x``) read at each window's first maximum of ``x``: ``shape``."""
    picked = ops.take_along_axis(route.padded(t, 0.0), route.positions(x), axis=2)
    return ops.reshape(picked, shape=shape)


@rules.vjp("adaptive_max_pool")
def _adaptive_max_pool_vjp(primals, outputs, cotangents, **attrs) -> Grads:
    (x,), (g,) = primals, cotangents
    route = _adaptive_routing(x, **attrs)
    flat_g = ops.reshape(g, shape=x.shape[:2] + (route.table.shape[0],))
    summed = ops.scatter_add_along(flat_g, 2, route.positions(x), math.prod(x.shape[2:]))
    return (route.unpadded(summed, x),)


@rules.vjp("max_pool")
def _max_pool_vjp(primals, outputs, cotangents, **attrs) -> Grads:
    (x,), (g,) = primals, cotangents
    return (ops.max_pool_grad(x, g, **attrs),)


@rules.vjp("max_pool_grad")
def _max_pool_grad_vjp(primals, outputs, cotangents, **attrs) -> Grads:
    (x, g), (ct,) = primals, cotangents
    return (None, _routed(_max_pool_routing(x, **attrs), x, ct, g.shape))


@rules.jvp("max_pool_grad")
def _max_pool_grad_jvp(primals, tangents, outputs, **attrs) -> Grads:
    (x, _), (_, t), _ = primals, tangents, outputs
    return (None if t is None else ops.max_pool_grad(x, t, **attrs),)


def _routed_jvp(op: str, routing) -> None:
    @rules.jvp(op)
    def jvp(primals, tangents, outputs, **attrs) -> Grads:
        (x,), (t,), (y,) = primals, tangents, outputs
        return (_routed(routing(x, **attrs), x, t, y.shape),)


_routed_jvp("max_pool", _max_pool_routing)
_routed_jvp("adaptive_max_pool", _adaptive_routing)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE: frozenset[str] = frozenset()
