"""The ops the Ascend lowering passes emit, each defined once with its shape rule and its
reference semantics (what the NPU computes, up to the numerics the emulator adds):

- ``ascend.transdata(x)``: CANN's ``TransData``, a layout conversion between ``NCHW`` and
  ``NC1HWC0`` (feature maps) or ``FRACTAL_Z`` (convolution weights), see :mod:`.formats`;
  ``shape`` is the logical ``[N, C, H, W]`` shape on either side;
- ``ascend.conv2d(x, w, bias)``: a 2-D convolution (groups 1) with its per-channel bias and,
  with ``relu``, the ReLU the Cube's output stage applies, as the graph engine fuses
  ``Conv2D`` + ``BiasAdd``/``BatchNorm`` + ``Relu``.  With ``format="NC1HWC0"`` ``x`` and the
  result are 5HD and ``w`` is ``FRACTAL_Z`` of the logical ``weight_shape``;
- ``ascend.matmul_bias(x, w, bias)``: ``x @ w + bias`` for 2-D operands, ``MatMulV2`` with its
  bias input.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

import numpy as np
from mskernel_sdk import (
    Attr, InferError, OpDef, OpSample, TensorType, op_registry, random_array, require_tensor,
)

from . import formats

TRANSDATA = "ascend.transdata"
CONV2D = "ascend.conv2d"
MATMUL_BIAS = "ascend.matmul_bias"

_CONV_ATTRS = ("stride", "padding", "dilation")


def _transdata_infer(x: TensorType, src_format: str, dst_format: str,
                     shape: Sequence[int]) -> TensorType:
    require_tensor(x, "x")
    nchw = tuple(shape)
    if len(nchw) != 4:
        raise InferError(f"shape must be the logical [N, C, H, W], got {nchw}")
    c0 = formats.c0_of(x.dtype.name)
    try:
        source = formats.converted_shape(dst_format, src_format, nchw, c0)
        result = formats.converted_shape(src_format, dst_format, nchw, c0)
    except ValueError as exc:
        raise InferError(str(exc)) from None
    if x.shape != source:
        raise InferError(f"x {x} is not {src_format} of the logical shape {nchw} "
                         f"(expected {list(source)})")
    return x.with_shape(result)


def _transdata(x: np.ndarray, src_format: str, dst_format: str,
               shape: Sequence[int]) -> np.ndarray:
    return formats.convert(x, src_format, dst_format, tuple(shape))


def _conv_operands(x: TensorType, w: TensorType, format: str,
                   weight_shape: Optional[Sequence[int]]) -> tuple[TensorType, TensorType]:
    """The NCHW types of ``x`` and ``w`` (checking the 5HD/fractal shapes for NC1HWC0)."""
    if format == formats.NCHW:
        return x, w
    if format != formats.NC1HWC0:
        raise InferError(f"format must be NCHW or NC1HWC0, got {format!r}")
    if weight_shape is None or len(weight_shape) != 4 or x.rank != 5:
        raise InferError("an NC1HWC0 convolution needs a 5-D x and weight_shape [N, C, KH, KW]")
    wshape = tuple(weight_shape)
    c0 = formats.c0_of(x.dtype.name)
    if w.shape != formats.fractal_z_shape(wshape, c0):
        raise InferError(f"w {w} is not FRACTAL_Z of weights {wshape}")
    n, c1, h, width, x_c0 = x.shape
    if x_c0 != c0 or c1 != formats.blocks(wshape[1], c0):
        raise InferError(f"x {x} is not NC1HWC0 with {wshape[1]} channels")
    return x.with_shape((n, wshape[1], h, width)), w.with_shape(wshape)


def _conv2d_infer(x: TensorType, w: TensorType, bias: TensorType, stride: Any, padding: Any,
                  dilation: Any, relu: bool, format: str,
                  weight_shape: Optional[Sequence[int]]) -> TensorType:
    for t, name in ((x, "x"), (w, "w"), (bias, "bias")):
        require_tensor(t, name)
    if not x.dtype.is_floating or not x.dtype == w.dtype == bias.dtype:
        raise InferError(f"expects x, w and bias of one floating dtype, got {x}, {w}, {bias}")
    x4, w4 = _conv_operands(x, w, format, weight_shape)
    if x4.rank != 4:
        raise InferError(f"a 2-D convolution takes x [N, C, H, W], got {x}")
    (y,), _ = op_registry().get("conv").infer_outputs(
        [x4, w4], dict(stride=stride, padding=padding, dilation=dilation, groups=1))
    if bias.shape != (w4.shape[0],):
        raise InferError(f"bias must be [{w4.shape[0]}] (one per output channel), got {bias}")
    if format == formats.NCHW:
        return y
    return y.with_shape(formats.nc1hwc0_shape(y.shape, formats.c0_of(x.dtype.name)))


def _conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray, stride: Any, padding: Any,
            dilation: Any, relu: bool, format: str,
            weight_shape: Optional[Sequence[int]]) -> np.ndarray:
    if format == formats.NC1HWC0:
        assert weight_shape is not None  # the rule requires it
        x = formats.to_nchw(x, weight_shape[1])
        w = formats.weights_from_fractal_z(w, tuple(weight_shape))
    conv = op_registry().get("conv").reference
    y = conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=1)
    y = y + bias.reshape(-1, 1, 1)
    if relu:
        y = np.maximum(y, 0)
    y = y.astype(x.dtype, copy=False)
    return formats.to_nc1hwc0(y, formats.c0_of(x.dtype.name)) if format == formats.NC1HWC0 else y


def _matmul_bias_infer(x: TensorType, w: TensorType, bias: TensorType) -> TensorType:
    for t, name in ((x, "x"), (w, "w"), (bias, "bias")):
        require_tensor(t, name)
    if not x.dtype.is_floating or not x.dtype == w.dtype == bias.dtype:
        raise InferError(f"expects x, w and bias of one floating dtype, got {x}, {w}, {bias}")
    if x.rank != 2 or w.rank != 2 or x.shape[1] != w.shape[0] or bias.shape != (w.shape[1],):
        raise InferError(f"expects x [M, K], w [K, N] and bias [N], got {x}, {w}, {bias}")
    return x.with_shape((x.shape[0], w.shape[1]))


def _matmul_bias(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return (np.matmul(x, w) + bias).astype(x.dtype, copy=False)


OPDEFS = (
    OpDef(TRANSDATA, ("x",), _transdata_infer, _transdata,
          attrs=(Attr("src_format", "str"), Attr("dst_format", "str"), Attr("shape", "ints")),
          doc="CANN's TransData: NCHW <-> NC1HWC0 (feature maps), NCHW <-> FRACTAL_Z (weights)"),
    OpDef(CONV2D, ("x", "w", "bias"), _conv2d_infer, _conv2d,
          attrs=(Attr("stride", "ints?", None), Attr("padding", "ints?", None),
                 Attr("dilation", "ints?", None), Attr("relu", "bool", False),
                 Attr("format", "str", formats.NCHW), Attr("weight_shape", "ints?", None)),
          doc="2-D convolution + per-channel bias (+ ReLU), NCHW or NC1HWC0 with FRACTAL_Z "
              "weights"),
    OpDef(MATMUL_BIAS, ("x", "w", "bias"), _matmul_bias_infer, _matmul_bias,
          doc="x @ w + bias for x [M, K], w [K, N], bias [N]"),
)


def samples(rng: np.random.Generator) -> Iterator[OpSample]:
    """Samples of the three ops for the conformance kit: both layouts, channels that do and
    do not fill a block, float16 and float32."""
    for dt in ("float32", "float16"):
        for c, n in ((3, 5), (16, 17)):
            x = random_array(rng, (2, c, 6, 5), dt)
            w = random_array(rng, (n, c, 3, 3), dt)
            bias = random_array(rng, (n,), dt)
            attrs = {"padding": (1, 1, 0, 1), "stride": (1, 2), "relu": c == 3}
            yield OpSample(CONV2D, (x, w, bias), attrs, label=f"nchw-{c}-{n}")
            c0 = formats.c0_of(dt)
            yield OpSample(CONV2D, (formats.to_nc1hwc0(x, c0), formats.to_fractal_z(w, c0), bias),
                           {**attrs, "format": formats.NC1HWC0, "weight_shape": w.shape},
                           label=f"5hd-{c}-{n}")
            yield OpSample(TRANSDATA, (x,), {"src_format": formats.NCHW,
                                             "dst_format": formats.NC1HWC0, "shape": x.shape})
            yield OpSample(TRANSDATA, (formats.to_fractal_z(w, c0),),
                           {"src_format": formats.FRACTAL_Z, "dst_format": formats.NCHW,
                            "shape": w.shape})
        yield OpSample(MATMUL_BIAS, (random_array(rng, (4, 7), dt), random_array(rng, (7, 3), dt),
                                     random_array(rng, (3,), dt)))

