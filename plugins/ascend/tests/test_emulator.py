"""ascend-emulate: its numerics against an independent NumPy float16 model of Ascend's rules,
saturation and the overflow/underflow record, float32 accumulation in the Cube, the
precision report, and training under emulation with and without loss scaling."""

from __future__ import annotations

import io

import numpy as np
import pytest
from mskernel_sdk import (
    CompileOptions, GraphBuilder, compile_graph, run_reference, tensor_type,
)

from mskernel_ascend import precision_report
from mskernel_ascend.emulator import EmulateBackend, EmulatedExecutable
from mskernel_ascend.numerics import HALF_MAX, recording

from .conftest import arguments, conv_net


def half(x: np.ndarray) -> np.ndarray:
    """The model's float16 rounding: nearest even, saturating at ±65504."""
    with np.errstate(over="ignore"):
        return np.clip(np.asarray(x, np.float32).astype(np.float16), -HALF_MAX, HALF_MAX)


def widen(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def conv2d(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """Cross-correlation in float32, by shifted products (not the reference's im2col)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float32)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + out.shape[2], j:j + out.shape[3]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j], dtype=np.float32)
    return out


def force_fp16_model(x, w1, b1, w2, wd, bd) -> np.ndarray:
    """conv_net under force_fp16 by Ascend's rules: operands rounded to float16, Cube ops
    accumulating in float32 with bias and ReLU before their float16 result, each Vector op's
    result rounded to float16, the output widened to float32."""
    x, w1, b1, w2, wd, bd = map(half, (x, w1, b1, w2, wd, bd))
    y = half(np.maximum(conv2d(widen(x), widen(w1), 1) + widen(b1)[:, None, None], 0))
    y = half(np.maximum(conv2d(widen(y), widen(w2), 0), 0))
    logits = half(widen(y).reshape(2, 144) @ widen(wd) + widen(bd))
    squares = half(widen(logits) * widen(logits))
    with np.errstate(over="ignore"):
            return widen(half(widen(half(np.exp(widen(squares)))).sum(axis=1)))


def test_force_fp16_agrees_with_the_independent_float16_model() -> None:
    graph = conv_net()
    args = arguments(graph, seed=3, scale=0.6)
    (got,) = compile_graph(graph, backends=["ascend-emulate"],
                           options=CompileOptions(fallback="deny"))(*args)
    expected = force_fp16_model(*args)
    got = np.asarray(got)
    # both sum float32 products in different orders: a result may round to the neighbouring
    # float16 (one unit in the last place, 2**-10 relative), never further
    np.testing.assert_allclose(got, expected, rtol=2.0 ** -10, atol=0)
    (exact,) = run_reference(graph, args)
    assert np.abs(got - exact).max() > 0  # float16 is visible against float32


def test_must_keep_origin_dtype_is_the_float32_reference() -> None:
    graph = conv_net()
    args = arguments(graph)
    emulated = EmulatedExecutable(EmulateBackend(), graph, CompileOptions(),
                                  "must_keep_origin_dtype").run_host(args)
    np.testing.assert_allclose(emulated[0], run_reference(graph, args)[0], rtol=1e-6)


def product_graph(shape_x, shape_y):
    b = GraphBuilder("product")
    x = b.input(tensor_type("f32", shape_x), "x")
    y = b.input(tensor_type("f32", shape_y), "y")
    return b.build([b.op("matmul", x, y) if len(shape_y) == 2 else b.op("mul", x, y)])


def emulate(graph, *args, mode="force_fp16"):
    return EmulatedExecutable(EmulateBackend(), graph, CompileOptions(), mode).run_host(args)[0]


def test_overflow_saturates_and_underflow_flushes_and_both_are_counted() -> None:
    graph = product_graph((4,), (4,))
    x = np.array([300.0, -300.0, 1e-4, 2.0], np.float32)
    with recording() as events:
        out = emulate(graph, x, np.array([300.0, 300.0, 1e-4, 1.0], np.float32))
    assert out.tolist() == [HALF_MAX, -HALF_MAX, 0.0, 2.0]  # 90000 saturates, 1e-8 flushes
    assert events.total_overflow == 2 and events.total_underflow == 1


def test_the_cube_accumulates_in_float32() -> None:
    """3000 products of 1: a float16 running sum stops at 2048 (2048 + 1 rounds back to
    2048); the Cube's float32 accumulator reaches 3000, which float16 holds."""
    graph = product_graph((1, 3000), (3000, 1))
    out = emulate(graph, np.ones((1, 3000), np.float32), np.ones((3000, 1), np.float32))
    assert out.item() == 3000.0


def test_precision_report_per_layer() -> None:
    nn = pytest.importorskip("mskernel.nn", reason="the report traces an nn network")
    import mskernel

    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, pad_mode="same", has_bias=True)
            self.relu = nn.ReLU()
            self.dense = nn.Dense(4 * 36, 3)

        def construct(self, x):
            x = self.relu(self.conv(x))
            x = x.reshape(x.shape[0], -1)
            return self.dense(x) * 1e5

    x = mskernel.Tensor(np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype("f4"))
    printed = io.StringIO()
    report = precision_report(Net(), [x], precision_mode="force_fp16", file=printed)
    assert "precision mode force_fp16" in printed.getvalue()
    assert [layer.ops[0] for layer in report.layers] == ["conv", "reshape", "transpose", "mul"]
    first, last = report.layers[0], report.layers[-1]
    assert 1e-5 < first.relative_error < 1e-2 and first.overflow == 0
    assert last.overflow > 0  # the scaled logits pass 65504 and saturate
    exact = precision_report(Net(), [x], precision_mode="must_keep_origin_dtype", file=None)
    assert all(layer.relative_error < 1e-6 for layer in exact.layers)
