"""The Ascend lowering: precision modes, layouts with their conversions cancelled, fusions;
each checked on the graph it leaves and, through the reference interpreter, on what that
graph computes."""

from __future__ import annotations

import numpy as np
import pytest
from mskernel_sdk import (
    GraphBuilder, MskernelError, assert_close, dtype, run_reference, tensor_type, verify,
)

from mskernel_ascend import (
    PRECISION_MODES, get_precision_mode, precision_mode, set_precision_mode,
)
from mskernel_ascend import formats
from mskernel_ascend.passes import lower

from .conftest import arguments, conv_net

COMPUTE = ("ascend.conv2d", "ascend.matmul_bias", "exp", "mul", "sum")


def compute_dtypes(graph) -> dict[str, str]:
    """The dtype each compute op of ``graph`` produces."""
    return {n.op: n.output.type.dtype.name for n in graph.nodes if n.op in COMPUTE}


@pytest.mark.parametrize("mode, expected", [
    ("force_fp16", dict.fromkeys(COMPUTE, "float16")),
    ("allow_fp32_to_fp16", {"ascend.conv2d": "float16", "ascend.matmul_bias": "float16",
                            "exp": "float32", "mul": "float32", "sum": "float32"}),
    ("must_keep_origin_dtype", dict.fromkeys(COMPUTE, "float32")),
    # Cube ops white, exp and sum black, mul grey: it follows the matmul's float16 result
    ("allow_mix_precision", {"ascend.conv2d": "float16", "ascend.matmul_bias": "float16",
                             "exp": "float32", "mul": "float16", "sum": "float32"}),
])
def test_each_mode_chooses_the_compute_dtypes(mode: str, expected: dict[str, str]) -> None:
    lowered = lower(conv_net(), precision_mode=mode).graph
    verify(lowered)
    assert compute_dtypes(lowered) == expected
    assert [v.type for v in lowered.outputs] == [v.type for v in conv_net().outputs]


def test_casts_between_float16_ops_cancel() -> None:
    lowered = lower(conv_net(), precision_mode="force_fp16").graph
    casts = [n for n in lowered.nodes if n.op == "cast"]
    # one per float32 input (x, w1, b1, w2, wd, bd), the zero bias, and the result back
    assert len(casts) == 8
    assert sum(c.output.type.dtype.name == "float32" for c in casts) == 1


def test_convolutions_run_in_5hd_and_adjacent_ones_keep_it() -> None:
    lowered = lower(conv_net(), precision_mode="force_fp16").graph
    convs = [n for n in lowered.nodes if n.op == "ascend.conv2d"]
    assert [c.attrs["format"] for c in convs] == ["NC1HWC0"] * 2
    assert [c.attrs["relu"] for c in convs] == [True, True]
    assert convs[1].inputs[0] is convs[0].output  # no conversion back and forth between them
    conversions = [(n.attrs["src_format"], n.attrs["dst_format"])
                   for n in lowered.nodes if n.op == "ascend.transdata"]
    assert sorted(conversions) == sorted([("NCHW", "NC1HWC0"), ("NCHW", "FRACTAL_Z"),
                                          ("NCHW", "FRACTAL_Z"), ("NC1HWC0", "NCHW")])
    x5 = convs[0].inputs[0].type
    assert x5.shape == (2, 1, 8, 8, 16) and convs[0].inputs[1].type.shape == (9, 1, 16, 16)


@pytest.mark.parametrize("mode", PRECISION_MODES)
def test_lowering_keeps_what_the_graph_computes(mode: str) -> None:
    """The lowered graph, run by the reference interpreter, agrees with the original within
    the tolerance of its compute dtype."""
    graph = conv_net()
    args = arguments(graph)
    (expected,) = run_reference(graph, args)
    (got,) = run_reference(lower(graph, precision_mode=mode).graph, args)
    kept = mode == "must_keep_origin_dtype"
    np.testing.assert_allclose(got, expected, rtol=1e-5 if kept else 2e-2,
                               atol=1e-5 if kept else 2e-2)


def test_conv_batch_norm_relu_is_one_convolution() -> None:
    b = GraphBuilder("cbr")
    x = b.input(tensor_type("f32", (2, 3, 6, 6)), "x")
    w = b.input(tensor_type("f32", (4, 3, 3, 3)), "w")
    stats = [b.input(tensor_type("f32", (4,)), name) for name in ("g", "b", "m", "v")]
    y, _, _ = b.op("batch_norm", b.op("conv", x, w), *stats, eps=1e-3)
    graph = b.build([b.op("relu", y)])
    lowered = lower(graph, precision_mode="must_keep_origin_dtype").graph
    assert [n.op for n in lowered.nodes].count("ascend.conv2d") == 1
    assert not {"conv", "batch_norm", "relu"} & {n.op for n in lowered.nodes}
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(v.type.shape).astype(np.float32) for v in graph.inputs]
    args[-1] = np.abs(args[-1]) + 0.5
    assert_close(run_reference(lowered, args)[0], run_reference(graph, args)[0], dtype("f32"))


