"""Every routing decision of the cpu convolution kernels, over a generated grid of small
geometries, against the reference backend and PyTorch.

The kernels choose, per node, among: the direct float32 convolution (register tiles of pixel
vectors, or of one or two 8-channel vectors) for 1-D and 2-D windows and for 3-D windows whose
depth collapses (one input plane, one tap, one output plane, no depth padding); im2col + gemm;
one gemm for a 1x1, stride-1, unpadded kernel; and for ``conv_transpose`` one gemm or gemm +
col2im.  The fused ``cpu.conv_bias_act`` takes the same routes.  A rule that looks at part of
the geometry only (the input's and the kernel's depth, not the output's) sends a geometry
down a route that cannot compute it, so the grid varies every part: 1 to 3 spatial dims,
kernel sizes 1 to 3, padding on either side of every dim, stride, dilation, groups, channel
counts that pick each tile layout, empty results — float32 and float64, eager and under jit.
It is drawn with a fixed seed and must reach every route; results must lie within the
accumulation bound of the exact result (:func:`mskernel.testing.tolerance_for_reduction`).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mskernel
from mskernel.errors import OpError
from mskernel.frontend.dispatch import apply
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.runtime import CompileOptions, compile_graph
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import assert_close, tolerance_for_reduction

from mskernel_cpu.gemm_ops import CONV_OP

SEED = 20
TORCH_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
TORCH_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@dataclass(frozen=True)
class Geometry:
    op: str
    x: tuple[int, ...]
    w: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...]

    @property
    def spatial(self) -> int:
        return len(self.x) - 2

    def __str__(self) -> str:
        attrs = ",".join(f"{k}={v}" for k, v in self.attrs)
        return f"{self.op}-x{list(self.x)}-w{list(self.w)}-{attrs}"


def draw(rng: np.random.Generator, op: str) -> Geometry:
    """A random small geometry of ``op``; about a third of the 3-D ones have one input plane
    and one depth tap (depth-collapsible unless padding or stride says otherwise)."""
    n = int(rng.integers(1, 4))
    kernel = [int(k) for k in rng.integers(1, 4, n)]
    spatial = [int(s) for s in rng.integers(1, 11, n)]
    if n == 3 and rng.random() < 0.4:
        spatial[0], kernel[0] = 1, 1
    if rng.random() < 0.3:
        kernel = [1] * n  # the 1x1 gemm, and its strided and padded neighbours
    groups = int(rng.choice([1, 1, 2, 3]))
    per_in = int(rng.integers(1, 4))
    per_out = int(rng.choice([1, 2, 3, 4, 8, 16]))  # 8 and 16: one or two channel vectors
    batch = int(rng.choice([0, 1, 1, 2]))
    stride = [int(s) for s in rng.choice([1, 1, 2, 3], n)]
    dilation = [int(d) for d in rng.choice([1, 1, 2], n)]
    padding = [int(p) for p in rng.choice([0, 0, 1, 2], 2 * n)]
    attrs = {"stride": tuple(stride), "padding": tuple(padding), "dilation": tuple(dilation),
             "groups": groups}
    if op == "conv_transpose":
        attrs["output_padding"] = tuple(int(rng.integers(0, max(s, d)))
                                        for s, d in zip(stride, dilation))
        return Geometry(op, (batch, groups * per_in, *spatial),
                        (groups * per_in, per_out, *kernel), tuple(attrs.items()))
    return Geometry(op, (batch, groups * per_in, *spatial), (groups * per_out, per_in, *kernel),
                    tuple(attrs.items()))


EDGES = [  # geometries a partial rule gets wrong, and the smallest of each kind
    Geometry("conv", (1, 1, 1, 3, 3), (1, 1, 1, 2, 2), (("padding", (1,) * 6),)),
    Geometry("conv", (1, 1, 1, 3, 3), (1, 1, 1, 2, 2), (("padding", (1, 0, 0, 0, 0, 0)),)),
    Geometry("conv", (1, 1, 1, 3, 3), (1, 1, 1, 2, 2), (("padding", (0, 1, 0, 0, 0, 0)),)),
    Geometry("conv", (2, 3, 1, 7, 9), (16, 3, 1, 3, 3),
             (("padding", (0, 2, 1, 1, 1, 1)), ("stride", (3, 1, 2)))),
    Geometry("conv", (2, 3, 1, 7, 9), (8, 3, 1, 3, 2), (("padding", (0, 0, 1, 1, 0, 1)),)),
    Geometry("conv", (1, 4, 1, 6, 6), (4, 4, 1, 1, 1), (("padding", (1, 1, 0, 0, 0, 0)),)),
    Geometry("conv", (1, 4, 5, 6), (8, 4, 1, 1), ()),
    Geometry("conv", (1, 4, 2, 3, 5), (6, 4, 1, 1, 1), ()),
    Geometry("conv", (1, 4, 5, 6), (8, 4, 1, 1), (("padding", (0, 1, 0, 0)),)),
    Geometry("conv", (0, 2, 5), (3, 2, 3), ()),
    Geometry("conv_transpose", (1, 2, 1, 3, 3), (2, 1, 1, 2, 2), (("padding", (0, 1) * 3),)),
    Geometry("conv_transpose", (2, 1, 2, 2), (1, 1, 3, 3), (("padding", (2, 2, 2, 2)),)),
    Geometry("conv_transpose", (1, 4, 5, 6), (4, 8, 1, 1), ()),
]


def grid(op: str, count: int) -> list[Geometry]:
    """``count`` valid geometries of ``op`` drawn with :data:`SEED`, after the edge cases."""
    rng = np.random.default_rng([SEED, len(op)])
    found = [g for g in EDGES if g.op == op]
    while len(found) < count:
        geometry = draw(rng, op)
        if valid(geometry):
            found.append(geometry)
    return found


def valid(geometry: Geometry) -> bool:
    try:
        graph_of(geometry, "float64")
    except OpError:
        return False
    return True


def graph_of(geometry: Geometry, dt: str, *, epilogue: bool = False) -> Any:
    b = GraphBuilder(geometry.op)
    x = b.input(tensor_type(dt, geometry.x), "x")
    w = b.input(tensor_type(dt, geometry.w), "w")
    y = b.op(geometry.op, x, w, **dict(geometry.attrs))
    if not epilogue:
        return b.build([y])
    bias = b.input(tensor_type(dt, (y.type.shape[1],)), "bias")
    y = b.op("add", y, b.op("reshape", bias, shape=(y.type.shape[1],) + (1,) * geometry.spatial))
    return b.build([b.op("relu", y)])


def route(executable: Any, op: str) -> str:
    """The route the plan's ``op`` step took, from its detail (the epilogue left out):
    ``direct: <tiles>``, ``gemm``, ``im2col + gemm``, ``gemm + col2im``."""
    (line,) = [line for line in executable.describe().splitlines() if f"'{op}'" in line]
    detail = line[line.index("[") + 1:line.rindex("]")]
    kind = detail.split(",")[0].split(" + bias")[0].split(" + none")[0].split(" + relu")[0]
    if kind.startswith("direct over "):
        kind = "direct: " + kind[len("direct over "):]
    return kind


def arrays_of(geometry: Geometry, dt: str, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, shape).astype(dt) for shape in (geometry.x, geometry.w)]


def torch_result(geometry: Geometry, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """PyTorch's result in float64: asymmetric padding as a zero pad of the input (conv) or
    a crop of the output (conv_transpose) around torch's symmetric padding."""
    attrs = dict(geometry.attrs)
    n = geometry.spatial
    pairs = list(zip(attrs.get("padding", (0,) * 2 * n)[::2],
                     attrs.get("padding", (0,) * 2 * n)[1::2]))
    common = {"stride": attrs.get("stride", (1,) * n), "dilation": attrs.get("dilation", (1,) * n),
              "groups": attrs.get("groups", 1)}
    tx, tw = torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64))
    if geometry.op == "conv":
        flat = [p for lo, hi in reversed(pairs) for p in (lo, hi)]
        return TORCH_CONV[n](F.pad(tx, flat), tw, **common).numpy()
    full = TORCH_CONV_T[n](tx, tw, output_padding=attrs.get("output_padding", (0,) * n),
                           **common).numpy()
    crop = tuple(slice(lo, size - hi) for (lo, hi), size in zip(pairs, full.shape[2:]))
    return full[(Ellipsis, *crop)]


