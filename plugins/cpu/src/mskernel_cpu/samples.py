"""Samples of the cpu backend's fused GEMM ops (``cpu.conv_bias_act``, ``cpu.matmul_bias_act``),
attached under the ``"samples"`` rule kind so the SDK's conformance kit runs them on the cpu
backend as it runs the core op table: every float dtype, every activation, with and without
the bias, strides, groups, transposed and batched operands, an empty batch.
``cpu.fused_elementwise`` has none: its region is built by the fusion pass, and
``tests/test_cpu_fusion.py`` checks it against the unfused graphs instead."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np
from mskernel_sdk import OpSample, SampleFn, random_array

from .gemm_ops import CONV_OPDEF, MATMUL_OPDEF

SAMPLES_RULE = "samples"  # the rule kind the SDK's kit reads (mskernel_sdk.samples)
_FLOATS = ("float32", "float64", "float16", "bfloat16")
_ACTIVATIONS = ("none", "relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu")
# sums of many products, rounded once by the kernel and once per op by the reference
_SUM_TOLERANCE = {"float16": 1e-2, "bfloat16": 4e-2}

# (label, x shape, w shape, conv attrs)
_CONV_CASES = (
    ("2d-pad", (2, 3, 5, 5), (4, 3, 3, 3), {"padding": (1, 1, 1, 1)}),
    ("2d-stride-groups", (1, 4, 6, 5), (6, 2, 3, 2), {"stride": (2, 1), "groups": 2}),
    ("1d-dilation", (2, 2, 9), (3, 2, 3), {"dilation": (2,)}),
    ("batch-0", (0, 2, 4, 4), (2, 2, 1, 1), {}),
)
# (label, a shape, b shape, transposes)
_MATMUL_CASES = (
    ("2d", (3, 4), (4, 5), {}),
    ("batched-transpose-b", (2, 3, 4), (5, 4), {"transpose_b": True}),
    ("transpose-a", (4, 3), (4, 5), {"transpose_a": True}),
    ("empty-rows", (0, 4), (4, 2), {}),
)


def _fused(op: str, cases: Any, channels_of: Any) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[OpSample]:
        for n, (label, x_shape, w_shape, attrs) in enumerate(cases):
            for k, dt in enumerate(_FLOATS if n == 0 else _FLOATS[:1]):
                for activation in _ACTIVATIONS if n == 0 and k == 0 else ("relu",):
                    for with_bias in (True, False) if n == 0 else (True,):
                        yield _sample(op, rng, dt, x_shape, w_shape, channels_of(w_shape, attrs),
                                      {**attrs, "activation": activation}, with_bias,
                                      f"{label}-{activation}{'' if with_bias else '-no-bias'}")
    return samples


def _sample(op: str, rng: np.random.Generator, dt: str, x_shape: tuple[int, ...],
            w_shape: tuple[int, ...], channels: int, attrs: Mapping[str, Any], with_bias: bool,
            label: str) -> OpSample:
    shapes = (x_shape, w_shape) + (((channels,),) if with_bias else ())
    args = tuple(random_array(rng, shape, dt) for shape in shapes)
    tol = _SUM_TOLERANCE.get(dt)
    return OpSample(op, args, dict(attrs), dtypes=(dt,) * len(args), rtol=tol, atol=tol,
                    label=label)


SAMPLES: dict[str, SampleFn] = {
    CONV_OPDEF.name: _fused(CONV_OPDEF.name, _CONV_CASES, lambda w, attrs: w[0]),
    MATMUL_OPDEF.name: _fused(
        MATMUL_OPDEF.name, _MATMUL_CASES,
        lambda b, attrs: b[-2] if attrs.get("transpose_b") else b[-1]),
}


def register(rules: Any) -> None:
    for op, samples in SAMPLES.items():
        rules.register(SAMPLES_RULE, op, samples)
