"""The weight gradient of a convolution as one op, ``gpu.conv_wgrad``, for cuDNN's
backward-filter.

The autodiff plugin writes the cotangent of ``w`` in ``conv(x, w)`` as a convolution over the
batch: ``transpose(conv(reshape(transpose(reshape(x))), transpose(g)))``, with the channels
of ``x`` regrouped, the output's cotangent ``g`` as the kernel, and stride and dilation
swapped.  The pass ``gpu.fuse_conv_wgrad`` recognises exactly that chain (each intermediate
read only by the next) and replaces it with ``gpu.conv_wgrad(x, g)``, whose attributes are
the forward convolution's: on the device cuDNN's ``conv_wgrad`` computes it in one call, and
where cuDNN has no engine for the case the kernel runs the same chain as before.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from mskernel_sdk import (
    Accumulation, Attr, InferError, Node, OpDef, OpSample, PassContext, Pat, PatternPass,
    Patterns, TensorType, Type, make_node, on_magnitudes, op_registry, random_array,
)

CONV_WGRAD = "gpu.conv_wgrad"


def _swap01(rank: int) -> tuple[int, ...]:
    return (1, 0, *range(2, rank))


def _chain(conv: Any, transpose: Any, reshape: Any, x: Any, g: Any, stride: Any,
           padding: Any, dilation: Any, groups: int, kernel: tuple[int, ...]) -> Any:
    """The autodiff plugin's chain, on the ops given (reference functions or kernels)."""
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    rank = x.ndim
    per = c // groups
    xs = reshape(x, (n, groups, per) + spatial)
    xs = transpose(xs, (2, 1, 0, *range(3, rank + 1)))
    xs = reshape(xs, (per, groups * n) + spatial)
    taps = conv(xs, transpose(g, _swap01(rank)), stride=dilation, padding=padding,
                dilation=stride, groups=groups)
    return transpose(taps, _swap01(rank))