def bounds(geometry: Geometry, dt: str, x: np.ndarray, w: np.ndarray,
           bias: Optional[np.ndarray] = None) -> tuple[float, Any]:
    """The accumulation bound of each result element: its terms are C_in/groups times the
    taps (and the bias), their absolute values summed by the op on |x| and |w| in float64."""
    groups = dict(geometry.attrs).get("groups", 1)
    per_in = geometry.w[1] if geometry.op == "conv" else geometry.w[0] // groups
    graph = graph_of(geometry, "float64")
    (magnitude,) = run_graph(graph, [np.abs(x).astype(np.float64), np.abs(w).astype(np.float64)])
    length = per_in * math.prod(geometry.w[2:])
    if bias is not None:
        magnitude = magnitude + np.abs(bias).reshape((-1,) + (1,) * geometry.spatial)
        length += 1
    return tolerance_for_reduction(dt, length, magnitude)


def compiled(graph: Any, opt_level: int = 0) -> Any:
    (executable,) = compile_graph(graph, backends=["cpu"], options=CompileOptions(
        opt_level=opt_level, fallback="deny")).executables
    return executable


def seed_of(geometry: Geometry) -> int:
    return zlib.crc32(str(geometry).encode())


CASES = [*grid("conv", 160), *grid("conv_transpose", 60)]
FUSED_CASES = [g for g in CASES if g.op == "conv"][:80]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("geometry", CASES, ids=str)
def test_every_route_agrees_with_the_reference_and_torch(geometry, dt, cpu):
    x, w = arrays_of(geometry, dt, seed_of(geometry))
    taken = route(compiled(graph_of(geometry, dt)), geometry.op)
    (expected,) = run_graph(graph_of(geometry, "float64"),
                            [x.astype(np.float64), w.astype(np.float64)])
    if 0 not in expected.shape:
        assert_close(expected, torch_result(geometry, x, w), mskernel.float64,
                     what="reference vs torch")
    rtol, atol = bounds(geometry, dt, x, w)
    attrs = dict(geometry.attrs)

    def conv(a, b):
        return apply(geometry.op, a, b, **attrs)

    with mskernel.device("cpu"):
        xt, wt = mskernel.Tensor(x), mskernel.Tensor(w)
        results = {"eager": conv(xt, wt), "jit": mskernel.jit(conv)(xt, wt)}
    for mode, result in results.items():
        got = result.numpy()
        assert got.shape == expected.shape and got.dtype == np.dtype(dt), mode
        assert_close(got, expected, mskernel.dtype(dt), rtol=rtol, atol=atol,
                     what=f"{mode}, {taken}")