def test_a_matmul_bias_read_twice_is_not_fused() -> None:
    b = GraphBuilder("shared")
    x = b.input(tensor_type("f32", (3, 4)), "x")
    w = b.input(tensor_type("f32", (4, 5)), "w")
    bias = b.input(tensor_type("f32", (5,)), "bias")
    product = b.op("matmul", x, w)
    graph = b.build([b.op("add", product, bias), product])
    ops = [n.op for n in lower(graph, precision_mode="must_keep_origin_dtype").graph.nodes]
    assert "ascend.matmul_bias" not in ops and "matmul" in ops


def test_the_mode_is_set_by_call_by_block_or_by_environment(monkeypatch) -> None:
    monkeypatch.delenv("MSKERNEL_ASCEND_PRECISION_MODE", raising=False)
    assert get_precision_mode() == "force_fp16"
    monkeypatch.setenv("MSKERNEL_ASCEND_PRECISION_MODE", "allow_mix_precision")
    assert get_precision_mode() == "allow_mix_precision"
    with precision_mode("must_keep_origin_dtype"):
        assert get_precision_mode() == "must_keep_origin_dtype"
    monkeypatch.setenv("MSKERNEL_ASCEND_PRECISION_MODE", "fp16")
    with pytest.raises(MskernelError, match="unknown Ascend precision mode 'fp16'.*force_fp16"):
        get_precision_mode()
    with pytest.raises(MskernelError, match="set_precision_mode: unknown"):
        set_precision_mode("bf16")


def test_fractal_z_puts_each_weight_where_cann_defines_it() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((20, 35, 2, 3)).astype(np.float16)  # N, C, KH, KW
    wz = formats.to_fractal_z(w, 16)
    assert wz.shape == (3 * 2 * 3, 2, 16, 16)
    for n, c, kh, kw in [(0, 0, 0, 0), (19, 34, 1, 2), (17, 16, 0, 1), (5, 33, 1, 0)]:
        assert wz[(c // 16 * 2 + kh) * 3 + kw, n // 16, n % 16, c % 16] == w[n, c, kh, kw]
    assert not wz[:, 1, 4:].any()  # output channels 20..31 are padding
    np.testing.assert_array_equal(formats.weights_from_fractal_z(wz, w.shape), w)


@pytest.mark.parametrize("dt, c0", [("float16", 16), ("int8", 32)])
def test_5hd_blocks_the_channels_by_c0(dt: str, c0: int) -> None:
    x = np.arange(2 * 40 * 3 * 2).reshape(2, 40, 3, 2).astype(dt)
    x5 = formats.to_nc1hwc0(x, formats.c0_of(dt))
    assert x5.shape == (2, -(-40 // c0), 3, 2, c0)
    assert x5[1, 39 // c0, 2, 1, 39 % c0] == x[1, 39, 2, 1]
    np.testing.assert_array_equal(formats.to_nchw(x5, 40), x)


def sgd_momentum_step():
    """A training step by hand: loss = sum((x @ p)**2), its gradient by a Cube op, a
    momentum update of the parameter p and its state m written back."""
    from mskernel_sdk import RefType, TokenType

    b = GraphBuilder("step")
    x = b.input(tensor_type("f32", (8, 4)), "x")
    p_ref = b.input(RefType(tensor_type("f32", (4, 3))), "p")
    m_ref = b.input(RefType(tensor_type("f32", (4, 3))), "m")
    token = b.input(TokenType(), "token")
    p, token = b.op("ref_load", p_ref, token)
    m, token = b.op("ref_load", m_ref, token)
    y = b.op("matmul", x, p)
    loss = b.op("sum", b.op("mul", y, y))
    g = b.op("matmul", b.op("transpose", x), b.op("add", y, y))
    nine = b.op("full", shape=(4, 3), value=0.9, dtype="float32")
    tenth = b.op("full", shape=(4, 3), value=0.1, dtype="float32")
    m_new = b.op("add", b.op("mul", nine, m), b.op("mul", g, g))
    p_new = b.op("sub", p, b.op("mul", tenth, m_new))
    token = b.op("ref_store", m_ref, m_new, token)
    token = b.op("ref_store", p_ref, p_new, token)
    return b.build([loss, token])


def test_parameter_updates_keep_the_parameters_dtype_under_force_fp16() -> None:
    lowered = lower(sgd_momentum_step(), precision_mode="force_fp16").graph
    verify(lowered)
    dtypes = [(n.op, n.output.type.dtype.name) for n in lowered.nodes
              if n.op in ("matmul", "ascend.matmul_bias", "mul", "add", "sub", "sum")]
    # forward and backward in float16: the products, y * y, its sum, y + y; the update in
    # float32: g * g (read by the update only), 0.9 * m, the sum, 0.1 * m', p - 0.1 * m'
    assert dtypes == [("matmul", "float16"), ("mul", "float16"), ("sum", "float16"),
                      ("add", "float16"), ("matmul", "float16"), ("mul", "float32"),
                      ("mul", "float32"), ("add", "float32"), ("mul", "float32"),
                      ("sub", "float32")]


def test_a_bad_mode_in_the_environment_is_an_error_at_compile_not_at_discovery(
        monkeypatch) -> None:
    from mskernel_ascend.emulator import EmulateBackend

    monkeypatch.setenv("MSKERNEL_ASCEND_PRECISION_MODE", "fp8")
    assert EmulateBackend().availability().available
    with pytest.raises(MskernelError, match="MSKERNEL_ASCEND_PRECISION_MODE: unknown"):
        lower(conv_net())
