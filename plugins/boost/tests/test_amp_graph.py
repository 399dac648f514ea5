"""Every AMP level's graph holds the casts it should, op by op, and computes what the
float32 graph computes within the low dtype's rounding."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import bfloat16, float16, float32
from mskernel_sdk import Tensor

from mskernel_boost.amp.api import auto_mixed_precision, custom_mixed_precision
from mskernel_boost.amp.passes import state_updates

COMPUTE = {"conv", "add", "batch_norm", "relu", "matmul", "transpose", "reshape", "mul"}


def _graph(net, x, level, low):
    net.set_train(True)
    amp = auto_mixed_precision(net, level, low)
    graph, _ = amp.lowered(Tensor(x))
    return amp, graph


def _compute_dtypes(graph):
    """(op, dtype of its first output) of every node that is not a cast, a load or a
    constant, excluding the arithmetic of state updates."""
    updates = state_updates(graph)
    return [(n.op, n.outputs[0].type.dtype) for n in graph.nodes
            if n.op in COMPUTE and n.outputs[0] not in updates]


@pytest.mark.parametrize("low", [bfloat16, float16])
def test_o1_computes_the_white_list_in_low_precision(small_net, batch, low):
    _, graph = _graph(small_net, batch[0], "O1", low)
    for op, dt in _compute_dtypes(graph):
        assert dt is (low if op in ("conv", "matmul", "relu") else float32), (op, dt)
    assert graph.outputs[0].type.dtype is float32


@pytest.mark.parametrize("low", [bfloat16, float16])
def test_o2_keeps_batch_norm_and_state_updates_in_float32(small_net, batch, low):
    _, graph = _graph(small_net, batch[0], "O2", low)
    for op, dt in _compute_dtypes(graph):
        assert dt is (float32 if op == "batch_norm" else low), (op, dt)
    for node in graph.nodes:
        if node.outputs and node.outputs[0] in state_updates(graph):
            assert node.outputs[0].type.dtype is float32, node.op
    assert graph.outputs[0].type.dtype is float32


def test_o3_computes_everything_in_low_precision(small_net, batch):
    _, graph = _graph(small_net, batch[0], "O3", bfloat16)
    assert all(dt is bfloat16 for _, dt in _compute_dtypes(graph))
    # the weights stay float32 Parameters, cast where they are read
    loads = [n for n in graph.nodes if n.op == "ref_load"]
    assert loads and all(n.outputs[0].type.dtype is float32 for n in loads)


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_no_cast_round_trip_is_left(small_net, batch, level):
    _, graph = _graph(small_net, batch[0], level, bfloat16)
    producers = {v: n for n in graph.nodes for v in n.outputs}
    for node in graph.nodes:
        if node.op == "cast":
            inner = producers.get(node.inputs[0])
            assert inner is None or inner.op != "cast" \
                or inner.inputs[0].type != node.outputs[0].type, "cast pair left in place"
    casts = sum(n.op == "cast" for n in graph.nodes)
    # O1: down for the conv's input and weight, the relu's input, the dense's input and
    # weight; up for the conv's, relu's and matmul's results (the bias adds are float32).
    # O2: down for the input, conv weight and bias, dense weight and bias, and the batch
    # norm's output; up for the batch norm's input and the network's output.  O3: down for
    # every weight, the batch norm's four operands, the input; up for its two statistics
    # (feeding float32 state updates) and the output.
    assert casts == {"O1": 8, "O2": 8, "O3": 12}[level], casts


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
@pytest.mark.parametrize("low", [bfloat16, float16])
def test_levels_compute_the_float32_result_within_rounding(small_net, batch, level, low):
    small_net.set_train(False)
    expected = small_net(Tensor(batch[0])).asnumpy()
    got = auto_mixed_precision(small_net, level, low)(Tensor(batch[0])).asnumpy()
    eps = 2.0 ** -8 if low is bfloat16 else 2.0 ** -11
    # a few roundings per layer, each relative to the magnitudes summed (72 or 144 terms)
    scale = np.abs(expected).max() + 1.0
    np.testing.assert_allclose(got, expected, atol=12 * eps * scale, rtol=0)
    assert got.dtype == np.float32


def test_o0_is_the_network_itself(small_net):
    assert auto_mixed_precision(small_net, "O0") is small_net


def test_custom_lists(small_net, batch):
    amp = custom_mixed_precision(small_net, white_list=["matmul"], dtype=bfloat16)
    graph, _ = amp.lowered(Tensor(batch[0]))
    low = {n.op for n in graph.nodes if n.op != "cast" and n.outputs
           and getattr(n.outputs[0].type, "dtype", None) is bfloat16}
    assert low == {"matmul"}
    amp = custom_mixed_precision(small_net, black_list=["conv", "batch_norm"], dtype=bfloat16)
    graph, _ = amp.lowered(Tensor(batch[0]))
    by_op = {n.op: n.outputs[0].type.dtype for n in graph.nodes if n.op in ("conv", "matmul")}
    assert by_op == {"conv": float32, "matmul": bfloat16}


def test_bad_arguments_are_named(small_net):
    with pytest.raises(ValueError, match="amp_level must be one of"):
        auto_mixed_precision(small_net, "O4")
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        auto_mixed_precision(small_net, "O1", float32)
    with pytest.raises(ValueError, match="exactly one"):
        custom_mixed_precision(small_net, white_list=["matmul"], black_list=["conv"])


def test_the_pipelines_are_registered():
    from mskernel_sdk import PassManager

    for level in ("O1", "O2", "O3"):
        for low in ("float16", "bfloat16"):
            names = [p.name for p in PassManager.from_pipeline(f"amp_{level}_{low}").passes]
            assert names == [f"amp_{level}_{low}", "cancel_casts", "cse", "dce"]
    assert mskernel.amp.get_black_list() == ["batch_norm", "group_norm", "layer_norm"]