@pytest.mark.parametrize("geometry", FUSED_CASES, ids=str)
def test_fused_conv_bias_relu_takes_the_same_routes(geometry, cpu):
    graph = graph_of(geometry, "float32", epilogue=True)
    executable = compiled(graph, opt_level=2)
    assert CONV_OP in {n.op for n in executable.optimized_graph.nodes}
    rng = np.random.default_rng(seed_of(geometry))
    x, w, bias = (rng.uniform(-2, 2, v.type.shape).astype("float32") for v in graph.inputs)
    (got,) = executable.run([cpu.to_device(a, v.type) for a, v in zip((x, w, bias),
                                                                       graph.inputs)])
    (expected,) = run_graph(graph_of(geometry, "float64", epilogue=True),
                            [a.astype(np.float64) for a in (x, w, bias)])
    rtol, atol = bounds(geometry, "float32", x, w, bias)
    assert_close(got.to_host(), expected, mskernel.float32, rtol=rtol, atol=atol,
                 what=route(executable, CONV_OP))


def test_the_grid_reaches_every_route(cpu):
    conv = {f"{dt} {g.spatial}-D {route(compiled(graph_of(g, dt)), g.op)}"
            for g in CASES if g.op == "conv" for dt in ("float32", "float64")}
    for dims in ("1-D", "2-D"):
        for tiles in ("pixel vectors", "1 channel vector(s)", "2 channel vector(s)"):
            assert f"float32 {dims} direct: {tiles}" in conv, sorted(conv)
    assert any(r.startswith("float32 3-D direct") for r in conv), sorted(conv)  # collapsed
    for dt in ("float32", "float64"):
        for dims in ("1-D", "2-D", "3-D"):
            assert f"{dt} {dims} im2col + gemm" in conv, sorted(conv)
            assert f"{dt} {dims} gemm" in conv, sorted(conv)
    transpose = {route(compiled(graph_of(g, "float32")), g.op)
                 for g in CASES if g.op == "conv_transpose"}
    assert transpose == {"gemm", "gemm + col2im"}, transpose
    fused = {route(compiled(graph_of(g, "float32", epilogue=True), 2), CONV_OP)
             for g in FUSED_CASES}
    assert {"direct: pixel vectors", "im2col + gemm", "gemm"} <= fused, fused
