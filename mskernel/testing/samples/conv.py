"""Samples for the convolution and pooling ops: 1-, 2- and 3-D, strides, asymmetric padding,
dilation, groups (depthwise too), ``ceil_mode``, ``count_include_pad``, size-1 spatial dims and
empty batches, on every float dtype (and the integer dtypes the max ops accept)."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

from ...ir.types import Shape
from .. import OpSample, SampleFn, random_array

_FLOATS = ("float32", "float64", "float16", "bfloat16")

# Ops that sum many products: a backend accumulating in another order (or in the half type
# itself) may differ from the float32-computed reference by a few units in the last place.
_SUM_TOLERANCE = {"float16": 1e-2, "bfloat16": 4e-2}
_SUMMING_OPS = frozenset({"conv", "conv_transpose", "avg_pool", "adaptive_avg_pool"})


def _sample(op: str, rng: np.random.Generator, shapes: tuple[tuple[int, ...], ...], dt: str,
            attrs: Mapping[str, Any], label: str) -> OpSample:
    """``op`` applied to random operands of ``shapes`` and dtype ``dt``."""
    args = tuple(random_array(rng, shape, dt) for shape in shapes)
    tol = _SUM_TOLERANCE.get(dt) if op in _SUMMING_OPS else None
    return OpSample(op, args, dict(attrs), dtypes=(dt,) * len(args), rtol=tol, atol=tol,
                    label=label)


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
)

# (label, x shape, attrs); the first two run on every float dtype.
_MAX_POOL_CASES = (
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


def _cases(op: str, cases: tuple, extra_dtypes: tuple[str, ...] = ()) -> SampleFn:
    """Every case in float32 and float64; the first two also in the half types and in
    ``extra_dtypes``."""
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for i, (label, *shapes, attrs) in enumerate(cases):
            dtypes = _FLOATS + extra_dtypes if i < 2 else _FLOATS[:2]
            for dt in dtypes:
                yield _sample(op, rng, tuple(shapes), dt, attrs, label)
    return fn


SAMPLES: dict[str, SampleFn] = {
    "conv": _cases("conv", _CONV_CASES),
    "conv_transpose": _cases("conv_transpose", _CONV_TRANSPOSE_CASES),
    "max_pool": _cases("max_pool", _MAX_POOL_CASES, ("int32", "uint8")),
    "avg_pool": _cases("avg_pool", _AVG_POOL_CASES),
    "adaptive_avg_pool": _cases("adaptive_avg_pool", _ADAPTIVE_CASES),
    "adaptive_max_pool": _cases("adaptive_max_pool", _ADAPTIVE_CASES, ("int32", "uint8")),
}