def _infer(x: Type, g: Type, *, stride: Any, padding: Any, dilation: Any, groups: int,
           kernel: Any) -> Type:
    if not (isinstance(x, TensorType) and isinstance(g, TensorType)):
        raise InferError(f"expects two tensors, got {x}, {g}")
    if x.dtype != g.dtype or x.rank != g.rank or not 3 <= x.rank <= 5 or groups < 1:
        raise InferError(f"expects x and g of one dtype and rank 3 to 5, got {x}, {g}")
    if x.shape[0] != g.shape[0] or x.shape[1] % groups or g.shape[1] % groups:
        raise InferError(f"x {x} and g {g} do not fit {groups} group(s) over one batch")
    if len(kernel) != x.rank - 2:
        raise InferError(f"kernel needs {x.rank - 2} dims, got {list(kernel)}")
    conv = op_registry().get("conv")
    taps = conv.infer_types(
        [x.with_shape((x.shape[1] // groups, groups * x.shape[0]) + x.shape[2:]),
         g.with_shape((g.shape[1], g.shape[0]) + g.shape[2:])],
        conv.bind_attrs(dict(stride=dilation, padding=padding, dilation=stride,
                             groups=groups)))[0]
    if tuple(taps.shape[2:]) != tuple(kernel):  # type: ignore[union-attr]
        raise InferError(f"the correlation of x and g covers {list(taps.shape[2:])}, "  # type: ignore[union-attr]
                         f"not the kernel {list(kernel)}")
    return x.with_shape((g.shape[1], x.shape[1] // groups) + tuple(kernel))


def _reference(x: np.ndarray, g: np.ndarray, **attrs: Any) -> np.ndarray:
    conv = op_registry().get("conv").reference
    return np.ascontiguousarray(_chain(
        lambda a, b, **kw: conv(a, b, **kw), np.transpose, np.reshape, x, g, **attrs))


OPDEF = OpDef(CONV_WGRAD, ("x", "g"), _infer, _reference,
              attrs=(Attr("stride", "ints?", None), Attr("padding", "ints?", None),
                     Attr("dilation", "ints?", None), Attr("groups", "int", 1),
                     Attr("kernel", "ints")),
              doc="the gradient of conv(x, w) with respect to w, given the gradient g of its "
                  "output (cuDNN's backward-filter; made by the gpu wgrad pass)")


def kernel(lib: Any, x: Any, g: Any, stride: Any, padding: Any, dilation: Any, groups: int,
           kernel: Any) -> Any:
    """cuDNN's backward-filter where it has an engine, else the chain on the kernels."""
    from .kernels import ConvGeometry, _conv

    xp = lib.np
    if lib.conv is not None and lib.conv.supports(x.dtype):
        geometry = ConvGeometry.of(x.ndim - 2, stride, padding, dilation)
        dw = lib.conv.backward_filter(x, g, geometry, groups, tuple(kernel))
        if dw is not None:
            return dw
    return xp.ascontiguousarray(_chain(
        lambda a, b, **kw: _conv(lib, a, b, **kw), xp.transpose, xp.reshape, x, g,
        stride=stride, padding=padding, dilation=dilation, groups=groups, kernel=kernel))


def samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases = (  # x shape, g shape, stride, padding, dilation, groups, kernel
        ((2, 4, 9, 9), (2, 8, 5, 5), (2, 2), (1, 1, 1, 1), (1, 1), 1, (3, 3)),
        ((3, 4, 7), (3, 6, 5), (1,), (0, 0), (1,), 2, (3,)),
        ((1, 2, 6, 6), (1, 2, 2, 2), (1, 1), (0, 0, 0, 0), (2, 2), 1, (3, 3)),
    )
    for dt in ("float32", "float64", "float16"):
        for xs, gs, stride, padding, dilation, groups, k in cases:
            yield OpSample(CONV_WGRAD, (random_array(rng, xs, dt), random_array(rng, gs, dt)),
                           dict(stride=stride, padding=padding, dilation=dilation,
                                groups=groups, kernel=k), dtypes=(dt, dt))


def accumulation(sample: OpSample) -> Accumulation:
    """Each element sums, over the batch and the output's positions, products of ``x`` and
    ``g``."""
    _, g = sample.args
    return Accumulation(int(np.shape(g)[0] * np.prod(np.shape(g)[2:])),
                        on_magnitudes(sample))


def _perm(node: Node, perm: tuple[int, ...]) -> bool:
    return tuple(node.attrs.get("perm") or ()) == perm


def fuse_wgrad(context: PassContext, out: Node, conv: Node, inner: Node, shuffle: Node,
               outer: Node, kernel_t: Node, x: Any, g: Any) -> Optional[Node]:
    rank = out.outputs[0].type.rank  # type: ignore[union-attr]
    groups = int(conv.attrs.get("groups", 1))
    xt, gt = x.type, g.type
    if not (isinstance(xt, TensorType) and isinstance(gt, TensorType) and xt.rank == rank):
        return None
    n, c = xt.shape[:2]
    spatial = xt.shape[2:]
    if (not _perm(out, _swap01(rank)) or not _perm(kernel_t, _swap01(rank))
            or not _perm(shuffle, (2, 1, 0, *range(3, rank + 1))) or c % groups
            or tuple(outer.attrs["shape"]) != (n, groups, c // groups) + spatial
            or tuple(inner.attrs["shape"]) != (c // groups, groups * n) + spatial):
        return None
    kernel = tuple(out.outputs[0].type.shape[2:])  # type: ignore[union-attr]
    return make_node(context, CONV_WGRAD, x, g, stride=conv.attrs.get("dilation"),
                     padding=conv.attrs.get("padding"), dilation=conv.attrs.get("stride"),
                     groups=groups, kernel=kernel)


_X = Pat("reshape", (Pat("transpose", (Pat("reshape", (Pat.var("x"),), name="outer",
                                           single_use=True),),
                         name="shuffle", single_use=True),), name="inner", single_use=True)
_G = Pat("transpose", (Pat.var("g"),), name="kernel_t", single_use=True)

FUSE_CONV_WGRAD = PatternPass("gpu.fuse_conv_wgrad", Patterns([
    (Pat("transpose", (Pat("conv", (_X, _G), name="conv", single_use=True),), name="out"),
     fuse_wgrad),
]))
